//! The `blksim` command line (shared/design/CLI.md is its contract), behind the `cli` feature
//! so the library the browser loads carries neither clap nor the subcommands. What the app and
//! the tests share with the CLI (running one variant, printing a figure) is here, always built.

use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::scenario::Config;

#[cfg(feature = "cli")]
mod args;
#[cfg(feature = "cli")]
mod commands;
#[cfg(feature = "cli")]
mod replay;
#[cfg(feature = "cli")]
mod sweep;
#[cfg(feature = "cli")]
pub use commands::{main, CliError, FIDELITY_MISSES, TRACE_RECORDS_MAX};

/// The most seeds `blksim sweep --seeds` (and a fidelity row's `seeds`) may ask for.
pub const SWEEP_SEEDS_MAX: u64 = 10_000;

/// Runs one variant to its duration (or until every finite job is done).
pub fn run_one(cfg: &Config, seed: u64, duration_s: Option<f64>) -> Sim {
    let mut sim = Sim::new(cfg, seed);
    sim.set_trace(false);
    let d = duration_s.unwrap_or(cfg.scenario.duration_s);
    sim.run_until(SimTime::from_secs_f64(d));
    sim
}

/// A figure as the table prints it: no more digits than the measurement has.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{:.1}", x).trim_end_matches(".0").to_string()
    } else if a >= 0.1 || a == 0.0 {
        format!("{x:.2}").trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.4}").trim_end_matches('0').to_string()
    }
}
