//! `mm/readahead.c`: the readahead windows a `read()` starts (`page_cache_sync_readahead`,
//! `page_cache_async_readahead` at the `PG_readahead` mark) and their bios.

use crate::block::Bio;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::fio::job::{Io, IoOwner, Job, RaWindow};
use crate::kernel::sched::{Step, Wait};
use crate::scenario::Filesystem;

impl Sim {
    /// The readahead window: `read_ahead_kb` for sequential readers (at least a page: with
    /// readahead off a read() still reads the pages it needs); a random reader reads just its
    /// block (`ondemand_readahead`: a small random read is read as is).
    pub(crate) fn ra_bytes(&self, job: &Job) -> u64 {
        if job.rw.is_random() {
            job.bs.div_ceil(4096) * 4096
        } else {
            (self.cfg.scenario.queue.read_ahead_kb as u64 * 1024).max(4096)
        }
    }

    /// The readahead windows (stream ranges) a read() at `pos` must start now: the window
    /// holding `pos` if none does (`page_cache_sync_readahead`), and, when the reader has
    /// reached the newest window, the one after it (`page_cache_async_readahead` at the
    /// `PG_readahead` mark on the window's first page).
    pub(crate) fn ra_plan(&self, job: &Job, pos: u64) -> Vec<(u64, u64)> {
        let ra = self.ra_bytes(job);
        let mut out = Vec::new();
        if job.rw.is_random() {
            if !job.ra.iter().any(|w| w.start <= pos && pos < w.end) {
                out.push((pos, job.window_end(pos, ra)));
            }
            return out;
        }
        if pos < job.ra_next && !job.ra.iter().any(|w| w.start <= pos && pos < w.end) {
            // Behind the readahead front but not in the cache: reclaim took it. Read it again
            // (`page_cache_sync_readahead` on the miss), up to the next window still there.
            let next_start = job.ra.iter().map(|w| w.start).filter(|&s| s > pos).min().unwrap_or(job.ra_next);
            out.push((pos, job.window_end(pos, ra).min(next_start)));
            return out;
        }
        let mut next = job.ra_next;
        while next <= pos {
            let end = job.window_end(next, ra);
            out.push((next, end));
            next = end;
        }
        let newest = out.last().map(|w| w.0).or(job.ra.back().map(|w| w.start)).unwrap_or(0);
        if self.cfg.scenario.queue.read_ahead_kb > 0 && pos >= newest {
            out.push((next, job.window_end(next, ra)));
        }
        out
    }

    /// The bios a readahead window of `len` bytes becomes: one per page when the job reads a
    /// device node (the block device's pages are read through buffer heads,
    /// `block_read_full_page`; inferred for seed 000, see the lesson), else one per contiguous
    /// run up to the queue's `max_sectors_kb` (`mpage_readpages`).
    pub(crate) fn ra_bio_bytes(&self, job: &Job) -> u64 {
        match self.cfg.scenario.workload.filesystem {
            Filesystem::None => 4096,
            Filesystem::Xfs => self.devs[job.dev.idx()].queue.max_request_bytes(),
        }
    }

    /// Starts one readahead window: allocates its pages and builds its bios, queued on the
    /// reader's pending list (submitted by the caller).
    pub(crate) fn submit_readahead(&mut self, j: JobId, start: u64, end: u64) {
        let now = self.now();
        let piece = self.ra_bio_bytes(&self.jobs[j.idx()]);
        let job = &self.jobs[j.idx()];
        let (dev, tid) = (job.dev, job.tid);
        let off0 = job.stream_offset(start);
        let dev_end = off0 + (end - start);
        // A bio ends where the device's boundary is (md: a chunk, `raid5_mergeable_bvec`) or
        // when it is full; on a device without one, it never crosses a multiple of its size.
        // Equal bios back to back are gathered as (offset, len, count).
        let boundary = self.devs[dev.idx()].bio_boundary(&self.cfg.scenario, false);
        let mut segments: Vec<(u64, u64, u64)> = Vec::new();
        let mut off = off0;
        while off < dev_end {
            let len = match boundary {
                Some(b) => piece.min(b - off % b),
                None => piece - off % piece,
            }
            .min(dev_end - off);
            match segments.last_mut() {
                Some((o, l, c)) if *l == len && *o + *l * *c == off => *c += 1,
                _ => segments.push((off, len, 1)),
            }
            off += len;
        }
        let nr_bios: u64 = segments.iter().map(|s| s.2).sum();
        let io = IoId(self.ios.insert(Io {
            owner: IoOwner::Readahead(j),
            bytes: end - start,
            bios_left: nr_bios as u32,
            started: now,
            sync: true,
        }));
        // Equal bios back to back go as one run (`Bio::pages`) into a request-based queue:
        // what a window's 128 page bios cost in the simulator, not what they cost the kernel
        // (that is charged per bio). The trace shows each bio, so with it on each is its own.
        let runs = !self.trace.enabled() && !self.devs[dev.idx()].is_bio_based();
        let run_max = if runs { (u32::MAX as u64 / piece).max(1) } else { 1 };
        for (mut off, len, mut count) in segments {
            while count > 0 {
                let pages = count.min(run_max);
                let mut b = Bio::new(io, dev, off / 512, (len * pages) as u32, false, now);
                b.pages = pages as u32;
                let bio = BioId(self.bios.insert(b));
                self.totals.bios_submitted += pages;
                self.totals.pgpgin_bytes += len * pages;
                self.threads[tid.idx()].pending.push_back(bio);
                off += len * pages;
                count -= pages;
            }
        }
        let added_at = self.totals.page_cache_read_added_bytes;
        self.totals.page_cache_read_added_bytes += end - start;
        let job = &mut self.jobs[j.idx()];
        // Windows stay in stream order (a window read again after reclaim goes back in place).
        let at = job.ra.iter().position(|w| w.start > start).unwrap_or(job.ra.len());
        job.ra.insert(at, RaWindow { start, end, io, done: false, added_at });
        if !job.rw.is_random() && end > job.ra_next {
            job.ra_next = end;
        }
    }

    /// A readahead window's pages are up to date: wake the reader if it waits for one of them.
    pub(crate) fn readahead_done(&mut self, j: JobId, io: IoId) {
        let job = &mut self.jobs[j.idx()];
        if let Some(w) = job.ra.iter_mut().find(|w| w.io == io) {
            w.done = true;
        }
        let pos = job.read_pos;
        let ready = job.ra.iter().any(|w| w.done && w.start <= pos && pos < w.end);
        let tid = job.tid;
        if ready && self.threads[tid.idx()].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }
}
