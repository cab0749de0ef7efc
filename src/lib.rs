//! blkviz: the thin Yew layer over the `blksim` core. The app splits where the Web Worker's
//! `postMessage` does: `runs` is the worker's side (each `Run` owns a `Sim`, a `Session` the
//! runs on show), `view` the page's (its copy of each run, `RunView`, and the runs' client,
//! `SessionView`), `protocol` what crosses between them, and `sweep` a seed sweep (its own
//! workers, over the same protocol). The pages and components read the views, never a `Run`.

pub mod app;
pub mod bench;
pub mod components;
pub mod content;
pub mod export;
pub mod format;
pub mod hooks;
pub mod json;
pub mod layout;
pub mod lessons;
pub mod markdown;
pub mod pages;
pub mod palette;
pub mod protocol;
pub mod runs;
pub mod sort;
pub mod sweep;
pub mod view;
