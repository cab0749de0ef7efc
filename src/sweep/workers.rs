//! A seed sweep spread over Web Workers, one per CPU (`navigator.hardwareConcurrency`, at most
//! `WORKERS_MAX`): each worker (`static/sweep-worker.js`) loads the same wasm as the page (the
//! browser has it cached: nothing more to download) and runs batches of seeds with
//! `sweep_seeds`. The page hands out the batches as workers come free and takes the runs back
//! each frame; a worker that fails gives its batch back, to run here. Batches and replies are
//! `crate::protocol`'s, in its bincode framing.

use super::Sweep;
use crate::protocol::{decode, encode, SeedRun, SweepBatch, SweepReply, WorkerChannel};
use wasm_bindgen::prelude::*;

/// Workers a sweep starts, at most (the machine's CPUs, if fewer).
pub const WORKERS_MAX: u32 = 8;
/// Batches per worker a sweep is cut into, about: small enough for the progress bar to move,
/// large enough that a message's cost is nothing beside a batch's runs.
const BATCHES_PER_WORKER: u64 = 8;

/// A sweep worker: batches out, each answered by its runs.
type Channel = WorkerChannel<SweepBatch, Vec<SeedRun>>;

pub struct SweepWorkers {
    workers: Vec<Channel>,
    /// Per worker, the batch it runs (variant index, seeds), if any.
    busy: Vec<Option<(usize, Vec<u64>)>>,
    batch: usize,
    /// Why workers stopped being used, if they did.
    pub error: Option<String>,
}

impl SweepWorkers {
    /// Starts the workers for `sweep`, or says why they cannot start (the page then runs the
    /// seeds itself).
    pub fn start(sweep: &Sweep) -> Result<SweepWorkers, String> {
        let cpus = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency()) as u32;
        let n = cpus.clamp(1, WORKERS_MAX).min(sweep.total() as u32).max(1) as usize;
        let workers = (0..n).map(|_| Channel::start("./sweep-worker.js")).collect::<Result<Vec<_>, _>>()?;
        let batch = (sweep.total() / (n as u64 * BATCHES_PER_WORKER)).max(1) as usize;
        Ok(SweepWorkers { busy: vec![None; workers.len()], workers, batch, error: None })
    }

    pub fn count(&self) -> usize {
        self.workers.len()
    }

    /// Takes in the runs the workers sent and hands idle workers their next batch. Returns
    /// true when a run ended. On a worker's failure its batch goes back into the sweep and the
    /// workers stop being used (`error` says why).
    pub fn poll(&mut self, sweep: &mut Sweep) -> bool {
        let mut ended = false;
        let replies: Vec<(usize, SweepReply)> =
            self.workers.iter().enumerate().flat_map(|(i, w)| w.take().into_iter().map(move |r| (i, r))).collect();
        for (i, reply) in replies {
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
            let batch = SweepBatch {
                lesson: sweep.lesson_id().to_string(),
                variant: sweep.variant_name(vi).to_string(),
                overrides: sweep.overrides().to_vec(),
                seeds: seeds.clone(),
            };
            if let Err(e) = self.workers[i].post(&batch) {
                sweep.put_back(vi, &seeds);
                self.error = Some(format!("a worker: {e}"));
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

/// What `static/sweep-worker.js` calls with a batch: a `SweepBatch` in bincode; answers a
/// `SweepReply` in bincode.
#[wasm_bindgen]
pub fn sweep_seeds(batch: &[u8]) -> Vec<u8> {
    let reply = decode::<SweepBatch>(batch)
        .map_err(|e| format!("a sweep batch: {e}"))
        .and_then(|b| crate::lessons::install().and_then(|()| super::run_seeds(&b.lesson, &b.variant, &b.overrides, &b.seeds)));
    encode(&reply).or_else(|e| encode(&Err::<Vec<SeedRun>, String>(format!("a sweep reply: {e}")))).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(lesson: &str, overrides: &[(&str, &str)], seeds: &[u64]) -> Vec<u8> {
        let overrides = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        encode(&SweepBatch { lesson: lesson.into(), variant: "regressed".into(), overrides, seeds: seeds.to_vec() }).unwrap()
    }

    #[test]
    fn a_batch_through_the_workers_protocol_gives_the_runs_run_here() {
        let read_reply = |bytes: &[u8]| decode::<SweepReply>(bytes).unwrap_or_else(|e| Err(format!("a worker's reply: {e}")));
        let back = read_reply(&sweep_seeds(&batch("mq-clone-stall", &[("queue.nr_requests", "128")], &[3, 4]))).unwrap();
        let here = super::super::run_seeds("mq-clone-stall", "regressed", &[("queue.nr_requests".into(), "128".into())], &[3, 4]).unwrap();
        assert_eq!(back, here);
        let bad = read_reply(&sweep_seeds(&batch("no-such", &[], &[1])));
        assert!(bad.unwrap_err().contains("no-such"));
        assert!(read_reply(&sweep_seeds(&[9])).unwrap_err().contains("a sweep batch"));
        assert!(decode::<SweepReply>(&[]).is_err(), "an empty reply is the worker's failure");
    }
}
