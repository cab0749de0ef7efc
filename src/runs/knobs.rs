//! The user's settings on a run: a knob from the panel (live where the kernel applies it
//! live, else by restarting), a fio job's settings at once, and the rule that a setting which
//! acts on nothing in the lesson's variants shown (A's, and B's in the A/B view) is refused, or
//! dropped when another change leaves it acting on nothing (`blksim::scenario::knob_applies`).

use super::Run;
use blksim::scenario::knob_table::{DURATION, QUEUE_SCHEDULER};
use blksim::scenario::{get_knob, Live, ScenarioError, Store, KNOBS};

/// "md.chunk_kb=64" or "md.chunk_kb=64 and iosched.slice_idle=0", from the idle settings.
fn names(idle: &[ScenarioError]) -> String {
    let names: Vec<&str> = idle.iter().map(|e| e.field.as_str()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The sentence that ends an answer when settings were dropped: "; dropped X, which acts on
/// nothing now" (empty when none was).
pub(crate) fn dropped_clause(idle: &[ScenarioError]) -> String {
    match idle.len() {
        0 => String::new(),
        1 => format!("; dropped {}, which acts on nothing now", names(idle)),
        _ => format!("; dropped {}, which act on nothing now", names(idle)),
    }
}

impl Run {
    /// The variants a setting may act in: this run's and `also` (the other run of the A/B
    /// view), as a link with both opens.
    fn variants<'a>(&'a self, also: &'a [&'a str]) -> Vec<&'a str> {
        std::iter::once(self.variant.as_str()).chain(also.iter().copied()).collect()
    }

    /// Drops this run's settings that act on nothing in its variant nor in `also`'s: they
    /// change nothing in the run, so the run goes on as it is, and its link no longer carries
    /// them. Returns what was dropped.
    pub fn drop_idle(&mut self, also: &[&str]) -> Vec<ScenarioError> {
        let variants: Vec<String> = self.variants(also).into_iter().map(str::to_string).collect();
        let vs: Vec<&str> = variants.iter().map(String::as_str).collect();
        match self.lesson.split_acting(&vs, &self.overrides) {
            Ok((acting, idle)) if !idle.is_empty() => {
                self.overrides = acting;
                idle
            }
            _ => Vec::new(),
        }
    }

    /// Applies several knobs at once (a fio job file): validated together, one restart.
    pub fn apply_many(&mut self, knobs: &[(String, String)]) -> Result<(), String> {
        // One entry per knob, the last setting winning (a link takes each knob once).
        let mut overrides = self.overrides.clone();
        for (k, v) in knobs {
            overrides.retain(|(n, _)| n != k);
            overrides.push((k.clone(), v.clone()));
        }
        let (acting, idle) = self.lesson.split_acting(&[&self.variant], &overrides).map_err(|e| e.to_string())?;
        if let Some(e) = idle.iter().find(|e| knobs.iter().any(|(k, _)| e.field.split('=').next() == Some(k.as_str()))) {
            return Err(e.to_string());
        }
        let (speed, playing, variant, seed) = (self.speed, self.playing, self.variant.clone(), self.seed);
        let mut d = Run::new(&self.lesson.id.clone(), Some(&variant), acting, seed)?;
        d.speed = speed;
        d.playing = playing;
        self.succeed_by(d);
        Ok(())
    }

    /// Applies a knob: live if the kernel applies it live, else by restarting with it.
    /// Returns a sentence saying which. `also`: the A/B view's other variant.
    ///
    /// A knob that would act on nothing in the resulting stack (`md.chunk_kb` without md), in
    /// this run's variant nor in `also`'s, is refused with why; settings the change leaves
    /// acting on nothing (cfq's tunables once the elevator is deadline, md's once the stack is
    /// direct) are dropped, and the answer names them. A live elevator switch gives the new
    /// elevator the tunables a link to this state replays (`elevator_switch` starts an elevator
    /// with its own defaults; the old one's are gone).
    pub fn apply_knob(&mut self, key: &str, value: &str, also: &[&str]) -> Result<String, String> {
        let mut overrides: Vec<(String, String)> = self.overrides.iter().filter(|(k, _)| k != key).cloned().collect();
        overrides.push((key.to_string(), value.to_string()));
        // Validate the whole scenario with the new value before touching the run.
        let variants: Vec<String> = self.variants(also).into_iter().map(str::to_string).collect();
        let vs: Vec<&str> = variants.iter().map(String::as_str).collect();
        let (overrides, idle) = self.lesson.split_acting(&vs, &overrides).map_err(|e| e.to_string())?;
        if let Some(e) = idle.iter().find(|e| e.field.split('=').next() == Some(key)) {
            return Err(format!("{key}: {}", e.message));
        }
        let dropped = dropped_clause(&idle);
        let cfg = self.lesson.config(&self.variant, &overrides).map_err(|e| e.to_string())?;
        if key != DURATION.key && self.live_writes_full() {
            return Err(format!(
                "this run has taken {} knobs live, as many as its timeline replays: Reset to start a run with these settings from t = 0",
                super::LIVE_WRITES_MAX
            ));
        }
        if self.sim.apply_live(key, value).map_err(|e| e.to_string())? {
            let mut writes = vec![(key.to_string(), value.to_string())];
            if key == QUEUE_SCHEDULER.key {
                // The new elevator's iosched/ files, as it reads them when it starts.
                for k in KNOBS.iter().filter(|k| k.live == Live::Store(Store::IoschedTunable)) {
                    let v = get_knob(&cfg.scenario, k.key).unwrap_or_default();
                    self.sim.apply_live(k.key, &v).map_err(|e| e.to_string())?;
                    writes.push((k.key.to_string(), v));
                }
            }
            // The run's length is not a write at a time (a rewind keeps the run's own).
            if key != DURATION.key {
                self.note_live_write(writes);
            }
            self.overrides = overrides;
            self.refresh_config();
            self.refresh_shown();
            if key == DURATION.key {
                // The numbers are no longer the whole run's: back to the last whole second's
                // (or the numbers so far), and a link's "past the run's end" no longer holds.
                self.last_tick_end = None;
                self.shown.interval_whole = false;
                self.take_interval();
                self.on_longer_duration();
                return Ok(format!("duration={value}: the run now ends at t = {value} s, and goes on to it (nothing in the run reads its end, so a link with it replays this run){dropped}"));
            }
            Ok(format!(
                "{key}={value} applied live at t = {:.3} s, as a sysfs write would be (a link replays it from t = 0){dropped}",
                self.sim.now().as_secs_f64()
            ))
        } else {
            let (speed, playing, variant, seed) = (self.speed, self.playing, self.variant.clone(), self.seed);
            let mut d = Run::new(&self.lesson.id.clone(), Some(&variant), overrides, seed)?;
            d.speed = speed;
            d.playing = playing;
            self.succeed_by(d);
            if key == DURATION.key {
                return Ok(format!("duration={value} ends before the clock: the run restarted with it{dropped}"));
            }
            Ok(format!("{key}={value} cannot change under a running stack: the run restarted with it{dropped}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::SimTime;

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn a_knob_that_acts_on_nothing_is_refused_and_one_a_change_idles_is_dropped() {
        let mut d = Run::new("nr-requests", Some("regressed"), Vec::new(), 1).unwrap();
        let e = d.apply_knob("md.chunk_kb", "64", &[]).unwrap_err();
        assert!(e.starts_with("md.chunk_kb: changes nothing here: no md device with stack=lvm"), "{e}");
        assert!(d.overrides.is_empty());
        // cfq's tunable, then the elevator switched away from cfq: the tunable goes with it.
        let mut d = Run::new("scsi-starved", Some("regressed"), Vec::new(), 1).unwrap();
        d.apply_knob("iosched.slice_idle", "0", &[]).unwrap();
        let m = d.apply_knob("queue.scheduler", "deadline", &[]).unwrap();
        assert!(m.contains("applied live") && m.ends_with("; dropped iosched.slice_idle=0, which acts on nothing now"), "{m}");
        assert_eq!(d.overrides, vec![pair("queue.scheduler", "deadline")]);
        // ... and back to cfq: cfq starts with the tunables the link replays, not the old 0.
        d.apply_knob("queue.scheduler", "cfq", &[]).unwrap();
        let fresh = d.lesson.config(&d.variant, &d.overrides).unwrap();
        assert_eq!(d.sim.config().scenario.queue.iosched, fresh.scenario.queue.iosched);
        assert_ne!(get_knob(&d.sim.config().scenario, "iosched.slice_idle").as_deref(), Some("0"));
    }

    #[test]
    fn a_switch_between_a_legacy_and_a_blk_mq_elevator_restarts_the_run() {
        let mut d = Run::new("anatomy-of-a-request", None, Vec::new(), 1).unwrap();
        d.sim.run_until(SimTime(50_000_000));
        let m = d.apply_knob("queue.scheduler", "none", &[]).unwrap();
        assert!(m.contains("restarted"), "{m}");
        assert_eq!(d.sim.now(), SimTime::ZERO);
        assert!(d.sim.topology().devices.iter().all(|dev| dev.name.starts_with("sd")));
    }

    #[test]
    fn a_later_duration_lets_an_ended_run_go_on_and_an_earlier_one_restarts_it() {
        let mut d = Run::new("nr-requests", Some("regressed"), vec![pair("duration", "1")], 1).unwrap();
        d.fast_forward(5.0);
        assert!(d.is_done() && d.sim.now() == SimTime(1_000_000_000));
        let events = d.sim.totals().events;
        let m = d.apply_knob("duration", "2", &[]).unwrap();
        assert!(m.contains("now ends at t = 2 s"), "{m}");
        assert!(!d.is_done() && d.sim.totals().events == events, "the same run, not a new one");
        // Its numbers are the last whole second's again, not the whole run's to the old end.
        assert!(!d.shown.interval_whole);
        assert_eq!(d.shown.interval.as_ref().map(|iv| iv.end_s), Some(1.0));
        d.fast_forward(5.0);
        assert_eq!(d.sim.now(), SimTime(2_000_000_000));
        // The same run as one started with duration=2.
        let mut fresh = Run::new("nr-requests", Some("regressed"), vec![pair("duration", "2")], 1).unwrap();
        fresh.fast_forward(5.0);
        assert_eq!(serde_json::to_string(&d.shown.interval).unwrap(), serde_json::to_string(&fresh.shown.interval).unwrap());
        assert!(d.shown.interval_whole);
        // An end the clock has passed: the run starts again.
        let m = d.apply_knob("duration", "1.5", &[]).unwrap();
        assert!(m.contains("restarted"), "{m}");
        assert_eq!((d.sim.now(), d.overrides.clone()), (SimTime::ZERO, vec![pair("duration", "1.5")]));
    }

    #[test]
    fn in_the_ab_view_a_knob_that_acts_in_b_only_is_taken_and_kept() {
        // mq-clone-stall: A straight on the LUN (no dm), B through dm-multipath.
        let mut a = Run::new("mq-clone-stall", Some("direct"), Vec::new(), 1).unwrap();
        assert!(a.apply_knob("dm.clone_alloc", "nowait", &[]).is_err(), "with A alone it acts on nothing");
        a.apply_knob("dm.clone_alloc", "nowait", &["regressed"]).unwrap();
        let m = a.apply_knob("cpu.cores", "4", &["regressed"]).unwrap();
        assert!(!m.contains("dropped"), "{m}");
        assert_eq!(a.overrides, vec![pair("dm.clone_alloc", "nowait"), pair("cpu.cores", "4")]);
        // With B closed, the setting acts on nothing and is dropped.
        let idle = a.drop_idle(&[]);
        assert_eq!(names(&idle), "dm.clone_alloc=nowait");
        assert_eq!(a.overrides, vec![pair("cpu.cores", "4")]);
    }

    #[test]
    fn a_link_with_a_knob_that_acts_on_nothing_opens_without_it_and_says_so() {
        let d = Run::from_fragment("#/lesson/nr-requests?v=1&variant=regressed&md.chunk_kb=64&queue.nr_requests=64&seed=2", "nr-requests");
        assert_eq!((d.lesson.id.as_str(), d.seed), ("nr-requests", 2));
        assert_eq!(d.overrides, vec![pair("queue.nr_requests", "64")]);
        let n = d.notice.unwrap_or_default();
        assert!(
            n.contains("md.chunk_kb=64: changes nothing here: no md device with stack=lvm") && n.contains("the rest of it is applied"),
            "{n}"
        );
        // A knob that acts in B's variant only is kept (mq-clone-stall's direct has no dm).
        let d = Run::from_fragment("#/lesson/mq-clone-stall?v=1&variant=direct&b=regressed&dm.clone_alloc=nowait", "mq-clone-stall");
        assert_eq!(d.overrides, vec![pair("dm.clone_alloc", "nowait")]);
        assert_eq!(d.notice, None);
    }
}
