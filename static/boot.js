// Loads the app. An external module (not an inline script), so the Content-Security-Policy can
// forbid inline scripts entirely.
import init, * as bindings from './blkviz.js';

await init({ module_or_path: './blkviz_bg.wasm' });
window.wasmBindings = bindings;

// Works offline after one visit: the service worker keeps the app's files (static/sw.js).
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('./sw.js').catch((e) => console.warn('blkviz: no offline copy:', e.message));
}
