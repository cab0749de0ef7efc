//! What a run would post to the page each frame from a Web Worker (`RunUpdate`), and the page's
//! copy of the run it keeps up to date (`RunView`): what it shows (`Shown`, its history sent as
//! the seconds that landed since the last update), what its trace view was handed
//! (`TraceInput`s, in order), and where the run stands (playing, speed, a jump's target, the
//! notice, the timeline's reach), and whether it is a new run (a restart or a rewind makes a new
//! driver). This is issue 22's protocol: the page does not use it yet (it
//! still reads its driver in process); its test checks that a view kept by updates through JSON
//! shows what the driver itself shows.

use super::{Shown, SimDriver, TraceInput, TraceView};
use blksim::engine::HISTORY_MAX;
use blksim::{Interval, SimTime};
use serde::{Deserialize, Serialize};

/// Where a run stands: which run it is, whether it plays and how fast, a jump's target, what
/// the page says about its link, and the timeline's end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub lesson: String,
    pub variant: String,
    pub overrides: Vec<(String, String)>,
    pub seed: u64,
    pub playing: bool,
    pub speed: f64,
    pub achieved_speed: f64,
    pub catch_up_to: Option<SimTime>,
    pub notice: Option<String>,
    pub link_clean: Option<String>,
    /// The timeline's end: the furthest this run has reached.
    pub reached: SimTime,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunUpdate {
    /// A new run (the first update of a driver: a new page, a restart, a rewind, a knob that
    /// restarts): the view starts its history and its trace view afresh.
    pub fresh: bool,
    /// What the page shows, without its history (sent in `history_new`).
    pub shown: Shown,
    /// The seconds that landed since the last update, oldest first.
    pub history_new: Vec<Interval>,
    pub trace: Vec<TraceInput>,
    pub state: RunState,
}

/// The page's copy of a run, kept by its updates.
#[derive(Clone, Debug, Default)]
pub struct RunView {
    pub shown: Shown,
    pub trace: TraceView,
    pub state: RunState,
}

impl SimDriver {
    /// What changed since the last update (the first one: everything), for the page's view.
    /// The trace view's inputs are kept from the first call on.
    pub fn take_update(&mut self) -> RunUpdate {
        self.keep_trace_inputs();
        // The history goes as its new seconds only: set aside while `Shown` is copied.
        let history = std::mem::take(&mut self.shown.history);
        let shown = self.shown.clone();
        self.shown.history = history;
        let sent = self.update_history_end;
        let from = self.shown.history.partition_point(|iv| sent.is_some_and(|end| iv.end <= end));
        let history_new: Vec<Interval> = self.shown.history.range(from..).cloned().collect();
        if let Some(last) = history_new.last() {
            self.update_history_end = Some(last.end);
        }
        let fresh = !std::mem::replace(&mut self.update_sent, true);
        RunUpdate {
            fresh,
            shown,
            history_new,
            trace: self.take_trace_inputs(),
            state: RunState {
                lesson: self.lesson.id.clone(),
                variant: self.variant.clone(),
                overrides: self.overrides.clone(),
                seed: self.seed,
                playing: self.playing,
                speed: self.speed,
                achieved_speed: self.achieved_speed,
                catch_up_to: self.catch_up_to,
                notice: self.notice.clone(),
                link_clean: self.link_clean.clone(),
                reached: self.timeline.reached.max(self.now()),
            },
        }
    }
}

impl RunView {
    /// Takes an update of the run (its history grows by the new seconds, its trace view takes
    /// the inputs in order).
    pub fn apply(&mut self, u: RunUpdate) {
        if u.fresh {
            // A new run: its own history and trace (the reader's log pause stays).
            self.shown.history.clear();
            self.trace = TraceView { log_paused: self.trace.log_paused, ..TraceView::default() };
        }
        let mut history = std::mem::take(&mut self.shown.history);
        history.extend(u.history_new);
        while history.len() > HISTORY_MAX {
            history.pop_front();
        }
        self.shown = Shown { history, ..u.shown };
        for input in &u.trace {
            self.trace.take(input);
        }
        self.state = u.state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_kept_by_updates_through_json_shows_what_the_driver_shows() {
        let mut d = SimDriver::from_fragment("#/lesson/raid5-chunk?v=1&variant=regressed&seed=3&t=0.3", "raid5-chunk");
        let mut view = RunView::default();
        let post = |d: &mut SimDriver, view: &mut RunView| {
            let json = serde_json::to_string(&d.take_update()).unwrap();
            view.apply(serde_json::from_str(&json).unwrap());
        };
        // The link's jump, frames playing, a skip of 2.5 s past a few whole seconds, frames.
        let mut ts = 0.0;
        post(&mut d, &mut view);
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut view);
        }
        d.playing = true;
        for _ in 0..20 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut view);
        }
        d.fast_forward(2.5);
        post(&mut d, &mut view);
        for _ in 0..20 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut view);
        }
        assert!(d.shown.history.len() >= 2 && d.shown.interval.is_some(), "whole seconds on show");
        // A rewind to 1.2 s makes a new run from a snapshot: the view follows it, not the old.
        d.seek(SimTime(1_200_000_000));
        post(&mut d, &mut view);
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut view);
        }
        for _ in 0..10 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut view);
        }
        // The same per-second report and history, byte for byte, and the same trace view.
        let json = |v: &Shown| serde_json::to_string(v).unwrap();
        assert_eq!(json(&view.shown), json(&d.shown));
        assert_eq!(format!("{:?}", view.trace.log), format!("{:?}", d.trace.log));
        assert_eq!(
            format!("{:?}", (&view.trace.btt, &view.trace.requests, &view.trace.bios)),
            format!("{:?}", (&d.trace.btt, &d.trace.requests, &d.trace.bios))
        );
        let st = &view.state;
        assert_eq!((st.playing, st.speed, st.catch_up_to, st.seed), (d.playing, d.speed, d.catch_up_to, d.seed));
        assert_eq!(st.reached, d.timeline.reached.max(d.now()));
    }
}
