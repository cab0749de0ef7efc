//! The page's side of the runs: what it reads and how it reaches them. `RunView` is the page's
//! copy of a run, kept by the run's `RunUpdate`s; its `TraceView` makes the event log, btt's sums
//! (`btt`) and the animation's tokens (`tokens`) from the run's trace inputs, and its `Hover`
//! says what the pointer is on. `SessionView` is the page's runs: the views of A and B, what the
//! page alone keeps, and the runs' client, which sends the controls' `Command`s to the runs'
//! worker over a `Port` (`port`), or carries them out on the page's thread where no worker runs,
//! and takes over the runs if the worker fails. Nothing here runs a simulation but that fallback.

mod btt;
pub mod client;
mod hover;
pub mod live;
pub mod port;
mod run_view;
pub mod tokens;
mod trace_view;

pub use btt::Btt;
pub use client::SessionView;
pub use hover::{Hit, HitKind, Hover};
pub use run_view::RunView;
pub use tokens::{Token, TokenStage, RECORDS_PER_FRAME_MAX, TOKENS_MAX, TWEEN_MS, TWEEN_MS_MIN};
pub use trace_view::{TraceView, LOG_MAX};

/// A warning in the browser's console (none natively, where there is no console).
pub fn warn(msg: &str) {
    if cfg!(target_arch = "wasm32") {
        gloo::console::warn!(msg.to_string());
    }
}
