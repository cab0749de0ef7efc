//! blkviz: the thin Yew layer over the `blksim` core. One owner of the simulation
//! (`driver::SimDriver`), driven by animation frames; the UI reads the trace and the counters.

pub mod app;
pub mod bench;
pub mod command;
pub mod components;
pub mod driver;
pub mod export;
pub mod format;
pub mod hooks;
pub mod layout;
pub mod markdown;
pub mod pages;
pub mod palette;
pub mod runs_worker;
pub mod session;
pub mod session_view;
