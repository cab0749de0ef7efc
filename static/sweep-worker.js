// A seed sweep's worker: the page (src/sweep/workers.rs) sends it batches of seeds of one lesson
// variant, in bincode (src/protocol/sweep.rs), and it runs them with the same wasm the page loaded
// (the browser has it cached, so spreading a sweep over the CPUs downloads nothing more), one CPU
// per worker.
import init, { sweep_seeds } from './blkviz.js';

const ready = init({ module_or_path: './blkviz_bg.wasm' });

self.onmessage = async (e) => {
  let reply;
  try {
    await ready;
    reply = sweep_seeds(e.data);
  } catch (err) {
    // The page reads a reply it cannot decode as the worker's failure, and names this.
    console.error(`blkviz: a sweep worker failed: ${err}`);
    reply = new Uint8Array(0);
  }
  self.postMessage(reply, [reply.buffer]);
};
