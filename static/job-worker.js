// The sandbox's job-file reader (src/bin/job_worker.rs, a wasm of its own, which only this worker
// loads): the page (src/protocol/fio.rs) posts it a job file's text with a number; it answers
// with that number and what fio_parse made of the file ({ knobs, fromFile, ignored,
// notModelled }, or { error }).
import init, { fio_parse } from './job_worker.js';

const ready = init({ module_or_path: './job_worker_bg.wasm' });
// A wasm that fails to load is reported when a file is read (`await ready` below); until one
// comes, the rejection is handled here so that the page sees no uncaught error.
ready.catch(() => {});

self.onmessage = async (e) => {
  const { seq, fio } = e.data;
  let reply;
  try {
    await ready;
    reply = fio_parse(fio);
  } catch (err) {
    reply = { error: `the job-file reader failed: ${err && err.message ? err.message : err}` };
  }
  self.postMessage({ seq, fio: reply });
};
