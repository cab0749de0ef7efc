//! `mm/readahead.c`: the readahead windows a `read()` starts and their bios: on-demand
//! readahead (2.6.23+: `page_cache_sync_readahead`, `page_cache_async_readahead` at the
//! `PG_readahead` mark), or 2.6.20's current and ahead windows (`page_cache_readahead`).

use crate::block::{Bio, DevKind};
use crate::calib::RA_PAGE_NS;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::fio::job::{FileRaState, Io, IoOwner, Job, RaWindow};
use crate::kernel::sched::{Step, Wait};
use crate::scenario::Filesystem;

/// `VM_MIN_READAHEAD` (16 KiB) in pages: the smallest window after misses.
const VM_MIN_READAHEAD_PAGES: u64 = 4;
/// `VM_MAX_CACHE_HIT`: readahead finding this many pages already cached in a row turns off.
const VM_MAX_CACHE_HIT: u64 = 256;

/// What `page_cache_readahead`'s windows are read through: the most a window holds, whether
/// the device is congested, which pages of a range are absent from the cache, and the runs
/// to read.
struct RaWindows<'a> {
    max: u64,
    congested: bool,
    absent: &'a dyn Fn(u64, u64) -> Vec<(u64, u64)>,
    out: &'a mut Vec<(u64, u64)>,
}

impl RaWindows<'_> {
    /// `__do_page_cache_readahead` and `check_ra_success`; `blockable_page_cache_readahead`
    /// skips a congested device unless the read must block.
    fn blockable(&mut self, ra: &mut FileRaState, offset: u64, nr: u64, block: bool) -> bool {
        if !block && self.congested {
            return false;
        }
        let runs = (self.absent)(offset, offset + nr);
        let actual: u64 = runs.iter().map(|(a, b)| b - a).sum();
        self.out.extend(runs);
        if actual == 0 {
            ra.cache_hit += nr;
            if ra.cache_hit >= VM_MAX_CACHE_HIT {
                ra_off(ra);
                ra.incache = true;
                return false;
            }
        } else {
            ra.cache_hit = 0;
        }
        true
    }

    /// `make_ahead_window`: the next window after the current one; dropped (reset) when it
    /// could not be read without blocking.
    fn make_ahead_window(&mut self, ra: &mut FileRaState, force: bool) -> bool {
        ra.ahead_size = next_ra_size(ra, self.max);
        ra.ahead_start = ra.start + ra.size;
        let block = force || ra.prev_page >= ra.ahead_start as i64;
        let ret = self.blockable(ra, ra.ahead_start, ra.ahead_size, block);
        if !ret && !force {
            reset_ahead_window(ra);
        }
        ret
    }
}

/// 2.6.20 `page_cache_readahead` on the state of one file: decides the windows to read and
/// moves the state on. `max` is `ra_pages` (`read_ahead_kb` in pages), `congested` whether
/// the device is read-congested now (`bdi_read_congested`), `absent` the runs of pages of a
/// range not in the page cache (what `__do_page_cache_readahead` allocates and reads). The
/// runs to read are pushed onto `out`; returns the page at which the read calls it next.
pub fn page_cache_readahead(
    ra: &mut FileRaState,
    max: u64,
    congested: bool,
    absent: &dyn Fn(u64, u64) -> Vec<(u64, u64)>,
    offset: u64,
    req_size: u64,
    out: &mut Vec<(u64, u64)>,
) -> u64 {
    let mut w = RaWindows { max, congested, absent, out };
    let (mut offset, mut req_size) = (offset, req_size);
    if offset as i64 == ra.prev_page {
        req_size -= 1;
        if req_size > 0 {
            offset += 1;
        }
    }
    let sequential = offset as i64 == ra.prev_page + 1;
    ra.prev_page = offset as i64;
    let newsize = req_size.min(max);
    if newsize == 0 || ra.incache {
        return (ra.prev_page + 1) as u64;
    }
    ra.prev_page += newsize as i64 - 1;
    if sequential && ra.size == 0 {
        // The first read of a sequential stream: the initial window, and at once an ahead
        // window if the read is as large as the maximum.
        ra.size = init_ra_size(newsize, max);
        ra.start = offset;
        if w.blockable(ra, offset, ra.size, true) && req_size >= max {
            w.make_ahead_window(ra, true);
        }
        return (ra.prev_page + 1) as u64;
    }
    if !sequential {
        ra_off(ra);
        w.blockable(ra, offset, newsize, true);
        return (ra.prev_page + 1) as u64;
    }
    let mut recheck = false;
    if ra.ahead_start == 0 && !w.make_ahead_window(ra, false) {
        recheck = true;
    }
    if recheck || ra.prev_page >= ra.ahead_start as i64 {
        if !recheck {
            // The reader crossed into the ahead window: it becomes the current one, and the
            // next ahead window is started.
            ra.start = ra.ahead_start;
            ra.size = ra.ahead_size;
            w.make_ahead_window(ra, false);
        }
        ra.prev_page = ra.prev_page.min((ra.ahead_start + ra.ahead_size) as i64 - 1);
    }
    (ra.prev_page + 1) as u64
}

/// `get_init_ra_size`: the request rounded up to a power of two, times 4 if small, times 2 if
/// medium, else the maximum.
fn init_ra_size(size: u64, max: u64) -> u64 {
    let n = size.next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: after a miss 2 pages less (at least `VM_MIN_READAHEAD`), else 4 times
/// the current window while it is under max/16, then twice; at most `max`.
fn next_ra_size(ra: &mut FileRaState, max: u64) -> u64 {
    let cur = ra.size;
    let n = if ra.miss {
        ra.miss = false;
        cur.saturating_sub(2).max(VM_MIN_READAHEAD_PAGES)
    } else if cur < max / 16 {
        4 * cur
    } else {
        2 * cur
    };
    n.min(max)
}

/// `reset_ahead_window`: no ahead window, but `ahead_start + ahead_size` kept.
fn reset_ahead_window(ra: &mut FileRaState) {
    ra.ahead_size += ra.ahead_start;
    ra.ahead_start = 0;
}

/// `ra_off`: readahead off until the next sequential read.
fn ra_off(ra: &mut FileRaState) {
    ra.start = 0;
    ra.size = 0;
    ra.miss = false;
    ra.incache = false;
    reset_ahead_window(ra);
}

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
            if !job.read.ra.iter().any(|w| w.start <= pos && pos < w.end) {
                out.push((pos, job.window_end(pos, ra)));
            }
            return out;
        }
        if pos < job.read.ra_next && !job.read.ra.iter().any(|w| w.start <= pos && pos < w.end) {
            // Behind the readahead front but not in the cache: reclaim took it. Read it again
            // (`page_cache_sync_readahead` on the miss), up to the next window still there.
            let next_start = job.read.ra.iter().map(|w| w.start).filter(|&s| s > pos).min().unwrap_or(job.read.ra_next);
            out.push((pos, job.window_end(pos, ra).min(next_start)));
            return out;
        }
        let mut next = job.read.ra_next;
        while next <= pos {
            let end = job.window_end(next, ra);
            out.push((next, end));
            next = end;
        }
        let newest = out.last().map(|w| w.0).or(job.read.ra.back().map(|w| w.start)).unwrap_or(0);
        if self.cfg.scenario.queue.read_ahead_kb > 0 && pos >= newest {
            out.push((next, job.window_end(next, ra)));
        }
        out
    }

    /// The bios a readahead window of `len` bytes becomes: one per page when the job reads a
    /// device node whose page cache reads a page at a time (`vm.blkdev_readahead=readpage`:
    /// buffer heads, `block_read_full_page`), else one per contiguous run up to the queue's
    /// `max_sectors_kb` (`mpage_readpages`: files on a file system, and device nodes from 3.18).
    pub(crate) fn ra_bio_bytes(&self, job: &Job) -> u64 {
        use crate::scenario::knob_table_readahead::BlkdevReadahead;
        // The job's own section's filesystem (a device node, or files).
        let fs = self.cfg.scenario.all_jobs().nth(job.run.section as usize).map_or(Filesystem::None, |w| w.filesystem);
        match (fs, self.cfg.scenario.vm.blkdev_readahead) {
            (Filesystem::None, BlkdevReadahead::Readpage) => 4096,
            _ => self.devs[job.dev].queue.max_request_bytes(),
        }
    }

    /// Starts one readahead window: allocates its pages and builds its bios, queued on the
    /// reader's pending list (submitted by the caller).
    pub(crate) fn submit_readahead(&mut self, j: JobId, start: u64, end: u64) {
        let now = self.now();
        let piece = self.ra_bio_bytes(&self.jobs[j]);
        let job = &self.jobs[j];
        let (dev, tid) = (job.dev, job.tid);
        let off0 = job.stream_offset(start);
        let dev_end = off0 + (end - start);
        // A bio ends where the device's boundary is (md: a chunk, `raid5_mergeable_bvec`) or
        // when it is full; on a device without one, it never crosses a multiple of its size.
        // Equal bios back to back are gathered as (offset, len, count).
        let boundary = self.devs[dev].bio_boundary(&self.cfg.scenario, false);
        let mut segments: Vec<(u64, u64, u64)> = Vec::new();
        let mut off = off0;
        while off < dev_end {
            let len = match boundary {
                Some(b) => piece.min(b - off % b),
                None => piece - off % piece,
            }
            .min(dev_end - off);
            // A whole piece is followed by whole pieces up to the next boundary (or the end):
            // take them in one go, not one by one (a 512 KiB window is 128 page bios).
            let count = if len == piece { boundary.map_or(u64::MAX, |b| b - off % b).min(dev_end - off) / piece } else { 1 };
            match segments.last_mut() {
                Some((o, l, c)) if *l == len && *o + *l * *c == off => *c += count,
                _ => segments.push((off, len, count)),
            }
            off += len * count;
        }
        let nr_bios: u64 = segments.iter().map(|s| s.2).sum();
        // __do_page_cache_readahead: a page allocated and added to the page cache each.
        self.charge(RA_PAGE_NS * (end - start).div_ceil(4096));
        let io = IoId(self.ios.insert(Io {
            owner: IoOwner::Readahead(j),
            bytes: end - start,
            bios_left: nr_bios as u32,
            started: now,
            sync: true,
            write: false,
        }));
        // Equal bios back to back go as one run (`Bio::pages`) into a request-based queue:
        // what a window's 128 page bios cost in the simulator, not what they cost the kernel
        // (that is charged per bio). The trace shows each bio, so with it on each is its own.
        let runs = !self.trace.enabled() && !self.devs[dev].is_bio_based();
        let run_max = if runs { (u32::MAX as u64 / piece).max(1) } else { 1 };
        for (mut off, len, mut count) in segments {
            while count > 0 {
                let pages = count.min(run_max);
                let mut b = Bio::new(io, dev, off / 512, (len * pages) as u32, false, now);
                b.pages = pages as u32;
                let bio = BioId(self.bios.insert(b));
                self.acct.totals.bios_submitted += pages;
                self.acct.totals.pgpgin_bytes += len * pages;
                self.threads[tid].pending.push_back(bio);
                off += len * pages;
                count -= pages;
            }
        }
        let added_at = self.acct.totals.page_cache_read_added_bytes;
        self.acct.totals.page_cache_read_added_bytes += end - start;
        let job = &mut self.jobs[j];
        // Windows stay in stream order (a window read again after reclaim goes back in place).
        let at = job.read.ra.iter().position(|w| w.start > start).unwrap_or(job.read.ra.len());
        job.read.ra.insert(at, RaWindow { start, end, io, done: false, added_at, dev_start: off0, ready: Vec::new() });
        if !job.rw.is_random() && end > job.read.ra_next {
            job.read.ra_next = end;
        }
    }

    /// `bdi_read_congested`: md RAID5's `raid5_congested` (the stripe cache is blocked or has
    /// no free head), a request queue's read congestion bit, bio-based dm's of what is below it.
    pub(crate) fn bdi_read_congested(&self, dev: DevId) -> bool {
        match &self.devs[dev].kind {
            DevKind::Md { .. } => {
                let raid = &self.md.raid5[self.raid5_of(dev)];
                raid.inactive_blocked || raid.free_heads() == 0
            }
            DevKind::DmLinear { lower } => self.bdi_read_congested(*lower),
            // Bio-based dm's own queue holds nothing: `dm_any_congested` asks its paths.
            DevKind::DmMpath { paths, bio_based: true } => {
                self.cfg.scenario.dm.congestion_callout && paths.iter().any(|&p| self.bdi_read_congested(p))
            }
            DevKind::DmMpath { .. } | DevKind::Sd { .. } | DevKind::Nvme { .. } => self.devs[dev].queue.congested[0],
        }
    }

    /// 2.6.20 `page_cache_readahead` for job `j`'s read at page `offset` of `req_size` pages,
    /// on a copy of its state (the caller keeps it, or only prices the windows): returns the
    /// new state, the page at which it is called next, and the runs of pages to read.
    pub(crate) fn readahead_2620(&self, job: &Job, offset: u64, req_size: u64) -> (FileRaState, u64, Vec<(u64, u64)>) {
        let mut ra = job.read.ra20;
        let max = self.cfg.scenario.queue.read_ahead_kb as u64 / 4;
        let congested = self.bdi_read_congested(job.dev);
        let absent = |a: u64, b: u64| -> Vec<(u64, u64)> {
            // The pages of [a, b) not covered by a window in the cache.
            let mut runs = Vec::new();
            let mut p = a;
            for w in job.read.ra.iter().filter(|w| w.end > a * 4096 && w.start < b * 4096) {
                let (ws, we) = (w.start / 4096, w.end.div_ceil(4096));
                if ws > p {
                    runs.push((p, ws.min(b)));
                }
                p = p.max(we);
            }
            if p < b {
                runs.push((p, b));
            }
            runs
        };
        let mut out = Vec::new();
        let next = page_cache_readahead(&mut ra, max, congested, &absent, offset, req_size, &mut out);
        (ra, next, out)
    }

    /// Starts the runs of pages (stream pages) 2.6.20 readahead chose, each split where the
    /// job's region wraps.
    pub(crate) fn submit_page_runs(&mut self, j: JobId, runs: &[(u64, u64)]) {
        for &(a, b) in runs {
            let (mut s, e) = (a * 4096, b * 4096);
            while s < e {
                let m = self.jobs[j].window_end(s, e - s);
                self.submit_readahead(j, s, m);
                s = m;
            }
        }
    }

    /// One bio of a readahead window ended (`vm.readahead = 2.6.20`): its pages are unlocked
    /// (`mpage_end_io_read`), and a reader waiting on one of them wakes.
    pub(crate) fn readahead_bio_done(&mut self, j: JobId, io: IoId, dev_offset: u64, bytes: u64) {
        let job = &mut self.jobs[j];
        // A window done long ago keeps the id its read had, which a new read may have now.
        let Some(w) = job.read.ra.iter_mut().find(|w| w.io == io && !w.done) else { return };
        let a = w.start + (dev_offset - w.dev_start);
        w.mark_ready(a, a + bytes);
        let pos = job.read.read_pos;
        let ready = w.ready_end(pos).is_some();
        let tid = job.tid;
        if ready && self.threads[tid].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }

    /// A readahead window's pages are up to date: wake the reader if it waits for one of them.
    pub(crate) fn readahead_done(&mut self, j: JobId, io: IoId) {
        let job = &mut self.jobs[j];
        if let Some(w) = job.read.ra.iter_mut().find(|w| w.io == io && !w.done) {
            w.done = true;
        }
        let pos = job.read.read_pos;
        let ready = job.read.ra.iter().any(|w| w.done && w.start <= pos && pos < w.end);
        let tid = job.tid;
        if ready && self.threads[tid].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls 2.6.20 readahead for sequential 16-page reads from `from` to `to` (pages), each
    /// where the read loop would (at `next_index`); returns the runs it read.
    fn reads(ra: &mut FileRaState, congested: bool, from: u64, to: u64) -> Vec<(u64, u64)> {
        let mut cached: Vec<(u64, u64)> = Vec::new();
        let mut out = Vec::new();
        let mut page = from;
        while page < to {
            if page == ra.next_index || page % 16 == 0 {
                let absent = |a: u64, b: u64| {
                    let mut runs = Vec::new();
                    let mut p = a;
                    for &(x, y) in cached.iter().filter(|&&(x, y)| y > a && x < b) {
                        if x > p {
                            runs.push((p, x.min(b)));
                        }
                        p = p.max(y);
                    }
                    if p < b {
                        runs.push((p, b));
                    }
                    runs
                };
                let mut new = Vec::new();
                let req = 16 - page % 16;
                ra.next_index = page_cache_readahead(ra, 512, congested, &absent, page, req, &mut new);
                cached.extend(new.iter().copied());
                cached.sort();
                out.extend(new);
            }
            page += 1;
        }
        out
    }

    #[test]
    fn windows_start_at_four_times_the_read_and_double_up_to_the_maximum_one_ahead() {
        // bs=64k (16 pages), setra 4096 (512 pages): 64, then ahead windows of 128, 256, 512,
        // each started when the reader enters the window before it.
        let mut ra = FileRaState::default();
        assert_eq!(reads(&mut ra, false, 0, 16), [(0, 64)]);
        assert_eq!(reads(&mut ra, false, 16, 64), [(64, 192)], "the ahead window, at the second read");
        assert_eq!(reads(&mut ra, false, 64, 192), [(192, 448)]);
        assert_eq!(reads(&mut ra, false, 192, 448), [(448, 960)]);
        assert_eq!(reads(&mut ra, false, 448, 960), [(960, 1472)], "at the maximum");
    }

    #[test]
    fn a_congested_device_drops_the_ahead_window_until_the_reader_reaches_it() {
        // While md is congested the non-blocking ahead window is never started; the reader
        // starts each window, blocking, when it gets there: stop and go.
        let mut ra = FileRaState::default();
        assert_eq!(reads(&mut ra, true, 0, 16), [(0, 64)], "the first window blocks: it is read");
        assert_eq!(reads(&mut ra, true, 16, 64), [], "no ahead window while congested");
        assert_eq!(ra.ahead_start, 0);
        assert_eq!(reads(&mut ra, true, 64, 80), [(64, 192)], "started blocking when the reader is at it");
        assert_eq!(reads(&mut ra, true, 80, 192), []);
        assert_eq!(reads(&mut ra, true, 192, 208), [(192, 448)]);
        // Once the device is not congested, the ahead window is read while the reader is
        // still in the current one.
        assert_eq!(reads(&mut ra, false, 208, 224), [(448, 960)]);
    }

    #[test]
    fn a_miss_shrinks_the_next_window_by_two_pages() {
        let mut ra = FileRaState { size: 128, start: 64, prev_page: 100, miss: true, ..Default::default() };
        assert_eq!(next_ra_size(&mut ra, 512), 126);
        assert!(!ra.miss);
        assert_eq!(next_ra_size(&mut ra, 512), 256);
        assert_eq!(init_ra_size(16, 512), 64);
        assert_eq!(init_ra_size(64, 512), 128);
        assert_eq!(init_ra_size(256, 512), 512);
    }
}
