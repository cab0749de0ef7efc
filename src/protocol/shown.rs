//! What the page shows of a run but its trace (`Shown`): the clock, the counters, the
//! configuration, the topology, threads, heads and pools the diagram draws, the latencies and
//! the per-second history the charts draw, and each second's numbers (iostat, vmstat, top, the
//! CPU strips). The page reads it, never the `Sim`: it is plain serde data, and its history
//! crosses as the seconds that landed since the last update rather than whole.

use blksim::engine::Totals;
use blksim::scenario::Scenario;
use blksim::tools::report::IntervalReport;
use blksim::tools::view::{DevOccupancy, HostOccupancy, ThreadView, Topology};
use blksim::{Interval, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shown {
    pub now: SimTime,
    pub totals: Totals,
    /// Every job is done (`Sim::is_finished`), and when that was.
    pub finished: bool,
    pub finished_at: Option<SimTime>,
    /// The scenario as it runs now (a live knob changes it).
    pub scenario: Scenario,
    /// What this scenario leaves out of the model (`Sim::model_gaps`), for the page's note.
    pub model_gaps: Vec<String>,
    /// The era knobs' values in this scenario, by key (`scenario::era::era_of`): what its
    /// `kernel` implies, or a knob's own where set; the page's kernel line shows them on demand.
    pub era: Vec<(String, String)>,
    pub threads: Vec<ThreadView>,
    /// Pids asleep in D state (the diagram marks them).
    pub pids_in_d: Vec<u32>,
    /// Each disk's head, as a fraction of the stroke.
    pub head_positions: Vec<f64>,
    /// The thread each core runs (an index into `threads`), if any.
    pub core_threads: Vec<Option<u32>>,
    /// The run's latency histogram: (upper bound in ns, count) per bucket.
    pub latency_buckets: Vec<(u64, u64)>,
    /// The latencies so far, counted per power of two of ns (the heat map's live column).
    pub latency_log2: Vec<u64>,
    /// The per-second snapshots (`Sim::history`, at most `HISTORY_MAX`), oldest first.
    pub history: VecDeque<Interval>,
    /// The stack's devices, hosts, cores and processes (the diagram's layout).
    pub topology: Topology,
    /// How full each pool, tag map and queue is now: the diagram's slot bars.
    pub occupancy: (Vec<DevOccupancy>, Vec<HostOccupancy>),
    /// The numbers of the last whole simulated second; before the first second has passed,
    /// the numbers so far (`interval_partial` is then true).
    pub interval: Option<IntervalReport>,
    pub interval_partial: bool,
    /// True once the jobs are done: `interval` then covers the whole run (averages since the
    /// start, as iostat's first report), which is the figure a lesson's question is about.
    pub interval_whole: bool,
    /// Each job section's fio figures (its clones summed) when `interval` was taken: from the
    /// job's start, as fio reports a job (`tools::fio_report::job_figures`).
    pub jobs: Vec<blksim::tools::fio_report::JobFigures>,
    /// Busy % of each core over the last second (us + sy + si).
    pub core_busy_pct: Vec<f64>,
    /// Per-thread CPU% over the last second: (name, pid, cpu%, state).
    pub top: Vec<(String, u32, f64, char)>,
}
