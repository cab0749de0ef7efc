//! A seed sweep spread over Web Workers, one per CPU (`navigator.hardwareConcurrency`, at most
//! `WORKERS_MAX`): each worker (`static/sweep-worker.js`) loads the same wasm as the page (the
//! browser has it cached: nothing more to download) and runs batches of seeds with
//! `worker::sweep_seeds`. The page hands out the batches as workers come free and takes the
//! runs back each frame; a worker that fails gives its batch back, to run here.

use super::sweep::{SeedRun, Sweep};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Workers a sweep starts, at most (the machine's CPUs, if fewer).
pub const WORKERS_MAX: u32 = 8;
/// Batches per worker a sweep is cut into, about: small enough for the progress bar to move,
/// large enough that a message's cost is nothing beside a batch's runs.
const BATCHES_PER_WORKER: u64 = 8;

/// What came back from a worker: its index, and its runs or its error.
type Inbox = Rc<RefCell<Vec<(usize, Result<Vec<SeedRun>, String>)>>>;

pub struct SweepWorkers {
    workers: Vec<Worker>,
    /// Per worker, the batch it runs (variant index, seeds), if any.
    busy: Vec<Option<(usize, Vec<u64>)>>,
    inbox: Inbox,
    batch: usize,
    /// Each worker's message and error handlers, kept alive while the workers are.
    _handlers: Vec<Closure<dyn FnMut(MessageEvent)>>,
    /// Why workers stopped being used, if they did.
    pub error: Option<String>,
}

impl SweepWorkers {
    /// Starts the workers for `sweep`, or says why they cannot start (the page then runs the
    /// seeds itself).
    pub fn start(sweep: &Sweep) -> Result<SweepWorkers, String> {
        let cpus = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency()) as u32;
        let n = cpus.clamp(1, WORKERS_MAX).min(sweep.total() as u32).max(1) as usize;
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Module);
        let inbox: Inbox = Rc::default();
        let mut workers = Vec::with_capacity(n);
        let mut handlers = Vec::with_capacity(n);
        for i in 0..n {
            let w = Worker::new_with_options("./sweep-worker.js", &opts).map_err(|e| format!("no worker: {e:?}"))?;
            let replies = inbox.clone();
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                let reply = e.data().as_string().unwrap_or_default();
                replies.borrow_mut().push((i, parse_reply(&reply)));
            });
            w.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            let replies = inbox.clone();
            let on_error = Closure::<dyn FnMut(MessageEvent)>::new(move |_e: MessageEvent| {
                replies.borrow_mut().push((i, Err("the worker failed".into())));
            });
            w.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            workers.push(w);
            handlers.push(on_message);
            handlers.push(on_error);
        }
        let batch = (sweep.total() / (n as u64 * BATCHES_PER_WORKER)).max(1) as usize;
        Ok(SweepWorkers { busy: vec![None; workers.len()], workers, inbox, batch, _handlers: handlers, error: None })
    }

    pub fn count(&self) -> usize {
        self.workers.len()
    }

    /// Takes in the runs the workers sent and hands idle workers their next batch. Returns
    /// true when a run ended. On a worker's failure its batch goes back into the sweep and the
    /// workers stop being used (`error` says why).
    pub fn poll(&mut self, sweep: &mut Sweep) -> bool {
        let mut ended = false;
        for (i, reply) in std::mem::take(&mut *self.inbox.borrow_mut()) {
            let Some((vi, seeds)) = self.busy[i].take() else { continue };
            match reply {
                Ok(runs) => {
                    ended |= !runs.is_empty();
                    sweep.runs.extend(runs);
                }
                Err(e) => {
                    sweep.put_back(vi, &seeds);
                    self.error = Some(e);
                }
            }
        }
        if self.error.is_some() {
            for (i, b) in self.busy.iter_mut().enumerate() {
                if let Some((vi, seeds)) = b.take() {
                    sweep.put_back(vi, &seeds);
                }
                self.workers[i].terminate();
            }
            return ended;
        }
        for i in 0..self.workers.len() {
            if self.busy[i].is_some() {
                continue;
            }
            let Some((vi, seeds)) = sweep.take_batch(self.batch) else { break };
            let request = serde_json::json!({
                "lesson": sweep.lesson_id(), "variant": sweep.variant_name(vi), "overrides": sweep.overrides(), "seeds": seeds,
            });
            if let Err(e) = self.workers[i].post_message(&JsValue::from_str(&request.to_string())) {
                sweep.put_back(vi, &seeds);
                self.error = Some(format!("cannot reach a worker: {e:?}"));
                break;
            }
            self.busy[i] = Some((vi, seeds));
        }
        ended
    }

    /// Whether the workers are still in use (none has failed).
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

impl Drop for SweepWorkers {
    fn drop(&mut self) {
        // Cancel, or the sweep is done: stop the workers where they are.
        for w in &self.workers {
            w.terminate();
        }
    }
}

/// A worker's reply: `{"runs": [{"variant", "seed", "completion_s", "throughput_mb_s"}]}` or
/// `{"error": "..."}`.
fn parse_reply(reply: &str) -> Result<Vec<SeedRun>, String> {
    let v: serde_json::Value = serde_json::from_str(reply).map_err(|e| format!("a worker's reply: {e}"))?;
    if let Some(e) = v["error"].as_str() {
        return Err(e.to_string());
    }
    let runs = v["runs"].as_array().ok_or("a worker's reply has no runs")?;
    runs.iter()
        .map(|r| {
            Ok(SeedRun {
                variant: r["variant"].as_str().ok_or("a run without its variant")?.to_string(),
                seed: r["seed"].as_u64().ok_or("a run without its seed")?,
                completion_s: r["completion_s"].as_f64(),
                throughput_mb_s: r["throughput_mb_s"].as_f64().ok_or("a run without its throughput")?,
                run_ns: r["run_ns"].as_u64().ok_or("a run without its length")?,
                stall_from_ns: r["stall_from_ns"].as_u64().ok_or("a run without its longest stall")?,
                stall_ns: r["stall_ns"].as_u64().ok_or("a run without its longest stall")?,
            })
        })
        .collect()
}

/// What `static/sweep-worker.js` calls with a batch: `{"lesson", "variant", "overrides":
/// [[knob, value]], "seeds"}`; answers as `parse_reply` reads.
#[wasm_bindgen]
pub fn sweep_seeds(request: &str) -> String {
    let run = || -> Result<Vec<SeedRun>, String> {
        let v: serde_json::Value = serde_json::from_str(request).map_err(|e| format!("a sweep request: {e}"))?;
        let lesson = v["lesson"].as_str().ok_or("a sweep request without its lesson")?;
        let variant = v["variant"].as_str().ok_or("a sweep request without its variant")?;
        let overrides: Vec<(String, String)> = serde_json::from_value(v["overrides"].clone()).map_err(|e| format!("overrides: {e}"))?;
        let seeds: Vec<u64> = serde_json::from_value(v["seeds"].clone()).map_err(|e| format!("seeds: {e}"))?;
        super::sweep::run_seeds(lesson, variant, &overrides, &seeds)
    };
    match run() {
        Ok(runs) => serde_json::json!({ "runs": runs.iter().map(|r| serde_json::json!({
            "variant": r.variant, "seed": r.seed, "completion_s": r.completion_s, "throughput_mb_s": r.throughput_mb_s,
            "run_ns": r.run_ns, "stall_from_ns": r.stall_from_ns, "stall_ns": r.stall_ns,
        })).collect::<Vec<_>>() })
        .to_string(),
        Err(e) => serde_json::json!({ "error": e }).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_through_the_workers_protocol_gives_the_runs_run_here() {
        let request = serde_json::json!({"lesson": "mq-clone-stall", "variant": "regressed", "overrides": [["queue.nr_requests", "128"]], "seeds": [3, 4]});
        let back = parse_reply(&sweep_seeds(&request.to_string())).unwrap();
        let here =
            super::super::sweep::run_seeds("mq-clone-stall", "regressed", &[("queue.nr_requests".into(), "128".into())], &[3, 4]).unwrap();
        assert_eq!(back, here);
        let bad = parse_reply(&sweep_seeds(r#"{"lesson": "no-such", "variant": "x", "overrides": [], "seeds": [1]}"#));
        assert!(bad.unwrap_err().contains("no-such"));
    }
}
