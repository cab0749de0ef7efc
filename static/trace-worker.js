// The trace page's reader (src/bin/trace_worker.rs, a wasm of its own, which only this worker
// loads): the page (src/protocol/reader.rs) posts it a trace's files, each a name and a Blob (a
// file chosen) or bytes (a lesson run's dump), with a number; it answers with that number and
// the figures in bincode (`Result<TraceFigures, String>`). The page never holds a trace's bytes
// or records, and stays responsive while a large trace is read.
import init, { trace_add, trace_unreadable, trace_read } from './trace_worker.js';

const ready = init({ module_or_path: './trace_worker_bg.wasm' });
// A wasm that fails to load is reported when a file is read (`await ready` below); until a file
// comes, the rejection is handled here so that the page sees no uncaught error.
ready.catch(() => {});

self.onmessage = async (e) => {
  const { seq, files } = e.data;
  let reply;
  try {
    await ready;
    for (const f of files) {
      let bytes;
      try {
        bytes = f.data instanceof Blob ? new Uint8Array(await f.data.arrayBuffer()) : f.data;
      } catch (err) {
        trace_unreadable(f.name, String(err && err.message ? err.message : err));
        continue;
      }
      trace_add(f.name, bytes);
    }
    reply = trace_read();
  } catch (err) {
    // The page reads a reply it cannot decode as the reader's failure, and names this.
    console.error(`blkviz: the trace reader failed: ${err}`);
    reply = new Uint8Array(0);
  }
  self.postMessage({ seq, reply }, [reply.buffer]);
};
