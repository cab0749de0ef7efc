// Loads the app. An external module (not an inline script), so the Content-Security-Policy can
// forbid inline scripts entirely.
import init, * as bindings from './blkviz.js';

// The sandbox's job-file reader on the page's own thread, where no Web Worker can start
// (src/protocol/fio.rs): its module and wasm, loaded the first time a job file is applied.
let jobReader;
window.blkvizJobReader = () => {
  jobReader ??= import('./job_worker.js').then(async (m) => {
    await m.default({ module_or_path: './job_worker_bg.wasm' });
    return m;
  });
  return jobReader;
};

await init({ module_or_path: './blkviz_bg.wasm' });
window.wasmBindings = bindings;

// Works offline after one visit: the service worker keeps the app's files (static/sw.js).
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('./sw.js').catch((e) => console.warn('blkviz: no offline copy:', e.message));
}
