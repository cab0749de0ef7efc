//! The page's end of the trace page's reader: a Web Worker running `static/trace-worker.js` on
//! a wasm of its own (`src/bin/trace_worker.rs`), which only the trace page starts. The page
//! posts it a trace's files (a `File` chosen, or bytes made here: a lesson run's dump),
//! transferring rather than copying, and gets back the figures it shows
//! (`blksim::tools::trace_figures::TraceFigures`) in bincode, or the one line saying what is
//! wrong with the files. The page thus keeps the figures' deserializer and no trace parser.

use super::decode;
use super::module_worker::ModuleWorker;
use blksim::tools::trace_figures::TraceFigures;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The worker's script, beside the page.
const SCRIPT: &str = "./trace-worker.js";

/// One of a trace's files: its name, and a `Blob` (a file chosen) or a `Uint8Array`.
pub struct ReaderFile {
    pub name: String,
    pub data: JsValue,
}

/// What the page does with an answer: the number its files were posted under, and the figures
/// or why there are none.
pub type OnReply = Rc<dyn Fn(u32, Result<TraceFigures, String>)>;

/// The answers not yet come, by number, in the order posted (a few at most: a `Vec`, not a set,
/// so the page keeps no `BTreeSet` code for it).
type Waiting = Rc<RefCell<Vec<u32>>>;

/// The trace reader's worker, started when the trace page opens.
pub struct TraceReader {
    on_reply: OnReply,
    started: RefCell<Option<ModuleWorker>>,
    waiting: Waiting,
    next: Cell<u32>,
}

impl TraceReader {
    /// Starts the worker (its wasm downloads while the user picks a file); `on_reply` takes
    /// each answer.
    pub fn start(on_reply: OnReply) -> Result<TraceReader, String> {
        let r = TraceReader { on_reply, started: RefCell::new(None), waiting: Rc::default(), next: Cell::new(0) };
        *r.started.borrow_mut() = Some(r.spawn()?);
        Ok(r)
    }

    fn spawn(&self) -> Result<ModuleWorker, String> {
        let (on_reply, waiting) = (self.on_reply.clone(), self.waiting.clone());
        let on_message = move |data: JsValue, broke: &Cell<bool>| {
            let seq = js_sys::Reflect::get(&data, &"seq".into()).ok().and_then(|s| s.as_f64()).map_or(u32::MAX, |s| s as u32);
            let bytes = js_sys::Reflect::get(&data, &"reply".into()).map(|r| js_sys::Uint8Array::new(&r).to_vec()).unwrap_or_default();
            let figures = if bytes.is_empty() {
                broke.set(true);
                Err("the trace reader failed on these files (the browser's console says why)".to_string())
            } else {
                decode::<Result<TraceFigures, String>>(&bytes).unwrap_or_else(|e| Err(format!("the trace reader's answer: {e}")))
            };
            waiting.borrow_mut().retain(|&s| s != seq);
            on_reply(seq, figures);
        };
        let (on_reply, waiting) = (self.on_reply.clone(), self.waiting.clone());
        let on_error = move |why: String| {
            let seqs = std::mem::take(&mut *waiting.borrow_mut());
            for seq in seqs {
                on_reply(seq, Err(format!("the trace reader failed: {why}")));
            }
        };
        ModuleWorker::spawn(SCRIPT, "the trace reader", on_message, on_error)
    }

    /// Posts a trace's files, transferring any bytes; returns the number its answer will carry.
    pub fn post(&self, files: Vec<ReaderFile>) -> Result<u32, String> {
        let mut started = self.started.borrow_mut();
        let s = ModuleWorker::running(&mut started, || self.spawn())?;
        let seq = self.next.get();
        self.next.set(seq.wrapping_add(1));
        let list = js_sys::Array::new();
        let transfer = js_sys::Array::new();
        for f in files {
            let o = js_sys::Object::new();
            let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&o, &k.into(), v).map(|_| ());
            set("name", &f.name.as_str().into()).and_then(|()| set("data", &f.data)).map_err(|e| format!("{}: {e:?}", f.name))?;
            if let Some(bytes) = f.data.dyn_ref::<js_sys::Uint8Array>() {
                transfer.push(&bytes.buffer());
            }
            list.push(&o);
        }
        let msg = js_sys::Object::new();
        js_sys::Reflect::set(&msg, &"seq".into(), &seq.into()).map_err(|e| format!("{e:?}"))?;
        js_sys::Reflect::set(&msg, &"files".into(), &list).map_err(|e| format!("{e:?}"))?;
        s.worker.post_message_with_transfer(&msg, &transfer).map_err(|e| format!("the trace reader cannot be reached: {e:?}"))?;
        self.waiting.borrow_mut().push(seq);
        Ok(seq)
    }
}
