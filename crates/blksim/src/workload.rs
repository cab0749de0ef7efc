//! fio-like jobs: what each process reads or writes, where, and how much.

use crate::ids::{BioId, DevId, JobId, ThreadId};
use crate::rng::Stream;
use crate::scenario::{IoEngine, Rw, Workload};
use crate::time::SimTime;
use std::collections::VecDeque;

/// One read()/write() (or one iocb): done when all of its bios are.
#[derive(Debug)]
pub struct Io {
    pub job: JobId,
    pub bytes: u64,
    pub bios_left: u32,
    pub started: SimTime,
}

#[derive(Debug)]
pub struct Job {
    pub id: JobId,
    pub tid: ThreadId,
    pub dev: DevId,
    pub rw: Rw,
    pub engine: IoEngine,
    pub iodepth: u32,
    pub bs: u64,
    /// The job's region of the device (bytes): its own "file".
    region_start: u64,
    region_len: u64,
    /// Next offset within the region for sequential jobs.
    cursor: u64,
    /// Bytes to transfer; None runs for the whole duration.
    size: Option<u64>,
    pub bytes_issued: u64,
    pub bytes_done: u64,
    pub inflight: u32,
    /// Bios built but not yet accepted by the queue (the pool was full).
    pub pending: VecDeque<BioId>,
    pub done_at: Option<SimTime>,
    rng: Stream,
}

impl Job {
    pub fn new(id: JobId, tid: ThreadId, dev: DevId, region_start: u64, region_len: u64, w: &Workload, rng: Stream) -> Job {
        Job {
            id,
            tid,
            dev,
            rw: w.rw,
            engine: w.ioengine,
            iodepth: if w.ioengine == IoEngine::Sync { 1 } else { w.iodepth },
            bs: w.bs,
            region_start,
            region_len: region_len.max(w.bs),
            cursor: 0,
            size: (w.size > 0).then_some(w.size),
            bytes_issued: 0,
            bytes_done: 0,
            inflight: 0,
            pending: VecDeque::new(),
            done_at: None,
            rng,
        }
    }

    pub fn has_more_to_issue(&self) -> bool {
        self.size.is_none_or(|s| self.bytes_issued < s)
    }

    pub fn is_done(&self) -> bool {
        self.size.is_some() && !self.has_more_to_issue() && self.inflight == 0
    }

    /// How many bios one I/O becomes at this max_sectors.
    pub fn bios_per_io(&self, max_sectors_bytes: u64) -> u64 {
        self.bs.div_ceil(max_sectors_bytes)
    }

    /// The (offset, length) in bytes of the next I/O.
    pub fn next_extent(&mut self) -> (u64, u64) {
        let len = match self.size {
            Some(s) => self.bs.min(s - self.bytes_issued),
            None => self.bs,
        };
        let blocks = self.region_len / self.bs;
        let off = if self.rw.is_random() {
            self.rng.below(blocks) * self.bs
        } else {
            let o = self.cursor;
            self.cursor = (self.cursor + self.bs) % (blocks * self.bs);
            o
        };
        self.bytes_issued += len;
        (self.region_start + off, len)
    }
}
