//! The worker's side: the runs and what carries them out. `Run` is the one owner of a `Sim`:
//! each animation frame advances it by (speed × wall time), within a budget of events so that
//! the page never falls behind or freezes, and keeps the trace records for the page's trace view.
//! A jump (Skip, a link's `t`) runs untraced but for its last half second; every run target is
//! held to the scenario's `duration`, where the run ends as `blksim run` ends it.
//!
//! This file runs the simulation (frames, steps, jumps, links). Beside it: `session` (run A and
//! the A/B view's B, in lockstep) and `act` (the page's `Command`s carried out), `knobs` (the
//! reader's settings, live or by restart), `timeline` (snapshots to rewind to), `live_writes`
//! (the knobs taken live, replayed after a rewind), `shown` and `stats` (what the page shows,
//! each second's numbers and top), `update` (the `RunUpdate` posted after each frame and
//! command), and `worker` (the Web Worker's entry: `runs_message`, `runs_tune`). The page never
//! reads a `Run`: only its updates (`crate::protocol`).

mod act;
mod knobs;
mod live_writes;
pub mod session;
mod shown;
mod stats;
mod timeline;
mod update;
pub mod worker;

use crate::protocol::LiveWrite;
use crate::protocol::{Animation, Shown, TraceInput};
use crate::view::tokens;
use blksim::course::lessons::{self, Lesson};
use blksim::course::link::LinkState;
use blksim::kernel::trace::blktrace::TraceRecord;
use blksim::tools::view::ThreadView;
use blksim::{Sim, SimTime};
pub use live_writes::LIVE_WRITES_MAX;
pub use session::Session;
use stats::PARTIAL_REFRESH_MS;
use std::collections::VecDeque;
pub use timeline::Timeline;

/// Speed: simulated seconds per wall second, on a log scale from 1 µs/s to 1 s/s.
pub const SPEED_MIN: f64 = 1e-6;
pub const SPEED_MAX: f64 = 1.0;
pub const SPEED_DEFAULT: f64 = 0.05;

/// Events run in the first frame of a catch-up to a time point (a link's `t`, the timeline);
/// after it the budget follows the measured frame work (`tune_catch_up`).
pub const CATCH_UP_EVENTS_PER_FRAME: u64 = 20_000;
/// The work a catch-up frame aims at on the page's thread, in wall ms: the page keeps drawing at
/// 60 fps meanwhile.
pub const CATCH_UP_FRAME_MS: f64 = 10.0;
/// The work a catch-up frame aims at in the runs' worker: the page draws meanwhile whatever it
/// takes, and the jump runs on more of the worker's time; a Stop (or any command) waits at most
/// about this for the frame under way.
pub const WORKER_CATCH_UP_FRAME_MS: f64 = 40.0;
/// A per-frame event budget after a frame of `work_ms`: scaled towards `aim_ms` (at most 4×
/// either way per frame), within its bounds.
pub fn scale_budget(events: u64, work_ms: f64, aim_ms: f64) -> u64 {
    let scaled = events as f64 * (aim_ms / work_ms).clamp(0.25, 4.0);
    (scaled as u64).clamp(CATCH_UP_EVENTS_MIN, CATCH_UP_EVENTS_MAX)
}

/// The catch-up budget's bounds, in events per frame.
pub const CATCH_UP_EVENTS_MIN: u64 = 2_000;
pub const CATCH_UP_EVENTS_MAX: u64 = 1_000_000;
/// A jump (a skip, a link's catch-up) traces its last half simulated second, so the event log
/// and btt show what led up to the new time point (a link pasted into a bug thread opens on
/// them): long enough for requests that wait a few hundred ms to be seen whole in btt.
pub const JUMP_TRACE_TAIL_NS: u64 = 500_000_000;
/// While a jump traces, its records are taken this many events at a time, so the core's trace
/// ring (65 536 records) never overflows: an event of dm-sg-lists makes about 50 records.
const TRACE_CHUNK_EVENTS: u64 = 500;

/// Wall time between two frames beyond which the page was not drawn (hidden, or behind another
/// window), rather than drawn slowly: the run then catches up to it as a jump does.
pub const FRAME_GAP_MS: f64 = 2_000.0;
/// The longest such gap the run keeps wall time over (a look at the speaker notes); after a
/// longer one (a tab left aside, a laptop asleep) it moves on by `STALL_STEP_MS` only.
pub const KEEP_TIME_GAP_MS: f64 = 60_000.0;
pub const STALL_STEP_MS: f64 = 100.0;

/// Run B as a link names it: its variant, and its own knobs over A's (`b.<knob>=…`).
#[derive(Clone, Copy, Debug)]
pub struct BLink<'a> {
    pub variant: &'a str,
    pub own: &'a [(String, String)],
}

/// What a page shows when its own lesson does not exist.
pub const FALLBACK_LESSON: &str = "anatomy-of-a-request";

pub struct Run {
    pub lesson: Lesson,
    pub variant: String,
    pub overrides: Vec<(String, String)>,
    pub seed: u64,
    /// The run. Only the `Run` reads it: the page reads `shown`.
    sim: Sim,
    /// What the page shows of the run (refreshed after everything that moves it).
    pub shown: Shown,
    pub playing: bool,
    pub speed: f64,
    cursor: u64,
    last_partial_ms: f64,
    last_threads: Vec<ThreadView>,
    /// The end of the last one-second snapshot taken in (the history is capped, so not a count).
    last_tick_end: Option<SimTime>,
    /// The largest number of events one frame may run (adapted to the measured frame cost).
    pub frame_events_max: u64,
    /// Simulated seconds per wall second actually achieved in the last frame.
    pub achieved_speed: f64,
    /// A problem with the link this state came from, shown to the user.
    pub notice: Option<String>,
    /// The B variant a link asked for (the session opens the A/B view with it).
    pub link_b: Option<(String, Vec<(String, String)>)>,
    /// All that was wrong with the link is its missing `v` (the one fault, `link_faults[0]`,
    /// says it was read as this build's): the notice says so plainly.
    link_version_missing: bool,
    /// The parts of the link that could not be used, as the notice names them.
    link_faults: Vec<String>,
    /// Which of `link_faults` is a `t` past the duration's end, and that `t`: a duration that
    /// reaches it withdraws the fault, and the run goes on to it.
    link_fault_past_end: Option<(usize, f64)>,
    /// A link's time point still to be reached (run without animation, a budget per frame).
    pub catch_up_to: Option<SimTime>,
    /// The time point the link asked for, until its catch-up ends (to say so if the jobs
    /// finish before it).
    link_t: Option<SimTime>,
    /// What the page's trace view (the event log, btt and the tokens) is to be handed, since
    /// it was last taken (`take_update`); None until a view takes them (nobody reads them).
    trace_inputs: Option<VecDeque<TraceInput>>,
    /// The end of the last second `take_update` sent.
    update_history_end: Option<SimTime>,
    /// `take_update` has sent this run's first update (a new `Run` is a new run: a restart,
    /// a rewind, a knob that restarts; its first update says so).
    update_sent: bool,
    /// The scenario (with its topology and model gaps), and the second's report, changed since
    /// the last update: an update carries them only then (`take_update`).
    config_unsent: bool,
    interval_unsent: bool,
    gap_from: Option<SimTime>,
    /// The run so far, with snapshots to rewind to.
    pub timeline: Timeline,
    /// The knobs this run took live, in order, and how many of them the simulation has taken
    /// (fewer after a rewind: the replay makes the rest again; `live_writes`).
    live_writes: Vec<LiveWrite>,
    writes_done: u32,
    /// Events a catch-up frame runs (adapted to the measured frame work).
    pub catch_up_events: u64,
    /// The link this run came from without the parts that could not be used, when it had
    /// such parts: the page puts it in the address bar, so a reload or a copy of the address
    /// opens what shows.
    pub link_clean: Option<String>,
}

impl Run {
    pub fn new(lesson_id: &str, variant: Option<&str>, overrides: Vec<(String, String)>, seed: u64) -> Result<Run, String> {
        let lesson = lessons::find(lesson_id).map_err(|e| e.to_string())?;
        let variant = variant.map(str::to_string).unwrap_or_else(|| lesson.first_variant().name.clone());
        let cfg = lesson.config(&variant, &overrides).map_err(|e| e.to_string())?;
        let mut sim = Sim::new(&cfg, seed);
        sim.set_trace(true);
        let timeline = Timeline::new(&mut sim);
        Ok(Run::with_sim(lesson, variant, overrides, seed, sim, timeline))
    }

    /// Where the run ends: the scenario's `duration` (fio's runtime), as `blksim run` ends there,
    /// so the page's whole-run figures are the CLI's for the same seed. Every run target is held
    /// to it.
    pub fn end(&self) -> SimTime {
        SimTime::from_secs_f64(self.sim.config().scenario.duration_s)
    }

    /// Sets the speed a link or a step names, within what the slider reaches.
    pub fn set_speed(&mut self, sim_s_per_wall_s: f64) {
        self.speed = sim_s_per_wall_s.clamp(SPEED_MIN, SPEED_MAX);
    }

    /// Nothing is left to run: every job is done, or the clock reached the run's end.
    pub fn is_done(&self) -> bool {
        self.sim.is_finished() || self.sim.now() >= self.end()
    }

    /// A run over a simulation already made (a new one, or a timeline's snapshot restored),
    /// with its timeline; playing, at the default speed, its log empty.
    fn with_sim(lesson: Lesson, variant: String, overrides: Vec<(String, String)>, seed: u64, sim: Sim, timeline: Timeline) -> Run {
        let last_threads = sim.threads_view();
        let cursor = sim.trace().next_seq();
        let mut d = Run {
            lesson,
            variant,
            overrides,
            seed,
            sim,
            shown: Shown::default(),
            playing: true,
            speed: SPEED_DEFAULT,
            cursor,
            last_partial_ms: f64::NEG_INFINITY,
            last_threads,
            last_tick_end: None,
            frame_events_max: 20_000,
            achieved_speed: SPEED_DEFAULT,
            notice: None,
            link_b: None,
            link_version_missing: false,
            link_faults: Vec::new(),
            link_fault_past_end: None,
            catch_up_to: None,
            link_t: None,
            trace_inputs: None,
            update_history_end: None,
            update_sent: false,
            config_unsent: true,
            interval_unsent: true,
            gap_from: None,
            timeline,
            live_writes: Vec::new(),
            writes_done: 0,
            catch_up_events: CATCH_UP_EVENTS_PER_FRAME,
            link_clean: None,
        };
        d.refresh_config();
        d.refresh_shown();
        d
    }

    /// What the page says about the link it opened: the parts that could not be used (the
    /// rest of it is applied), or, when all it lacked was its `v`, that it was read as this
    /// build's.
    fn link_notice(&self) -> Option<String> {
        if self.link_version_missing && self.link_faults.len() == 1 {
            return Some(format!(
                "This link has no v=; it was read as v={}, the link format of this build.",
                blksim::course::link::LINK_VERSION
            ));
        }
        match self.link_faults.as_slice() {
            [] => None,
            [one] => Some(format!("Part of the link could not be used ({one}); the rest of it is applied.")),
            // Several: one line each (the page lists them), not one run of nested brackets.
            many => Some(format!("Parts of the link could not be used; the rest of it is applied:\n{}", many.join("\n"))),
        }
    }

    /// A longer `duration`: a link's `t` past the old end that the new end reaches is no longer
    /// a fault (the notice drops it, and says nothing if nothing else was wrong), and the run
    /// goes on to it and pauses there, as the link asked; one still past the end is named
    /// with the new end.
    pub(crate) fn on_longer_duration(&mut self) {
        let Some((i, t)) = self.link_fault_past_end else { return };
        let end_s = self.end().as_secs_f64();
        if t > end_s {
            self.link_faults[i] = past_end_fault(t, end_s);
        } else {
            self.link_fault_past_end = None;
            self.link_faults.remove(i);
            let to = SimTime::from_secs_f64(t);
            self.catch_up_to = Some(to);
            self.link_t = Some(to);
            self.playing = false;
        }
        self.notice = self.link_notice();
    }

    /// From a link fragment; a bad link falls back to the default lesson with a notice that
    /// names the offending part.
    pub fn from_fragment(fragment: &str, default_lesson: &str) -> Run {
        let fallback = |error: Option<String>| {
            // The route's lesson if it exists, else the first primer, which always runs.
            let mut d = Run::new(default_lesson, None, Vec::new(), 1)
                .or_else(|_| Run::new(FALLBACK_LESSON, None, Vec::new(), 1))
                .expect("the fallback lesson runs");
            // The address bar then shows what opened, as for a link wrong in one part: a
            // reload, or the address copied into a bug thread, opens what shows.
            if error.is_some() {
                d.link_clean = Some(d.state_fragment(None));
            }
            d.notice = error.map(|e| {
                if d.lesson.id == blksim::course::lessons::SANDBOX {
                    format!("The link could not be used ({e}); showing the sandbox's default scenario instead.")
                } else if d.lesson.id == default_lesson {
                    format!("The link could not be used ({e}); showing the lesson's defaults instead.")
                } else {
                    format!("The link could not be used ({e}); showing \"{}\" instead.", d.lesson.title)
                }
            });
            d
        };
        if fragment.is_empty() || fragment == "#" || fragment == "#/" {
            return fallback(None);
        }
        // A bare path (from a plain link) means the lesson's defaults.
        if !fragment.contains('?') {
            let path = fragment.trim_start_matches('#');
            let id = if path == "/sandbox" { Some(blksim::course::lessons::SANDBOX) } else { path.strip_prefix("/lesson/") };
            if let Some(Ok(d)) = id.map(|id| Run::new(id, None, Vec::new(), 1)) {
                return d;
            }
        }
        match LinkState::decode_lenient(fragment) {
            Ok((st, bad)) => match Run::new(&st.lesson, st.variant.as_deref(), st.overrides.clone(), st.seed) {
                Ok(mut d) => {
                    // Settings that act on nothing in this stack (in A's variant nor in B's) are
                    // dropped, as the knob panel drops them, and named with the link's other faults.
                    // (They change nothing in the run, so it stands as built.)
                    let version_missing = bad.as_ref().is_some_and(|e| e.version_missing_only);
                    let mut faults: Vec<String> = bad.map(|e| e.parts()).unwrap_or_default();
                    faults.extend(d.drop_idle(st.b.as_deref().as_slice()).iter().map(|e| e.to_string()));
                    // A time point past the run's end (its duration) opens at the end.
                    let mut st = st;
                    let end_s = d.end().as_secs_f64();
                    if let Some(t) = st.t.filter(|t| *t > end_s) {
                        d.link_fault_past_end = Some((faults.len(), t));
                        faults.push(past_end_fault(t, end_s));
                        st.t = Some(end_s);
                    }
                    d.link_version_missing = version_missing;
                    d.link_faults = faults;
                    // Parts of the link were wrong: the rest of it stands, and the page says which.
                    d.notice = d.link_notice();
                    if !d.link_faults.is_empty() {
                        d.link_clean = Some(LinkState { overrides: d.overrides.clone(), ..st.clone() }.encode());
                    }
                    if let Some(sp) = st.speed {
                        d.set_speed(sp);
                    }
                    if let Some(t) = st.t {
                        // Run to the link's time point over the next frames, not in one go: a
                        // long run would freeze the page. The page shows progress meanwhile.
                        d.catch_up_to = Some(SimTime::from_secs_f64(t));
                        d.link_t = d.catch_up_to;
                        d.playing = false;
                    }
                    d.link_b = st.b.clone().map(|b| (b, st.b_overrides.clone()));
                    d
                }
                Err(e) => fallback(Some(e.to_string())),
            },
            Err(e) => fallback(Some(e.to_string())),
        }
    }

    /// The state without the time point and speed: what a history entry records.
    pub fn state_fragment(&self, b: Option<BLink>) -> String {
        link_fragment(&self.lesson.id, &self.variant, b, &self.overrides, self.seed, None, None)
    }

    /// Restarts with another variant or seed (the same lesson and overrides).
    pub fn restart(&mut self, variant: &str, seed: u64) -> Result<(), String> {
        let mut d = Run::new(&self.lesson.id.clone(), Some(variant), self.overrides.clone(), seed)?;
        d.speed = self.speed;
        d.playing = self.playing;
        self.succeed_by(d);
        Ok(())
    }

    /// Advances by one animation frame of `dt_ms` wall milliseconds. `now_ms` is the frame's
    /// wall timestamp (for tweens). Returns true when a new whole second of counters landed.
    pub fn frame(&mut self, dt_ms: f64, now_ms: f64) -> bool {
        let changed = self.frame_run(dt_ms, now_ms);
        self.timeline.note(&mut self.sim, self.writes_done);
        changed
    }

    fn frame_run(&mut self, dt_ms: f64, now_ms: f64) -> bool {
        if let Some(t) = self.catch_up_to {
            let t = t.min(self.end());
            // Untraced to the jump's last stretch, then traced, so the log opens on what led
            // up to the link's time point.
            let tail_from = SimTime(t.ns().saturating_sub(JUMP_TRACE_TAIL_NS));
            // (A run whose jobs end before the tail starts goes straight to its end.)
            if self.sim.now() < tail_from && !self.is_done() {
                self.begin_untraced();
                self.run_sim(tail_from, self.catch_up_events);
                // The pools, tag maps and queues as they are now, so the diagram shows the
                // run filling up during a long jump rather than the state it left.
                self.refresh_shown();
                return false;
            }
            self.end_gap();
            self.run_traced(t, self.catch_up_events);
            if self.sim.now() >= t || self.is_done() {
                let link_t = self.link_t.take();
                if let (Some(done), Some(t), None) =
                    (self.sim.finished_at(), link_t.filter(|lt| *lt == t && self.sim.now() < *lt), &self.notice)
                {
                    // A link's time point past where every job finished: the run stands at
                    // its end, and the page says so (as for a t past the duration).
                    self.notice = Some(format!(
                        "The link's t = {} is past the run's end: every job was done at {}, so it shows the end.",
                        crate::format::sim_time(t.ns()),
                        crate::format::sim_time(done.ns())
                    ));
                }
                self.catch_up_to = None;
                // Not measured yet at the asked speed: the live line says nothing until it is.
                self.achieved_speed = self.speed;
                self.resync();
                return true;
            }
            // The traced tail can take several frames: the clock and pools the page shows
            // move with it (the progress bar, and the session's clock for B and the timeline).
            self.refresh_shown();
            return false;
        }
        if !self.playing || self.is_done() {
            return self.absorb(now_ms);
        }
        let dt_ms = dt_ms.max(0.0);
        if dt_ms > FRAME_GAP_MS {
            if dt_ms <= KEEP_TIME_GAP_MS {
                // The page was not drawn for a while (a window behind the speaker notes): the
                // run catches up to where wall time has it, over frames, as a jump does.
                let want_ns = (self.speed * dt_ms * 1e6) as u64;
                self.catch_up_to = Some((self.sim.now() + want_ns).min(self.end()));
                return false;
            }
            // A tab left aside for longer: the run waits for its reader.
            return self.run_frame(STALL_STEP_MS, 1.0, now_ms);
        }
        // Frames further apart than a 60 Hz display's (a throttled window) get more events.
        self.run_frame(dt_ms, (dt_ms / 16.0).clamp(1.0, 4.0), now_ms)
    }

    /// Runs `dt_ms` of wall time at the run's speed with `budget_scale` times the frame's event
    /// budget.
    fn run_frame(&mut self, dt_ms: f64, budget_scale: f64, now_ms: f64) -> bool {
        let want_ns = (self.speed * dt_ms * 1e6).max(1.0) as u64;
        let start = self.sim.now();
        let target = (start + want_ns).min(self.end());
        let ran = self.run_sim(target, (self.frame_events_max as f64 * budget_scale) as u64);
        let got_ns = self.sim.now() - start;
        self.achieved_speed = if dt_ms > 0.0 { got_ns as f64 / (dt_ms * 1e6) } else { 0.0 };
        let _ = ran;
        self.absorb(now_ms)
    }

    /// After a frame whose work took `work_ms` of wall time: a catch-up under way scales its
    /// events per frame towards `aim_ms` (on the page's thread a frame of 40 ms of work at
    /// 100 000 events would drop frames; one of 1 ms wastes the jump's time).
    pub fn tune_catch_up(&mut self, work_ms: f64, aim_ms: f64) {
        if self.catch_up_to.is_none() || !work_ms.is_finite() || work_ms <= 0.0 {
            return;
        }
        self.catch_up_events = scale_budget(self.catch_up_events, work_ms, aim_ms);
    }

    /// Runs exactly one event (→). Returns the event count after it.
    pub fn step_event(&mut self, now_ms: f64) -> u64 {
        if !self.is_done() {
            self.step_sim();
        }
        self.absorb(now_ms);
        self.sim.totals().events
    }

    /// Runs 1 ms of simulated time (Shift+→).
    pub fn step_ms(&mut self, now_ms: f64) {
        let t = (self.sim.now() + 1_000_000).min(self.end());
        self.run_sim(t, u64::MAX);
        self.absorb(now_ms);
    }

    /// Fast-forwards to `t` seconds of simulated time without animating.
    pub fn fast_forward(&mut self, secs: f64) {
        let t = (self.sim.now() + SimTime::from_secs_f64(secs).ns()).min(self.end());
        let tail_from = SimTime(t.ns().saturating_sub(JUMP_TRACE_TAIL_NS));
        if self.sim.now() < tail_from {
            self.begin_untraced();
            self.run_sim(tail_from, u64::MAX);
        }
        self.end_gap();
        self.run_traced(t, u64::MAX);
        self.resync();
        self.timeline.note(&mut self.sim, self.writes_done);
    }

    /// Stops a jump (a link's `t`, the timeline) where it has got to: the run stays there,
    /// paused, with what a jump to that time would show (the log from where the trace came on).
    pub fn stop_catch_up(&mut self) {
        if self.catch_up_to.is_some() {
            self.playing = false;
        }
        self.end_catch_up_here();
    }

    /// A jump under way ends where the run stands: its traced tail goes to the log, the
    /// tokens start afresh, and the timeline notes the place.
    fn end_catch_up_here(&mut self) {
        if self.catch_up_to.take().is_some() {
            self.end_gap();
            self.resync();
            self.timeline.note(&mut self.sim, self.writes_done);
        }
    }

    /// Runs towards `t`, at most `budget` events, with the trace on, taking its records (into
    /// btt and the log) every `TRACE_CHUNK_EVENTS` events.
    fn run_traced(&mut self, t: SimTime, budget: u64) {
        let mut ran = 0;
        while ran < budget {
            let n = self.run_sim(t, TRACE_CHUNK_EVENTS.min(budget - ran));
            ran += n;
            self.take_records(None);
            if n == 0 || self.sim.now() >= t || self.is_done() {
                break;
            }
        }
    }

    /// A jump (a skip, a link's catch-up) runs without the trace but for its last
    /// `JUMP_TRACE_TAIL_NS`: nobody sees those records, and the core runs faster without them.
    /// The untraced span is kept for the event log.
    fn begin_untraced(&mut self) {
        self.gap_from.get_or_insert(self.sim.now());
        self.sim.set_trace(false);
        self.feed(TraceInput::Untraced);
    }

    /// The untraced part of a jump ends: the trace is on again, and the span is noted.
    fn end_gap(&mut self) {
        self.sim.set_trace(true);
        if let Some(from) = self.gap_from.take().filter(|&from| self.sim.now() > from) {
            let (to, next_seq) = (self.sim.now(), self.sim.trace().next_seq());
            self.feed(TraceInput::Gap { from, to, next_seq });
        }
    }

    /// After a jump: the traced tail goes to the event log and btt, not to the animation;
    /// the tokens start afresh and the counters are taken as they stand.
    fn resync(&mut self) {
        // The tail's records: btt pairs begun before the untraced span were dropped when it
        // began, so only requests seen whole in the tail count.
        self.take_records(None);
        self.feed(TraceInput::ResetTokens);
        self.absorb(0.0);
    }

    /// The trace records since the last call, into btt and the event log, and into the
    /// tokens when `animate_at` gives the frame's wall time (ms).
    fn take_records(&mut self, animate_at: Option<f64>) {
        let (recs, dropped) = self.sim.trace().since(self.cursor);
        let records: Vec<TraceRecord> = recs.copied().collect();
        self.cursor = self.sim.trace().next_seq();
        let animate = animate_at.map(|now_ms| Animation {
            now_ms,
            tween_ms: tokens::tween_ms_at(self.speed),
            pids: self.last_threads.iter().map(|t| t.pid).collect(),
        });
        self.feed(TraceInput::Records { records, dropped, animate });
    }

    /// The page's trace view's next input (kept while a view takes them).
    fn feed(&mut self, input: TraceInput) {
        if let Some(kept) = &mut self.trace_inputs {
            kept.push_back(input);
        }
    }

    /// The run goes on as `d` (a restart, a rewind, a knob that restarts): a `Run` keeping its
    /// trace view's inputs goes on keeping them.
    fn succeed_by(&mut self, mut d: Run) {
        d.trace_inputs = self.trace_inputs.as_ref().map(|_| VecDeque::new());
        *self = d;
    }

    /// From now on, keeps what the trace view is handed, for `take_trace_inputs`.
    pub fn keep_trace_inputs(&mut self) {
        self.trace_inputs.get_or_insert_with(VecDeque::new);
    }

    /// The trace view's inputs since the last call, in order (what the page's view of this
    /// run takes, or a worker owning the run posts to it).
    pub fn take_trace_inputs(&mut self) -> Vec<TraceInput> {
        self.take_trace_inputs_bounded(usize::MAX)
    }

    /// As `take_trace_inputs`, but at most `records_max` records (at least one input, or its
    /// first part: `TraceInput::split`); the rest waits for the next call. A worker posts a
    /// jump's traced tail (158 000 records on dm-sg-lists) over several frames this way, so the
    /// page never parses one huge message.
    pub fn take_trace_inputs_bounded(&mut self, records_max: usize) -> Vec<TraceInput> {
        let Some(kept) = &mut self.trace_inputs else { return Vec::new() };
        let mut out = Vec::new();
        let mut n = 0;
        while let Some(input) = kept.pop_front() {
            let len = input.records_len();
            if n + len <= records_max {
                n += len;
                out.push(input);
            } else if n > 0 {
                kept.push_front(input);
                break;
            } else {
                let mut parts = input.split(records_max).into_iter();
                if let Some(first) = parts.next() {
                    n += first.records_len();
                    out.push(first);
                }
                for p in parts.rev() {
                    kept.push_front(p);
                }
            }
        }
        out
    }

    /// Trace inputs kept and not yet taken (a bounded take left them for the next).
    pub fn trace_backlog(&self) -> bool {
        self.trace_inputs.as_ref().is_some_and(|k| !k.is_empty())
    }

    /// Takes in new trace records and counters.
    fn absorb(&mut self, now_ms: f64) -> bool {
        self.take_records(Some(now_ms));
        self.refresh_shown();
        if self.take_interval() {
            return true;
        }
        // Before the first whole second, show the numbers so far, a few times per second.
        now_ms - self.last_partial_ms >= PARTIAL_REFRESH_MS && self.refresh_partial(now_ms)
    }

    /// Runs B in lockstep behind A: to simulated time `t`, within the frame's event budget.
    pub fn follow(&mut self, t: SimTime, now_ms: f64) -> bool {
        let t = t.min(self.end());
        if self.playing && !self.is_done() && t > self.sim.now() {
            self.run_sim(t, self.frame_events_max);
        }
        self.absorb(now_ms)
    }
}

/// A link to `lesson` with these knobs, as `variant` (and B) with `seed`, opened at `t`
/// simulated seconds and `speed` if given.
pub fn link_fragment(
    lesson: &str,
    variant: &str,
    b: Option<BLink>,
    overrides: &[(String, String)],
    seed: u64,
    t: Option<f64>,
    speed: Option<f64>,
) -> String {
    LinkState {
        lesson: lesson.to_string(),
        variant: Some(variant.to_string()),
        b: b.map(|b| b.variant.to_string()),
        overrides: overrides.to_vec(),
        b_overrides: b.map_or_else(Vec::new, |b| b.own.to_vec()),
        seed,
        t,
        speed,
        step: None,
        presenter: None,
        large: None,
    }
    .encode()
}

/// The notice's words for a link's `t` past the run's end (`end_s`, its duration).
fn past_end_fault(t: f64, end_s: f64) -> String {
    format!("t: {t} s is past the run's end at {end_s} s (its duration; a duration setting runs longer), so it opens at the end")
}
