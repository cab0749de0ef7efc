//! The page's copy of a run (`RunView`), kept by the run's `RunUpdate`s: all the page reads of a
//! run, with its lesson and the pointer's place on its diagram. The page reads a run only
//! through its `RunView` (`SessionView` keeps them), so the runs can be in a Web Worker that
//! posts the updates; the tests check that a view kept through the worker's encoding is the one
//! kept in process, and shows what the run shows.

use super::{Hover, TraceView};
use crate::protocol::{RunState, RunUpdate, Shown};
use blksim::course::lessons::{self, Lesson};
use blksim::engine::HISTORY_MAX;
use blksim::SimTime;
use std::cell::RefCell;

/// The page's copy of a run, kept by its updates: what the page reads of a run (its own
/// pointer on the run's diagram besides).
#[derive(Debug)]
pub struct RunView {
    pub shown: Shown,
    pub trace: TraceView,
    pub state: RunState,
    /// The run's lesson (`state.lesson`'s).
    pub lesson: Lesson,
    /// Where the pointer is on this run's diagram and what the last frame drew (the diagram
    /// fills it while drawing, through a shared reference).
    pub hover: RefCell<Hover>,
}

/// Where the run stands, read as the run's own fields (`d.variant`, `d.playing`).
impl std::ops::Deref for RunView {
    type Target = RunState;
    fn deref(&self) -> &RunState {
        &self.state
    }
}

impl RunView {
    /// A view of a run from its first update.
    pub fn new(first: RunUpdate) -> RunView {
        let lesson = lessons::find(&first.state.lesson)
            .or_else(|_| lessons::find(crate::runs::FALLBACK_LESSON))
            .expect("the fallback lesson exists");
        let mut v =
            RunView { shown: Shown::default(), trace: TraceView::default(), state: RunState::default(), lesson, hover: Default::default() };
        v.apply(first);
        v
    }

    /// Takes an update of the run (its history grows by the new seconds, its trace view takes
    /// the inputs in order).
    pub fn apply(&mut self, u: RunUpdate) {
        if u.fresh {
            // A new run: its own history and trace (the reader's log pause stays).
            self.shown.history.clear();
            self.trace = TraceView { log_paused: self.trace.log_paused, ..TraceView::default() };
        }
        if u.state.lesson != self.lesson.id {
            if let Ok(l) = lessons::find(&u.state.lesson) {
                self.lesson = l;
            }
        }
        let mut history = std::mem::take(&mut self.shown.history);
        history.extend(u.history_new);
        while history.len() > HISTORY_MAX {
            history.pop_front();
        }
        let old = std::mem::replace(&mut self.shown, Shown { history, ..u.shown });
        if !u.config_included {
            (self.shown.scenario, self.shown.topology, self.shown.model_gaps, self.shown.era) =
                (old.scenario, old.topology, old.model_gaps, old.era);
        }
        if !u.interval_included {
            (self.shown.interval, self.shown.jobs) = (old.interval, old.jobs);
        }
        for input in &u.trace {
            self.trace.take(input);
        }
        self.state = u.state;
    }

    /// The run's simulated time.
    pub fn now(&self) -> SimTime {
        self.shown.now
    }

    /// Where the run ends: its scenario's `duration` (`Run::end`).
    pub fn end(&self) -> SimTime {
        SimTime::from_secs_f64(self.shown.scenario.duration_s)
    }

    /// Nothing is left to run: every job is done, or the clock reached the run's end.
    pub fn is_done(&self) -> bool {
        self.shown.finished || self.now() >= self.end()
    }

    /// Pid and command name of a trace record's thread (names and pids never change).
    pub fn thread_of(&self, thread: u32) -> (u32, &str) {
        self.shown.threads.get(thread as usize).map_or((0, "?"), |t| (t.pid, t.name.as_str()))
    }

    /// The tokens' tween at the run's speed.
    pub fn tween_ms(&self) -> f64 {
        super::tokens::tween_ms_at(self.state.speed)
    }

    /// This run as a link fragment at simulated time `t`; `b` is the A/B view's second
    /// variant, if open (its clock may be past this run's end).
    pub fn fragment(&self, b: Option<crate::runs::BLink>, t: SimTime) -> String {
        // A link replays at most T_MAX_S: past it, the link opens there (the page says so).
        let t = t.as_secs_f64().min(blksim::course::link::T_MAX_S);
        // Exact to the nanosecond: the link replays to the same event.
        self.fragment_for(&self.state.variant, b, self.state.seed, (t > 0.0).then_some(t), Some(self.state.speed))
    }

    /// The state without the time point and speed: what a history entry records.
    pub fn state_fragment(&self, b: Option<crate::runs::BLink>) -> String {
        self.fragment_for(&self.state.variant, b, self.state.seed, None, None)
    }

    /// A link to this lesson with this run's knobs, as `variant` (and B) with `seed`, opened at
    /// `t` simulated seconds if given: what a seed sweep's best and worst runs link to.
    pub fn fragment_for(&self, variant: &str, b: Option<crate::runs::BLink>, seed: u64, t: Option<f64>, speed: Option<f64>) -> String {
        crate::runs::link_fragment(&self.lesson.id, variant, b, &self.state.overrides, seed, t, speed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::Run;

    /// An update as a worker's postMessage carries it.
    fn through_the_protocol(u: &RunUpdate) -> RunUpdate {
        crate::protocol::decode(&crate::protocol::encode(u).unwrap()).unwrap()
    }

    #[test]
    fn a_view_kept_by_updates_through_the_protocol_shows_what_one_kept_in_process_shows() {
        let mut d = Run::from_fragment("#/lesson/raid5-chunk?v=1&variant=regressed&seed=3&t=0.3", "raid5-chunk");
        // `view` takes each update through the protocol's bincode, `here` as it is.
        let first = d.take_update();
        let (mut view, mut here) = (RunView::new(through_the_protocol(&first)), RunView::new(first));
        // After every update the view shows the run's `Shown` (the history aside, which the
        // view keeps by its new seconds), though most updates leave out the scenario, topology
        // and second's report, unchanged since the one before.
        let json = |v: &Shown| serde_json::to_string(&Shown { history: Default::default(), ..v.clone() }).unwrap();
        let (mut slim, mut posts) = (0, 0);
        let mut post = |d: &mut Run| {
            let u = d.take_update();
            slim += usize::from(!u.config_included && !u.interval_included);
            posts += 1;
            view.apply(through_the_protocol(&u));
            here.apply(u);
            assert_eq!(json(&view.shown), json(&d.shown), "update {posts}");
            assert_eq!(json(&here.shown), json(&d.shown), "update {posts}");
            (slim, posts)
        };
        // The link's jump, frames playing, a skip of 2.5 s past a few whole seconds, frames.
        let mut ts = 0.0;
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d);
        }
        d.playing = true;
        for _ in 0..20 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d);
        }
        // A knob taken live changes the scenario the view shows, in the run as it goes.
        d.apply_knob("queue.nr_requests", "64", &[]).unwrap();
        post(&mut d);
        d.fast_forward(2.5);
        post(&mut d);
        for _ in 0..20 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d);
        }
        assert!(d.shown.history.len() >= 2 && d.shown.interval.is_some(), "whole seconds on show");
        // A rewind to 1.2 s makes a new run from a snapshot: the view follows it, not the old.
        d.seek(SimTime(1_200_000_000));
        post(&mut d);
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d);
        }
        let mut counts = (0, 0);
        for _ in 0..10 {
            ts += 16.0;
            d.frame(16.0, ts);
            counts = post(&mut d);
        }
        assert!(counts.0 * 2 > counts.1, "most updates are slim: {counts:?}");
        assert_eq!(view.shown.scenario.queue.nr_requests, 64);
        // The run's per-second report and history, byte for byte, and the same trace view.
        let json = |v: &Shown| serde_json::to_string(v).unwrap();
        assert_eq!(json(&view.shown), json(&d.shown));
        assert_eq!(json(&here.shown), json(&d.shown));
        assert!(here.trace.log.len() > 1_000 && !here.trace.btt.is_empty(), "{} records", here.trace.log.len());
        assert_eq!(format!("{:?}", view.trace.log), format!("{:?}", here.trace.log));
        assert_eq!(
            format!("{:?}", (&view.trace.btt, &view.trace.requests, &view.trace.bios, &view.trace.trace_gaps)),
            format!("{:?}", (&here.trace.btt, &here.trace.requests, &here.trace.bios, &here.trace.trace_gaps))
        );
        // The log is the rewound run's: nothing in it past the run's clock.
        assert!(here.trace.log.iter().all(|r| r.time <= d.now()));
        let st = &view.state;
        assert_eq!((st.playing, st.speed, st.catch_up_to, st.seed), (d.playing, d.speed, d.catch_up_to, d.seed));
        assert_eq!(st.reached, d.timeline.reached.max(d.now()));
    }
}
