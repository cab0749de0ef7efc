//! A Web Worker spoken to in the protocol: messages of type `M` out, each answered by a
//! `Result<T, String>`, both in bincode. The runs' worker and a sweep's workers are each one of
//! these. A reply that does not decode, and the worker's error event, come back as errors, in
//! the order they came.

use super::{decode, encode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// What came back from the worker, in order.
type Inbox<T> = Rc<RefCell<Vec<Result<T, String>>>>;

pub struct WorkerChannel<M, T> {
    worker: Worker,
    inbox: Inbox<T>,
    /// The message and error handlers, kept alive while the worker is.
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
    _sends: PhantomData<M>,
}

impl<M: Serialize, T: DeserializeOwned + 'static> WorkerChannel<M, T> {
    /// Starts a module worker running `script` (a file beside the page: `./sim-worker.js`).
    pub fn start(script: &str) -> Result<WorkerChannel<M, T>, String> {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Module);
        let worker = Worker::new_with_options(script, &opts).map_err(|e| format!("no worker: {e:?}"))?;
        let inbox: Inbox<T> = Rc::default();
        let replies = inbox.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let bytes = js_sys::Uint8Array::new(&e.data()).to_vec();
            let msg = decode::<Result<T, String>>(&bytes).unwrap_or_else(|e| Err(format!("its message: {e}")));
            replies.borrow_mut().push(msg);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let replies = inbox.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let why = e.dyn_ref::<web_sys::ErrorEvent>().map_or_else(|| "it failed".to_string(), |e| e.message());
            replies.borrow_mut().push(Err(why));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(WorkerChannel { worker, inbox, _on_message: on_message, _on_error: on_error, _sends: PhantomData })
    }

    /// Posts a message (the worker takes them in order).
    pub fn post(&self, msg: &M) -> Result<(), String> {
        let bytes = js_sys::Uint8Array::from(encode(msg)?.as_slice());
        self.worker.post_message(&bytes).map_err(|e| format!("cannot reach it: {e:?}"))
    }

    /// What came back since the last call, in order.
    pub fn take(&self) -> Vec<Result<T, String>> {
        std::mem::take(&mut *self.inbox.borrow_mut())
    }

    /// Stops the worker where it is (dropping the channel does too).
    pub fn terminate(&self) {
        self.worker.terminate();
    }
}

impl<M, T> Drop for WorkerChannel<M, T> {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}
