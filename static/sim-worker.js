// The runs' worker: the page (src/runs_worker.rs) posts it what its frames and controls ask of
// the simulation, as JSON, and it answers each with the runs' updates, on the page's own wasm
// (the browser has it cached). The simulation then never holds up the page's frames.
import init, { runs_message, runs_tune } from './blkviz.js';

const ready = init({ module_or_path: './blkviz_bg.wasm' });

self.onmessage = async (e) => {
  try {
    await ready;
    const start = performance.now();
    const reply = runs_message(e.data);
    // A frame's work sets the next jump frame's budget (the page's frame rate is not at stake
    // here, but a Stop or a new command waits for the frame under way).
    if (e.data.startsWith('{"Frame"')) runs_tune(performance.now() - start);
    self.postMessage(reply);
  } catch (err) {
    self.postMessage(JSON.stringify({ Err: `the worker failed: ${err}` }));
  }
};
