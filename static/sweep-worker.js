// A seed sweep's worker: the page (src/driver/sweep_workers.rs) sends it batches of seeds of one
// lesson variant, and it runs them with the same wasm the page loaded (the browser has it
// cached, so spreading a sweep over the CPUs downloads nothing more), one CPU per worker.
import init, { sweep_seeds } from './blkviz.js';

const ready = init({ module_or_path: './blkviz_bg.wasm' });

self.onmessage = async (e) => {
  try {
    await ready;
    self.postMessage(sweep_seeds(e.data));
  } catch (err) {
    self.postMessage(JSON.stringify({ error: `the worker failed: ${err}` }));
  }
};
