//! The numbers beside the diagram: each simulated second's counters, CPU strips and top, and
//! the numbers so far before the first second.

use super::Run;
use blksim::tools::report::IntervalReport;

/// How often the numbers so far refresh before the first whole second, in wall ms.
pub(super) const PARTIAL_REFRESH_MS: f64 = 150.0;
/// The numbers so far wait for this much simulated time: rates over the first microseconds
/// read as zeros ("the first 0 ms: 0.0 MB/s") while the diagram already moves.
const PARTIAL_MIN_NS: u64 = 1_000_000;

impl Run {
    /// The numbers so far, before the first whole second: counters, top and the CPU strips as
    /// they stand at this frame. False once whole seconds come (or before anything ran).
    pub fn refresh_partial(&mut self, now_ms: f64) -> bool {
        if self.last_tick_end.is_some() || self.sim.now().ns() == 0 || (self.sim.now().ns() < PARTIAL_MIN_NS && !self.is_done()) {
            return false;
        }
        self.last_partial_ms = now_ms;
        let cur = self.sim.cumulative();
        self.shown.interval = Some(IntervalReport::between(&self.sim, &blksim::Interval::zero_for(&cur), &cur));
        self.shown.jobs = blksim::tools::fio_report::job_figures(&self.sim);
        // (the next update carries it: `take_update`)
        self.interval_unsent = true;
        self.shown.interval_partial = true;
        // top so far, too (a short run such as an mkfs burst ends before its first second).
        let dt = cur.end.ns().max(1) as f64;
        let threads = self.sim.threads_view();
        self.shown.top = top_rows(&threads, &cur.thread_cpu_ns, &[], dt);
        // The CPU strips so far too, as vmstat and top show them.
        self.shown.core_busy_pct = cur
            .per_core
            .iter()
            .map(|c| {
                let pct = c.pct_since(&Default::default());
                pct.user_pct + pct.sys_pct + pct.softirq_pct
            })
            .collect();
        true
    }

    /// When the numbers so far were last refreshed (wall ms).
    pub fn last_partial_at(&self) -> f64 {
        self.last_partial_ms
    }

    /// B follows A: its numbers so far are refreshed when A's are (`refresh_partial`), so the
    /// two "so far" lines name the same stretch; this keeps B's own cadence from firing.
    pub fn hold_partial(&mut self, now_ms: f64) {
        self.last_partial_ms = now_ms;
    }

    /// When the simulation passed a one-second tick, compute that second's numbers.
    pub(super) fn take_interval(&mut self) -> bool {
        // A run that reached its end (its duration) off a whole second has no snapshot there:
        // its whole-run numbers come from the counters as they stand.
        let at_end = !self.sim.is_finished() && self.sim.now() >= self.end();
        let n = self.sim.history().len();
        let last_end = self.sim.history().nth(n.saturating_sub(1)).map(|c| c.end);
        let now = self.sim.now();
        if at_end && self.last_tick_end == Some(now) {
            // Taken already: the second before the end is not the newest snapshot to show.
            return false;
        }
        let end_counters = (at_end && last_end.is_none_or(|e| e < now)).then(|| self.sim.cumulative());
        // Only the last two snapshots matter; the history itself is not copied each frame.
        let mut last_two = self.sim.history().skip(n.saturating_sub(2));
        let (prev, cur) = match (last_two.next(), last_two.next(), end_counters.as_ref()) {
            (_, _, Some(c)) => (None, c),
            (Some(p), Some(c), None) => (Some(p), c),
            (Some(c), None, None) => (None, c),
            _ => return false,
        };
        if self.last_tick_end == Some(cur.end) {
            return false;
        }
        self.last_tick_end = Some(cur.end);
        let zero = blksim::Interval::zero_for(cur);
        let whole = self.sim.finished_at() == Some(cur.end) || (at_end && cur.end >= self.end());
        let prev = match prev {
            Some(p) if !whole => p,
            _ => &zero,
        };
        self.shown.interval = Some(IntervalReport::between(&self.sim, prev, cur));
        self.shown.jobs = blksim::tools::fio_report::job_figures(&self.sim);
        // (the next update carries it: `take_update`)
        self.interval_unsent = true;
        self.shown.interval_partial = false;
        self.shown.interval_whole = whole;
        self.shown.core_busy_pct = cur
            .per_core
            .iter()
            .zip(prev.per_core.iter().chain(std::iter::repeat(&Default::default())))
            .map(|(c, p)| {
                let pct = c.pct_since(p);
                pct.user_pct + pct.sys_pct + pct.softirq_pct
            })
            .collect();
        let dt = (cur.end - prev.end).max(1) as f64;
        let threads = self.sim.threads_view();
        // top over the same second, from the snapshots, its states as they were at the tick:
        // the same however the run got here (a link's replay samples it later than a page that
        // played through the tick).
        self.shown.top = top_rows(&threads, &cur.thread_cpu_ns, &prev.thread_cpu_ns, dt);
        for row in &mut self.shown.top {
            if let Some(&s) = threads.iter().position(|t| t.pid == row.1).and_then(|i| cur.thread_state.get(i)) {
                row.3 = s as char;
            }
        }
        self.last_threads = threads;
        true
    }
}

/// top's rows: the 8 busiest threads by CPU time between two snapshots over `dt_ns`.
fn top_rows(threads: &[blksim::tools::view::ThreadView], now_ns: &[u64], before_ns: &[u64], dt_ns: f64) -> Vec<(String, u32, f64, char)> {
    let mut top: Vec<(String, u32, f64, char)> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let now = now_ns.get(i).copied().unwrap_or(0);
            let before = before_ns.get(i).copied().unwrap_or(0);
            (t.name.clone(), t.pid, 100.0 * now.saturating_sub(before) as f64 / dt_ns, t.state)
        })
        .collect();
    crate::sort::stable_by(&mut top, |a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    top.truncate(8);
    top
}
