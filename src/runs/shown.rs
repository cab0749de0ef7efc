//! A run's `Shown` (`crate::protocol::shown`), refreshed after everything that moves the run (a
//! frame, a step, a jump, a knob); its history grows by the seconds that landed since the last
//! refresh rather than being copied whole.

use super::Run;
use blksim::engine::HISTORY_MAX;
use blksim::SimTime;

impl Run {
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
        // The seconds that landed since the last refresh. (A `Run` only moves on: a
        // rewind or a restart makes a new `Run`, with its own `Shown`.)
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
        self.shown.era = blksim::scenario::era::era_of(&self.sim.config().scenario).into_iter().collect();
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
    use crate::protocol::Shown;

    /// What the page reads, taken straight from the simulation.
    fn straight(d: &Run) -> Shown {
        let sim = &d.sim;
        Shown {
            now: sim.now(),
            totals: sim.totals().clone(),
            finished: sim.is_finished(),
            finished_at: sim.finished_at(),
            scenario: sim.config().scenario.clone(),
            model_gaps: sim.model_gaps(),
            era: blksim::scenario::era::era_of(&sim.config().scenario).into_iter().collect(),
            threads: sim.threads_view(),
            pids_in_d: sim.pids_in_d(),
            head_positions: sim.head_positions(),
            core_threads: sim.core_threads(),
            latency_buckets: sim.latency_buckets(),
            latency_log2: sim.latency_log2(),
            history: sim.history().cloned().collect(),
            topology: sim.topology(),
            occupancy: sim.occupancy(),
            // Each second's numbers are the run's (`stats.rs`), from the snapshots.
            ..d.shown.clone()
        }
    }

    #[test]
    fn what_the_page_reads_is_the_simulation_s_after_frames_steps_jumps_knobs_and_a_rewind() {
        let mut d = Run::new("nr-requests", Some("regressed"), Vec::new(), 2).unwrap();
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
