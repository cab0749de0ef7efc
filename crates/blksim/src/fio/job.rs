//! fio's jobs: what each process reads or writes, where, and how much (fio's `rw`, `bs`,
//! `size`, `ioengine`, `iodepth`), and the I/Os in flight.

use crate::engine::ids::{DevId, JobId, ThreadId};
use crate::engine::rng::Stream;
use crate::engine::time::SimTime;
use crate::scenario::{IoEngine, Rw, Workload};
use std::collections::VecDeque;

/// Who waits for an I/O: the job's own read()/write() (or iocb), or writeback of its pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOwner {
    Job(JobId),
    Writeback(JobId),
    /// A readahead window of a buffered reader (`page_cache_sync/async_readahead`).
    Readahead(JobId),
    /// raid5d's write of one member page (data or parity) from a stripe head.
    StripeWrite {
        md: u16,
        head: u32,
        disk: u16,
    },
    /// raid5d's read of one member page into a stripe head.
    StripeRead {
        md: u16,
        head: u32,
        disk: u16,
    },
}

/// A readahead window of a buffered reader, in the job's stream position (bytes from the
/// start of its reading; the device offset wraps at the end of the job's region).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaWindow {
    pub start: u64,
    pub end: u64,
    pub io: crate::engine::ids::IoId,
    /// All of its pages are up to date.
    pub done: bool,
    /// The page cache's insertion count (bytes ever added for reads) when its pages were
    /// added: reclaim takes the oldest first, so it is gone once the page cache's room more came
    /// after (`vm.mem_mb` less md's stripe cache: `mm::page_alloc`).
    pub added_at: u64,
    /// The device offset of `start`.
    pub dev_start: u64,
    /// The stream ranges whose bios have ended, merged, in order (`vm.readahead = 2.6.20`,
    /// where a page is read as soon as its bio unlocks it).
    pub ready: Vec<(u64, u64)>,
}

impl RaWindow {
    /// Where the up-to-date pages from `pos` on end (None: the page at `pos` is not).
    pub fn ready_end(&self, pos: u64) -> Option<u64> {
        if self.done {
            return (self.start <= pos && pos < self.end).then_some(self.end);
        }
        self.ready.iter().find(|&&(a, b)| a <= pos && pos < b).map(|&(_, b)| b)
    }

    /// A bio's pages `[a, b)` are up to date.
    pub fn mark_ready(&mut self, a: u64, b: u64) {
        let at = self.ready.iter().position(|r| r.0 > a).unwrap_or(self.ready.len());
        self.ready.insert(at, (a, b));
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ready.len());
        for &(x, y) in &self.ready {
            match merged.last_mut() {
                Some(last) if last.1 >= x => last.1 = last.1.max(y),
                _ => merged.push((x, y)),
            }
        }
        self.ready = merged;
    }
}

/// 2.6.20's `struct file_ra_state`, in pages: the current window (`start`, `size`), the ahead
/// window (`ahead_start` 0: none), the last page readahead looked at, and its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRaState {
    pub start: u64,
    pub size: u64,
    pub ahead_start: u64,
    pub ahead_size: u64,
    /// -1 before the first read (`file_ra_state_init`).
    pub prev_page: i64,
    /// `RA_FLAG_MISS`: a page readahead had read was not in the cache.
    pub miss: bool,
    /// `RA_FLAG_INCACHE`: the file is in the cache; readahead is off.
    pub incache: bool,
    pub cache_hit: u64,
    /// `do_generic_mapping_read`'s `next_index`: the page at which the read calls
    /// `page_cache_readahead` next.
    pub next_index: u64,
}

impl Default for FileRaState {
    fn default() -> Self {
        FileRaState {
            start: 0,
            size: 0,
            ahead_start: 0,
            ahead_size: 0,
            prev_page: -1,
            miss: false,
            incache: false,
            cache_hit: 0,
            next_index: 0,
        }
    }
}

/// One read()/write() (or one iocb, or one writeback chunk): done when all of its bios are.
#[derive(Clone, Debug)]
pub struct Io {
    pub owner: IoOwner,
    pub bytes: u64,
    pub bios_left: u32,
    pub started: SimTime,
    /// `REQ_SYNC`: reads, O_DIRECT writes and fsync's writeback (WB_SYNC_ALL) are
    /// synchronous; background and throttled writeback (WB_SYNC_NONE) is not.
    pub sync: bool,
    pub write: bool,
}

/// fio's random map (`norandommap` unset, fio's default): a random job touches each block of
/// its file once per pass. A pick whose block was already done this pass takes the next free
/// block after it, wrapping at the end (`__get_next_rand_offset`: `random_map_free`, then
/// `axmap_next_free`); a full map starts a new pass (`fio_file_reset`). Without it, mkfs's
/// 4096 scattered writes over 16 MiB wrote some blocks twice, with both writes in flight.
/// One bit per block, allocated at the first pick, for files of at most `RandomMap::BLOCKS_MAX`
/// blocks; a larger file draws blocks independently, as `norandommap` does (the map would cost
/// more than 128 KiB per job in every checkpoint the page keeps).
#[derive(Clone, Debug, Default)]
struct RandomMap {
    words: Vec<u64>,
    done: u64,
}

impl RandomMap {
    const BLOCKS_MAX: u64 = 1 << 20;

    /// The block to do for a draw of `b` out of `blocks`, marked done.
    fn take(&mut self, b: u64, blocks: u64) -> u64 {
        if blocks > Self::BLOCKS_MAX {
            return b;
        }
        if self.words.is_empty() || self.done == blocks {
            self.words = vec![0; blocks.div_ceil(64) as usize];
            self.done = 0;
        }
        let free = |w: &[u64], i: u64| w[(i / 64) as usize] & (1 << (i % 64)) == 0;
        let mut at = b;
        if !free(&self.words, at) {
            // The next free block after `b`, wrapping: a word at a time.
            at = (b + 1) % blocks;
            loop {
                let (wi, bit) = (at / 64, at % 64);
                let taken = self.words[wi as usize] | ((1u64 << bit) - 1);
                if taken != u64::MAX {
                    let cand = wi * 64 + (!taken).trailing_zeros() as u64;
                    if cand < blocks {
                        at = cand;
                        break;
                    }
                }
                at = if (wi + 1) * 64 >= blocks { 0 } else { (wi + 1) * 64 };
            }
        }
        self.words[(at / 64) as usize] |= 1 << (at % 64);
        self.done += 1;
        assert!(self.done <= blocks, "random map: {} blocks done of {blocks}", self.done);
        at
    }
}

/// A job's file in the page cache: dirty extents (offset, bytes) in the order they were
/// written, oldest first, their bytes, and the bytes submitted by writeback and not yet
/// completed.
#[derive(Clone, Debug, Default)]
pub struct DirtyPages {
    pub dirty: VecDeque<(u64, u64)>,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
}

/// Buffered reads: the readahead windows in flight or not yet consumed, oldest first; the
/// stream position the next window starts at; the next byte read() copies; the bytes the
/// current read() still has to copy (0: not inside a read()) and its length; and, for
/// `vm.readahead = 2.6.20`, the file's readahead state.
#[derive(Clone, Debug, Default)]
pub struct BufferedRead {
    pub ra: VecDeque<RaWindow>,
    pub ra_next: u64,
    pub read_pos: u64,
    pub read_left: u64,
    pub read_len: u64,
    pub ra20: FileRaState,
}

/// A buffered write() under way: where its next page goes and the bytes it still has to copy
/// in (0: not inside a write()). It copies up to each `balance_dirty_pages` check.
#[derive(Clone, Debug, Default)]
pub struct BufferedWrite {
    pub write_off: u64,
    pub write_left: u64,
    /// The whole write()'s length.
    pub write_len: u64,
}

/// What fio counts of a job in one direction (`struct thread_stat`'s `io_bytes`,
/// `total_io_u` and `clat_stat`), from its own I/Os as they complete, after its `ramp_time`.
#[derive(Clone, Debug, Default)]
pub struct DirStat {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub clat: crate::tools::stats::ClatStat,
}

/// Where a job is in its life and its pace: its section of the job file, when it started and
/// when its results begin to count, when it must stop, whom it waits for, and the earliest
/// its next I/O may go (`thinktime`, `rate_iops`).
#[derive(Clone, Debug, Default)]
pub struct JobRun {
    /// Its job section's place in the file (0: the first, `workload`).
    pub section: u16,
    /// Reads in a mixed job, percent (`rwmixread`).
    pub rwmixread: u32,
    pub started_at: Option<SimTime>,
    /// Its start plus `ramp_time`.
    pub stat_from: SimTime,
    pub ramp_ns: u64,
    /// `runtime`, ns (0: none).
    pub runtime_ns: u64,
    pub stop_at: Option<SimTime>,
    /// The sections that must finish before it starts (`stonewall`, `wait_for`).
    pub waits_for: Vec<u16>,
    /// Forked, but waiting for `waits_for`.
    pub held: bool,
    pub startdelay_ns: u64,
    pub thinktime_ns: u64,
    /// ns between I/Os at `rate_iops` (0: no cap).
    pub rate_ns: u64,
    /// The earliest its next I/O may be issued.
    pub think_until: SimTime,
    pub rate_next: SimTime,
    /// Read and write results.
    pub stat: [DirStat; 2],
    /// The direction of the I/O being issued (a mixed job draws it per I/O).
    pub write_now: bool,
    mix_rng: Option<Stream>,
}

#[derive(Clone, Debug)]
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
    pub done_at: Option<SimTime>,
    /// Buffered writes go to the page cache (fio direct=0); writeback moves them to the disk.
    pub buffered: bool,
    /// The file's dirty and under-writeback pages.
    pub pages: DirtyPages,
    /// fsync at the end (fio end_fsync): set while the job waits for it.
    pub fsync: bool,
    pub fsync_waiting: bool,
    /// fio sync=1: the file is opened O_SYNC.
    pub o_sync: bool,
    /// When the current buffered write() was entered (fio's clat for buffered I/O).
    pub write_since: SimTime,
    /// Reads go through the page cache (fio direct=0 on a read job).
    pub buffered_read: bool,
    /// A buffered read() under way, and the file's readahead.
    pub read: BufferedRead,
    /// A buffered write() under way.
    pub write: BufferedWrite,
    rng: Stream,
    random_map: RandomMap,
    /// Its section, start, end and pace, and its results.
    pub run: JobRun,
    /// fio's io_uring engine's ring, for a direct job on io_uring (a buffered one runs as
    /// libaio's does).
    pub ring: Option<crate::fio::io_uring::Ring>,
}

impl Job {
    /// The events a job can have queued at once: its start, and its process's timers.
    pub(crate) const EVENTS_MAX: usize = 4;

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
            done_at: None,
            // The page cache models buffered writes; buffered reads are not modelled yet.
            buffered: !w.direct && w.rw.is_write(),
            fsync: w.fsync,
            fsync_waiting: false,
            o_sync: w.sync,
            write_since: SimTime::ZERO,
            pages: DirtyPages::default(),
            read: BufferedRead::default(),
            write: BufferedWrite::default(),
            buffered_read: !w.direct && !w.rw.is_write(),
            rng,
            random_map: RandomMap::default(),
            run: JobRun { rwmixread: w.fio.rwmixread, write_now: w.rw.is_write(), ..JobRun::default() },
            ring: (w.ioengine == IoEngine::IoUring && w.direct).then(|| {
                let o = &w.fio;
                crate::fio::io_uring::Ring::new(
                    w.iodepth,
                    o.iodepth_batch_submit,
                    o.iodepth_batch_complete_min,
                    o.iodepth_batch_complete_max,
                )
            }),
        }
    }

    /// Sets how a mixed job draws each I/O's direction (its own stream, so that its offsets
    /// are drawn as a one-direction job's are).
    pub fn set_mix_rng(&mut self, rng: Stream) {
        if self.rw.is_mixed() {
            self.run.mix_rng = Some(rng);
        }
    }

    /// The direction of the next I/O: a mixed job's reads are `rwmixread` percent of its I/Os,
    /// each drawn on its own.
    pub fn next_direction(&mut self) -> bool {
        if let Some(rng) = &mut self.run.mix_rng {
            self.run.write_now = rng.below(100) >= u64::from(self.run.rwmixread);
        }
        self.run.write_now
    }

    /// Its runtime is over: it issues nothing more (what is in flight completes).
    pub fn stop(&mut self) {
        self.size = Some(self.bytes_issued);
    }

    /// Between I/Os: no read() or write() under way, and more to issue.
    pub fn at_io_boundary(&self) -> bool {
        self.read.read_left == 0 && self.write.write_left == 0 && self.has_more_to_issue()
    }

    /// More I/O to start: bytes the job's size has left, or a buffered write() part-way through
    /// its pages (stopped at a `balance_dirty_pages` check).
    pub fn has_more_to_issue(&self) -> bool {
        self.size.is_none_or(|s| self.bytes_issued < s) || self.write.write_left > 0
    }

    /// I/Os left to issue (`u64::MAX` without a size).
    pub fn ios_left(&self) -> u64 {
        self.size.map_or(u64::MAX, |s| s.saturating_sub(self.bytes_issued).div_ceil(self.bs))
    }

    pub fn is_done(&self) -> bool {
        self.size.is_some() && !self.has_more_to_issue() && self.inflight == 0 && !self.needs_fsync() && self.read.read_left == 0
    }

    /// The device byte offset of a stream position (a reader wraps at the end of its region).
    pub fn stream_offset(&self, pos: u64) -> u64 {
        self.region_start + pos % self.region_len
    }

    /// Where the next readahead window must end: `ra_bytes` from `pos`, but never across the
    /// end of the region (the device offset wraps there).
    pub fn window_end(&self, start: u64, ra_bytes: u64) -> u64 {
        let region_end = (start / self.region_len + 1) * self.region_len;
        (start + ra_bytes).min(region_end)
    }

    /// The next random read's stream position: a random block of the region.
    pub fn random_pos(&mut self) -> u64 {
        let blocks = self.region_len / self.bs;
        let b = self.rng.below(blocks);
        self.random_map.take(b, blocks) * self.bs
    }

    /// Starts a read() of the next block (buffered readers): sets `read_left`. Sequential
    /// readers read on from where they are; random ones jump.
    pub fn start_read(&mut self) {
        let len = match self.size {
            Some(s) => self.bs.min(s - self.bytes_issued),
            None => self.bs,
        };
        if self.rw.is_random() {
            self.read.read_pos = self.random_pos();
        }
        self.bytes_issued += len;
        self.read.read_left = len;
        self.read.read_len = len;
    }

    /// Whether the job still has data in the page cache that its fsync must wait for.
    pub fn needs_fsync(&self) -> bool {
        self.fsync && self.buffered && (self.pages.dirty_bytes > 0 || self.pages.writeback_bytes > 0)
    }

    /// Dirties `len` bytes at `off` (coalescing with the last extent when contiguous).
    pub fn dirty_extent(&mut self, off: u64, len: u64) {
        match self.pages.dirty.back_mut() {
            Some((o, l)) if *o + *l == off => *l += len,
            _ => self.pages.dirty.push_back((off, len)),
        }
        self.pages.dirty_bytes += len;
    }

    /// Takes up to `max` bytes of the oldest dirty extent for writeback.
    pub fn take_dirty(&mut self, max: u64) -> Option<(u64, u64)> {
        let (o, l) = self.pages.dirty.front_mut()?;
        let take = (*l).min(max);
        let out = (*o, take);
        *o += take;
        *l -= take;
        if *l == 0 {
            self.pages.dirty.pop_front();
        }
        self.pages.dirty_bytes -= take;
        self.pages.writeback_bytes += take;
        Some(out)
    }

    /// How many bios one I/O becomes at this max_sectors.
    pub fn bios_per_io(&self, max_sectors_bytes: u64) -> u64 {
        self.bs.div_ceil(max_sectors_bytes)
    }

    /// The length in bytes of the next I/O.
    pub fn next_extent_len(&self) -> u64 {
        match self.size {
            Some(s) => self.bs.min(s - self.bytes_issued),
            None => self.bs,
        }
    }

    /// The (offset, length) in bytes of the next I/O.
    pub fn next_extent(&mut self) -> (u64, u64) {
        let len = self.next_extent_len();
        let blocks = self.region_len / self.bs;
        let off = if self.rw.is_random() {
            let b = self.rng.below(blocks);
            self.random_map.take(b, blocks) * self.bs
        } else {
            let o = self.cursor;
            self.cursor = (self.cursor + self.bs) % (blocks * self.bs);
            o
        };
        self.bytes_issued += len;
        (self.region_start + off, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's random map: each block once per pass, whatever the draws (here draws that land on
    /// done blocks most of the time), then a new pass; a file over the map's limit draws freely.
    #[test]
    fn a_random_job_does_each_block_once_per_pass() {
        for blocks in [1u64, 63, 64, 65, 4096, 4097] {
            let mut map = RandomMap::default();
            let mut rng = Stream::new(7, 1);
            for _pass in 0..2 {
                let mut seen = vec![false; blocks as usize];
                for _ in 0..blocks {
                    // Draws skewed to the first blocks, so that most land on done ones.
                    let b = map.take(rng.below(blocks.min(3)), blocks);
                    assert!(b < blocks);
                    assert!(!seen[b as usize], "block {b} of {blocks} done twice in a pass");
                    seen[b as usize] = true;
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
        let huge = RandomMap::BLOCKS_MAX + 1;
        let mut map = RandomMap::default();
        assert_eq!((map.take(5, huge), map.take(5, huge)), (5, 5));
        assert!(map.words.is_empty(), "no map is kept for a file over the limit");
    }
}
