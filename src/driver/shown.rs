//! What the page shows of a run's simulation, but its trace (`Shown`): the clock, the counters,
//! the configuration, the topology, threads, heads and pools the diagram draws, the latencies
//! and the per-second history the charts draw, and each second's numbers (iostat, vmstat, top,
//! the CPU strips). The driver refreshes it after everything that moves the run (a
//! frame, a step, a jump, a knob), and the page reads it, never the `Sim`: this is the boundary
//! a Web Worker that owns the `Sim` would post across (issue 22), so it is plain serde data,
//! and its history grows by the seconds that landed since the last refresh rather than being
//! copied whole.

use super::SimDriver;
use blksim::engine::{Totals, HISTORY_MAX};
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
    /// Busy % of each core over the last second (us + sy + si).
    pub core_busy_pct: Vec<f64>,
    /// Per-thread CPU% over the last second: (name, pid, cpu%, state).
    pub top: Vec<(String, u32, f64, char)>,
}

impl SimDriver {
    /// Takes what the page shows from the simulation as it stands.
    pub(super) fn refresh_shown(&mut self) {
        let sim = &self.sim;
        let s = &mut self.shown;
        s.now = sim.now();
        s.totals = sim.totals().clone();
        s.finished = sim.is_finished();
        s.finished_at = sim.finished_at();
        s.threads = sim.threads_view();
        s.pids_in_d = sim.pids_in_d();
        s.head_positions = sim.head_positions();
        s.core_threads = sim.core_threads();
        s.latency_buckets = sim.latency_buckets();
        s.latency_log2 = sim.latency_log2();
        s.occupancy = sim.occupancy();
        // The seconds that landed since the last refresh. (A driver's run only moves on: a
        // rewind or a restart makes a new driver, with its own `Shown`.)
        let last_end = s.history.back().map(|iv| iv.end);
        s.history.extend(sim.history_after(last_end).cloned());
        while s.history.len() > HISTORY_MAX {
            s.history.pop_front();
        }
    }

    /// Takes the scenario, the topology it builds and what the model leaves out of it (after a
    /// new run or a live knob).
    pub(super) fn refresh_config(&mut self) {
        self.shown.scenario = self.sim.config().scenario.clone();
        self.shown.topology = self.sim.topology();
        self.shown.model_gaps = self.sim.model_gaps();
        self.config_unsent = true;
    }

    /// The run's simulated time.
    pub fn now(&self) -> SimTime {
        self.shown.now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the page reads, taken straight from the simulation.
    fn straight(d: &SimDriver) -> Shown {
        let sim = &d.sim;
        Shown {
            now: sim.now(),
            totals: sim.totals().clone(),
            finished: sim.is_finished(),
            finished_at: sim.finished_at(),
            scenario: sim.config().scenario.clone(),
            model_gaps: sim.model_gaps(),
            threads: sim.threads_view(),
            pids_in_d: sim.pids_in_d(),
            head_positions: sim.head_positions(),
            core_threads: sim.core_threads(),
            latency_buckets: sim.latency_buckets(),
            latency_log2: sim.latency_log2(),
            history: sim.history().cloned().collect(),
            topology: sim.topology(),
            occupancy: sim.occupancy(),
            // Each second's numbers are the driver's (`stats.rs`), from the snapshots.
            ..d.shown.clone()
        }
    }

    #[test]
    fn what_the_page_reads_is_the_simulation_s_after_frames_steps_jumps_knobs_and_a_rewind() {
        let mut d = SimDriver::new("nr-requests", Some("regressed"), Vec::new(), 2).unwrap();
        assert_eq!(d.shown, straight(&d), "a new run");
        let mut ts = 0.0;
        for _ in 0..20 {
            ts += 16.0;
            d.frame(16.0, ts);
        }
        assert_eq!(d.shown, straight(&d), "after frames");
        d.step_event(ts);
        d.step_ms(ts);
        assert_eq!(d.shown, straight(&d), "after steps");
        // A jump over several seconds: the history grows by the seconds that landed. A small
        // budget per frame, so that the traced tail, too, takes several frames.
        d.catch_up_events = 300;
        d.catch_up_to = Some(SimTime(2_600_000_000));
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            assert_eq!(d.shown.now, d.sim.now(), "mid-jump, the clock the progress bar reads");
        }
        assert!(d.shown.history.len() >= 2, "{} seconds", d.shown.history.len());
        assert_eq!(d.shown, straight(&d), "after a jump");
        d.apply_knob("queue.nr_requests", "512", &[]).unwrap();
        assert_eq!(d.shown.scenario.queue.nr_requests, 512);
        assert_eq!(d.shown, straight(&d), "after a live knob");
        // Back to 1.2 s: the history is the rewound run's, not the one it left.
        d.seek(SimTime(1_200_000_000));
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
        }
        assert_eq!(d.shown, straight(&d), "after a rewind");
        assert_eq!(d.shown.history.len(), 1);
        // It crosses a worker's postMessage as JSON and comes back the same (to the last bit
        // of its floats, with serde_json's `float_roundtrip`).
        let json = serde_json::to_string(&d.shown).unwrap();
        assert_eq!(serde_json::from_str::<Shown>(&json).unwrap(), d.shown);
    }
}
