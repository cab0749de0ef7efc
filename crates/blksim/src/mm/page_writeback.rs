//! `mm/page-writeback.c` (2.6.2-2.6.39): `balance_dirty_pages`, the dirty and background
//! thresholds, the writer's pause, `sync_writeback_pages`' chunk, and waking the flusher.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, Wait};
use crate::scenario::BdiDirtyLimit;

use super::PAGE_SIZE;

/// `struct prop_local_percpu` (`lib/proportions.c`, 2.6.24-3.1): a device's page completions
/// and the global half period they were last normalized to.
#[derive(Clone, Copy, Debug, Default)]
pub struct PropLocal {
    pub events: u64,
    pub period: u64,
}

/// The page cache's dirty accounting and limits: bytes dirty and under writeback, the
/// thresholds, the devices buffered writers write to (the dirty limit is shared among them),
/// `vm_completions` (all devices' page completions, for `vm.bdi_dirty_limit = writeout`),
/// `balance_dirty_pages_ratelimited`'s per-CPU count of pages dirtied since the last check, and
/// the threads in `blk_congestion_wait` (the global WRITE congestion wait queue).
#[derive(Clone, Debug, Default)]
pub(crate) struct PageWriteback {
    pub dirty_total: u64,
    pub writeback_total: u64,
    pub dirty_thresh: u64,
    pub background_thresh: u64,
    pub bdi_writers: u32,
    pub vm_completions: u64,
    pub ratelimits: Vec<u64>,
    pub congestion_waiters: Vec<ThreadId>,
}

impl PageWriteback {
    pub(crate) fn new(s: &crate::scenario::Scenario) -> PageWriteback {
        let mem = s.vm.mem_mb as u64 * (1 << 20);
        PageWriteback {
            dirty_thresh: mem * s.vm.dirty_ratio as u64 / 100,
            background_thresh: mem * s.vm.dirty_background_ratio.min(s.vm.dirty_ratio) as u64 / 100,
            ratelimits: vec![0; s.cpu.cores as usize],
            ..Default::default()
        }
    }
}

impl Sim {
    /// `balance_dirty_pages` (2.6.2-2.6.39). Over the dirty limit, the writer first writes back
    /// `write_chunk` of its device's dirty pages itself (`writeback_inodes_wb`, in its own
    /// context: it may sleep in `get_request_wait` and become a batcher); having done that
    /// duty, write() returns. With nothing left to write back it sleeps for a pause that
    /// doubles, from one jiffy to HZ/10, each time it is still over when it wakes (a timer,
    /// not writeback progress).
    pub(crate) fn balance_dirty_pages(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j].tid;
        let dev = self.jobs[j].dev;
        let (bdi_dirty, bdi_wb) = self.bdi_bytes(dev);
        // Not throttled: well under the limits, or neither this device nor the whole system
        // over its own (`dirty_exceeded` is either one).
        if !self.dirty_exceeded(dev, bdi_dirty + bdi_wb, 0) {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        // The rest of its chunk while its device is over its share; else it pauses.
        let mut chunk = self.dirty_writeback_bytes(j, 0);
        if chunk == 0 {
            return self.dirty_pause(tid);
        }
        let max = self.devs[dev].queue.max_request_bytes();
        // Its own file first, then the device's others (the bdi's inode list).
        let order: Vec<usize> =
            std::iter::once(j.idx()).chain((0..self.jobs.len()).filter(|&i| i != j.idx() && self.jobs[i].dev == dev)).collect();
        let mut wrote = false;
        for i in order {
            while chunk > 0 {
                let piece = self.writeback_bio_bytes(max).min(chunk);
                let Some(len) = self.write_back(tid, JobId(i as u32), dev, piece, false) else { break };
                chunk = chunk.saturating_sub(len);
                self.threads[tid].dirty_written += len;
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

    /// What `balance_dirty_pages` would write back if writer `j` ran it now with `extra` more
    /// bytes dirtied (a write() about to copy them in): the rest of its `write_chunk`, at most
    /// its device's dirty bytes; 0 when it would return or pause. `balance_dirty_pages` writes
    /// back by it, and a step's cost is billed from it (`step_cost`), so the writeback a writer
    /// does in its own context is on its CPU time by the same rule.
    pub(crate) fn dirty_writeback_bytes(&self, j: JobId, extra: u64) -> u64 {
        let tid = self.jobs[j].tid;
        let dev = self.jobs[j].dev;
        let (bdi_dirty, bdi_wb) = self.bdi_bytes(dev);
        let bdi_dirty = bdi_dirty + extra;
        let (written, chunk) = (self.threads[tid].dirty_written, self.write_chunk_bytes());
        if !self.dirty_exceeded(dev, bdi_dirty + bdi_wb, extra) || bdi_dirty <= self.bdi_thresh(dev) || written >= chunk {
            return 0;
        }
        (chunk - written).min(bdi_dirty)
    }

    /// The writer's chunk is submitted: under its share now, or "we've done our duty" (a whole
    /// chunk written), write() returns; else it pauses and checks again.
    pub(crate) fn after_dirty_writeback(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j].tid;
        let dev = self.jobs[j].dev;
        let (d, w) = self.bdi_bytes(dev);
        if !self.dirty_exceeded(dev, d + w, 0) || self.threads[tid].dirty_written >= self.write_chunk_bytes() {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        self.dirty_pause(tid)
    }

    /// `balance_dirty_pages` (2.6.32-2.6.39) keeps a writer while the system is past halfway
    /// from the background to the dirty limit and either its device is over its share or the
    /// system over the dirty limit. `extra`: bytes about to be dirtied, counted in already
    /// (`bdi_bytes` includes them).
    pub(crate) fn dirty_exceeded(&self, dev: DevId, bdi_bytes: u64, extra: u64) -> bool {
        let global = self.vm.dirty_total + extra + self.vm.writeback_total;
        global > (self.vm.background_thresh + self.vm.dirty_thresh) / 2
            && (bdi_bytes > self.bdi_thresh(dev) || global > self.vm.dirty_thresh)
    }

    /// `over_bground_thresh` (2.6.39; the same test in 2.6.2's `background_writeout` and
    /// `balance_dirty_pages`): dirty (and NFS unstable) pages over the background threshold.
    /// Pages under writeback do not count: they are on their way out.
    pub(crate) fn over_bground_thresh(&self) -> bool {
        self.vm.dirty_total > self.vm.background_thresh
    }

    /// A device's share of the dirty limit (`bdi_thresh`): equal shares for the devices
    /// written to, or (`vm.bdi_dirty_limit = writeout`, 2.6.24-3.1 `bdi_dirty_limit`, with
    /// `min_ratio` 0 and `max_ratio` 100) the limit times the device's share of recent page
    /// writeout. `task_dirty_limit`'s trim (at most 1/8 by the task's share of recent
    /// dirtying) is not modelled.
    pub(crate) fn bdi_thresh(&self, dev: DevId) -> u64 {
        match self.cfg.scenario.vm.bdi_dirty_limit {
            BdiDirtyLimit::Equal => self.vm.dirty_thresh / self.vm.bdi_writers.max(1) as u64,
            BdiDirtyLimit::Writeout => {
                let (num, den) = self.bdi_writeout_fraction(dev);
                (self.vm.dirty_thresh as u128 * num as u128 / den.max(1) as u128).min(self.vm.dirty_thresh as u128) as u64
            }
        }
    }

    /// `calc_period_shift`: 2 + ilog2 of the dirty threshold in pages; the proportions forget
    /// half of what they counted every `2^(shift-1)` page completions.
    fn prop_shift(&self) -> u32 {
        2 + (self.vm.dirty_thresh / PAGE_SIZE).saturating_sub(1).max(1).ilog2()
    }

    /// `prop_norm_percpu`: a device's count halved once for each half period the global count
    /// has moved on since it last looked.
    fn prop_norm(&mut self, dev: DevId) {
        let shift = self.prop_shift();
        let half = 1u64 << (shift - 1);
        let global_period = self.vm.vm_completions & !(half - 1);
        let pl = &mut self.devs[dev].queue.bdi.completions;
        if pl.period != global_period {
            let missed = (global_period - pl.period) >> (shift - 1);
            pl.events = if missed < 64 { pl.events >> missed } else { 0 };
            pl.period = global_period;
        }
    }

    /// `bdi_writeout_fraction` → `prop_fraction_percpu`: the device's (normalized) count over
    /// half a period plus the global count's progress into the current half period. Read
    /// without normalizing (the kernel normalizes here too; a device's count is only
    /// normalized lazily, so the read uses what a normalization would give).
    pub(crate) fn bdi_writeout_fraction(&self, dev: DevId) -> (u64, u64) {
        let shift = self.prop_shift();
        let half = 1u64 << (shift - 1);
        let global_period = self.vm.vm_completions & !(half - 1);
        let pl = &self.devs[dev].queue.bdi.completions;
        let missed = (global_period - pl.period) >> (shift - 1);
        let events = if missed < 64 { pl.events >> missed } else { 0 };
        (events, half + (self.vm.vm_completions & (half - 1)))
    }

    /// `__bdi_writeout_inc` for each page of a finished writeback (`test_clear_page_writeback`):
    /// `__prop_inc_percpu_max` on the device's count and the global one.
    fn bdi_writeout_inc(&mut self, dev: DevId, bytes: u64) {
        let pages = bytes.div_ceil(PAGE_SIZE);
        for _ in 0..pages {
            self.prop_norm(dev);
            self.devs[dev].queue.bdi.completions.events += 1;
            self.vm.vm_completions += 1;
        }
    }

    /// Bytes of a device's files that are dirty, and under writeback.
    pub(crate) fn bdi_bytes(&self, dev: DevId) -> (u64, u64) {
        self.jobs.iter().filter(|x| x.dev == dev).fold((0, 0), |(d, w), x| (d + x.pages.dirty_bytes, w + x.pages.writeback_bytes))
    }

    /// `io_schedule_timeout(pause)` in `balance_dirty_pages`.
    pub(crate) fn dirty_pause(&mut self, tid: ThreadId) -> Next {
        let now = self.now();
        let th = &mut self.threads[tid];
        th.dirty_pause_ns = (th.dirty_pause_ns * 2).clamp(DIRTY_PAUSE_MIN_NS, DIRTY_PAUSE_MAX_NS);
        let at = now + th.dirty_pause_ns;
        self.events.schedule(at, Event::Timeout { thread: tid });
        Next::Sleep(Wait::DirtyThrottle)
    }

    /// `sync_writeback_pages`: what a throttled writer writes back, 1.5 × `ratelimit_pages`,
    /// which is memory / (CPUs × 32) pages, at least 16 and at most 4 MiB' worth
    /// (`writeback_set_ratelimit`, mm/page-writeback.c 2.6.32).
    pub(crate) fn write_chunk_bytes(&self) -> u64 {
        let ratelimit = self.ratelimit_pages();
        (ratelimit + ratelimit / 2) * 4096
    }

    /// `ratelimit_pages`: memory / (CPUs × 32) pages, at least 16 and at most 4 MiB' worth.
    pub(crate) fn ratelimit_pages(&self) -> u64 {
        let s = &self.cfg.scenario;
        (s.vm.mem_mb as u64 * 256 / (s.cpu.cores as u64 * 32)).clamp(16, 1024)
    }

    pub(crate) fn wake_flusher(&mut self, dev: DevId) {
        let f = self.devs[dev].queue.bdi.flusher.expect("jobs write to a top-level device, which has a flusher");
        if self.threads[f].is_idle_kthread() {
            self.wake(f, Step::FlushWork);
        }
    }

    /// A writeback chunk reached the disk: its pages are clean. Writers under the limit again
    /// leave `balance_dirty_pages`; an fsync whose pages are all clean returns.
    pub(crate) fn writeback_done(&mut self, j: JobId, bytes: u64) {
        if self.cfg.scenario.vm.bdi_dirty_limit == BdiDirtyLimit::Writeout {
            let dev = self.jobs[j].dev;
            self.bdi_writeout_inc(dev, bytes);
        }
        self.vm.writeback_total -= bytes;
        self.jobs[j].pages.writeback_bytes -= bytes;
        let job = &self.jobs[j];
        if job.fsync_waiting && !job.needs_fsync() {
            self.jobs[j].fsync_waiting = false;
            let tid = self.jobs[j].tid;
            self.wake(tid, Step::Next);
        }
    }
}

impl Sim {
    /// How many devices buffered writers write to (the dirty limit is shared among them).
    pub(crate) fn bdi_writers(&self) -> u32 {
        let mut d: Vec<DevId> = self.jobs.iter().filter(|j| j.buffered).map(|j| j.dev).collect();
        d.sort();
        d.dedup();
        d.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::ids::DevId;
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    fn sim(limit: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [("disks", "2"), ("workload.numjobs", "2"), ("vm.bdi_dirty_limit", limit)] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn the_dirty_limit_follows_each_devices_share_of_recent_writeout_and_forgets_old_writeout() {
        let mut s = sim("writeout");
        let (a, b) = (DevId(0), DevId(1));
        assert_eq!((s.bdi_thresh(a), s.bdi_thresh(b)), (0, 0), "no writeout yet: no share");
        // One device writes out pages alone. Early on its share ramps up (the denominator is at
        // least half a period, 2^(shift-1) pages); after three half periods it has 7/8.
        let half = 1u64 << (s.prop_shift() - 1);
        s.bdi_writeout_inc(a, half / 4 * 4096);
        assert!(s.bdi_thresh(a) < s.vm.dirty_thresh / 3, "ramping up");
        s.bdi_writeout_inc(a, (half * 3 - half / 4) * 4096);
        assert_eq!((s.bdi_thresh(a), s.bdi_thresh(b)), (s.vm.dirty_thresh / 8 * 7, 0));
        // Then the other writes out two periods' worth: the first one's share decays, halving
        // every half period.
        s.bdi_writeout_inc(b, half * 4 * 4096);
        assert!(s.bdi_thresh(a) < s.vm.dirty_thresh / 8, "{} of {}", s.bdi_thresh(a), s.vm.dirty_thresh);
        assert!(s.bdi_thresh(b) > s.vm.dirty_thresh * 3 / 4);
        // The equal split ignores writeout.
        let eq = sim("equal");
        assert_eq!(eq.bdi_thresh(a), eq.bdi_thresh(b));
    }

    /// `balance_dirty_pages_ratelimited`: a write() is checked each time its CPU has dirtied
    /// `ratelimit_pages`, and every 8 pages once its device is over its limit, whatever its size.
    #[test]
    fn a_write_meets_balance_dirty_pages_every_ratelimit_pages_and_every_8_over_the_limit() {
        use crate::engine::ids::JobId;
        let mut s = Scenario::default();
        for (k, v) in
            [("workload.rw", "write"), ("workload.direct", "false"), ("workload.bs", "1m"), ("vm.mem_mb", "1024"), ("cpu.cores", "2")]
        {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        let j = JobId(0);
        let cpu = sim.current.cpu as usize;
        // 1 GiB over 2 CPUs: 4096 pages, capped at 1024 (4 MiB); a 1 MiB write() goes in whole.
        assert_eq!(sim.ratelimit_pages(), 1024);
        assert_eq!(sim.write_segment(j), (1 << 20, false));
        // The CPU had dirtied 1000 pages: the check comes after 24 more.
        sim.vm.ratelimits[cpu] = 1000;
        assert_eq!(sim.write_segment(j), (24 * 4096, true));
        // Over the dirty limit: every 8 pages.
        sim.vm.ratelimits[cpu] = 0;
        sim.vm.dirty_total = sim.vm.dirty_thresh + 1;
        assert_eq!(sim.write_segment(j), (8 * 4096, true));
        sim.vm.ratelimits[cpu] = 5;
        assert_eq!(sim.write_segment(j), (3 * 4096, true));
    }
}
