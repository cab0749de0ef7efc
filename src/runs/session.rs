//! What the page runs: run A, and in the A/B view run B, in lockstep (same seed, same speed,
//! same simulated time). B follows A's clock each frame; once A's jobs are done, B runs on by
//! itself at the same speed until its own are.

use super::Run;
use crate::protocol::RunUpdate;

/// The runs on show, owned by the runs' worker (or the page's thread where none runs). The page
/// keeps its view of them (`SessionView`) by their updates, and changes them only by `Command`s.
pub struct Session {
    pub a: Run,
    pub b: Option<Run>,
    /// Run B's own knobs, over A's (a sandbox's A/B of two setups): B runs with A's overrides
    /// and these over them.
    pub b_own: Vec<(String, String)>,
    /// While a step that names its seed is shown: the seed the reader had before it, which the
    /// other steps go back to.
    pub seed_before_step: Option<u64>,
}

impl Session {
    pub fn new(a: Run) -> Session {
        Session { a, b: None, b_own: Vec::new(), seed_before_step: None }
    }

    /// What changed in each run since the last call (B's while it is open), for the page's views.
    pub fn take_updates(&mut self) -> (RunUpdate, Option<RunUpdate>) {
        self.take_updates_bounded(None)
    }

    /// As `take_updates`, with at most `records_max` trace records per run when given.
    pub fn take_updates_bounded(&mut self, records_max: Option<usize>) -> (RunUpdate, Option<RunUpdate>) {
        (self.a.take_update_bounded(records_max), self.b.as_mut().map(|b| b.take_update_bounded(records_max)))
    }

    /// Trace inputs wait to be sent (a bounded update left them).
    pub fn trace_backlog(&self) -> bool {
        self.a.trace_backlog() || self.b.as_ref().is_some_and(Run::trace_backlog)
    }

    /// One animation frame. Returns true when the counters changed.
    pub fn frame(&mut self, dt_ms: f64, now_ms: f64) -> bool {
        // B just opened (or a link's B): A waits while B catches up to it.
        if let Some(b) = self.b.as_mut().filter(|b| b.catch_up_to.is_some() && self.a.catch_up_to.is_none()) {
            // A stands still by design meanwhile: its live line must not read that as slowness
            // in the first frame after (it is measured again from the next one).
            self.a.achieved_speed = self.a.speed;
            return b.frame(dt_ms, now_ms);
        }
        let a_partial = self.a.last_partial_at();
        let a_was_jumping = self.a.catch_up_to.is_some();
        let mut changed = self.a.frame(dt_ms, now_ms);
        let a_refreshed = self.a.last_partial_at() != a_partial;
        if let Some(b) = &mut self.b {
            b.playing = self.a.playing;
            b.speed = self.a.speed;
            let before = b.now();
            let a_done = self.a.is_done() && self.a.catch_up_to.is_none();
            // B runs by itself while it catches up to a link's time point, or once A is done.
            changed |= if b.catch_up_to.is_some() || a_done {
                b.frame(dt_ms, now_ms)
            } else {
                // Its numbers so far refresh with A's, so both "so far" lines name one stretch.
                b.hold_partial(now_ms);
                let moved = b.follow(self.a.now(), now_ms);
                moved | (a_refreshed && b.refresh_partial(now_ms))
            };
            // B's own progress, for its "running at" line (it follows A, so normally A's speed).
            let dt_ms = dt_ms.clamp(0.0, 100.0);
            b.achieved_speed = if a_was_jumping && b.catch_up_to.is_none() {
                // A's jump (or its last frame) sets B's pace, not the asked speed: nothing to
                // measure against it until A plays again (B's line read "running at 0.0 µs/s").
                b.speed
            } else if dt_ms > 0.0 {
                (b.now() - before) as f64 / (dt_ms * 1e6)
            } else {
                0.0
            };
        }
        changed
    }

    /// After a frame whose work took `work_ms`: the budgets of a jump under way follow it
    /// towards `aim_ms` a frame (`CATCH_UP_FRAME_MS` on the page's thread, which keeps its frame
    /// rate; `WORKER_CATCH_UP_FRAME_MS` in the runs' worker).
    pub fn tune(&mut self, work_ms: f64, aim_ms: f64) {
        self.a.tune_catch_up(work_ms, aim_ms);
        if let Some(b) = &mut self.b {
            b.tune_catch_up(work_ms, aim_ms);
        }
    }

    /// The runs from a link: run A, and the A/B view if the link names a B.
    pub fn from_fragment(fragment: &str, default_lesson: &str) -> Session {
        let mut a = Run::from_fragment(fragment, default_lesson);
        let b = a.link_b.take();
        let mut s = Session::new(a);
        if let Some(b) = b {
            // B runs to the link's time point first, as A does (open_b leaves A as it is).
            let catch_up = s.a.catch_up_to;
            match s.open_b_with(&b.0, b.1) {
                Ok(()) => {
                    if let Some(bd) = &mut s.b {
                        bd.catch_up_to = catch_up;
                    }
                }
                Err(e) => s.a.notice = Some(e),
            }
        }
        s
    }

    /// Opens the A/B view with `variant` as B (same lesson, overrides and seed as A).
    pub fn open_b(&mut self, variant: &str) -> Result<(), String> {
        self.open_b_with(variant, Vec::new())
    }

    /// Opens the A/B view with `variant` as B, with A's overrides and `own` over them.
    pub fn open_b_with(&mut self, variant: &str, own: Vec<(String, String)>) -> Result<(), String> {
        let knobs = blksim::course::link::merge_knobs(&self.a.overrides, &own);
        let mut b = Run::new(&self.a.lesson.id, Some(variant), knobs, self.a.seed)?;
        self.b_own = own;
        // B runs to A's time first (over a few frames, while A waits), so A keeps where the
        // user had got to and both cover the same simulated time.
        let t = self.a.now();
        if t.ns() > 0 {
            b.catch_up_to = Some(t);
        }
        b.speed = self.a.speed;
        b.playing = self.a.playing;
        self.b = Some(b);
        Ok(())
    }

    /// The simulated time the page shows: the later of the two runs' (a finished run stops).
    pub fn clock(&self) -> blksim::SimTime {
        let a = self.a.now();
        self.b.as_ref().map_or(a, |b| a.max(b.now()))
    }

    /// Skip: both runs go `secs` past the page's clock without animating (a finished run
    /// stays where it ended).
    pub fn skip(&mut self, secs: f64) {
        let target = self.clock() + blksim::SimTime::from_secs_f64(secs).ns();
        for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
            let left = target.ns().saturating_sub(d.now().ns());
            if left > 0 {
                d.fast_forward(left as f64 / 1e9);
            }
        }
    }

    /// The timeline: both runs to simulated time `t`, backwards or forwards (within what each
    /// has reached), over the next frames.
    pub fn seek(&mut self, t: blksim::SimTime) {
        for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
            d.seek(t);
        }
    }

    /// Both runs to simulated time `t` over the next frames, as a link's `t` takes them: back
    /// from the nearest snapshot, or on by running (unlike `seek`, past what a run has reached).
    pub fn jump_to(&mut self, t: blksim::SimTime) {
        for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
            if t < d.now() {
                d.seek(t);
            } else if t > d.now() {
                d.catch_up_to = Some(t);
            }
        }
    }

    /// Both runs to `t` and paused there, as a link with `t` opens.
    pub fn open_at(&mut self, t: blksim::SimTime) {
        self.jump_to(t);
        for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
            d.playing = false;
        }
    }

    /// Stops a jump under way where each run has got to (B then follows A's clock as usual).
    pub fn stop_jump(&mut self) {
        for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
            d.stop_catch_up();
        }
    }

    pub fn close_b(&mut self) {
        self.b = None;
        self.b_own.clear();
        self.drop_idle_settings();
    }

    /// After the variants shown change (a variant picked, a step, B opened or closed): the
    /// user's settings that act on nothing in A's variant nor in B's are dropped from both
    /// runs (they change nothing in either, so neither restarts), and the page says which, so
    /// the link it writes opens as it is.
    pub fn drop_idle_settings(&mut self) {
        let vb: Vec<String> = self.b.iter().map(|b| b.variant.clone()).collect();
        let vb: Vec<&str> = vb.iter().map(String::as_str).collect();
        let idle = self.a.drop_idle(&vb);
        if let Some(b) = &mut self.b {
            b.overrides = blksim::course::link::merge_knobs(&self.a.overrides, &self.b_own);
        }
        if !idle.is_empty() {
            let what: Vec<String> =
                idle.iter().map(|e| format!("{} ({})", e.field, e.message.trim_start_matches("changes nothing here: "))).collect();
            let (verb, runs) = match (idle.len(), self.b.is_some()) {
                (1, false) => ("it acts", "this variant"),
                (_, false) => ("they act", "this variant"),
                (1, true) => ("it acts", "either variant"),
                (_, true) => ("they act", "either variant"),
            };
            self.a.notice = Some(format!("Dropped {}: {verb} on nothing in {runs}.", what.join("; ")));
        }
    }

    /// Restarts both runs with a new seed (A/B keep one seed).
    pub fn reseed(&mut self, seed: u64) -> Result<(), String> {
        let va = self.a.variant.clone();
        self.a.restart(&va, seed)?;
        if let Some(b) = &mut self.b {
            let vb = b.variant.clone();
            b.restart(&vb, seed)?;
        }
        Ok(())
    }

    /// The reader picks a seed (the seed field): both runs restart with it, and it is the seed
    /// the steps keep, also past a step that names its own.
    pub fn choose_seed(&mut self, seed: u64) -> Result<(), String> {
        self.seed_before_step = None;
        self.reseed(seed)
    }

    /// Restarts both runs from time 0 (R).
    pub fn reset(&mut self) -> Result<(), String> {
        let seed = self.a.seed;
        self.reseed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jump of both runs where B (the lighter run) gets there first: in the frame A's jump
    /// ends, B has stood still waiting for it. That frame is not slowness: B's live line must
    /// not say "running at 0.0 µs/s" (it did, for one frame, on raid5-chunk's A/B step).
    #[test]
    fn b_does_not_read_slow_in_the_frame_a_jump_ends() {
        let mut s = Session::new(Run::new("raid5-chunk", Some("regressed"), Vec::new(), 1).unwrap());
        s.open_b("workaround").unwrap();
        s.jump_to(blksim::SimTime::from_secs_f64(3.0));
        let (mut now_ms, mut b_first, mut checked) = (0.0, false, false);
        for _ in 0..100_000 {
            let a_jumping = s.a.catch_up_to.is_some();
            s.frame(16.0, now_ms);
            now_ms += 16.0;
            let b = s.b.as_ref().unwrap();
            b_first |= a_jumping && b.catch_up_to.is_none();
            if a_jumping && s.a.catch_up_to.is_none() {
                assert!(b_first, "the case needs B to get there first");
                assert!(b.achieved_speed >= b.speed * 0.9, "B reads {} of {} asked", b.achieved_speed, b.speed);
                checked = true;
                break;
            }
        }
        assert!(checked, "A's jump never ended");
    }

    /// The run keeps wall time over frames that come slowly (a throttled window) and over a gap
    /// of seconds (a window behind the speaker notes, caught up as a jump does), but a tab left
    /// aside for minutes moves on by a tenth of a second of wall time only.
    #[test]
    fn the_clock_keeps_wall_time_over_slow_frames_and_short_gaps() {
        let mut s = Session::new(Run::new("anatomy-of-a-request", None, Vec::new(), 1).unwrap());
        let speed_ns_per_ms = s.a.speed * 1e6;
        let near = |got: u64, want: f64| (got as f64 - want).abs() <= want * 0.02;
        let mut now_ms = 0.0;
        let mut frame = |s: &mut Session, dt: f64| {
            now_ms += dt;
            s.frame(dt, now_ms);
        };
        // Four frames a second for ten seconds.
        let t0 = s.a.now().ns();
        for _ in 0..40 {
            frame(&mut s, 250.0);
        }
        let got = s.a.now().ns() - t0;
        assert!(near(got, 10_000.0 * speed_ns_per_ms), "slow frames ran {got} ns");
        // Ten seconds without a frame, then frames again: caught up within a few frames.
        let t1 = s.a.now().ns();
        frame(&mut s, 10_000.0);
        assert!(s.a.catch_up_to.is_some(), "a gap of seconds is caught up as a jump");
        let mut frames = 0;
        while s.a.catch_up_to.is_some() {
            frame(&mut s, 16.0);
            frames += 1;
            assert!(frames < 1_000, "the catch-up never ended");
        }
        let got = s.a.now().ns() - t1;
        assert!(near(got, 10_000.0 * speed_ns_per_ms), "a 10 s gap ran {got} ns");
        // Five minutes away: 100 ms of wall time.
        let t2 = s.a.now().ns();
        frame(&mut s, 300_000.0);
        assert!(s.a.catch_up_to.is_none());
        let got = s.a.now().ns() - t2;
        assert!(near(got, super::super::STALL_STEP_MS * speed_ns_per_ms), "a long gap ran {got} ns");
    }
}
