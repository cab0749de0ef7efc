//! A run's `RunUpdate`: what changed since the last one (the first: everything).

use super::Run;
use crate::protocol::{RunState, RunUpdate};
use blksim::Interval;

impl Run {
    /// What changed since the last update (the first one: everything), for the page's view.
    /// The trace view's inputs are kept from the first call on.
    pub fn take_update(&mut self) -> RunUpdate {
        self.take_update_bounded(None)
    }

    /// As `take_update`, with at most `records_max` trace records when given (the rest come
    /// with the next updates: `backlog` says so).
    pub fn take_update_bounded(&mut self, records_max: Option<usize>) -> RunUpdate {
        self.keep_trace_inputs();
        // The history goes as its new seconds only: set aside while `Shown` is copied.
        let history = std::mem::take(&mut self.shown.history);
        let mut shown = self.shown.clone();
        self.shown.history = history;
        // A new run's first update carries everything: the view's are another run's.
        let first = !self.update_sent;
        let config_included = std::mem::take(&mut self.config_unsent) || first;
        let interval_included = std::mem::take(&mut self.interval_unsent) || first;
        if !config_included {
            (shown.scenario, shown.topology, shown.model_gaps, shown.era) = Default::default();
        }
        if !interval_included {
            shown.interval = None;
            shown.jobs = Vec::new();
        }
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
            trace: self.take_trace_inputs_bounded(records_max.unwrap_or(usize::MAX)),
            backlog: self.trace_backlog(),
            config_included,
            interval_included,
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
                live_writes: self.live_writes.clone(),
                writes_done: self.writes_done,
            },
        }
    }
}
