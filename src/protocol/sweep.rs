//! A seed sweep's messages: a `SweepBatch` of seeds of one lesson variant goes to a sweep
//! worker, and its `SweepReply` comes back (the seeds' runs, or why there are none).

use serde::{Deserialize, Serialize};

/// Seeds of one lesson variant to run, with the run's knobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepBatch {
    pub lesson: String,
    pub variant: String,
    pub overrides: Vec<(String, String)>,
    pub seeds: Vec<u64>,
}

/// What a sweep worker answers a batch: its runs, in seed order, or its error.
pub type SweepReply = Result<Vec<SeedRun>, String>;

/// One seed's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRun {
    pub variant: String,
    pub seed: u64,
    pub completion_s: Option<f64>,
    pub throughput_mb_s: f64,
    /// How long the run went (ns), and its longest stall (`Sim::longest_stall_ns`): when it
    /// began and how long it lasted (ns).
    pub run_ns: u64,
    pub stall_from_ns: u64,
    pub stall_ns: u64,
}
