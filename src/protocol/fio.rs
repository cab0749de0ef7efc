//! The page's end of the sandbox's job-file reader: fio's parser runs in a Web Worker
//! (`static/job-worker.js`) on a wasm of its own (`src/bin/job_worker.rs`), started when a job
//! file is first applied, so the page's own wasm holds no job-file parser. The page posts the text with a
//! number and gets back the settings (`{ knobs, fromFile, ignored, notModelled }`) or the one
//! line saying what is wrong with the file; it then fits the job to its stack's devices as
//! before (`FioJob::fit_devices`). Where no Web Worker can start, the page loads the same wasm
//! on its own thread (`static/boot.js`'s `blkvizJobReader`) and reads the file there.

use super::module_worker::ModuleWorker;
use blksim::fio::FioJob;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The reader's script, beside the page.
const SCRIPT: &str = "./job-worker.js";

/// What the page does with the file read: the job, or why it was not read.
type Then = Box<dyn FnOnce(Result<FioJob, String>)>;

/// The job file waiting for its answer, by number: one at a time (a newer apply supersedes an
/// older one still being read, whose answer is then dropped).
type Pending = Rc<RefCell<Option<(u32, Then)>>>;

thread_local! {
    static READER: RefCell<Option<ModuleWorker>> = const { RefCell::new(None) };
    static PENDING: Pending = Rc::default();
    static NEXT: RefCell<u32> = const { RefCell::new(0) };
}

/// Reads a job file in the reader and hands `then` the job (or why not), later: from the
/// worker's answer, or where no worker starts, from the reader loaded on the page.
pub fn parse(text: &str, then: impl FnOnce(Result<FioJob, String>) + 'static) {
    let seq = NEXT.with(|n| {
        let seq = *n.borrow();
        *n.borrow_mut() = seq.wrapping_add(1);
        seq
    });
    let posted = READER.with(|r| {
        let mut r = r.borrow_mut();
        let s = ModuleWorker::running(&mut r, spawn)?;
        let msg = js_sys::Object::new();
        js_sys::Reflect::set(&msg, &"seq".into(), &seq.into()).map_err(|e| format!("{e:?}"))?;
        js_sys::Reflect::set(&msg, &"fio".into(), &text.into()).map_err(|e| format!("{e:?}"))?;
        s.worker.post_message(&msg).map_err(|e| format!("the job-file reader cannot be reached: {e:?}"))
    });
    match posted {
        Ok(()) => PENDING.with(|p| *p.borrow_mut() = Some((seq, Box::new(then)))),
        Err(_) => {
            let text = text.to_string();
            wasm_bindgen_futures::spawn_local(async move { then(on_page(&text).await) });
        }
    }
}

/// The file read by the reader's wasm loaded on the page's thread (`blkvizJobReader`).
async fn on_page(text: &str) -> Result<FioJob, String> {
    let window = web_sys::window().ok_or("no window")?;
    let load = js_sys::Reflect::get(&window, &"blkvizJobReader".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or("the job-file reader is not on this page")?;
    let promise: js_sys::Promise =
        load.call0(&window).and_then(JsCast::dyn_into).map_err(|e| format!("the job-file reader did not load: {e:?}"))?;
    let module = wasm_bindgen_futures::JsFuture::from(promise).await.map_err(|e| format!("the job-file reader did not load: {e:?}"))?;
    let parse: js_sys::Function = js_sys::Reflect::get(&module, &"fio_parse".into())
        .and_then(JsCast::dyn_into)
        .map_err(|e| format!("the job-file reader has no parser: {e:?}"))?;
    let answer = parse.call1(&JsValue::NULL, &text.into()).map_err(|e| format!("the job-file reader failed: {e:?}"))?;
    job_of(&answer)
}

fn spawn() -> Result<ModuleWorker, String> {
    let on_message = |data: JsValue, _: &std::cell::Cell<bool>| {
        let seq = js_sys::Reflect::get(&data, &"seq".into()).ok().and_then(|s| s.as_f64());
        let Some(then) = take_pending(|p| seq == Some(f64::from(p))) else { return };
        let fio = js_sys::Reflect::get(&data, &"fio".into()).unwrap_or(JsValue::UNDEFINED);
        then(job_of(&fio));
    };
    let on_error = |why: String| {
        if let Some(then) = take_pending(|_| true) {
            then(Err(format!("the job-file reader failed: {why}")));
        }
    };
    ModuleWorker::spawn(SCRIPT, "the job-file reader", on_message, on_error)
}

/// The waiting file's continuation, if `is_it` takes its number.
fn take_pending(is_it: impl Fn(u32) -> bool) -> Option<Then> {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.take() {
            Some((seq, then)) if is_it(seq) => Some(then),
            other => {
                *p = other;
                None
            }
        }
    })
}

/// The reader's answer as a job, or its error.
fn job_of(fio: &JsValue) -> Result<FioJob, String> {
    let get = |k: &str| js_sys::Reflect::get(fio, &k.into()).unwrap_or(JsValue::UNDEFINED);
    if let Some(e) = get("error").as_string() {
        return Err(e);
    }
    let strings = |k: &str| -> Vec<String> {
        get(k).dyn_into::<js_sys::Array>().map(|a| a.iter().filter_map(|v| v.as_string()).collect()).unwrap_or_default()
    };
    let flat = strings("knobs");
    let Some(from_file) = get("fromFile").as_f64() else { return Err("the job-file reader's answer has no settings".to_string()) };
    Ok(FioJob {
        knobs: flat.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect(),
        from_file: from_file as usize,
        ignored: strings("ignored"),
        not_modelled: strings("notModelled"),
    })
}
