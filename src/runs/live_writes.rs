//! The sysfs writes a run has taken live (a knob applied while it ran: `nr_requests`,
//! `queue_depth`, the elevator and its tunables), kept with where in the run each was made, so
//! the timeline replays them: a rewind restores a snapshot from before a write, and the replay
//! makes the write again at the same point (after the same events, at the same clock), as the
//! run first took it. What the page then shows at any time is what the run showed there, the
//! Knobs tab included (the old value before the write, the new one after).

use super::Run;
use crate::protocol::LiveWrite;
use blksim::SimTime;

/// Live writes one run keeps at most; past it a knob that applies live is refused, and Reset
/// starts a run with all the settings from t = 0.
pub const LIVE_WRITES_MAX: usize = 256;

impl Run {
    /// Notes a knob applied live now (its writes, as made).
    pub(super) fn note_live_write(&mut self, writes: Vec<(String, String)>) {
        // A write made while the timeline stands before later ones (after a rewind) is a new
        // history from here: the later ones, and the snapshots that hold them, are gone.
        self.live_writes.truncate(self.writes_done as usize);
        self.timeline.forget_after(self.sim.now());
        self.live_writes.push(LiveWrite { at: self.sim.now(), events: self.sim.totals().events, writes });
        self.writes_done = self.live_writes.len() as u32;
        assert!(self.live_writes.len() <= LIVE_WRITES_MAX, "live writes over their limit");
    }

    /// Whether another live write may be kept.
    pub(super) fn live_writes_full(&self) -> bool {
        self.writes_done as usize >= LIVE_WRITES_MAX
    }

    /// The next live write still to make again, if the run has come back before it.
    fn next_write(&self) -> Option<&LiveWrite> {
        self.live_writes.get(self.writes_done as usize)
    }

    /// Makes the next live write again (the run stands where it was first made).
    fn make_next_write(&mut self) {
        let Some(w) = self.next_write().cloned() else { return };
        for (k, v) in &w.writes {
            // It applied here before, to the same run in the same state.
            let applied = self.sim.apply_live(k, v);
            debug_assert!(matches!(applied, Ok(true)), "{k}={v} replays live: {applied:?}");
        }
        self.writes_done += 1;
        self.refresh_config();
    }

    /// Runs the simulation towards `t`, at most `max_events` events (as
    /// `Sim::run_until_bounded`: a budget that runs out mid-instant finishes the instant),
    /// making on the way the live writes a rewind went back before, each at its own point.
    /// Returns the events run.
    pub(super) fn run_sim(&mut self, t: SimTime, max_events: u64) -> u64 {
        let mut ran = 0;
        while let Some(w) = self.next_write() {
            // A write at a later clock than `t` is not on this way: a run to `t` stops short
            // of it, since the events after it came later than its clock (or in its instant,
            // when it was made after → had stopped mid-instant).
            if w.at > t {
                break;
            }
            let (at, events) = (w.at, w.events);
            // The events before it, one at a time so as not to pass its count.
            // (`step` is false once the run is over: never reached before the write, since
            // the run is the one that took it, but a loop must not hang on it.)
            while self.sim.totals().events < events && ran < max_events && self.sim.step() {
                ran += 1;
            }
            if self.sim.totals().events < events {
                // The budget ran out first: finish the instant, as a bounded run does (the
                // clock means every event up to it has run), but not past the write.
                let now = self.sim.now();
                while self.sim.totals().events < events && self.sim.next_event_time() == Some(now) && self.sim.step() {
                    ran += 1;
                }
                return ran;
            }
            if self.sim.now() < at {
                // Its clock, as it was when it was made: no event comes between.
                self.sim.run_until(at);
            }
            self.make_next_write();
        }
        ran + self.sim.run_until_bounded(t, max_events.saturating_sub(ran))
    }

    /// Runs exactly one event (→), with the live writes made around it: those made before it
    /// (at the run's count now), then those made right where it leaves the run.
    pub(super) fn step_sim(&mut self) {
        while let Some(at) = self.next_write().filter(|w| w.events == self.sim.totals().events).map(|w| w.at) {
            if self.sim.now() < at {
                self.sim.run_until(at);
            }
            self.make_next_write();
        }
        self.sim.step();
        // Those made right where the event leaves the run (its count, its clock): the run as
        // it first stood there had them, as a run to that time (`run_sim`) does.
        while self.next_write().is_some_and(|w| w.events == self.sim.totals().events && w.at == self.sim.now()) {
            self.make_next_write();
        }
    }
}
