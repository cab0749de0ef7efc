//! The sandbox's job-file reader, a wasm of its own: `static/job-worker.js` hands it the text of
//! a job file the page applies, and it answers what fio's reader makes of it (`fio_parse`). The
//! page (`blkviz::protocol::fio`) starts it when a job file is first applied, so a lesson link's
//! first frame downloads no job-file parser.
//!
//! It does not use the `blkviz` library: linking it would export the library's own
//! `#[wasm_bindgen]` functions (the runs' and the sweep's workers) and keep the whole
//! simulation in this wasm.

use wasm_bindgen::prelude::*;

/// A job file read as fio reads it (`blksim::fio::parse`): `{ knobs: [key, value, …], fromFile,
/// ignored, notModelled }` (the page fits the job to its stack's devices), or `{ error }`.
#[wasm_bindgen]
pub fn fio_parse(text: &str) -> js_sys::Object {
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        // Setting a property of a plain object does not fail.
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    };
    let strings = |v: &[String]| v.iter().map(|s| JsValue::from_str(s)).collect::<js_sys::Array>();
    match blksim::fio::parse(text) {
        Err(e) => set("error", e.to_string().into()),
        Ok(job) => {
            let knobs: js_sys::Array = job.knobs.iter().flat_map(|(k, v)| [k, v]).map(|s| JsValue::from_str(s)).collect();
            set("knobs", knobs.into());
            set("fromFile", u32::try_from(job.from_file).unwrap_or(u32::MAX).into());
            set("ignored", strings(&job.ignored).into());
            set("notModelled", strings(&job.not_modelled).into());
        }
    }
    o
}

/// Nothing runs at start: the worker's script calls the function above.
fn main() {}
