//! `mm/filemap.c`: buffered `read()` (`do_generic_file_read`: copy what is up to date, start
//! readahead, sleep on the page) and buffered `write()` (`generic_file_buffered_write`).

use crate::block::DevKind;
use crate::calib::*;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::fio::job::Job;
use crate::kernel::sched::{Step, Wait};
use crate::scenario::Readahead;

impl Sim {
    /// A buffered write(): the data goes into the page cache as dirty pages. Above the
    /// background threshold the device's flusher is woken; above the dirty limit the writer
    /// sleeps in `balance_dirty_pages` until writeback brings it back under.
    pub(crate) fn buffered_write(&mut self, j: JobId) -> Next {
        if self.jobs[j].write.write_left == 0 {
            let job = &mut self.jobs[j];
            let (off, len) = job.next_extent();
            (job.write.write_off, job.write.write_left, job.write.write_len) = (off, len, len);
            // fio counts a buffered write() as an I/O at the application, as fio reports it;
            // iostat shows what reached the disk.
            self.acct.totals.ios_completed += 1;
        }
        // generic_perform_write copies the pages in, one by one, calling
        // balance_dirty_pages_ratelimited after each: here up to the page that reaches the check.
        let (len, checks) = self.write_segment(j);
        let cpu = self.current.cpu as usize;
        let job = &mut self.jobs[j];
        let off = job.write.write_off;
        job.dirty_extent(off, len);
        job.write.write_off += len;
        job.write.write_left -= len;
        job.bytes_done += len;
        let dev = job.dev;
        self.vm.dirty_total += len;
        // The application's bytes, as they are copied in (the books: dirty + writeback +
        // written = the jobs' bytes, at every moment).
        self.acct.totals.bytes_written += len;
        self.charge(PAGE_COPY_NS * len.div_ceil(4096));
        if self.over_bground_thresh() {
            self.wake_flusher(dev);
        }
        if checks {
            self.vm.ratelimits[cpu] = 0;
            return self.balance_dirty_pages(j);
        }
        self.vm.ratelimits[cpu] += len.div_ceil(4096);
        self.finish_buffered_write(j);
        Next::Continue(Step::Next)
    }

    /// The bytes of writer `j`'s write() copied in before its next `balance_dirty_pages`
    /// check, and whether the check comes at their end: `balance_dirty_pages_ratelimited`
    /// (2.6.2-2.6.39) checks when the running CPU has dirtied `ratelimit_pages`, or 8 pages
    /// once the device is over its limit (`dirty_exceeded`).
    pub(crate) fn write_segment(&self, j: JobId) -> (u64, bool) {
        let job = &self.jobs[j];
        let left = if job.write.write_left == 0 { job.next_extent_len() } else { job.write.write_left };
        let (d, w) = self.bdi_bytes(job.dev);
        let ratelimit = if self.dirty_exceeded(job.dev, d + w, 0) { 8 } else { self.ratelimit_pages() };
        let room = ratelimit.saturating_sub(self.vm.ratelimits[self.current.cpu as usize]).max(1) * 4096;
        if left >= room {
            (room, true)
        } else {
            (left, false)
        }
    }

    /// `balance_dirty_pages` returned (its chunk and pause are done), and with the write()'s
    /// last page copied in, write() returns: its latency includes the writeback and pauses.
    pub(crate) fn finish_buffered_write(&mut self, j: JobId) {
        let tid = self.jobs[j].tid;
        let th = &mut self.threads[tid];
        th.dirty_pause_ns = 0;
        th.dirty_written = 0;
        if self.jobs[j].write.write_left > 0 {
            return;
        }
        let now = self.now();
        let since = std::mem::replace(&mut self.jobs[j].write_since, now);
        self.job_progressed();
        self.acct.latency.record(now - since);
        let len = self.jobs[j].write.write_len;
        self.job_io_completed(j, true, len, now - since);
    }

    /// What the next read() step costs: entering read(), starting the planned windows (a page
    /// each, a bio per piece, a clone per bio under dm), and copying what is up to date.
    pub(crate) fn buffered_read_cost(&self, job: &Job) -> u64 {
        if self.cfg.scenario.vm.readahead == Readahead::V2_6_20 {
            return self.buffered_read_cost_2620(job);
        }
        let mut cost = if job.read.read_left == 0 { SYSCALL_NS } else { 0 };
        let want = if job.read.read_left == 0 { job.bs } else { job.read.read_left };
        let ready: u64 =
            job.read.ra.iter().filter(|w| w.done && w.end > job.read.read_pos).map(|w| w.end - w.start.max(job.read.read_pos)).sum();
        let copied = want.min(ready);
        let pages: u64 = self.ra_plan(job, job.read.read_pos + copied).iter().map(|(s, e)| (e - s).div_ceil(4096)).sum();
        let bios = pages * 4096 / self.ra_bio_bytes(job).max(4096);
        let clone = if matches!(self.devs[job.dev].kind, DevKind::DmMpath { .. }) { BIO_CLONE_NS } else { 0 };
        cost += pages * RA_PAGE_NS + bios.max(pages.min(1)) * (BIO_SUBMIT_NS + clone);
        // md: pages that go through the stripe cache cost get_active_stripe + add_stripe_bio.
        if self.md_reads_through_stripes(job) {
            cost += pages * Self::stripe_read_page_ns();
        }
        // Short of pages: lock_page's sync_page before sleeping.
        let sync_page = if copied < want { self.sync_page_ns(job.dev) } else { 0 };
        cost + copied.div_ceil(4096) * PAGE_COPY_NS + sync_page
    }

    /// A buffered read() step (`do_generic_file_read`): start the read, start readahead, copy
    /// the pages that are up to date, and return, or sleep until the next page is.
    pub(crate) fn buffered_read(&mut self, j: JobId) -> Next {
        if self.cfg.scenario.vm.readahead == Readahead::V2_6_20 {
            return self.buffered_read_2620(j);
        }
        let now = self.now();
        let tid = self.jobs[j].tid;
        if self.jobs[j].read.read_left == 0 {
            if !self.jobs[j].has_more_to_issue() {
                self.job_finished(j);
                return Next::Exit;
            }
            let job = &mut self.jobs[j];
            job.start_read();
            job.write_since = now;
            if job.rw.is_random() {
                // Windows of earlier random reads that are read are dropped from the plan.
                let pos = job.read.read_pos;
                job.read.ra.retain(|w| !w.done || (w.start <= pos && pos < w.end));
            }
        }
        // Copy what is up to date, window by window. A window whose pages reclaim took (more
        // than the page cache holds of reads were added after it) is gone: readahead reads it again.
        let (added, cache) = (self.acct.totals.page_cache_read_added_bytes, crate::mm::page_alloc::page_cache_bytes(&self.cfg.scenario));
        let job = &mut self.jobs[j];
        while job.read.read_left > 0 {
            let pos = job.read.read_pos;
            let Some(i) = job.read.ra.iter().position(|w| w.start <= pos && pos < w.end) else { break };
            let w = &job.read.ra[i];
            if !w.done {
                break;
            }
            if added - w.added_at > cache {
                let w = job.read.ra.remove(i).expect("found");
                self.acct.totals.readahead_thrashed_bytes += w.end - pos;
                break;
            }
            let n = job.read.read_left.min(w.end - pos);
            job.read.read_pos += n;
            job.read.read_left -= n;
        }
        while job.read.ra.front().is_some_and(|w| w.done && w.end <= job.read.read_pos) {
            job.read.ra.pop_front();
        }
        // Where the copy stopped (or the next read() starts), readahead starts what is missing.
        // A random read() that has copied its pages is done: the kernel reads only the pages
        // a random read asks for (`ondemand_readahead`'s "standalone, small random read"), so
        // nothing is started at the page after it.
        let pos = job.read.read_pos;
        if !(job.rw.is_random() && job.read.read_left == 0) {
            for (start, end) in self.ra_plan(&self.jobs[j], pos) {
                self.submit_readahead(j, start, end);
            }
        }
        let job = &mut self.jobs[j];
        if job.read.read_left == 0 {
            // read() returns: the bytes count as read, as dd and fio see them.
            let len = job.read.read_len;
            job.bytes_done += len;
            let since = job.write_since;
            self.acct.latency.record(now - since);
            self.job_io_completed(j, false, len, now - since);
            self.acct.totals.bytes_read += len;
            self.acct.totals.buffered_read_bytes += len;
            self.acct.totals.ios_completed += 1;
            self.job_progressed();
            self.job_finished(j);
        }
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        if self.jobs[j].read.read_left == 0 {
            Next::Continue(Step::Next)
        } else {
            // lock_page: sync_page unplugs the device (its backing_dev_info's unplug_io_fn),
            // then the reader sleeps in io_schedule until the page is read (PG_locked cleared
            // by the bio's end).
            let dev = self.jobs[j].dev;
            self.sync_page(dev);
            Next::Sleep(Wait::Io)
        }
    }

    /// A buffered read() step as 2.6.20's `do_generic_mapping_read` does it, page by page: at
    /// `next_index` it calls `page_cache_readahead` (whose windows it submits, and may sleep
    /// submitting, in the stripe cache); a page up to date is copied; a page not in the cache
    /// (never read, or reclaimed: `handle_ra_miss`) is read alone (`readpage`); a page being
    /// read is waited for (`lock_page`: `sync_page`, then sleep).
    fn buffered_read_2620(&mut self, j: JobId) -> Next {
        let now = self.now();
        let tid = self.jobs[j].tid;
        if self.jobs[j].read.read_left == 0 {
            if !self.jobs[j].has_more_to_issue() {
                self.job_finished(j);
                return Next::Exit;
            }
            let job = &mut self.jobs[j];
            job.start_read();
            job.write_since = now;
            job.read.ra20.next_index = job.read.read_pos / 4096;
            if job.rw.is_random() {
                let pos = job.read.read_pos;
                job.read.ra.retain(|w| !w.done || (w.start <= pos && pos < w.end));
            }
        }
        let (added, cache) = (self.acct.totals.page_cache_read_added_bytes, crate::mm::page_alloc::page_cache_bytes(&self.cfg.scenario));
        while self.jobs[j].read.read_left > 0 {
            let job = &self.jobs[j];
            let pos = job.read.read_pos;
            let page = pos / 4096;
            if page == job.read.ra20.next_index {
                let last_index = (pos + job.read.read_left).div_ceil(4096);
                let (ra, next, runs) = self.readahead_2620(job, page, last_index - page);
                let job = &mut self.jobs[j];
                job.read.ra20 = ra;
                job.read.ra20.next_index = next;
                self.submit_page_runs(j, &runs);
                if let Err(wait) = self.submit_bios(tid) {
                    return Next::Sleep(wait);
                }
            }
            let job = &mut self.jobs[j];
            let found = job.read.ra.iter().position(|w| w.start <= pos && pos < w.end);
            if let Some(i) = found.filter(|&i| job.read.ra[i].ready_end(pos).is_some() && added - job.read.ra[i].added_at > cache) {
                // Read, then reclaimed before the reader got to it.
                let w = job.read.ra.remove(i).expect("found");
                self.acct.totals.readahead_thrashed_bytes += w.end - pos;
                continue;
            }
            let Some(i) = found else {
                // find_get_page missed: handle_ra_miss, then readpage of this page alone.
                job.read.ra20.miss = true;
                let start = page * 4096;
                self.submit_readahead(j, start, start + 4096);
                if let Err(wait) = self.submit_bios(tid) {
                    return Next::Sleep(wait);
                }
                continue;
            };
            let Some(end) = job.read.ra[i].ready_end(pos) else {
                // lock_page on a page being read.
                let dev = job.dev;
                self.sync_page(dev);
                return Next::Sleep(Wait::Io);
            };
            // Copy up to the next page readahead is called at.
            let stop = if job.read.ra20.next_index * 4096 > pos { job.read.ra20.next_index * 4096 } else { u64::MAX };
            let n = job.read.read_left.min(end - pos).min(stop - pos);
            job.read.read_pos += n;
            job.read.read_left -= n;
        }
        let job = &mut self.jobs[j];
        while job.read.ra.front().is_some_and(|w| w.done && w.end <= job.read.read_pos) {
            job.read.ra.pop_front();
        }
        // read() returns: the bytes count as read, as dd and fio see them.
        let len = job.read.read_len;
        job.bytes_done += len;
        let since = job.write_since;
        self.acct.latency.record(now - since);
        self.job_io_completed(j, false, len, now - since);
        self.acct.totals.bytes_read += len;
        self.acct.totals.buffered_read_bytes += len;
        self.acct.totals.ios_completed += 1;
        self.job_progressed();
        self.job_finished(j);
        Next::Continue(Step::Next)
    }

    /// What the next 2.6.20 read() step costs: entering read(), the readahead it starts at
    /// `next_index` (a page each, a bio per piece, and for md the stripe cache's work per page
    /// that goes through it), the copy of what is up to date, and `sync_page` if it will wait.
    fn buffered_read_cost_2620(&self, job: &Job) -> u64 {
        let mut cost = if job.read.read_left == 0 { SYSCALL_NS } else { 0 };
        let pos = job.read.read_pos;
        let (want, next_index) =
            if job.read.read_left == 0 { (job.bs, pos / 4096) } else { (job.read.read_left, job.read.ra20.next_index) };
        let mut pages = 0;
        if pos / 4096 == next_index {
            let (_, _, runs) = self.readahead_2620(job, pos / 4096, (pos + want).div_ceil(4096) - pos / 4096);
            pages = runs.iter().map(|(a, b)| b - a).sum::<u64>();
        }
        let bios = (pages * 4096).div_ceil(self.ra_bio_bytes(job).max(4096));
        cost += pages * RA_PAGE_NS + bios * BIO_SUBMIT_NS;
        if self.md_reads_through_stripes(job) {
            cost += pages * Self::stripe_read_page_ns();
        }
        let ready = job.read.ra.iter().find_map(|w| w.ready_end(pos)).map_or(0, |end| end - pos);
        let copied = want.min(ready);
        let sync_page = if copied < want { self.sync_page_ns(job.dev) } else { 0 };
        cost + copied.div_ceil(4096) * PAGE_COPY_NS + sync_page
    }

    /// `sync_page` → `block_sync_page` → `blk_run_backing_dev`: the device's `unplug_fn`. md's
    /// is `raid5_unplug_device` (wake raid5d, unplug every member); dm's unplugs what is below
    /// it; a disk's queue is unplugged if it is plugged (2.6.20 plugging; ->sync_page is gone
    /// from 2.6.39, whose per-task plug is flushed before sleeping instead).
    pub(crate) fn sync_page(&mut self, dev: DevId) {
        match &self.devs[dev].kind {
            DevKind::Md { .. } => {
                let r = self.raid5_of(dev);
                self.raid5_unplug_device(r);
            }
            DevKind::DmLinear { lower } => {
                let lower = *lower;
                self.sync_page(lower);
            }
            DevKind::DmMpath { paths, .. } => {
                for p in paths.clone() {
                    self.sync_page(p);
                }
            }
            DevKind::Sd { .. } | DevKind::Nvme { .. } => self.unplug_device(dev),
        }
    }

    /// The page of `rq` (an index from its first page) a buffered reader sleeps on, if one
    /// does: the reader of a readahead window this request carries, asleep in `lock_page`
    /// (`do_generic_file_read`: the page is not up to date) at a page of that window not past
    /// this request. The model wakes the reader when the window is done; a reader of the
    /// kernel wakes at its page and chases the completion page by page (`page_waiters_ns`),
    /// so a reader waiting at an earlier request of the window is at this one's first page
    /// by the time it completes (requests of a window complete in order, INFERRED).
    pub(crate) fn reader_waits_at(&self, rq: ReqId) -> Option<u64> {
        let r = self.reqs.get(rq.0);
        let orig = r.clone_of.map_or(r, |o| self.reqs.get(o.0));
        let &bio = orig.bios.first()?;
        let io = self.bios.get(bio.0).io;
        let crate::fio::job::IoOwner::Readahead(j) = self.ios.get(io.0).owner else { return None };
        let job = &self.jobs[j];
        let th = &self.threads[job.tid];
        if th.wait != Some(Wait::Io) || job.read.read_left == 0 {
            return None;
        }
        let w = job.read.ra.iter().find(|w| w.start <= job.read.read_pos && job.read.read_pos < w.end)?;
        if w.io != io || w.done {
            return None;
        }
        let at = job.stream_offset(job.read.read_pos);
        let (start, end) = (r.sector * 512, r.sector * 512 + r.bytes);
        (at < end).then(|| at.saturating_sub(start) / 4096)
    }

    /// What `sync_page` costs on `dev`.
    pub(crate) fn sync_page_ns(&self, dev: DevId) -> u64 {
        match &self.devs[dev].kind {
            DevKind::Md { .. } => self.unplug_slaves_ns(self.raid5_of(dev)),
            _ => 0,
        }
    }
}
