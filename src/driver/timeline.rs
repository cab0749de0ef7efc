//! The timeline: the run so far, to scrub both ways. The driver keeps snapshots of its `Sim`
//! (`Sim::checkpoint`: the whole simulation but its trace) every `every_ns` of simulated time,
//! at most `SNAPSHOTS_MAX`; when they are full every other one goes and the spacing doubles,
//! so memory stays bounded however long the run. A seek backwards restores the nearest earlier
//! snapshot and runs on to the exact nanosecond, the way a link's `t` runs from zero (untraced
//! but for its last half second); a seek forwards runs on. One seed gives one run, so what the
//! page then shows is what a run straight to that time shows.

use super::SimDriver;
use blksim::{Sim, SimTime};

/// Snapshots kept at most (each is a whole `Sim`: a few hundred KiB to a few MiB).
pub const SNAPSHOTS_MAX: usize = 12;
/// The first spacing between snapshots, in simulated ns (doubled each time they fill up).
pub const SNAPSHOT_EVERY_NS: u64 = 1_000_000_000;

pub struct Timeline {
    /// (when, the simulation then), oldest first; the first is at t = 0.
    snapshots: Vec<(SimTime, Sim)>,
    every_ns: u64,
    /// The furthest simulated time this run has reached: the timeline's end.
    pub reached: SimTime,
}

impl Timeline {
    pub fn new(sim: &mut Sim) -> Timeline {
        Timeline { snapshots: vec![(sim.now(), sim.checkpoint())], every_ns: SNAPSHOT_EVERY_NS, reached: sim.now() }
    }

    /// How many snapshots are kept now (for the tests and the benchmarks).
    pub fn snapshot_count(&self) -> usize {
        self.snapshots.len()
    }

    /// Notes the run's progress and takes a snapshot when one is due.
    pub(super) fn note(&mut self, sim: &mut Sim) {
        let now = sim.now();
        self.reached = self.reached.max(now);
        let last = self.snapshots.last().map_or(SimTime(0), |s| s.0);
        if now.ns() < last.ns() + self.every_ns {
            return;
        }
        self.snapshots.push((now, sim.checkpoint()));
        if self.snapshots.len() > SNAPSHOTS_MAX {
            // Keep t = 0 and every other one after it: half as many, twice as far apart.
            let mut i = 0;
            self.snapshots.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every_ns *= 2;
        }
        assert!(self.snapshots.len() <= SNAPSHOTS_MAX, "timeline snapshots over their limit");
    }
}

impl SimDriver {
    /// Moves the run to simulated time `t` (at most the furthest it has reached): forwards by
    /// running on, backwards from the nearest earlier snapshot. The catch-up runs over the next
    /// frames (`catch_up_to`), with the page drawing meanwhile.
    pub fn seek(&mut self, t: SimTime) {
        let t = t.min(self.timeline.reached.max(self.sim.now()));
        if t >= self.sim.now() {
            if t > self.sim.now() {
                self.catch_up_to = Some(t);
            }
            return;
        }
        let Some(i) = self.timeline.snapshots.iter().rposition(|(at, _)| *at <= t) else { return };
        let mut sim = self.timeline.snapshots[i].1.checkpoint();
        sim.set_trace(true);
        let timeline = std::mem::replace(&mut self.timeline, Timeline::empty());
        let mut d = SimDriver::with_sim(self.lesson.clone(), self.variant.clone(), self.overrides.clone(), self.seed, sim, timeline);
        d.speed = self.speed;
        d.playing = self.playing;
        d.catch_up_events = self.catch_up_events;
        if t > d.sim.now() {
            d.catch_up_to = Some(t);
        }
        self.succeed_by(d);
    }
}

impl Timeline {
    /// A placeholder while a timeline moves between drivers.
    fn empty() -> Timeline {
        Timeline { snapshots: Vec::new(), every_ns: SNAPSHOT_EVERY_NS, reached: SimTime(0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::RunView;

    /// Frames (16 ms apart) until no catch-up is left; the last frame's time.
    fn settle(d: &mut SimDriver, mut ts: f64) -> f64 {
        for _ in 0..10_000 {
            if d.catch_up_to.is_none() {
                break;
            }
            ts += 16.0;
            d.frame(16.0, ts);
        }
        assert!(d.catch_up_to.is_none(), "the catch-up ended");
        d.frame(16.0, ts + 16.0);
        ts + 16.0
    }

    /// What the page shows of a run: its counters, its view snapshot, top, and the event log's
    /// last records (without their `seq`, which counts only what was traced).
    fn shown(d: &SimDriver, v: &RunView) -> String {
        let log: Vec<String> =
            v.trace.log.iter().rev().take(40).map(|r| format!("{:?}", blksim::tools::trace::TraceRecord { seq: 0, ..*r })).collect();
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{}",
            serde_json::to_string(&v.shown.interval).unwrap(),
            v.shown.occupancy,
            v.shown.top,
            d.sim.now(),
            log.join("\n")
        )
    }

    #[test]
    fn scrubbing_back_shows_what_a_run_straight_to_that_time_shows() {
        let t2 = SimTime(1_700_000_000);
        // Played to 3.2 s (snapshots on the way), then scrubbed back to t2.
        // Each with the page's view of it, kept by its updates.
        let mut d = SimDriver::new("nr-requests", Some("regressed"), Vec::new(), 3).unwrap();
        let mut vd = RunView::new(d.take_update());
        d.playing = false;
        d.seek(SimTime(0));
        d.catch_up_to = Some(SimTime(3_200_000_000));
        let ts = settle(&mut d, 0.0);
        vd.apply(d.take_update());
        assert!(d.timeline.snapshot_count() >= 2, "{} snapshots", d.timeline.snapshot_count());
        assert_eq!(d.timeline.reached, SimTime(3_200_000_000));
        d.seek(t2);
        assert!(d.sim.now() < t2, "restored from an earlier snapshot");
        settle(&mut d, ts);
        vd.apply(d.take_update());
        // A fresh run to t2, as a link with t opens it.
        let mut fresh = SimDriver::new("nr-requests", Some("regressed"), Vec::new(), 3).unwrap();
        let mut vf = RunView::new(fresh.take_update());
        fresh.playing = false;
        fresh.catch_up_to = Some(t2);
        settle(&mut fresh, 0.0);
        vf.apply(fresh.take_update());
        assert_eq!(d.sim.now(), t2);
        assert!(vd.trace.log.len() > 100, "the log shows the jump's tail");
        assert_eq!(shown(&d, &vd), shown(&fresh, &vf));
        // Forwards again, to where the run had reached (not past it).
        d.seek(SimTime(9_000_000_000));
        assert_eq!(d.catch_up_to, Some(SimTime(3_200_000_000)));
    }

    #[test]
    fn a_stopped_jump_stays_where_it_got_to_and_runs_on_from_there() {
        let mut d = SimDriver::new("raid5-chunk", Some("regressed"), vec![("duration".into(), "60".into())], 1).unwrap();
        d.playing = false;
        d.catch_up_to = Some(SimTime(60_000_000_000));
        let mut ts = 0.0;
        for _ in 0..5 {
            ts += 16.0;
            d.frame(16.0, ts);
        }
        let at = d.sim.now();
        assert!(at > SimTime::ZERO && at < SimTime(60_000_000_000), "mid-jump at {at:?}");
        // Mid-jump the diagram's pools and queues are the run's now, not where the jump began.
        assert_eq!(format!("{:?}", d.shown.occupancy), format!("{:?}", d.sim.occupancy()));
        assert!(d.shown.occupancy.0.iter().any(|o| o.tags > 0 || o.pool.iter().any(|&p| p > 0)), "the readers hold requests mid-jump");
        d.stop_catch_up();
        assert_eq!((d.catch_up_to, d.playing, d.sim.now()), (None, false, at));
        assert!(d.sim.trace().enabled(), "the trace is on again");
        // Paused: frames move nothing; played, it runs on.
        d.frame(16.0, ts + 16.0);
        assert_eq!(d.sim.now(), at);
        d.playing = true;
        d.frame(16.0, ts + 32.0);
        assert!(d.sim.now() > at);
    }

    #[test]
    fn snapshots_stay_bounded_on_a_long_run() {
        let mut d = SimDriver::new("scsi-starved", Some("before"), vec![("duration".into(), "40".into())], 1).unwrap();
        d.playing = false;
        d.catch_up_to = Some(SimTime(40_000_000_000));
        settle(&mut d, 0.0);
        assert!(d.timeline.snapshot_count() <= SNAPSHOTS_MAX);
        assert!(d.timeline.snapshot_count() >= SNAPSHOTS_MAX / 2, "{}", d.timeline.snapshot_count());
    }

    #[test]
    fn a_run_stops_at_its_duration_with_the_cli_s_whole_run_numbers() {
        // Off a whole second, so the end has no one-second snapshot of its own.
        let overrides = vec![("duration".to_string(), "1.5".to_string())];
        let mut d = SimDriver::new("nr-requests", Some("regressed"), overrides.clone(), 1).unwrap();
        d.fast_forward(5.0);
        assert_eq!(d.sim.now(), SimTime(1_500_000_000));
        assert!(d.is_done() && !d.sim.is_finished(), "stopped by its duration, its jobs not done");
        // Nothing moves it on: frames, a step, 1 ms, a skip.
        let events = d.sim.totals().events;
        let shown = d.shown.interval.clone().unwrap();
        // Its counters are the whole run's, and stay so frame after frame (not the last whole
        // second's, which is the newest snapshot in the history).
        for i in 0..3 {
            d.frame(16.0, 16.0 * f64::from(i + 1));
            assert!(d.shown.interval_whole && !d.shown.interval_partial, "frame {i}");
            assert_eq!(d.shown.interval.as_ref().map(|iv| iv.end_s), Some(1.5), "frame {i}");
        }
        d.step_event(64.0);
        d.step_ms(80.0);
        d.fast_forward(1.0);
        assert_eq!((d.sim.now(), d.sim.totals().events), (SimTime(1_500_000_000), events));
        // Those of `blksim run --duration 1.5`.
        let cfg = d.lesson.config("regressed", &overrides).unwrap();
        let mut cli = blksim::Sim::new(&cfg, 1);
        cli.run_until(SimTime(1_500_000_000));
        let cur = cli.cumulative();
        let whole = blksim::tools::report::IntervalReport::between(&cli, &blksim::Interval::zero_for(&cur), &cur);
        assert_eq!((shown.end_s, shown.span_s), (1.5, 1.5));
        assert_eq!(serde_json::to_string(&shown).unwrap(), serde_json::to_string(&whole).unwrap());
    }

    #[test]
    fn a_link_past_the_run_s_end_opens_at_the_end_and_says_so() {
        let mut d = SimDriver::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&duration=0.5&seed=2&t=7", "nr-requests");
        let notice = d.notice.clone().unwrap_or_default();
        assert!(notice.contains("t: 7 s is past the run's end at 0.5 s"), "{notice}");
        assert!(d.link_clean.as_deref().is_some_and(|l| l.contains("t=0.5") && l.contains("duration=0.5")), "{:?}", d.link_clean);
        settle(&mut d, 0.0);
        assert_eq!(d.sim.now(), SimTime(500_000_000));
        assert!(d.is_done() && d.shown.interval_whole);
        // A longer duration that still ends before t: the notice names the new end.
        d.apply_knob("duration", "5", &[]).unwrap();
        assert!(d.notice.as_deref().is_some_and(|n| n.contains("t: 7 s is past the run's end at 5 s")), "{:?}", d.notice);
        // One that reaches t: the notice withdraws it, and the run goes on to t, paused there.
        d.apply_knob("duration", "8", &[]).unwrap();
        assert_eq!(d.notice, None);
        settle(&mut d, 0.0);
        assert_eq!(d.sim.now(), SimTime(7_000_000_000));
        assert!(!d.playing && !d.is_done());
        // With another fault, only the t is withdrawn.
        let mut d = SimDriver::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&duration=0.5&queue.depth=abc&t=7", "nr-requests");
        assert!(d.notice.as_deref().is_some_and(|n| n.contains("queue.depth") && n.contains("t: 7 s")), "{:?}", d.notice);
        d.apply_knob("duration", "8", &[]).unwrap();
        let n = d.notice.clone().unwrap_or_default();
        assert!(n.contains("queue.depth") && !n.contains("t: 7 s"), "{n}");
    }

    #[test]
    fn a_link_past_where_every_job_finished_says_so() {
        // nr-requests' fixed variant: its writers are done in about 5.3 s.
        let mut d = SimDriver::from_fragment("#/lesson/nr-requests?v=1&variant=fixed&seed=1&t=20", "nr-requests");
        assert_eq!(d.notice, None);
        settle(&mut d, 0.0);
        let done = d.sim.finished_at().expect("the jobs finish");
        assert!(done < SimTime(20_000_000_000));
        let n = d.notice.clone().unwrap_or_default();
        assert!(n.contains("t = 20.000 s is past the run's end: every job was done at"), "{n}");
    }

    #[test]
    fn a_link_without_its_version_opens_what_it_names_and_says_so_plainly() {
        let d = SimDriver::from_fragment("#/lesson/nr-requests?variant=fixed&seed=3", "nr-requests");
        assert_eq!((d.variant.as_str(), d.seed), ("fixed", 3));
        assert_eq!(d.notice.as_deref(), Some("This link has no v=; it was read as v=1, the link format of this build."));
        assert_eq!(d.link_clean.as_deref(), Some("#/lesson/nr-requests?v=1&variant=fixed&seed=3"));
    }
}
