//! The timeline: the run so far, to scrub both ways. The run keeps snapshots of its `Sim`
//! (`Sim::checkpoint`: the whole simulation but its trace) every `every_ns` of simulated time,
//! at most `SNAPSHOTS_MAX`; when they are full every other one goes and the spacing doubles,
//! so memory stays bounded however long the run. A seek backwards restores the nearest earlier
//! snapshot and runs on to the exact nanosecond, the way a link's `t` runs from zero (untraced
//! but for its last half second); a seek forwards runs on. One seed gives one run, so what the
//! page then shows is what a run straight to that time shows.

use super::Run;
use blksim::{Sim, SimTime};

/// Snapshots kept at most (each is a whole `Sim`: a few hundred KiB to a few MiB).
pub const SNAPSHOTS_MAX: usize = 12;
/// The first spacing between snapshots, in simulated ns (doubled each time they fill up).
pub const SNAPSHOT_EVERY_NS: u64 = 1_000_000_000;

pub struct Timeline {
    /// (when, the simulation then, how many of the run's live writes it had taken: the
    /// later ones are made again as a replay from it passes them), oldest first; the first is
    /// at t = 0.
    snapshots: Vec<(SimTime, Sim, u32)>,
    every_ns: u64,
    /// The furthest simulated time this run has reached: the timeline's end.
    pub reached: SimTime,
}

impl Timeline {
    pub fn new(sim: &mut Sim) -> Timeline {
        Timeline { snapshots: vec![(sim.now(), sim.checkpoint(), 0)], every_ns: SNAPSHOT_EVERY_NS, reached: sim.now() }
    }

    /// How many snapshots are kept now (for the tests and the benchmarks).
    pub fn snapshot_count(&self) -> usize {
        self.snapshots.len()
    }

    /// Notes the run's progress and takes a snapshot when one is due (`writes_done`: the live
    /// writes the run has taken so far).
    pub(super) fn note(&mut self, sim: &mut Sim, writes_done: u32) {
        let now = sim.now();
        self.reached = self.reached.max(now);
        let last = self.snapshots.last().map_or(SimTime(0), |s| s.0);
        if now.ns() < last.ns() + self.every_ns {
            return;
        }
        self.snapshots.push((now, sim.checkpoint(), writes_done));
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

impl Run {
    /// Moves the run to simulated time `t` (at most the furthest it has reached): forwards by
    /// running on, backwards from the nearest earlier snapshot. The catch-up runs over the next
    /// frames (`catch_up_to`), with the page drawing meanwhile.
    pub fn seek(&mut self, t: SimTime) {
        let t = t.min(self.timeline.reached.max(self.sim.now()));
        if t >= self.sim.now() {
            if t > self.sim.now() {
                self.catch_up_to = Some(t);
            } else {
                // Asked for where the run stands while it runs on to another time (a rewind
                // restored a snapshot here and was going on from it): it stays here.
                self.end_catch_up_here();
            }
            return;
        }
        let Some(i) = self.timeline.snapshots.iter().rposition(|(at, _, _)| *at <= t) else { return };
        let (_, snapshot, writes_done) = &mut self.timeline.snapshots[i];
        let (mut sim, writes_done) = (snapshot.checkpoint(), *writes_done);
        sim.set_trace(true);
        // The run's length is the run's, whenever it was set (a link carries it), not a write
        // at a time: the restored run ends where this one does.
        let duration = self.sim.config().scenario.duration_s.to_string();
        let applied = sim.apply_live("duration", &duration);
        debug_assert!(matches!(applied, Ok(true)), "duration applies live: {applied:?}");
        let timeline = std::mem::replace(&mut self.timeline, Timeline::empty());
        let mut d = Run::with_sim(self.lesson.clone(), self.variant.clone(), self.overrides.clone(), self.seed, sim, timeline);
        // The live writes made so far: the replay makes the later ones again where they were.
        d.live_writes = std::mem::take(&mut self.live_writes);
        d.writes_done = writes_done;
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
    /// The run takes another course from `now` (a live write made after a rewind): the
    /// snapshots after it, and the reach past it, were of the course it left.
    pub(super) fn forget_after(&mut self, now: SimTime) {
        self.snapshots.retain(|(at, _, _)| *at <= now);
        self.reached = now;
    }

    /// A placeholder while a timeline moves between runs.
    fn empty() -> Timeline {
        Timeline { snapshots: Vec::new(), every_ns: SNAPSHOT_EVERY_NS, reached: SimTime(0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::RunView;

    /// Frames (16 ms apart) until no catch-up is left; the last frame's time.
    fn settle(d: &mut Run, mut ts: f64) -> f64 {
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
    fn shown(d: &Run, v: &RunView) -> String {
        let log: Vec<String> = v
            .trace
            .log
            .iter()
            .rev()
            .take(40)
            .map(|r| format!("{:?}", blksim::kernel::trace::blktrace::TraceRecord { seq: 0, ..*r }))
            .collect();
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
        let mut d = Run::new("nr-requests", Some("regressed"), Vec::new(), 3).unwrap();
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
        let mut fresh = Run::new("nr-requests", Some("regressed"), Vec::new(), 3).unwrap();
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

    /// A run of nr-requests to 1.3 s, one event more (→, which may stop mid-instant), a live
    /// `nr_requests` write there, then on to 2.6 s: each with its page view.
    fn with_a_live_write() -> (Run, RunView) {
        let mut d = Run::new("nr-requests", Some("regressed"), Vec::new(), 3).unwrap();
        let mut v = RunView::new(d.take_update());
        d.playing = false;
        d.catch_up_to = Some(SimTime(1_300_000_000));
        let ts = settle(&mut d, 0.0);
        d.step_event(ts);
        let said = d.apply_knob("queue.nr_requests", "16", &[]).unwrap();
        assert!(said.contains("applied live"), "{said}");
        // And the elevator, at the same point: two writes at one event count.
        let said = d.apply_knob("queue.scheduler", "cfq", &[]).unwrap();
        assert!(said.contains("applied live"), "{said}");
        d.catch_up_to = Some(SimTime(2_600_000_000));
        settle(&mut d, ts + 16.0);
        v.apply(d.take_update());
        (d, v)
    }

    #[test]
    fn a_rewind_past_a_live_knob_replays_it_where_it_was_written() {
        let (straight, vs) = with_a_live_write();
        let (mut d, mut vd) = with_a_live_write();
        // Back before the write: the run, and the Knobs tab, have the old value.
        d.seek(SimTime(900_000_000));
        let ts = settle(&mut d, 10_000.0);
        vd.apply(d.take_update());
        assert_eq!(d.sim.now(), SimTime(900_000_000));
        assert_eq!(d.sim.config().scenario.queue.nr_requests, 128);
        assert_eq!(vd.shown.scenario.queue.nr_requests, 128);
        assert_eq!(d.writes_done, 0);
        assert_eq!(vd.shown.scenario.queue.scheduler, straight.lesson.config("regressed", &[]).unwrap().scenario.queue.scheduler);
        // Forwards past it again: the write is made where it was, and the run is the one
        // that took it there (counters, pools, log, the Knobs tab), event for event.
        d.seek(SimTime(2_600_000_000));
        settle(&mut d, ts);
        vd.apply(d.take_update());
        assert_eq!(d.writes_done, 2);
        assert_eq!(vd.shown.scenario.queue.nr_requests, 16);
        assert_eq!(vd.shown.scenario.queue.scheduler, vs.shown.scenario.queue.scheduler);
        assert_eq!(d.sim.totals().events, straight.sim.totals().events);
        assert_eq!(shown(&d, &vd), shown(&straight, &vs));
        assert_eq!(serde_json::to_string(&vd.shown).unwrap(), serde_json::to_string(&vs.shown).unwrap());
        // Back before it, then one event at a time across it (→): the write comes before the
        // event that followed it.
        let (mut e, _) = with_a_live_write();
        e.seek(SimTime(1_300_000_000));
        settle(&mut e, 20_000.0);
        while e.writes_done == 0 {
            e.step_event(30_000.0);
        }
        // Both made as the step arrives where they were made, as the run first stood there.
        assert_eq!((e.writes_done, e.sim.totals().events), (2, e.live_writes[0].events));
        e.catch_up_to = Some(SimTime(2_600_000_000));
        settle(&mut e, 40_000.0);
        assert_eq!(e.sim.totals().events, straight.sim.totals().events);
        assert_eq!(format!("{:?}", e.sim.occupancy()), format!("{:?}", straight.sim.occupancy()));
        // A knob written after a rewind starts another course from there: the later write and
        // the reach past it are gone.
        d.seek(SimTime(900_000_000));
        settle(&mut d, 50_000.0);
        d.apply_knob("queue.nr_requests", "32", &[]).unwrap();
        assert_eq!((d.live_writes.len(), d.writes_done), (1, 1));
        assert_eq!(d.timeline.reached, SimTime(900_000_000));
        d.seek(SimTime(2_600_000_000));
        assert_eq!(d.catch_up_to, None, "nothing past the new course's reach");
    }

    #[test]
    fn a_stopped_jump_stays_where_it_got_to_and_runs_on_from_there() {
        let mut d = Run::new("raid5-chunk", Some("regressed"), vec![("duration".into(), "60".into())], 1).unwrap();
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
        let mut d = Run::new("scsi-starved", Some("before"), vec![("duration".into(), "40".into())], 1).unwrap();
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
        let mut d = Run::new("nr-requests", Some("regressed"), overrides.clone(), 1).unwrap();
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
        let mut d = Run::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&duration=0.5&seed=2&t=7", "nr-requests");
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
        let mut d = Run::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&duration=0.5&queue.depth=abc&t=7", "nr-requests");
        assert!(d.notice.as_deref().is_some_and(|n| n.contains("queue.depth") && n.contains("t: 7 s")), "{:?}", d.notice);
        d.apply_knob("duration", "8", &[]).unwrap();
        let n = d.notice.clone().unwrap_or_default();
        assert!(n.contains("queue.depth") && !n.contains("t: 7 s"), "{n}");
    }

    #[test]
    fn a_link_past_where_every_job_finished_says_so() {
        // nr-requests' fixed variant: its writers are done in about 5.3 s.
        let mut d = Run::from_fragment("#/lesson/nr-requests?v=1&variant=fixed&seed=1&t=20", "nr-requests");
        assert_eq!(d.notice, None);
        settle(&mut d, 0.0);
        let done = d.sim.finished_at().expect("the jobs finish");
        assert!(done < SimTime(20_000_000_000));
        let n = d.notice.clone().unwrap_or_default();
        assert!(n.contains("t = 20.000 s is past the run's end: every job was done at"), "{n}");
    }

    #[test]
    fn a_link_without_its_version_opens_what_it_names_and_says_so_plainly() {
        let d = Run::from_fragment("#/lesson/nr-requests?variant=fixed&seed=3", "nr-requests");
        assert_eq!((d.variant.as_str(), d.seed), ("fixed", 3));
        assert_eq!(d.notice.as_deref(), Some("This link has no v=; it was read as v=1, the link format of this build."));
        assert_eq!(d.link_clean.as_deref(), Some("#/lesson/nr-requests?v=1&variant=fixed&seed=3"));
    }
}
