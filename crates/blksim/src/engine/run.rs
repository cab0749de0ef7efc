//! Running one scenario to its end: what the CLI, the fidelity scoreboard, the app's sweeps and
//! the benches share.

use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::scenario::Config;

/// Runs one variant to its duration (or until every finite job is done).
pub fn run_one(cfg: &Config, seed: u64, duration_s: Option<f64>) -> Sim {
    let mut sim = Sim::new(cfg, seed);
    sim.set_trace(false);
    let d = duration_s.unwrap_or(cfg.scenario.duration_s);
    sim.run_until(SimTime::from_secs_f64(d));
    sim
}
