//! The runs in a Web Worker: the page's thread only draws, and a jump, a long frame of a busy
//! run or a rewind never holds up its frames. The worker (`static/sim-worker.js`) loads the
//! page's own wasm and owns a `Session` (`Host`); it carries out each `ToRuns` the page posts
//! and answers with a `FromRuns` (`crate::protocol`).

use super::Session;
use crate::protocol::{decode, encode, FromRuns, ToRuns, MESSAGE_RECORDS_MAX};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// The worker's side: its runs.
pub struct Host {
    runs: Option<Session>,
    /// Trace records a message carries at most, per run (`MESSAGE_RECORDS_MAX`).
    records_max: usize,
    /// Wall ms of the frames that waited, playing, for the trace to go over: the next frame
    /// that runs takes them (within a `Run`'s 100 ms a frame), so the runs keep their pace
    /// where they can.
    waited_ms: f64,
    /// The last message ran a frame of the runs (its work tunes a jump's budget).
    ran_frame: bool,
}

impl Default for Host {
    fn default() -> Host {
        Host { runs: None, records_max: MESSAGE_RECORDS_MAX, waited_ms: 0.0, ran_frame: false }
    }
}

impl Host {
    /// Carries out one message from the page.
    pub fn handle(&mut self, msg: ToRuns) -> Result<FromRuns, String> {
        if let ToRuns::Open { fragment, default_lesson } = &msg {
            self.runs = Some(Session::from_fragment(fragment, default_lesson));
        }
        let runs = self.runs.as_mut().ok_or("the runs' worker was asked to run before it opened a link")?;
        self.ran_frame = false;
        let (frame, reply) = match msg {
            ToRuns::Open { .. } => (None, None),
            // While the last frames' trace is still on its way, the runs wait: the page takes
            // it no faster than it can parse it, and the runs slow to that (the live line says
            // so), rather than the worker's queue growing.
            ToRuns::Frame { dt_ms, .. } if runs.trace_backlog() => {
                // Playing time the runs owe; a jump's or a pause's is not.
                if runs.a.playing && runs.a.catch_up_to.is_none() {
                    self.waited_ms += dt_ms;
                }
                (Some(false), None)
            }
            ToRuns::Frame { dt_ms, now_ms } => {
                self.ran_frame = true;
                let dt_ms = dt_ms + std::mem::take(&mut self.waited_ms);
                (Some(runs.frame(dt_ms, now_ms)), None)
            }
            ToRuns::Act { id, cmd } => {
                // A command (a pause, a jump, a new run) starts the pace afresh.
                self.waited_ms = 0.0;
                (None, Some((id, runs.act(cmd))))
            }
        };
        let (a, b) = runs.take_updates_bounded(Some(self.records_max));
        Ok(FromRuns { a, b, frame, reply })
    }

    /// After a message whose work took `work_ms` in the worker: when it ran a frame, a jump's
    /// budget follows it (a frame that waited for the trace says nothing of the jump's pace).
    pub fn tune(&mut self, work_ms: f64) {
        if let (Some(runs), true) = (&mut self.runs, self.ran_frame) {
            runs.tune(work_ms, crate::runs::WORKER_CATCH_UP_FRAME_MS);
        }
    }
}

thread_local! {
    /// The worker's runs (each worker has its own wasm instance).
    static HOST: RefCell<Host> = RefCell::new(Host::default());
}

/// What `static/sim-worker.js` calls with each message: a `ToRuns` in bincode; answers a
/// `Result<FromRuns, String>` in bincode (the error names what went wrong).
#[wasm_bindgen]
pub fn runs_message(msg: &[u8]) -> Vec<u8> {
    let out = decode::<ToRuns>(msg)
        .map_err(|e| format!("a message to the runs' worker: {e}"))
        .and_then(|m| crate::lessons::install().and_then(|()| HOST.with(|h| h.borrow_mut().handle(m))));
    encode(&out).or_else(|e| encode(&Err::<FromRuns, String>(format!("the runs' worker's reply: {e}")))).unwrap_or_default()
}

/// What `static/sim-worker.js` calls after each message, with the wall ms it took there: a
/// frame's work sets the next jump frame's budget.
#[wasm_bindgen]
pub fn runs_tune(work_ms: f64) {
    HOST.with(|h| h.borrow_mut().tune(work_ms));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Command, RunUpdate, TraceInput};
    use crate::view::{RunView, SessionView, RECORDS_PER_FRAME_MAX};
    use blksim::SimTime;

    /// The page's side of a worker, natively: a `Host` answering through bincode both ways, and the
    /// views its answers keep.
    struct Mirror {
        host: Host,
        a: RunView,
        b: Option<RunView>,
        backlog: bool,
        id: u32,
        records_sent_max: usize,
    }

    impl Mirror {
        fn open(link: &str, records_max: usize) -> Mirror {
            let mut host = Host { records_max, ..Host::default() };
            let first = host.handle(ToRuns::Open { fragment: link.into(), default_lesson: "x".into() }).unwrap();
            let first: FromRuns = decode(&encode(&first).unwrap()).unwrap();
            Mirror { host, a: RunView::new(first.a), b: first.b.map(RunView::new), backlog: false, id: 0, records_sent_max: 0 }
        }

        fn post(&mut self, m: ToRuns) -> FromRuns {
            let m: ToRuns = decode(&encode(&m).unwrap()).unwrap();
            let got = self.host.handle(m).unwrap();
            let got: FromRuns = decode(&encode(&got).unwrap()).unwrap();
            let records = |u: &RunUpdate| u.trace.iter().map(TraceInput::records_len).sum::<usize>();
            self.records_sent_max = self.records_sent_max.max(records(&got.a));
            self.backlog = got.a.backlog || got.b.as_ref().is_some_and(|b| b.backlog);
            self.a.apply(got.a.clone());
            match (got.b.clone(), self.b.as_mut()) {
                (Some(u), Some(v)) => v.apply(u),
                (Some(u), None) => self.b = Some(RunView::new(u)),
                (None, _) => self.b = None,
            }
            got
        }

        fn act(&mut self, cmd: Command) {
            self.id += 1;
            let got = self.post(ToRuns::Act { id: self.id, cmd });
            assert_eq!(got.reply.map(|r| r.0), Some(self.id));
        }

        /// Frames until no jump is under way and the trace has all come over.
        fn settle(&mut self) {
            for k in 0..10_000 {
                let jumping = self.a.catch_up_to.is_some() || self.b.as_ref().is_some_and(|b| b.catch_up_to.is_some());
                if !jumping && !self.backlog {
                    return;
                }
                self.post(ToRuns::Frame { dt_ms: 16.0, now_ms: f64::from(k) * 16.0 });
            }
            panic!("never settled");
        }
    }

    fn settle_here(s: &mut SessionView) {
        for k in 0..10_000 {
            if s.jump_target().is_none() {
                return;
            }
            s.frame(16.0, f64::from(k) * 16.0);
        }
        panic!("never settled");
    }

    /// Both views, byte for byte: the per-second reports and history, the pools, and the trace
    /// view (log, btt, tokens, untraced spans).
    fn same(here: &RunView, there: &RunView, when: &str) {
        let json = |v: &RunView| serde_json::to_string(&v.shown).unwrap();
        assert_eq!(json(here), json(there), "{when}: Shown");
        let t = |v: &RunView| {
            format!("{:?}", (&v.trace.log, &v.trace.btt, &v.trace.requests, &v.trace.bios, &v.trace.trace_gaps, v.trace.density))
        };
        assert_eq!(t(here), t(there), "{when}: the trace view");
        assert_eq!(here.state, there.state, "{when}: where the run stands");
    }

    #[test]
    fn runs_driven_through_the_worker_s_messages_show_what_the_same_runs_show_in_process() {
        let link = "#/lesson/raid5-chunk?v=1&variant=regressed&seed=3&b=workaround&t=0.3";
        let mut here = SessionView::of(Session::from_fragment(link, "raid5-chunk"));
        // Messages of at most 4 000 records: a jump's tail comes over in several.
        let mut there = Mirror::open(link, RECORDS_PER_FRAME_MAX);
        // The link's jump (B catches up to it), a skip, a knob, the A/B toggled, a rewind on
        // the timeline: each settled on both sides (the worker's frames wait while its trace
        // is on its way, so the two take different numbers of frames to get there).
        settle_here(&mut here);
        there.settle();
        same(&here.a, &there.a, "after the link's jump");
        for cmd in [
            Command::Skip { secs: 1.5 },
            Command::ApplyKnob { key: "queue.nr_requests".into(), value: "64".into() },
            Command::StepEvent { now_ms: 1000.0 },
            Command::ToggleAb,
            Command::ToggleAb,
            Command::Seek(SimTime(800_000_000)),
        ] {
            here.act(cmd.clone());
            there.act(cmd);
            settle_here(&mut here);
            there.settle();
        }
        assert!(there.records_sent_max <= RECORDS_PER_FRAME_MAX && there.a.trace.log.len() > 10_000, "the tails came in parts");
        // Then frames playing, the same on both sides (from a wall time past any earlier one).
        here.act(Command::TogglePlay);
        there.act(Command::TogglePlay);
        for k in 0..60 {
            let (dt_ms, now_ms) = (16.0, 1e6 + f64::from(k) * 16.0);
            here.frame(dt_ms, now_ms);
            let got = there.post(ToRuns::Frame { dt_ms, now_ms });
            assert!(!got.a.backlog, "frames at an animated speed fit a message");
        }
        assert!(there.a.now() > SimTime(800_000_000) && there.a.now() < SimTime(1_500_000_000), "rewound: {:?}", there.a.now());
        assert!(!there.a.trace.requests.is_empty() || !there.a.trace.bios.is_empty(), "tokens on show");
        same(&here.a, &there.a, "A");
        same(here.b.as_ref().expect("B open again"), there.b.as_ref().expect("B open"), "B");
        // The worker's own entry point: bincode in and out; a bad message gets its reason.
        let open = ToRuns::Open { fragment: link.into(), default_lesson: "raid5-chunk".into() };
        let first = decode::<Result<FromRuns, String>>(&runs_message(&encode(&open).unwrap())).unwrap();
        assert_eq!(first.unwrap().a.state.variant, "regressed");
        let e = decode::<Result<FromRuns, String>>(&runs_message(&[9, 0, 0, 0])).unwrap().unwrap_err();
        assert!(e.contains("a message to the runs' worker"), "{e}");
    }
}
