//! The page's runs (`SessionView`): its view of run A and of B in the A/B view (`RunView`, kept
//! by the runs' updates), what the page alone keeps (the diagram's expanded group, the charts to
//! redraw, the lesson's stop on show, the latency chart's form, a seed sweep), and the runs'
//! client. The runs (`Session`) are in a Web Worker where the page can start one (`RunsWorker`),
//! else on the page's thread; the page moves them only by `Command`s and reads them only through
//! their updates. A command's reply, and what waits on it, come when the worker answers, in the
//! order sent; a worker that fails or stays silent hands the runs back to the page, which runs
//! the unanswered commands.

use super::port::RunsWorker;
use super::{warn, RunView};
use crate::protocol::{Command, FromRuns, Reply, RunUpdate, ToRuns};
use crate::runs::Session;
use crate::sweep::Sweep;
use blksim::SimTime;
use std::collections::VecDeque;

/// Commands (and what waits on them) the worker may owe the page at once: past it the worker
/// is not answering, and the page runs the runs itself.
pub const WAITING_MAX: usize = 256;

/// Where the runs run.
enum Runs {
    /// On the page's thread: native tests, a browser that cannot start the worker, or the
    /// reader's choice (`localStorage["blkviz.runs"] = "page"`).
    Here(Box<Session>),
    /// In a Web Worker (`crate::runs::worker`).
    Worker(RunsWorker),
}

/// What is done with a command's reply, once the views have taken its update.
type Then = Box<dyn FnOnce(&mut SessionView, Reply)>;
/// What waits until the commands before it are answered (the address, written from the views).
type Settled = Box<dyn FnOnce(&mut SessionView)>;

enum Waiting {
    /// A command posted (kept, to run again on the page's thread if the worker fails).
    Reply(u32, Command, Then),
    Settled(Settled),
}

/// How long the worker may leave the page without any answer before the page takes the runs
/// back (a worker killed without an error event): no frame or command takes near this long.
pub const WORKER_SILENCE_MAX_MS: f64 = 20_000.0;

pub struct SessionView {
    runs: Runs,
    /// With the worker: in order, the commands it has not answered yet and what waits on them.
    waiting: VecDeque<Waiting>,
    /// The last update left trace inputs for the next (`RunUpdate::backlog`).
    trace_backlog: bool,
    /// With the worker, the latest of a run of timeline or speed moves made while a command was
    /// unanswered (a drag sends one per pointer event): sent once the worker has answered, the
    /// moves it replaced being past.
    held: Option<(Command, Then)>,
    /// With the worker, the speed asked of run A and not yet answered: A's view shows it
    /// meanwhile, so the speed slider (whose keys step from the speed shown) does not jump
    /// back to the old speed and lose the presses made before the answer.
    asked_speed: Option<f64>,
    pub a: RunView,
    pub b: Option<RunView>,
    /// The device group expanded in the diagram (large arrays), if any.
    pub expanded: Option<usize>,
    /// Set when a new simulated second landed in either run, or a command moved them (charts
    /// need redrawing).
    pub charts_dirty: bool,
    /// A seed sweep ("Run N seeds"), under way or done, and whether its chart needs drawing.
    pub sweep: Option<Sweep>,
    pub sweep_dirty: bool,
    /// The lesson's stop on show (`Lesson::stop`, 0-based), if the steps have begun: the
    /// address carries it, so a reload or a bookmark returns to it.
    pub stop: Option<usize>,
    /// The latency chart shows each second's latencies (a heat map) rather than the run's
    /// histogram.
    pub latency_over_time: bool,
}

/// Whether the runs go to a Web Worker: in the browser, unless the reader asked for the page's
/// thread (`localStorage["blkviz.runs"] = "page"`, for a comparison or a browser whose workers
/// misbehave).
fn wants_worker() -> bool {
    if !cfg!(target_arch = "wasm32") {
        return false;
    }
    use gloo::storage::{LocalStorage, Storage};
    LocalStorage::raw().get_item("blkviz.runs").ok().flatten().as_deref() != Some("page")
}

impl SessionView {
    /// The page's runs from a link (`Session::from_fragment`), in a worker where the page can
    /// start one. The page makes the same runs first, for its first views (a link opens the same
    /// runs wherever it is opened): it shows them at once, and the worker's updates follow.
    pub fn from_fragment(fragment: &str, default_lesson: &str) -> SessionView {
        let mut v = SessionView::of(Session::from_fragment(fragment, default_lesson));
        if wants_worker() {
            match RunsWorker::start(fragment, default_lesson) {
                Ok(w) => v.runs = Runs::Worker(w),
                Err(e) => warn(&format!("blkviz: the runs stay on the page: {e}")),
            }
        }
        v
    }

    /// As `from_fragment`, with the runs behind `port` (a test's stand-in for the worker).
    #[cfg(test)]
    pub fn over_port(fragment: &str, default_lesson: &str, port: Box<dyn super::port::Port>) -> SessionView {
        let mut v = SessionView::of(Session::from_fragment(fragment, default_lesson));
        v.runs = Runs::Worker(RunsWorker::over(port, fragment, default_lesson, 0.0).expect("the port takes the link"));
        v
    }

    /// The view of `runs`, which it then owns (on the page's thread).
    pub fn of(mut runs: Session) -> SessionView {
        let (a, b) = runs.take_updates();
        SessionView {
            runs: Runs::Here(Box::new(runs)),
            waiting: VecDeque::new(),
            trace_backlog: false,
            held: None,
            asked_speed: None,
            a: RunView::new(a),
            b: b.map(RunView::new),
            expanded: None,
            charts_dirty: true,
            sweep: None,
            sweep_dirty: false,
            stop: None,
            latency_over_time: false,
        }
    }

    /// Whether the runs are in a Web Worker.
    pub fn in_worker(&self) -> bool {
        matches!(self.runs, Runs::Worker(_))
    }

    /// The runs' updates into the views (B's view comes and goes with B).
    fn apply(&mut self, a: RunUpdate, b: Option<RunUpdate>) {
        self.trace_backlog = a.backlog || b.as_ref().is_some_and(|b| b.backlog);
        self.a.apply(a);
        if let Some(sp) = self.asked_speed {
            self.a.state.speed = sp;
        }
        match (b, &mut self.b) {
            (None, view) => *view = None,
            (Some(u), Some(view)) => view.apply(u),
            (Some(u), view @ None) => *view = Some(RunView::new(u)),
        }
    }

    /// On the page's thread: takes the runs' updates.
    fn pull_here(&mut self) {
        if let Runs::Here(runs) = &mut self.runs {
            let (a, b) = runs.take_updates();
            self.apply(a, b);
        }
    }

    /// Carries out a command of the page's controls; nothing is done with its reply.
    pub fn act(&mut self, cmd: Command) {
        self.act_then(cmd, |_, _| {});
    }

    /// Carries out a command, then `then` with its reply once the views show what it did: at
    /// once on the page's thread, when the worker answers otherwise.
    pub fn act_then(&mut self, cmd: Command, then: impl FnOnce(&mut SessionView, Reply) + 'static) {
        match &cmd {
            Command::ToggleLogPause => self.a.trace.log_paused = !self.a.trace.log_paused,
            // The address carries the stop (`link::state_fragment`), set up or not.
            Command::GoToStop(i) => self.stop = Some(*i),
            Command::LinkedStep(st) => self.stop = Some(st.step as usize - 1),
            _ => {}
        }
        self.charts_dirty = true;
        if let (Command::SetSpeed(sp), true) = (&cmd, self.in_worker()) {
            // As `Run::set_speed` holds it.
            let sp = sp.clamp(crate::runs::SPEED_MIN, crate::runs::SPEED_MAX);
            self.asked_speed = Some(sp);
            self.a.state.speed = sp;
        }
        if self.in_worker() && matches!(cmd, Command::Seek(_) | Command::SetSpeed(_)) && self.unanswered() {
            self.held = Some((cmd, Box::new(then)));
            super::live::mark_catching_up();
            return;
        }
        self.send_held();
        self.send(cmd, Box::new(then));
    }

    /// Sends the move held back (`held`), if any.
    fn send_held(&mut self) {
        if let Some((cmd, then)) = self.held.take() {
            self.send(cmd, then);
        }
    }

    /// The command to the runs, and `then` with its reply when the views show it.
    fn send(&mut self, cmd: Command, then: Then) {
        let failed = match &mut self.runs {
            Runs::Here(runs) => {
                let reply = runs.act(cmd);
                self.pull_here();
                then(self, reply);
                return;
            }
            Runs::Worker(w) if self.waiting.len() < WAITING_MAX => {
                let id = w.next_id;
                w.next_id = w.next_id.wrapping_add(1);
                match w.post(&ToRuns::Act { id, cmd: cmd.clone() }) {
                    Ok(()) => {
                        self.waiting.push_back(Waiting::Reply(id, cmd, then));
                        super::live::mark_catching_up();
                        return;
                    }
                    Err(e) => e,
                }
            }
            Runs::Worker(_) => format!("{WAITING_MAX} commands unanswered"),
        };
        self.waiting.push_back(Waiting::Reply(0, cmd, then));
        self.worker_failed(&failed);
    }

    /// Whether the views are behind the runs: a command sent to the worker is not answered yet
    /// (they show the runs as they were before it), or the trace of the last frames is still on
    /// its way (a jump's long traced tail: the log and btt are not whole yet).
    pub fn behind(&self) -> bool {
        self.trace_backlog || self.unanswered()
    }

    /// Whether a command is not answered yet (or held back, to be sent).
    pub fn unanswered(&self) -> bool {
        self.held.is_some() || self.replies_waiting()
    }

    /// Whether a command posted to the worker is not answered yet.
    fn replies_waiting(&self) -> bool {
        self.waiting.iter().any(|w| matches!(w, Waiting::Reply(..)))
    }

    /// Where a jump under way goes (run A's, else B's), if one is.
    pub fn jump_target(&self) -> Option<SimTime> {
        std::iter::once(&self.a).chain(self.b.as_ref()).find_map(|d| d.catch_up_to)
    }

    /// Where the timeline stands: the time last asked of it (a seek held back or not yet
    /// answered), else where a jump under way goes, else the clock. Its arrow keys step from
    /// here, so presses quicker than the runs add up rather than each stepping from a clock
    /// that has not moved yet.
    pub fn timeline_at(&self) -> SimTime {
        let last = self.held.as_ref().map(|(c, _)| c).or_else(|| {
            self.waiting.iter().rev().find_map(|w| match w {
                Waiting::Reply(_, c, _) => Some(c),
                Waiting::Settled(_) => None,
            })
        });
        match last {
            Some(Command::Seek(t)) => *t,
            _ => self.jump_target().unwrap_or_else(|| self.clock()),
        }
    }

    /// Runs `f` once the views show every command sent so far (at once, on the page's thread).
    pub fn when_settled(&mut self, f: impl FnOnce(&mut SessionView) + 'static) {
        self.send_held();
        if self.waiting.is_empty() {
            f(self);
        } else {
            self.waiting.push_back(Waiting::Settled(Box::new(f)));
        }
    }

    /// What the page says about run A (a link's problems, a refused seed); None closes it.
    pub fn set_notice(&mut self, notice: Option<String>) {
        self.act(Command::SetNotice(notice));
    }

    /// The worker failed: the page runs the runs itself from where the views show them (the
    /// link to this state opens the same runs at the same time point), and says so.
    /// The commands not yet answered run on the page's thread, in order, with what waited on
    /// them.
    fn worker_failed(&mut self, why: &str) {
        warn(&format!("blkviz: the runs' worker failed: {why}"));
        let fragment = self.fragment();
        self.runs = Runs::Here(Box::new(Session::from_fragment(&fragment, &self.a.lesson.id)));
        self.pull_here();
        let pending = std::mem::take(&mut self.waiting);
        self.asked_speed = None;
        self.replay_here(pending);
        self.send_held();
        self.set_notice(Some(format!("The simulation's worker stopped ({why}); the page runs it itself from here.")));
    }

    /// On the page's thread: commands and what waits on them, in order.
    fn replay_here(&mut self, entries: VecDeque<Waiting>) {
        for entry in entries {
            match entry {
                Waiting::Reply(_, cmd, then) => self.send(cmd, then),
                Waiting::Settled(f) => f(self),
            }
        }
    }

    /// Takes in what the worker sent: updates, then what waited on each reply. Returns true
    /// when the counters changed or a command was answered.
    fn take_from_worker(&mut self, now_ms: f64) -> bool {
        let replies_waiting = self.replies_waiting();
        let Runs::Worker(w) = &mut self.runs else { return false };
        let msgs = w.take();
        if !msgs.is_empty() || !(w.frame_in_flight || replies_waiting) {
            w.heard_at_ms = now_ms;
        } else if now_ms - w.heard_at_ms > WORKER_SILENCE_MAX_MS {
            self.worker_failed(&format!("no answer for {} s", WORKER_SILENCE_MAX_MS / 1000.0));
            return true;
        }
        let mut changed = false;
        for msg in msgs {
            let FromRuns { a, b, frame, reply } = match msg {
                Ok(m) => m,
                Err(e) => {
                    self.worker_failed(&e);
                    return true;
                }
            };
            self.apply(a, b);
            if let Some(c) = frame {
                changed |= c;
                if let Runs::Worker(w) = &mut self.runs {
                    w.frame_in_flight = false;
                }
            }
            if let Some((id, r)) = reply {
                changed = true;
                match self.waiting.pop_front() {
                    Some(Waiting::Reply(want, cmd, then)) if want == id => {
                        // The last speed asked is answered: A's view shows the run's own again.
                        let speed_pending = matches!(self.held, Some((Command::SetSpeed(_), _)))
                            || self.waiting.iter().any(|w| matches!(w, Waiting::Reply(_, Command::SetSpeed(_), _)));
                        if matches!(cmd, Command::SetSpeed(_)) && !speed_pending {
                            self.asked_speed = None;
                        }
                        // What `then` waits for in its turn (the step's own history entry)
                        // runs at once, before what waited behind its command (the address
                        // noting the step); a command it sends goes after the ones sent before.
                        let behind = std::mem::take(&mut self.waiting);
                        then(self, r);
                        let sent = std::mem::replace(&mut self.waiting, behind);
                        if self.in_worker() {
                            self.waiting.extend(sent);
                        } else {
                            // `then` found the worker failed: the rest runs here.
                            let rest = std::mem::take(&mut self.waiting);
                            self.replay_here(rest);
                            self.replay_here(sent);
                            return true;
                        }
                    }
                    _ => {
                        self.worker_failed(&format!("a reply out of order (command {id})"));
                        return true;
                    }
                }
                while matches!(self.waiting.front(), Some(Waiting::Settled(_))) {
                    if let Some(Waiting::Settled(f)) = self.waiting.pop_front() {
                        f(self);
                    }
                }
            }
        }
        changed
    }

    /// One animation frame. Returns true when the counters changed (or, with the worker, a
    /// command was answered).
    pub fn frame(&mut self, dt_ms: f64, now_ms: f64) -> bool {
        let answered = self.take_from_worker(now_ms);
        if !self.replies_waiting() {
            self.send_held();
        }
        // A sweep under way takes the frame; the runs on screen wait, paused.
        if let Some(sw) = self.sweep.as_mut().filter(|sw| !sw.is_done()) {
            let ended = sw.frame();
            self.sweep_dirty |= ended;
            return ended | answered;
        }
        let changed = match &mut self.runs {
            Runs::Here(runs) => {
                let changed = runs.frame(dt_ms, now_ms);
                self.pull_here();
                changed
            }
            Runs::Worker(w) => {
                // One frame in flight: the wall time of the frames meanwhile goes into the next.
                w.dt_pending_ms += dt_ms;
                if !w.frame_in_flight {
                    let msg = ToRuns::Frame { dt_ms: w.dt_pending_ms, now_ms };
                    match w.post(&msg) {
                        Ok(()) => (w.frame_in_flight, w.dt_pending_ms) = (true, 0.0),
                        Err(e) => self.worker_failed(&e),
                    }
                }
                answered
            }
        };
        self.charts_dirty |= changed;
        changed
    }

    /// After a frame whose work took `work_ms`: the budgets of a jump (on the page's thread:
    /// the worker measures its own) or a sweep under way follow it, so the page keeps its frame
    /// rate while they run.
    pub fn tune(&mut self, work_ms: f64) {
        if let Runs::Here(runs) = &mut self.runs {
            runs.tune(work_ms, crate::runs::CATCH_UP_FRAME_MS);
        }
        if let Some(sw) = &mut self.sweep {
            sw.tune(work_ms);
        }
    }

    /// The simulated time the page shows: the later of the two runs' (a finished run stops).
    pub fn clock(&self) -> SimTime {
        let a = self.a.now();
        self.b.as_ref().map_or(a, |b| a.max(b.now()))
    }

    /// The furthest simulated time the page has reached: the timeline's end.
    pub fn reached(&self) -> SimTime {
        self.a.reached.max(self.b.as_ref().map_or(SimTime::ZERO, |b| b.reached))
    }

    /// A link to this state, with the A/B view's B if it is open.
    pub fn fragment(&self) -> String {
        let own = self.b_own();
        self.a.fragment(self.b_link(&own), self.clock())
    }

    /// Run B's own knobs: its settings that A does not have (B runs with A's and these over them).
    pub fn b_own(&self) -> Vec<(String, String)> {
        self.b
            .as_ref()
            .map_or_else(Vec::new, |b| b.state.overrides.iter().filter(|kv| !self.a.state.overrides.contains(kv)).cloned().collect())
    }

    /// Run B as a link names it, with `own` (`b_own`).
    pub fn b_link<'a>(&'a self, own: &'a [(String, String)]) -> Option<crate::runs::BLink<'a>> {
        self.b.as_ref().map(|b| crate::runs::BLink { variant: &b.state.variant, own })
    }

    /// Starts a sweep of `seeds` seeds of A's variant (and B's, in the A/B view), with A's
    /// knobs; the runs on screen pause meanwhile.
    pub fn start_sweep(&mut self, seeds: u64) -> Result<(), String> {
        let mut variants = vec![self.a.variant.clone()];
        variants.extend(self.b.as_ref().map(|b| b.variant.clone()));
        self.start_sweep_of(&variants, seeds)
    }

    /// A seed sweep of the lesson's `variants` (with A's settings), in workers where the page
    /// can have them; the runs on screen pause meanwhile.
    pub fn start_sweep_of(&mut self, variants: &[String], seeds: u64) -> Result<(), String> {
        self.sweep = Some(Sweep::start(&self.a.lesson, variants, &self.a.overrides, seeds)?);
        // B follows A's play and pause.
        self.act(Command::Pause);
        self.sweep_dirty = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A command's reply (on the page's thread it comes at once).
    fn reply(s: &mut SessionView, cmd: Command) -> Reply {
        let got = Rc::new(RefCell::new(None));
        let put = got.clone();
        s.act_then(cmd, move |_, r| *put.borrow_mut() = Some(r));
        let r = got.borrow_mut().take();
        r.expect("answered at once")
    }

    /// The sandbox's A/B of two setups: B opens as a copy of A, takes a knob of its own, both
    /// runs start again together when B restarts, a knob set on both is no longer B's own, and
    /// the link carries B's own knobs and opens the same two runs.
    #[test]
    fn the_sandbox_compares_two_setups_with_b_s_own_knobs() {
        let mut s = SessionView::from_fragment("#/sandbox?v=1&disks=2&seed=5", "sandbox");
        s.act(Command::ToggleAb);
        assert_eq!(s.b.as_ref().map(|b| b.variant.as_str()), Some("custom"), "B is a copy of A");
        assert!(s.b_own().is_empty());
        let mut ts = 0.0;
        for _ in 0..30 {
            ts += 16.0;
            s.frame(16.0, ts);
        }
        assert!(s.clock() > SimTime::ZERO);
        let Reply::Knob(Ok(m)) = reply(&mut s, Command::ApplyKnobB { key: "queue.scheduler".into(), value: "cfq".into() }) else {
            panic!("B took the elevator")
        };
        assert!(m.starts_with("run B: "), "{m}");
        let b = s.b.as_ref().unwrap();
        assert_eq!(
            (s.a.shown.scenario.queue.scheduler, b.shown.scenario.queue.scheduler),
            (blksim::scenario::Scheduler::Noop, blksim::scenario::Scheduler::Cfq)
        );
        assert_eq!(b.shown.scenario.disks, 2, "B keeps A's knobs");
        assert_eq!(s.b_own(), vec![("queue.scheduler".to_string(), "cfq".to_string())]);
        let link = s.fragment();
        assert!(link.contains("&disks=2&b.queue.scheduler=cfq&seed=5"), "{link}");
        // B restarted with a knob that does not apply live: A started again with it.
        let Reply::Knob(Ok(_)) = reply(&mut s, Command::ApplyKnobB { key: "disks".into(), value: "3".into() }) else { panic!() };
        assert_eq!((s.a.now(), s.b.as_ref().unwrap().now()), (SimTime::ZERO, SimTime::ZERO), "both from t = 0");
        // Set on both, the knob is A's and B's alike.
        let Reply::Knob(Ok(_)) = reply(&mut s, Command::ApplyKnob { key: "disks".into(), value: "4".into() }) else { panic!() };
        assert_eq!(s.b_own(), vec![("queue.scheduler".to_string(), "cfq".to_string())]);
        // The link opens the same two runs.
        let again = SessionView::from_fragment(&s.fragment(), "sandbox");
        let (a2, b2) = (&again.a.shown.scenario, &again.b.as_ref().unwrap().shown.scenario);
        assert_eq!(
            (a2.disks, a2.queue.scheduler, b2.disks, b2.queue.scheduler),
            (4, blksim::scenario::Scheduler::Noop, 4, blksim::scenario::Scheduler::Cfq)
        );
        // A job file applied runs in both, B keeping its own knobs over it.
        assert_eq!(reply(&mut s, Command::ApplyMany(vec![("workload.numjobs".into(), "2".into())])), Reply::Done);
        let b = s.b.as_ref().unwrap();
        assert_eq!(
            (s.a.shown.scenario.workload.numjobs, b.shown.scenario.workload.numjobs, b.shown.scenario.queue.scheduler),
            (2, 2, blksim::scenario::Scheduler::Cfq)
        );
        // Closed, B's own knobs go with it.
        s.act(Command::ToggleAb);
        assert!(s.b.is_none() && s.b_own().is_empty() && !s.fragment().contains("b."));
    }

    #[test]
    fn the_page_s_views_follow_the_runs_through_commands_and_frames() {
        let mut s = SessionView::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&seed=2&b=workaround&t=0.4", "nr-requests");
        let json = |sh: &crate::protocol::Shown| serde_json::to_string(sh).unwrap();
        let same = |s: &SessionView| {
            let Runs::Here(runs) = &s.runs else { panic!("native runs are on the page's thread") };
            assert_eq!(json(&s.a.shown), json(&runs.a.shown));
            assert_eq!(s.b.as_ref().map(|b| json(&b.shown)), runs.b.as_ref().map(|b| json(&b.shown)));
        };
        assert_eq!(s.b.as_ref().map(|b| b.variant.as_str()), Some("workaround"), "the link's B");
        let mut ts = 0.0;
        while s.jump_target().is_some() {
            ts += 16.0;
            s.frame(16.0, ts);
        }
        assert_eq!(s.clock(), SimTime(400_000_000));
        assert!(s.a.trace.log.len() > 100, "the jump's tail in A's log");
        same(&s);
        // The log's pause is the view's: the records of the frames after it do not come in.
        s.act(Command::ToggleLogPause);
        let logged = s.a.trace.log.len();
        s.act(Command::TogglePlay);
        for _ in 0..10 {
            ts += 16.0;
            s.frame(16.0, ts);
        }
        assert!(s.a.playing && s.a.now() > SimTime(400_000_000));
        assert_eq!(s.a.trace.log.len(), logged);
        same(&s);
        // A step: the stop goes into the address whether or not it was set up.
        assert_eq!(reply(&mut s, Command::GoToStop(0)), Reply::StepSetUp(true));
        assert_eq!(s.stop, Some(0));
        assert_eq!(reply(&mut s, Command::GoToStop(99)), Reply::StepSetUp(false));
        assert_eq!(s.stop, Some(99));
        assert!(s.a.trace.log_paused, "a restarted run keeps the reader's pause");
        // B closes and its view goes; a notice is set and closed.
        assert!(s.b.is_none(), "the first step runs alone");
        s.act(Command::ToggleAb);
        assert!(s.b.is_some());
        s.act(Command::ToggleAb);
        assert!(s.b.is_none());
        s.set_notice(Some("x".into()));
        assert_eq!(s.a.notice.as_deref(), Some("x"));
        s.set_notice(None);
        assert_eq!(s.a.notice, None);
        // What waits for the commands before it runs at once here.
        let ran = Rc::new(RefCell::new(false));
        let put = ran.clone();
        s.when_settled(move |_| *put.borrow_mut() = true);
        assert!(*ran.borrow());
        same(&s);
    }

    /// The stand-in worker's runs, the messages it has not answered, its answers not yet taken.
    type LoopState = (crate::runs::worker::Host, VecDeque<ToRuns>, Vec<Result<FromRuns, String>>);

    /// A stand-in for the worker: a `Host` that answers, through bincode, when the test says.
    #[derive(Clone, Default)]
    struct Loopback(Rc<RefCell<LoopState>>);

    impl crate::view::port::Port for Loopback {
        fn post(&self, msg: &ToRuns) -> Result<(), String> {
            let msg = crate::protocol::decode(&crate::protocol::encode(msg)?)?;
            self.0.borrow_mut().1.push_back(msg);
            Ok(())
        }
        fn take(&self) -> Vec<Result<FromRuns, String>> {
            std::mem::take(&mut self.0.borrow_mut().2)
        }
    }

    impl Loopback {
        /// The worker answers its next `n` messages.
        fn answer(&self, n: usize) {
            let mut st = self.0.borrow_mut();
            for _ in 0..n {
                let Some(m) = st.1.pop_front() else { break };
                let r = st.0.handle(m);
                let r = crate::protocol::decode(&crate::protocol::encode(&r).unwrap()).unwrap();
                st.2.push(r);
            }
        }
        fn fail(&self, why: &str) {
            self.0.borrow_mut().2.push(Err(why.into()));
        }
    }

    /// Frames (16 ms apart from `ms` on, each answered by the stand-in worker) until no jump
    /// is under way and no command unanswered.
    fn settle(s: &mut SessionView, port: &Loopback, ms: &mut f64) {
        for _ in 0..2000 {
            *ms += 16.0;
            s.frame(16.0, *ms);
            port.answer(10);
            if s.a.catch_up_to.is_none() && !s.behind() {
                return;
            }
        }
        panic!("the runs settle");
    }

    #[test]
    fn with_the_worker_replies_and_what_waits_on_them_come_in_the_order_sent() {
        let link = "#/lesson/nr-requests?v=1&variant=regressed&seed=2";
        let port = Loopback::default();
        let mut s = SessionView::over_port(link, "nr-requests", Box::new(port.clone()));
        port.answer(1);
        s.frame(16.0, 16.0);
        assert!(s.in_worker());
        // A seed typed, then Play: the seed's reply sends a command of its own (its notice),
        // which must not come before Play's reply.
        s.act_then(Command::ChooseSeed(5), |s, r| {
            s.set_notice(match r {
                Reply::Refused(e) => Some(e),
                _ => None,
            })
        });
        let playing = s.a.playing;
        s.act(Command::TogglePlay);
        assert!(s.behind() && s.a.seed == 2, "nothing shows before the worker answers");
        // The frame posted before them, and the seed.
        port.answer(2);
        s.frame(16.0, 32.0);
        assert_eq!(s.a.seed, 5);
        port.answer(10);
        s.frame(16.0, 48.0);
        assert!(s.in_worker(), "the replies came in order");
        assert_eq!((s.a.seed, s.a.playing, s.behind()), (5, !playing, false));
        // A step's own history entry (queued by its reply's `then`) comes before what waited
        // behind the step (the address noting it).
        let order = Rc::new(RefCell::new(Vec::new()));
        let (o1, o2) = (order.clone(), order.clone());
        s.act_then(Command::GoToStop(0), move |s, _| {
            let o = o1.clone();
            s.when_settled(move |_| o.borrow_mut().push("the step's entry"));
        });
        s.when_settled(move |_| o2.borrow_mut().push("the stop noted"));
        port.answer(10);
        s.frame(16.0, 64.0);
        assert_eq!(*order.borrow(), ["the step's entry", "the stop noted"]);
        // The worker fails with commands on their way: the page runs them itself, in order,
        // from where its views stood, and says so.
        s.act(Command::ChooseSeed(7));
        let ran = Rc::new(RefCell::new(false));
        let r2 = ran.clone();
        s.when_settled(move |s| *r2.borrow_mut() = s.a.seed == 7);
        port.fail("boom");
        s.frame(16.0, 80.0);
        assert!(!s.in_worker() && *ran.borrow(), "the seed ran here, then what waited on it");
        assert!(s.a.notice.as_deref().is_some_and(|n| n.contains("boom")), "{:?}", s.a.notice);
        assert_eq!(s.a.shown.scenario.workload, s.a.shown.scenario.workload);
    }

    #[test]
    fn a_timeline_drag_sends_the_worker_its_latest_point_not_every_one() {
        let port = Loopback::default();
        let mut s = SessionView::over_port("#/lesson/nr-requests?v=1&seed=3&t=2", "nr-requests", Box::new(port.clone()));
        port.answer(1);
        let mut ms = 0.0;
        settle(&mut s, &port, &mut ms);
        assert_eq!(s.clock(), SimTime(2_000_000_000));
        // Thirty pointer moves back along the timeline before the worker answers the first.
        for k in 0..30u64 {
            s.act(Command::Seek(SimTime(1_900_000_000 - k * 10_000_000)));
        }
        let posted = port.0.borrow().1.iter().filter(|m| matches!(m, ToRuns::Act { cmd: Command::Seek(_), .. })).count();
        assert_eq!(posted, 1, "the first move goes; the rest wait as one");
        settle(&mut s, &port, &mut ms);
        assert_eq!(s.clock(), SimTime(1_900_000_000 - 29 * 10_000_000), "the last move is where the runs are");
        // The timeline's ← pressed four times before the worker answers: each press steps
        // from the time asked by the one before.
        let from = s.clock();
        for _ in 0..4 {
            s.act(Command::Seek(SimTime(s.timeline_at().ns() - 100_000_000)));
        }
        assert_eq!(s.timeline_at(), SimTime(from.ns() - 400_000_000));
        settle(&mut s, &port, &mut ms);
        assert_eq!(s.clock(), SimTime(from.ns() - 400_000_000));
        // The speed slider's keys: each press steps from the speed shown, which is the one
        // asked, not the run's old one, until the worker has answered.
        let mut sp = s.a.speed;
        for _ in 0..10 {
            sp *= 0.8;
            s.act(Command::SetSpeed(sp));
            assert_eq!(s.a.speed, sp, "the view shows the speed asked at once");
            s.frame(16.0, ms);
        }
        for k in 0..50 {
            port.answer(10);
            s.frame(16.0, ms + 16.0 + f64::from(k) * 16.0);
            assert_eq!(s.a.speed, sp, "never the old speed meanwhile");
        }
        assert!(!s.behind() && s.asked_speed.is_none());
    }

    #[test]
    fn on_the_page_s_thread_quick_timeline_presses_add_up_while_a_rewind_runs() {
        let mut s = SessionView::from_fragment("#/lesson/nr-requests?v=1&seed=3&t=0.5", "nr-requests");
        // (No worker: the stand-in's port is nobody's, and answers nothing.)
        let (nobody, mut ms) = (Loopback::default(), 0.0);
        settle(&mut s, &nobody, &mut ms);
        assert_eq!(s.clock(), SimTime(500_000_000));
        for _ in 0..3 {
            s.act(Command::Seek(SimTime(s.timeline_at().ns() - 100_000_000)));
        }
        assert_eq!(s.timeline_at(), SimTime(200_000_000), "each press from the one before, not from the clock");
        settle(&mut s, &nobody, &mut ms);
        assert_eq!(s.clock(), SimTime(200_000_000));
    }

    #[test]
    fn a_worker_that_goes_silent_hands_the_runs_back_to_the_page() {
        let port = Loopback::default();
        let mut s = SessionView::over_port("#/lesson/nr-requests?v=1&seed=3&t=0.2", "nr-requests", Box::new(port.clone()));
        port.answer(1);
        s.frame(16.0, 16.0);
        // A frame posted and never answered: after WORKER_SILENCE_MAX_MS the page runs them.
        s.frame(16.0, 32.0);
        assert!(s.in_worker());
        s.frame(16.0, 32.0 + WORKER_SILENCE_MAX_MS + 1.0);
        assert!(!s.in_worker());
        assert!(s.a.notice.as_deref().is_some_and(|n| n.contains("no answer")), "{:?}", s.a.notice);
        assert_eq!(s.a.seed, 3);
    }
    /// After a live knob at 2 s (its new course keeps no snapshot at 1 s), two quick presses of
    /// ←: the first restores t = 0 and runs on towards 1 s; the second, asking for 0, must end
    /// that run there (it went on to 1 s: a seek to the clock left the jump under way).
    #[test]
    fn a_seek_to_where_a_rewind_restored_ends_the_rewind_s_run_on() {
        let port = Loopback::default();
        let mut s = SessionView::over_port("#/lesson/nr-requests?v=1&t=5", "nr-requests", Box::new(port.clone()));
        port.answer(1);
        let mut ms = 0.0;
        let settle = |s: &mut SessionView, ms: &mut f64| {
            settle(s, &port, ms);
            // A frame more, answered: the page's next frames.
            *ms += 16.0;
            s.frame(16.0, *ms);
            port.answer(10);
            *ms += 16.0;
            s.frame(16.0, *ms);
        };
        settle(&mut s, &mut ms);
        for _ in 0..3 {
            s.act(Command::Seek(SimTime(s.timeline_at().ns() - 1_000_000_000)));
        }
        settle(&mut s, &mut ms);
        assert_eq!(s.clock(), SimTime(2_000_000_000));
        s.act(Command::ApplyKnob { key: "queue.nr_requests".into(), value: "64".into() });
        settle(&mut s, &mut ms);
        assert_eq!(s.reached(), SimTime(2_000_000_000), "a new course from 2 s");
        for _ in 0..2 {
            s.act(Command::Seek(SimTime(s.timeline_at().ns().saturating_sub(1_000_000_000))));
        }
        settle(&mut s, &mut ms);
        assert_eq!(s.clock(), SimTime(0));
    }
}
