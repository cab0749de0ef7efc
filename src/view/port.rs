//! The page's end of the runs' worker: a `Port` (the Web Worker running `static/sim-worker.js`,
//! or a test's stand-in) and `RunsWorker`, where the conversation stands. One frame is in flight
//! at a time: the page's frames in between add their wall time to the next, so a worker slower
//! than the screen runs fewer, longer frames rather than a queue.

use crate::protocol::{FromRuns, ToRuns, WorkerChannel};

/// Where the page's messages go and its answers come from: a Web Worker (`WebPort`), or in a
/// test a `Host` answering when the test says.
pub trait Port {
    fn post(&self, msg: &ToRuns) -> Result<(), String>;
    /// What came back since the last call, in order.
    fn take(&self) -> Vec<Result<FromRuns, String>>;
}

/// The runs' worker: a Web Worker running `static/sim-worker.js`.
type WebPort = WorkerChannel<ToRuns, FromRuns>;

impl Port for WebPort {
    fn post(&self, msg: &ToRuns) -> Result<(), String> {
        WorkerChannel::post(self, msg)
    }

    fn take(&self) -> Vec<Result<FromRuns, String>> {
        WorkerChannel::take(self)
    }
}

/// The page's side: the port to the worker, and where the conversation stands.
pub struct RunsWorker {
    port: Box<dyn Port>,
    /// A frame posted and not yet answered.
    pub frame_in_flight: bool,
    /// Wall ms of the page's frames since the last frame posted.
    pub dt_pending_ms: f64,
    /// The id of the next command posted.
    pub next_id: u32,
    /// The page's wall clock (ms) when the worker was last heard from, or had nothing to answer.
    pub heard_at_ms: f64,
}

impl RunsWorker {
    /// Starts the worker on the runs `fragment` opens, or says why it cannot start.
    pub fn start(fragment: &str, default_lesson: &str) -> Result<RunsWorker, String> {
        let now_ms = web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now());
        RunsWorker::over(Box::new(WebPort::start("./sim-worker.js")?), fragment, default_lesson, now_ms)
    }

    /// The runs `fragment` opens, behind `port`.
    pub fn over(port: Box<dyn Port>, fragment: &str, default_lesson: &str, now_ms: f64) -> Result<RunsWorker, String> {
        let w = RunsWorker { port, frame_in_flight: false, dt_pending_ms: 0.0, next_id: 0, heard_at_ms: now_ms };
        w.post(&ToRuns::Open { fragment: fragment.to_string(), default_lesson: default_lesson.to_string() })?;
        Ok(w)
    }

    /// Posts a message (the worker takes them in order).
    pub fn post(&self, msg: &ToRuns) -> Result<(), String> {
        self.port.post(msg)
    }

    /// What the worker sent since the last call, in order.
    pub fn take(&self) -> Vec<Result<FromRuns, String>> {
        self.port.take()
    }
}
