//! The trace page's reader, a wasm of its own: `static/trace-worker.js` hands it the files the
//! page posts (a trace opened, or a lesson run's `blkparse -d` dump), one by one
//! (`trace_add`), then asks for their figures (`trace_read`): `blksim::tools::trace_figures`
//! in bincode, as the runs' worker answers (`blkviz::protocol`). Only the trace page starts it,
//! so the lesson page downloads none of blkparse's input, btt or iostat over a real trace.
//!
//! It does not use the `blkviz` library: linking it would export the library's own
//! `#[wasm_bindgen]` functions (the runs' and the sweep's workers) and keep the whole
//! simulation in this wasm.

use blksim::tools::trace_figures::{self, TraceFigures};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// A trace's files: names and bytes, in the order they came.
type Files = Vec<(String, Vec<u8>)>;

thread_local! {
    /// The files of the trace being read, or why one could not be.
    static FILES: RefCell<Result<Files, String>> = const { RefCell::new(Ok(Vec::new())) };
}

/// One file of the trace being read (the worker's script reads its bytes).
#[wasm_bindgen]
pub fn trace_add(name: String, bytes: Vec<u8>) {
    FILES.with(|f| {
        if let Ok(files) = &mut *f.borrow_mut() {
            files.push((name, bytes));
        }
    });
}

/// A file of the trace that could not be read: the answer names it.
#[wasm_bindgen]
pub fn trace_unreadable(name: &str, why: &str) {
    FILES.with(|f| {
        if f.borrow().is_ok() {
            *f.borrow_mut() = Err(format!("{name}: cannot read the file: {why}"));
        }
    });
}

/// The files added since the last call, read as one trace: `Result<TraceFigures, String>` in
/// bincode. The next trace starts afresh.
#[wasm_bindgen]
pub fn trace_read() -> Vec<u8> {
    let files = FILES.with(|f| std::mem::replace(&mut *f.borrow_mut(), Ok(Vec::new())));
    let figures: Result<TraceFigures, String> = files.and_then(trace_figures::read);
    bincode::serialize(&figures).unwrap_or_default()
}

/// Nothing runs at start: the worker's script calls the functions above.
fn main() {}
