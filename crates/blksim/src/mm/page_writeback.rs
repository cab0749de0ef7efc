//! `mm/page-writeback.c` (2.6.2-2.6.39): `balance_dirty_pages`, the dirty and background
//! thresholds, the writer's pause, `sync_writeback_pages`' chunk, and waking the flusher.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, Wait};

impl Sim {
    /// `balance_dirty_pages` (2.6.2-2.6.39). Over the dirty limit, the writer first writes back
    /// `write_chunk` of its device's dirty pages itself (`writeback_inodes_wb`, in its own
    /// context: it may sleep in `get_request_wait` and become a batcher); having done that
    /// duty, write() returns. With nothing left to write back it sleeps for a pause that
    /// doubles, from one jiffy to HZ/10, each time it is still over when it wakes (a timer,
    /// not writeback progress).
    pub(crate) fn balance_dirty_pages(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j.idx()].tid;
        let dev = self.jobs[j.idx()].dev;
        let bdi_thresh = self.bdi_thresh();
        let (bdi_dirty, bdi_wb) = self.bdi_bytes(dev);
        // Not throttled: well under the limits, or neither this device nor the whole system
        // over its own (`dirty_exceeded` is either one).
        if !self.dirty_exceeded(bdi_dirty + bdi_wb) {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        let write_chunk = self.write_chunk_bytes();
        if bdi_dirty <= bdi_thresh || self.threads[tid.idx()].dirty_written >= write_chunk {
            return self.dirty_pause(tid);
        }
        let mut chunk = write_chunk - self.threads[tid.idx()].dirty_written;
        let max = self.devs[dev.idx()].queue.max_request_bytes();
        // Its own file first, then the device's others (the bdi's inode list).
        let order: Vec<usize> =
            std::iter::once(j.idx()).chain((0..self.jobs.len()).filter(|&i| i != j.idx() && self.jobs[i].dev == dev)).collect();
        let mut wrote = false;
        for i in order {
            while chunk > 0 {
                let piece = self.writeback_bio_bytes(max).min(chunk);
                let Some(len) = self.write_back(tid, JobId(i as u32), dev, piece, false) else { break };
                chunk = chunk.saturating_sub(len);
                self.threads[tid.idx()].dirty_written += len;
                wrote = true;
            }
        }
        if wrote {
            if let Err(wait) = self.submit_bios(tid) {
                return Next::Sleep(wait);
            }
            return self.after_dirty_writeback(j);
        }
        self.dirty_pause(tid)
    }

    /// The writer's chunk is submitted: under its share now, or "we've done our duty" (a whole
    /// chunk written), write() returns; else it pauses and checks again.
    pub(crate) fn after_dirty_writeback(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j.idx()].tid;
        let dev = self.jobs[j.idx()].dev;
        let (d, w) = self.bdi_bytes(dev);
        if !self.dirty_exceeded(d + w) || self.threads[tid.idx()].dirty_written >= self.write_chunk_bytes() {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        self.dirty_pause(tid)
    }

    /// `balance_dirty_pages` (2.6.32-2.6.39) keeps a writer while the system is past halfway
    /// from the background to the dirty limit and either its device is over its share or the
    /// system over the dirty limit.
    pub(crate) fn dirty_exceeded(&self, bdi_bytes: u64) -> bool {
        let global = self.dirty_total + self.writeback_total;
        global > (self.background_thresh + self.dirty_thresh) / 2 && (bdi_bytes > self.bdi_thresh() || global > self.dirty_thresh)
    }

    /// `over_bground_thresh` (2.6.39; the same test in 2.6.2's `background_writeout` and
    /// `balance_dirty_pages`): dirty (and NFS unstable) pages over the background threshold.
    /// Pages under writeback do not count: they are on their way out.
    pub(crate) fn over_bground_thresh(&self) -> bool {
        self.dirty_total > self.background_thresh
    }

    /// A device's share of the dirty limit (`bdi_thresh`: equal shares for equal writers).
    pub(crate) fn bdi_thresh(&self) -> u64 {
        self.dirty_thresh / self.bdi_writers.max(1) as u64
    }

    /// Bytes of a device's files that are dirty, and under writeback.
    pub(crate) fn bdi_bytes(&self, dev: DevId) -> (u64, u64) {
        self.jobs.iter().filter(|x| x.dev == dev).fold((0, 0), |(d, w), x| (d + x.dirty_bytes, w + x.writeback_bytes))
    }

    /// `io_schedule_timeout(pause)` in `balance_dirty_pages`.
    pub(crate) fn dirty_pause(&mut self, tid: ThreadId) -> Next {
        let now = self.now();
        let th = &mut self.threads[tid.idx()];
        th.dirty_pause_ns = (th.dirty_pause_ns * 2).clamp(DIRTY_PAUSE_MIN_NS, DIRTY_PAUSE_MAX_NS);
        let at = now + th.dirty_pause_ns;
        self.events.schedule(at, Event::Timeout { thread: tid });
        Next::Sleep(Wait::DirtyThrottle)
    }

    /// `sync_writeback_pages`: what a throttled writer writes back, 1.5 × `ratelimit_pages`,
    /// which is memory / (CPUs × 32) pages, at least 16 and at most 4 MiB' worth
    /// (`writeback_set_ratelimit`, mm/page-writeback.c 2.6.32).
    pub(crate) fn write_chunk_bytes(&self) -> u64 {
        let s = &self.cfg.scenario;
        let pages = s.vm.mem_mb as u64 * 256 / (s.cpu.cores as u64 * 32);
        let ratelimit = pages.clamp(16, 1024);
        (ratelimit + ratelimit / 2) * 4096
    }

    pub(crate) fn wake_flusher(&mut self, dev: DevId) {
        let f = self.flushers[dev.idx()].expect("jobs write to a top-level device, which has a flusher");
        if self.threads[f.idx()].is_idle_kthread() {
            self.wake(f, Step::FlushWork);
        }
    }

    /// A writeback chunk reached the disk: its pages are clean. Writers under the limit again
    /// leave `balance_dirty_pages`; an fsync whose pages are all clean returns.
    pub(crate) fn writeback_done(&mut self, j: JobId, bytes: u64) {
        self.writeback_total -= bytes;
        self.jobs[j.idx()].writeback_bytes -= bytes;
        let job = &self.jobs[j.idx()];
        if job.fsync_waiting && !job.needs_fsync() {
            self.jobs[j.idx()].fsync_waiting = false;
            let tid = self.jobs[j.idx()].tid;
            self.wake(tid, Step::Next);
        }
    }
}
