// The runs' worker (src/runs/worker.rs): the page (src/view/port.rs) posts it what its frames and
// controls ask of the simulation, in bincode (src/protocol/), and it answers each with the runs'
// updates, on the page's own wasm (the browser has it cached). The simulation then never holds up
// the page's frames.
import init, { runs_message, runs_tune } from './blkviz.js';

const ready = init({ module_or_path: './blkviz_bg.wasm' });

self.onmessage = async (e) => {
  let reply;
  try {
    await ready;
    const start = performance.now();
    reply = runs_message(e.data);
    // A frame's work sets the next jump frame's budget (runs_tune ignores other messages').
    runs_tune(performance.now() - start);
  } catch (err) {
    // The page reads a reply it cannot decode as the worker's failure, and names this.
    console.error(`blkviz: the runs' worker failed: ${err}`);
    reply = new Uint8Array(0);
  }
  self.postMessage(reply, [reply.buffer]);
};
