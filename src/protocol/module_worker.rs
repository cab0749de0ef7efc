//! A Web Worker on a wasm of its own, started as a module (the trace reader's, the job-file
//! reader's): when its script does not load or its wasm traps it is marked failed, and the next
//! use starts a fresh one.

use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

pub struct ModuleWorker {
    pub worker: Worker,
    failed: Rc<Cell<bool>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for ModuleWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

impl ModuleWorker {
    /// Starts `script`; `name` ("the trace reader") says which in the message when it does not
    /// start. `on_message` takes each message's data, and may mark the worker failed through
    /// the flag it is given; `on_error` takes why the worker failed (it is marked failed first).
    pub fn spawn(
        script: &str,
        name: &str,
        mut on_message: impl FnMut(JsValue, &Cell<bool>) + 'static,
        mut on_error: impl FnMut(String) + 'static,
    ) -> Result<ModuleWorker, String> {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Module);
        let worker = Worker::new_with_options(script, &opts).map_err(|e| format!("{name} did not start: {e:?}"))?;
        let failed = Rc::new(Cell::new(false));
        let broke = failed.clone();
        let on_msg = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_message(e.data(), &broke));
        worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
        let broke = failed.clone();
        let on_err = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            broke.set(true);
            on_error(e.dyn_ref::<web_sys::ErrorEvent>().map_or_else(|| "its script did not load".to_string(), |e| e.message()));
        });
        worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
        Ok(ModuleWorker { worker, failed, _on_message: on_msg, _on_error: on_err })
    }

    /// The worker in `slot`, started by `spawn` if there is none or the one there failed.
    pub fn running(slot: &mut Option<ModuleWorker>, spawn: impl FnOnce() -> Result<ModuleWorker, String>) -> Result<&ModuleWorker, String> {
        if slot.as_ref().is_none_or(|w| w.failed.get()) {
            *slot = None;
            *slot = Some(spawn()?);
        }
        slot.as_ref().ok_or_else(|| "the worker did not start".to_string())
    }
}
