// Loads the app. An external module (not an inline script), so the Content-Security-Policy can
// forbid inline scripts entirely.
import init, * as bindings from './blkviz.js';

await init({ module_or_path: './blkviz_bg.wasm' });
window.wasmBindings = bindings;
