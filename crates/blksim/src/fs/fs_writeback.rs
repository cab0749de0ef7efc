//! `fs/fs-writeback.c` (2.6.32's per-bdi flusher; `mm/pdflush.c` before it): background
//! writeback of dirty pages, file by file, and an fsync's `filemap_fdatawrite`.

use crate::block::Bio;
use crate::calib::*;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::fio::job::{Io, IoOwner};
use crate::kernel::sched::ThreadKind;
use crate::scenario::{Filesystem, Writeback};

impl Sim {
    /// One step of a flusher: write back the next chunk of a file's dirty pages as one bio
    /// (up to `max_sectors_kb`), taking files in turn, `MAX_WRITEBACK_PAGES` at a time, while
    /// the system is over the background threshold or a file is being fsynced.
    pub(crate) fn flush_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Flusher(dev) = self.threads[tid].kind else { unreachable!("not a flusher") };
        let over_background = self.over_bground_thresh();
        let jobs_here: Vec<usize> = (0..self.jobs.len()).filter(|&i| self.jobs[i].dev == dev).collect();
        let (mut cursor, mut chunk_left) = self.devs[dev].queue.bdi.flush_cursor;
        for _ in 0..=jobs_here.len() {
            let Some(&j) = jobs_here.get(cursor % jobs_here.len().max(1)) else { break };
            let wanted = self.jobs[j].pages.dirty_bytes > 0 && (over_background || self.jobs[j].fsync_waiting);
            let nonblocking = self.cfg.scenario.vm.writeback == Writeback::Pdflush;
            if wanted && chunk_left > 0 && nonblocking && self.bdi_write_congested(dev) {
                // Background writeback is nonblocking: a congested device is skipped
                // (`wbc->encountered_congestion`) and the flusher waits for the congestion to
                // clear, rather than sleep in get_request_wait.
                self.devs[dev].queue.bdi.flush_cursor = (cursor, chunk_left);
                return self.congestion_wait(tid);
            }
            if wanted && chunk_left > 0 {
                let max = self.devs[dev].queue.max_request_bytes();
                let piece = self.writeback_bio_bytes(max);
                let len = self.write_back(tid, JobId(j as u32), dev, piece, false).expect("dirty bytes present");
                chunk_left = chunk_left.saturating_sub(len);
                self.devs[dev].queue.bdi.flush_cursor = (cursor, chunk_left);
                return self.submit_pending(tid);
            }
            cursor += 1;
            chunk_left = MAX_WRITEBACK_BYTES;
        }
        self.devs[dev].queue.bdi.flush_cursor = (cursor, chunk_left);
        Next::Idle
    }

    /// One piece of an fsync's `filemap_fdatawrite` (WB_SYNC_ALL): the next dirty piece of the
    /// caller's file, submitted by the caller. Unlike background writeback it does not skip a
    /// congested device: it sleeps in `get_request_wait` like any writer.
    pub(crate) fn fsync_write(&mut self, tid: ThreadId) -> Next {
        let j = self.job_of(tid);
        let dev = self.jobs[j].dev;
        let piece = self.writeback_bio_bytes(self.devs[dev].queue.max_request_bytes());
        self.write_back(tid, j, dev, piece, true);
        self.submit_pending(tid)
    }

    /// How much one writeback bio carries: up to `max_sectors_kb` (`mpage_writepages`), or one
    /// 4 KiB block for XFS of 2.6.2, which wrote back through buffer heads.
    pub(crate) fn writeback_bio_bytes(&self, max: u64) -> u64 {
        match self.cfg.scenario.workload.filesystem {
            Filesystem::None => max,
            Filesystem::Xfs => 4096,
        }
    }

    /// Takes up to `max` bytes of job `j`'s oldest dirty pages for writeback and queues them
    /// as one bio from `tid` (submitted with its pending bios). Returns the bytes, or None
    /// when the file has nothing dirty.
    pub(crate) fn write_back(&mut self, tid: ThreadId, j: JobId, dev: DevId, max: u64, sync: bool) -> Option<u64> {
        let (off, len) = self.jobs[j].take_dirty(max)?;
        // write_cache_pages: each page looked up, locked, cleaned and set under writeback.
        self.charge(WRITEBACK_PAGE_NS * len.div_ceil(4096));
        self.vm.dirty_total -= len;
        self.vm.writeback_total += len;
        let now = self.now();
        let io = IoId(self.ios.insert(Io { owner: IoOwner::Writeback(j), bytes: len, bios_left: 1, started: now, sync, write: true }));
        let bio = BioId(self.bios.insert(Bio::new(io, dev, off / 512, len as u32, true, now)));
        self.acct.totals.bios_submitted += 1;
        self.acct.totals.pgpgout_bytes += len;
        self.threads[tid].pending.push_back(bio);
        Some(len)
    }
}
