//! The worker's side of a `Command`: `Session::act` carries out what the page's controls ask
//! of both runs, and answers a `Reply`.

use super::Session;
use crate::protocol::{Command, LinkedStep, Reply};
use blksim::course::lessons::Stop;
use blksim::SimTime;

impl Session {
    /// Carries out a command of the page's controls.
    pub fn act(&mut self, cmd: Command) -> Reply {
        match cmd {
            Command::TogglePlay => self.a.playing = !self.a.playing,
            Command::Pause => {
                for d in std::iter::once(&mut self.a).chain(self.b.as_mut()) {
                    d.playing = false;
                }
            }
            Command::StepEvent { now_ms } => {
                self.a.playing = false;
                self.a.step_event(now_ms);
                self.b_to_a(now_ms);
            }
            Command::StepMs { now_ms } => {
                self.a.playing = false;
                self.a.step_ms(now_ms);
                self.b_to_a(now_ms);
            }
            Command::SetSpeed(sim_s_per_wall_s) => self.a.set_speed(sim_s_per_wall_s),
            Command::Skip { secs } => self.skip(secs),
            Command::Reset => {
                if let Err(e) = self.reset() {
                    return Reply::Refused(e);
                }
            }
            Command::Seek(t) => self.seek(t),
            Command::StopJump => self.stop_jump(),
            Command::ChooseSeed(seed) => {
                if let Err(e) = self.choose_seed(seed) {
                    return Reply::Refused(e);
                }
            }
            // The page's own: its trace view takes no records while paused.
            Command::ToggleLogPause => {}
            Command::SetNotice(n) => self.a.notice = n,
            Command::LinkCleanUsed => self.a.link_clean = None,
            Command::ApplyKnob { key, value } => return Reply::Knob(self.apply_knob(&key, &value)),
            Command::ApplyKnobB { key, value } => return Reply::Knob(self.apply_knob_b(&key, &value)),
            Command::ApplyMany(knobs) => {
                if let Err(e) = self.a.apply_many(&knobs) {
                    return Reply::Refused(e);
                }
                // B runs the new job too, with its own knobs over it, from t = 0 as A does.
                if let Some(vb) = self.b.as_ref().map(|b| b.variant.clone()) {
                    let own = std::mem::take(&mut self.b_own);
                    if let Err(e) = self.open_b_with(&vb, own) {
                        // B's own knobs do not go with the job: A runs it alone, and says why.
                        self.close_b();
                        self.a.notice = Some(format!("run B closed: {e}"));
                    }
                }
            }
            Command::GoToStop(i) => return Reply::StepSetUp(self.go_to_stop(i)),
            Command::LinkedStep(st) => return Reply::StepSetUp(self.linked_step(&st)),
            Command::ToggleAb => self.toggle_ab(),
            Command::PickVariant(name) => self.pick_variant(&name),
            Command::PickB(name) => self.a.notice = self.open_b(&name).err(),
            Command::RunComparison => self.run_comparison(),
            Command::OpenAt(t) => self.open_at(t),
            Command::JumpTo(t) => self.jump_to(t),
            Command::SameRunLink { b, b_own, t, speed } => {
                match b {
                    None => self.close_b(),
                    Some(b) => {
                        if let Err(e) = self.open_b_with(&b, b_own) {
                            self.a.notice = Some(e);
                        }
                    }
                }
                if let Some(t) = t {
                    self.open_at(SimTime::from_secs_f64(t));
                }
                if let Some(sp) = speed {
                    self.a.set_speed(sp);
                }
            }
            Command::OpenLink { fragment, default_lesson, speed } => {
                *self = Session::from_fragment(&fragment, &default_lesson);
                if let Some(sp) = speed {
                    self.a.speed = sp;
                }
            }
        }
        Reply::Done
    }

    fn toggle_ab(&mut self) {
        if self.b.is_some() {
            self.close_b();
        } else {
            // B is the first variant that is not A's; in the sandbox (one variant) a copy of A,
            // whose knobs the reader changes next.
            let b = self.a.lesson.variants.iter().find(|v| v.name != self.a.variant).map(|v| v.name.clone());
            let b = b.or_else(|| (self.a.lesson.id == blksim::course::lessons::SANDBOX).then(|| self.a.variant.clone()));
            if let Some(b) = b {
                self.a.notice = self.open_b(&b).err();
            }
        }
    }

    fn pick_variant(&mut self, name: &str) {
        let seed = self.a.seed;
        let was = self.a.variant.clone();
        self.a.notice = self.a.restart(name, seed).err();
        // A takes the variant B shows: the two swap, so that A/B still compares two variants
        // (a run beside its own copy shows nothing, and its link is refused).
        if self.b.as_ref().is_some_and(|b| b.variant == name) && was != name {
            if let Err(e) = self.open_b(&was) {
                self.a.notice = Some(e);
            }
        }
        if self.b.is_some() {
            // Keep B in lockstep: both from time 0.
            let _ = self.reset();
        }
        self.drop_idle_settings();
    }

    fn run_comparison(&mut self) {
        let vs: Vec<String> = self.a.lesson.variants.iter().map(|v| v.name.clone()).collect();
        if vs.len() < 2 {
            return;
        }
        let seed = self.a.seed;
        self.a.notice = self.a.restart(&vs[0], seed).err();
        self.a.notice = self.open_b(&vs[1]).err();
        self.drop_idle_settings();
        // Past the warm-up, as the steps that compare runs open: the first numbers the room
        // sees are steady ones, not the warm-up's (which can point the other way).
        if let Some(w) = self.a.lesson.warmup_s {
            self.jump_to(SimTime::from_secs_f64(w + 1.0));
        }
        self.a.speed = 0.5;
        self.a.playing = true;
    }

    /// Sets the lesson's stop `i` (`Lesson::stop`): a step's variant, its A/B pairing, its seed, its
    /// speed, and its time point; at the prediction, the question's starting point.
    /// Returns whether the stop exists (and so was set up).
    pub(crate) fn go_to_stop(&mut self, i: usize) -> bool {
        let k = match self.a.lesson.stop(i) {
            Some(Stop::Step(k)) => k,
            Some(Stop::Predict) => {
                self.show_baseline();
                return true;
            }
            None => return false,
        };
        let st = self.a.lesson.steps[k].clone();
        // A step that names its seed runs that seed; the steps after it go back to the reader's.
        let seed = match st.seed {
            Some(seed) => {
                let seed_now = self.a.seed;
                self.seed_before_step.get_or_insert(seed_now);
                seed
            }
            None => self.seed_before_step.take().unwrap_or(self.a.seed),
        };
        // A step with a time point starts its runs afresh and runs them there without animating
        // (past the warm-up: the page cache full, the caches in steady state), then plays on.
        // A run whose jobs are done starts again too: a step on it would show a finished run.
        let restart = self.a.variant != st.variant || st.t.is_some() || self.a.seed != seed || self.a.is_done();
        if restart {
            self.a.notice = self.a.restart(&st.variant, seed).err();
        }
        match &st.ab {
            Some(b) if restart || self.b.as_ref().is_none_or(|x| &x.variant != b || x.seed != seed) => self.a.notice = self.open_b(b).err(),
            Some(_) => {}
            None => self.close_b(),
        }
        self.drop_idle_settings();
        if let Some(t) = st.t.map(blksim::SimTime::from_secs_f64).or_else(|| self.settled_at()) {
            self.jump_to(t);
        }
        if let Some(sp) = st.speed {
            self.a.set_speed(sp);
        }
        self.a.playing = true;
        true
    }

    /// Where a step without a time point of its own opens when its run is still short of it:
    /// past the lesson's warm-up and the first whole simulated second, so the counters it names
    /// read a whole second of steady state rather than the run's first moments (at a step's
    /// slow demonstration speed that second would take minutes). Only a run that lasts its
    /// duration (fio's time_based) is taken there: a sized job may be done before it.
    fn settled_at(&self) -> Option<blksim::SimTime> {
        let sc = &self.a.sim.config().scenario;
        let time_based = std::iter::once(&sc.workload).chain(&sc.jobs).all(|w| w.size == 0);
        let at = blksim::SimTime::from_secs_f64(self.a.lesson.warmup_s.unwrap_or(0.0).max(1.0));
        (time_based && self.a.now() < at && at < self.a.end()).then_some(at)
    }

    /// At the prediction: the run the question starts from (the lesson's first variant, the
    /// reader's seed) alone, as it was or afresh; a previous step's A/B would put another
    /// comparison's ratios beside the question. Its Run it sets up the comparison once the room
    /// has answered. Its speed is the one the steps before it left (PageUp back from the step
    /// after it would otherwise keep that step's, a demonstration's pace, under the question).
    fn show_baseline(&mut self) {
        let v0 = self.a.lesson.first_variant().name.clone();
        let seed = self.seed_before_step.take().unwrap_or(self.a.seed);
        if self.a.variant != v0 || self.a.seed != seed || self.a.is_done() {
            self.a.notice = self.a.restart(&v0, seed).err();
        }
        let before = self.a.lesson.predict_stop().unwrap_or(0);
        if let Some(sp) = self.a.lesson.steps[..before].iter().rev().find_map(|st| st.speed) {
            self.a.set_speed(sp);
        }
        self.close_b();
        self.a.playing = true;
    }

    /// A link's step: set up as PageDown would when the link carries no run of its own (no
    /// variant or B: written by hand, or a lesson plan's "open step 2"), at the link's t if it has
    /// one ("step 2 at 9 s"), paused there as any link with t opens. A copied link names its
    /// variant and stands as it is. The address bar's own form (a reload, a bookmark: the step's
    /// run, no time point) sets the step up too, so the step's time point and speed come back.
    /// Returns whether it set the step up.
    fn linked_step(&mut self, st: &LinkedStep) -> bool {
        let i = st.step as usize - 1;
        if st.variant.is_some() || st.b.is_some() {
            let is_steps_own_run = st.t.is_none()
                && matches!(self.a.lesson.stop(i), Some(Stop::Step(k))
                    if st.variant.as_deref() == Some(self.a.lesson.steps[k].variant.as_str())
                        && st.b == self.a.lesson.steps[k].ab
                        && self.a.lesson.steps[k].seed.is_none_or(|seed| seed == st.seed));
            if !is_steps_own_run {
                return false;
            }
        }
        let set_up = self.go_to_stop(i);
        if let Some(t) = st.t {
            self.open_at(blksim::SimTime::from_secs_f64(t));
        }
        set_up
    }

    /// After a step of A: B, paused, runs to A's clock (the A/B view's runs stand at one time).
    fn b_to_a(&mut self, now_ms: f64) {
        let t = self.a.now();
        if let Some(b) = &mut self.b {
            b.playing = true;
            b.follow(t, now_ms);
            b.playing = false;
        }
    }

    /// A knob to both runs: a setting may act in A's variant or in B's, so each is checked
    /// against the other's too. B takes it when A did.
    fn apply_knob(&mut self, key: &str, value: &str) -> Result<String, String> {
        let vb: Vec<String> = self.b.iter().map(|b| b.variant.clone()).collect();
        let va = [self.a.variant.clone()];
        let r = self.a.apply_knob(key, value, &vb.iter().map(String::as_str).collect::<Vec<_>>());
        if let (Ok(_), Some(b)) = (&r, &mut self.b) {
            let _ = b.apply_knob(key, value, &va.iter().map(String::as_str).collect::<Vec<_>>());
            // Set on both, the knob is no longer B's own.
            self.b_own.retain(|(k, _)| k != key);
        }
        r
    }

    /// A knob to run B alone: live or by restarting B, as for A; B's own from then on.
    fn apply_knob_b(&mut self, key: &str, value: &str) -> Result<String, String> {
        let va = [self.a.variant.clone()];
        let b = self.b.as_mut().ok_or_else(|| "run B is not open: A/B opens it".to_string())?;
        let before = b.now();
        let r = b.apply_knob(key, value, &va.iter().map(String::as_str).collect::<Vec<_>>());
        if r.is_ok() && b.now() < before {
            // B restarted with it: A starts again too, so the two stay in lockstep.
            self.reset()?;
        }
        if r.is_ok() {
            self.b_own.retain(|(k, _)| k != key);
            // B takes back A's value: nothing of its own to keep.
            if !self.a.overrides.iter().any(|(k, v)| k == key && v == value) {
                self.b_own.push((key.to_string(), value.to_string()));
            }
        }
        r.map(|m| format!("run B: {m}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::Run;

    fn session() -> Session {
        let mut s = Session::new(Run::new("nr-requests", Some("regressed"), Vec::new(), 1).unwrap());
        s.open_b("workaround").unwrap();
        s
    }

    #[test]
    fn the_controls_commands_move_both_runs_as_the_page_s_controls_did() {
        let mut s = session();
        assert_eq!(s.act(Command::TogglePlay), Reply::Done);
        assert!(!s.a.playing);
        // Shift+→: 1 ms, B following A's clock, both paused.
        s.act(Command::StepMs { now_ms: 0.0 });
        assert_eq!((s.a.now(), s.b.as_ref().unwrap().now()), (SimTime(1_000_000), SimTime(1_000_000)));
        assert!(!s.a.playing && !s.b.as_ref().unwrap().playing);
        // →: one event of A.
        let events = s.a.shown.totals.events;
        for k in 0..20 {
            s.act(Command::StepEvent { now_ms: 16.0 + f64::from(k) });
        }
        assert_eq!(s.a.shown.totals.events, events + 20);
        assert!(s.a.now() > SimTime(1_000_000), "A's clock moved");
        assert_eq!(s.b.as_ref().unwrap().now(), s.a.now(), "B stands at A's clock, paused");
        assert!(!s.b.as_ref().unwrap().playing);
        s.act(Command::SetSpeed(1e9));
        assert_eq!(s.a.speed, crate::runs::SPEED_MAX, "held to what the slider reaches");
        s.act(Command::Skip { secs: 1.0 });
        assert!(s.a.now() > SimTime(1_000_000_000) && s.b.as_ref().unwrap().now() > SimTime(1_000_000_000));
        // A knob goes to both runs; one neither run has is refused with why.
        assert!(matches!(s.act(Command::ApplyKnob { key: "queue.nr_requests".into(), value: "64".into() }), Reply::Knob(Ok(_))));
        assert_eq!((s.a.shown.scenario.queue.nr_requests, s.b.as_ref().unwrap().shown.scenario.queue.nr_requests), (64, 64));
        let Reply::Knob(Err(e)) = s.act(Command::ApplyKnob { key: "queue.bogus".into(), value: "1".into() }) else { panic!("taken") };
        assert!(e.contains("queue.bogus"), "{e}");
        s.act(Command::ChooseSeed(9));
        assert_eq!((s.a.seed, s.b.as_ref().unwrap().seed, s.a.now()), (9, 9, SimTime::ZERO));
        s.act(Command::Reset);
        assert_eq!(s.a.now(), SimTime::ZERO);
    }

    #[test]
    fn the_lesson_s_commands_set_up_steps_variants_a_b_and_links() {
        let mut s = Session::new(Run::new("nr-requests", Some("fixed"), Vec::new(), 4).unwrap());
        // The first step: its variant, alone, at its time point (0.2 s), at its speed.
        assert_eq!(s.act(Command::GoToStop(0)), Reply::StepSetUp(true));
        assert_eq!((s.a.variant.as_str(), s.b.is_none(), s.a.catch_up_to), ("regressed", true, Some(SimTime(200_000_000))));
        assert_eq!((s.a.speed, s.a.seed), (0.01, 4));
        // A stop the lesson does not have sets nothing up (and the page writes no address).
        assert_eq!(s.act(Command::GoToStop(99)), Reply::StepSetUp(false));
        // A step with its A/B pairing.
        let k = (0..8).find(|&i| matches!(s.a.lesson.stop(i), Some(Stop::Step(k)) if s.a.lesson.steps[k].ab.is_some())).unwrap();
        s.act(Command::GoToStop(k));
        assert_eq!(s.b.as_ref().map(|b| b.variant.as_str()), Some("workaround"));
        // A takes B's variant: the two swap.
        s.act(Command::PickVariant("workaround".into()));
        assert_eq!((s.a.variant.as_str(), s.b.as_ref().map(|b| b.variant.as_str())), ("workaround", Some("regressed")));
        s.act(Command::PickB("fixed".into()));
        assert_eq!(s.b.as_ref().map(|b| b.variant.as_str()), Some("fixed"));
        s.act(Command::ToggleAb);
        assert!(s.b.is_none());
        s.act(Command::ToggleAb);
        assert_eq!(s.b.as_ref().map(|b| b.variant.as_str()), Some("regressed"), "the first variant not A's");
        // The prediction's Run: the first two variants side by side, playing at 0.5 s/s.
        s.act(Command::RunComparison);
        assert_eq!((s.a.variant.as_str(), s.b.as_ref().map(|b| b.variant.as_str())), ("regressed", Some("workaround")));
        assert!(s.a.playing && s.a.speed == 0.5);
        // A link to this run with another t and no B: B closes, both go there, paused.
        s.act(Command::SameRunLink { b: None, b_own: Vec::new(), t: Some(0.3), speed: Some(0.02) });
        assert_eq!((s.b.is_none(), s.a.catch_up_to, s.a.playing, s.a.speed), (true, Some(SimTime(300_000_000)), false, 0.02));
        s.act(Command::JumpTo(SimTime(400_000_000)));
        assert_eq!(s.a.catch_up_to, Some(SimTime(400_000_000)));
        // A link's step without a run of its own sets the step up; a copied link's run stands.
        let r = s.act(Command::LinkedStep(LinkedStep { step: 1, variant: None, b: None, seed: 4, t: Some(0.1) }));
        assert_eq!((r, s.a.variant.as_str(), s.a.playing), (Reply::StepSetUp(true), "regressed", false));
        let r = s.act(Command::LinkedStep(LinkedStep { step: 1, variant: Some("fixed".into()), b: None, seed: 4, t: Some(0.1) }));
        assert_eq!(r, Reply::StepSetUp(false));
        // Another run's link rebuilds the session; the reader's pace stays unless it names one.
        s.act(Command::OpenLink {
            fragment: "#/lesson/raid5-chunk?v=1&variant=fixed&seed=3".into(),
            default_lesson: "nr-requests".into(),
            speed: Some(0.125),
        });
        assert_eq!((s.a.lesson.id.as_str(), s.a.variant.as_str(), s.a.seed, s.a.speed), ("raid5-chunk", "fixed", 3, 0.125));
        let sandbox = crate::runs::Run::new(blksim::course::lessons::SANDBOX, None, Vec::new(), 1).unwrap();
        let mut s = Session::new(sandbox);
        assert_eq!(s.act(Command::ApplyMany(vec![("workload.numjobs".into(), "2".into())])), Reply::Done);
        assert_eq!(s.a.shown.scenario.workload.numjobs, 2);
        assert!(matches!(s.act(Command::ApplyMany(vec![("workload.numjobs".into(), "x".into())])), Reply::Refused(_)));
    }
}
