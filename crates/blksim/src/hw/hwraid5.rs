//! A hardware RAID5 controller behind one SCSI disk (`disk.kind = hwraid5`, the 3ware Escalade
//! 8506 of seed 003). The host sees one LUN; behind it:
//! - member HDDs in a rotating-parity layout of `HWRAID5_CHUNK_SECTORS` chunks (3ware's figure:
//!   stripe 0 has its parity on member 0, stripe 1 on member 1, ...);
//! - a small write-back cache: a write completes once its data is in the cache; a write that
//!   does not fit waits in the controller's queue until a stripe operation frees space;
//! - cached writes are kept per stripe and looked up by address: a write joins the cached entry
//!   of its stripe while that entry is open. When an entry closes (`disk.controller_cache`):
//!   - `in-order`: when the stripe is whole, or once the host stream has moved past it (a write
//!     to a later stripe arrives). A closed entry waits, in arrival order, for the RAID engine
//!     and takes no more writes: a write arriving late for it starts a new entry, which the
//!     engine writes as a partial stripe. INFERRED destage rule (the 8506's firmware timing is
//!     not documented): its 2.25 MB of SRAM is a staging buffer for its "StorSwitch" data path,
//!     not a DRAM cache, and the thread's symptom (out-of-order 4 KiB writes cost "quite a bit
//!     of seeking") needs a stripe to leave it once passed;
//!   - `gathering`: never while it is incomplete: whole stripes go first, the oldest incomplete
//!     one only when the cache is full and a write waits;
//! - a stripe whose data is all present is written as a full stripe (parity from the cache, no
//!   reads); an incomplete one by read-modify-write or reconstruct-write, whichever reads less
//!   (as md's `handle_stripe_dirtying` decides);
//! - one stripe operation at a time, through the controller's RAID5 write path
//!   (`HWRAID5_WRITE_BYTES_PER_S`), overlapped with the member writes.
//!
//! Reads go straight to the members holding the data (no degraded mode, no cache hits).

use crate::calib::*;
use crate::engine::rng::Stream;
use crate::engine::time::SimTime;
use crate::hw::hdd::HddSpec;
use crate::hw::{hdd_service_ns, transfer_ns, Cmd, Hdd};
use crate::scenario::{ControllerCache, MemberDrive};
use std::collections::VecDeque;

/// One stripe's cached writes: covered sector ranges relative to the stripe's first data
/// sector, sorted and merged.
#[derive(Clone, Debug)]
struct CachedStripe {
    stripe: u64,
    covered: Vec<(u64, u64)>,
    /// Takes more writes (`in-order` closes a stripe the stream has passed).
    open: bool,
}

impl CachedStripe {
    fn sectors(&self) -> u64 {
        self.covered.iter().map(|(a, b)| b - a).sum()
    }
}

/// What a stripe operation did, counted for tests and the sandbox.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StripeOps {
    pub full_stripe: u64,
    pub read_modify_write: u64,
    pub reconstruct_write: u64,
    /// Host writes taken into the cache, and those that start below the end of an earlier one
    /// (a backward write: the thread's "one 4 KiB request going backwards").
    pub host_writes: u64,
    pub backward_writes: u64,
}

impl MemberDrive {
    /// The drive this value names, as `calib` builds it from its sources.
    pub const fn spec(self) -> HddSpec {
        match self {
            MemberDrive::Hdd => HDD_2010,
            MemberDrive::Wd360gd => HDD_WD360GD,
        }
    }
}

#[derive(Clone, Debug)]
pub struct HwRaid5 {
    members: Vec<Hdd>,
    /// The members' drive (`disk.member_drive`): every member is one of these.
    drive: HddSpec,
    chunk_sectors: u64,
    /// Dirty stripes in the cache, in the order their first write arrived.
    cached: VecDeque<CachedStripe>,
    /// Sectors held in the cache: dirty, plus the stripe being written out.
    held_sectors: u64,
    /// The stripe operation in progress holds this many sectors until it ends.
    destaging_sectors: u64,
    policy: ControllerCache,
    pub ops: StripeOps,
    /// The highest sector end written so far (to count backward writes).
    stream_end: u64,
}

impl HwRaid5 {
    /// `disk.skip_within_track` for the member disks.
    pub fn set_skip_within_track(&mut self, on: bool) {
        for m in &mut self.members {
            m.skip_within_track = on;
        }
    }

    /// `disk.prefetch` for the member disks.
    pub fn set_prefetch(&mut self, p: crate::scenario::Prefetch) {
        for m in &mut self.members {
            m.prefetch = p;
        }
    }

    pub fn new(members: u32, drive: HddSpec, write_cache: bool, policy: ControllerCache, rng: &mut Stream) -> HwRaid5 {
        assert!(members >= 3, "RAID5 needs at least 3 members");
        HwRaid5 {
            members: (0..members).map(|_| Hdd::new(drive, write_cache, HWRAID5_MEMBER_RPO_WINDOW, rng)).collect(),
            drive,
            chunk_sectors: HWRAID5_CHUNK_SECTORS,
            cached: VecDeque::new(),
            held_sectors: 0,
            destaging_sectors: 0,
            policy,
            ops: StripeOps::default(),
            stream_end: 0,
        }
    }

    fn data_members(&self) -> u64 {
        self.members.len() as u64 - 1
    }

    /// Data sectors per stripe.
    fn stripe_sectors(&self) -> u64 {
        self.data_members() * self.chunk_sectors
    }

    /// The LUN's size: every member's capacity in whole chunks, less one member for parity.
    pub fn capacity_sectors(&self) -> u64 {
        self.drive.capacity_sectors / self.chunk_sectors * self.stripe_sectors()
    }

    /// Member 0's head, as a fraction of the stroke.
    pub fn head_position(&self) -> f64 {
        self.members[0].head_sector() as f64 / self.drive.capacity_sectors as f64
    }

    /// The member holding data chunk `i` of `stripe` (parity on member `stripe % members`).
    fn data_member(&self, stripe: u64, i: u64) -> usize {
        let parity = stripe % self.members.len() as u64;
        (if i < parity { i } else { i + 1 }) as usize
    }

    /// Does a write of `sectors` fit in the cache now? (One larger than the whole cache passes
    /// through it once it is empty.)
    pub fn fits(&self, sectors: u64) -> bool {
        self.held_sectors == 0 || self.held_sectors + sectors <= HWRAID5_CACHE_BYTES / 512
    }

    /// Takes a write into the cache (the caller checked `fits`); returns when it completes to
    /// the host: its data crossed the PCI bus into the controller's memory.
    pub fn accept_write(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        let w = self.stripe_sectors();
        let was_empty = self.held_sectors == 0;
        let (mut s, end) = (cmd.sector, cmd.sector + cmd.bytes / 512);
        self.ops.host_writes += 1;
        if s < self.stream_end {
            self.ops.backward_writes += 1;
        }
        self.stream_end = self.stream_end.max(end);
        while s < end {
            let stripe = s / w;
            let piece_end = end.min((stripe + 1) * w);
            let range = (s - stripe * w, piece_end - stripe * w);
            let before;
            let after;
            let entry = self.cached.iter_mut().find(|c| c.stripe == stripe && c.open);
            match entry {
                Some(c) => {
                    before = c.sectors();
                    c.covered = add_range(&c.covered, range);
                    after = c.sectors();
                }
                None => {
                    before = 0;
                    after = range.1 - range.0;
                    self.cached.push_back(CachedStripe { stripe, covered: vec![range], open: true });
                }
            }
            if self.policy == ControllerCache::InOrder {
                // The stream has moved on to `stripe`: the stripes before it close.
                for c in self.cached.iter_mut().filter(|c| c.stripe < stripe) {
                    c.open = false;
                }
            }
            // A write over data already cached replaces it ("write on top").
            self.held_sectors += after - before;
            s = piece_end;
        }
        assert!(was_empty || self.held_sectors <= HWRAID5_CACHE_BYTES / 512, "controller cache over its size");
        now + transfer_ns(cmd.bytes, HWRAID5_HOST_BYTES_PER_S)
    }

    /// Starts the next stripe operation, if there is one to do. Returns when it ends.
    /// - `in-order`: the oldest entry, once it is whole or closed, or a write waits for cache
    ///   space (`pressed`).
    /// - `gathering`: the oldest whole stripe; else, when pressed, the oldest entry.
    pub fn start_destage(&mut self, now: SimTime, pressed: bool) -> Option<SimTime> {
        assert_eq!(self.destaging_sectors, 0, "one stripe operation at a time");
        let w = self.stripe_sectors();
        let whole = |c: &CachedStripe| c.covered == [(0, w)];
        let pick = match self.policy {
            ControllerCache::InOrder => {
                let front = self.cached.front()?;
                (whole(front) || !front.open || pressed).then_some(0)
            }
            ControllerCache::Gathering => match self.cached.iter().position(whole) {
                Some(i) => Some(i),
                None => (pressed && !self.cached.is_empty()).then_some(0),
            },
        }?;
        let c = self.cached.remove(pick).expect("picked");
        self.destaging_sectors = c.sectors();
        Some(self.stripe_write(now, &c))
    }

    /// The stripe operation ended: its cache space is free.
    pub fn destage_done(&mut self) {
        self.held_sectors -= self.destaging_sectors;
        self.destaging_sectors = 0;
    }

    /// The cache holds exactly what its entries and the stripe being written say.
    pub fn check_invariants(&self) {
        let cached: u64 = self.cached.iter().map(CachedStripe::sectors).sum();
        assert_eq!(cached + self.destaging_sectors, self.held_sectors, "controller cache accounting");
    }

    pub fn destaging(&self) -> bool {
        self.destaging_sectors > 0
    }

    /// Writes one stripe's cached data and its parity; returns when the operation ends.
    /// - Full stripe: every member writes its chunk; nothing is read.
    /// - Partial: read-modify-write reads the old data it replaces and the old parity of those
    ///   rows; reconstruct-write reads the rest of those rows from the other data members;
    ///   the one with fewer reads is done. Then the new data and the parity rows are written.
    ///   Each member does one contiguous transfer per phase (the span of what it needs).
    fn stripe_write(&mut self, now: SimTime, c: &CachedStripe) -> SimTime {
        let cs = self.chunk_sectors;
        let d = self.data_members();
        let base = c.stripe * cs;
        let parity = (c.stripe % self.members.len() as u64) as usize;
        // Covered ranges of each data chunk, relative to the chunk.
        let per_chunk: Vec<Vec<(u64, u64)>> = (0..d)
            .map(|i| {
                c.covered
                    .iter()
                    .filter_map(|&(a, b)| {
                        let (lo, hi) = (a.max(i * cs), b.min((i + 1) * cs));
                        (lo < hi).then(|| (lo - i * cs, hi - i * cs))
                    })
                    .collect()
            })
            .collect();
        let rows = per_chunk.iter().flatten().fold(Vec::new(), |acc, &r| add_range(&acc, r));
        let rows_sectors: u64 = rows.iter().map(|(a, b)| b - a).sum();
        let mut reads: Vec<(usize, (u64, u64))> = Vec::new();
        let mut writes: Vec<(usize, (u64, u64))> = Vec::new();
        for (i, ranges) in per_chunk.iter().enumerate() {
            if let Some(span) = span(ranges) {
                writes.push((self.data_member(c.stripe, i as u64), span));
            }
        }
        writes.push((parity, span(&rows).expect("a cached stripe covers something")));
        if c.covered != [(0, d * cs)] {
            let rmw: u64 = c.sectors() + rows_sectors;
            let rcw: u64 = per_chunk.iter().map(|r| rows_sectors - overlap(r, &rows)).sum();
            if rmw < rcw {
                self.ops.read_modify_write += 1;
                reads = writes.clone();
            } else {
                self.ops.reconstruct_write += 1;
                for (i, ranges) in per_chunk.iter().enumerate() {
                    let missing = subtract(&rows, ranges);
                    if let Some(span) = span(&missing) {
                        reads.push((self.data_member(c.stripe, i as u64), span));
                    }
                }
            }
        } else {
            self.ops.full_stripe += 1;
        }
        let mut read_end = now;
        for &(m, (a, b)) in &reads {
            read_end = read_end.max(self.member_io(m, now, base + a, b - a, false));
        }
        let mut write_end = read_end;
        for &(m, (a, b)) in &writes {
            write_end = write_end.max(self.member_io(m, read_end, base + a, b - a, true));
        }
        let through_engine = read_end + transfer_ns(c.sectors() * 512, HWRAID5_WRITE_BYTES_PER_S);
        write_end.max(through_engine)
    }

    fn member_io(&mut self, m: usize, at: SimTime, sector: u64, sectors: u64, write: bool) -> SimTime {
        let cmd = Cmd { req: crate::engine::ids::ReqId(0), sector, bytes: sectors * 512, write, fua: false, queued_at: at };
        at + hdd_service_ns(&mut self.members[m], at, &cmd, true, self.drive.capacity_sectors)
    }

    /// A host read: each chunk's piece from its member, in parallel. Returns when all arrived.
    pub fn read(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        let (cs, w) = (self.chunk_sectors, self.stripe_sectors());
        let (mut s, end) = (cmd.sector, cmd.sector + cmd.bytes / 512);
        let mut done = now;
        while s < end {
            let (stripe, off) = (s / w, s % w);
            let (i, in_chunk) = (off / cs, off % cs);
            let piece = (cs - in_chunk).min(end - s);
            let m = self.data_member(stripe, i);
            done = done.max(self.member_io(m, now, stripe * cs + in_chunk, piece, false));
            s += piece;
        }
        done + transfer_ns(cmd.bytes, HWRAID5_HOST_BYTES_PER_S)
    }
}

/// Adds `r` to a sorted list of disjoint ranges, merging what touches.
fn add_range(ranges: &[(u64, u64)], r: (u64, u64)) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len() + 1);
    let mut cur = r;
    let mut placed = false;
    for &x in ranges {
        if x.1 < cur.0 {
            out.push(x);
        } else if cur.1 < x.0 {
            if !placed {
                out.push(cur);
                placed = true;
            }
            out.push(x);
        } else {
            cur = (cur.0.min(x.0), cur.1.max(x.1));
        }
    }
    if !placed {
        out.push(cur);
    }
    out.sort_unstable();
    out
}

fn span(ranges: &[(u64, u64)]) -> Option<(u64, u64)> {
    Some((ranges.first()?.0, ranges.last()?.1))
}

/// Sectors of `a` that `b` also covers (both sorted and disjoint).
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    a.iter().flat_map(|&(a0, a1)| b.iter().map(move |&(b0, b1)| a1.min(b1).saturating_sub(a0.max(b0)))).sum()
}

/// `a` minus `b` (both sorted and disjoint).
fn subtract(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for &(mut lo, hi) in a {
        for &(b0, b1) in b {
            if b1 <= lo || b0 >= hi {
                continue;
            }
            if b0 > lo {
                out.push((lo, b0));
            }
            lo = lo.max(b1);
        }
        if lo < hi {
            out.push((lo, hi));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ids::ReqId;

    fn write(sector: u64, bytes: u64) -> Cmd {
        Cmd { req: ReqId(0), sector, bytes, write: true, fua: false, queued_at: SimTime::ZERO }
    }

    #[test]
    fn ranges_merge_subtract_and_overlap() {
        let r = add_range(&[(0, 8), (16, 24)], (8, 16));
        assert_eq!(r, vec![(0, 24)]);
        let r = add_range(&[(0, 8), (32, 40)], (16, 24));
        assert_eq!(r, vec![(0, 8), (16, 24), (32, 40)]);
        assert_eq!(subtract(&[(0, 40)], &[(8, 16), (24, 32)]), vec![(0, 8), (16, 24), (32, 40)]);
        assert_eq!(overlap(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
    }

    #[test]
    fn a_stripe_written_in_order_goes_out_whole_and_a_lone_small_write_is_read_modify_write() {
        // Five members: a lone block's read-modify-write reads 2 blocks, reconstruct-write 3.
        let mut rng = Stream::new(1, 1);
        let mut c = HwRaid5::new(5, HDD_2010, true, ControllerCache::Gathering, &mut rng);
        let w = c.stripe_sectors();
        // 4 KiB writes covering stripe 0 in order: nothing to write until the stripe is whole.
        let mut now = SimTime::ZERO;
        for i in 0..w / 8 {
            assert!(c.fits(8));
            now = c.accept_write(now, &write(i * 8, 4096));
            if i + 1 < w / 8 {
                assert_eq!(c.start_destage(now, false), None, "a partial stripe waits while nothing presses");
            }
        }
        let full_start = now;
        let full_end = c.start_destage(now, false).expect("the whole stripe goes out");
        c.destage_done();
        assert_eq!((c.ops.full_stripe, c.ops.read_modify_write, c.ops.reconstruct_write), (1, 0, 0));
        // A lone 4 KiB write into another stripe, forced out: it reads old data and old parity.
        now = c.accept_write(full_end, &write(10 * w + 8, 4096));
        assert_eq!(c.start_destage(now, false), None);
        let rmw_end = c.start_destage(now, true).expect("pressed");
        c.destage_done();
        assert_eq!(c.ops.read_modify_write, 1);
        // Reading before writing costs positioning: the small write takes longer than the full
        // stripe's 256 KiB.
        assert!(rmw_end - now > full_end - full_start, "rmw {} ns vs full {} ns", rmw_end - now, full_end - full_start);
        // A stripe missing one 4 KiB block is cheaper to reconstruct than to read-modify-write.
        for i in 1..w / 8 {
            now = c.accept_write(now, &write(20 * w + i * 8, 4096));
        }
        c.start_destage(now, true).expect("pressed");
        c.destage_done();
        assert_eq!(c.ops.reconstruct_write, 1);
        assert_eq!(c.held_sectors, 0);
    }

    #[test]
    fn the_cache_holds_what_its_size_allows() {
        let mut rng = Stream::new(1, 1);
        let mut c = HwRaid5::new(4, HDD_2010, true, ControllerCache::Gathering, &mut rng);
        let mut n = 0u64;
        // Scattered 4 KiB writes, one per stripe: none completes a stripe.
        while c.fits(8) {
            c.accept_write(SimTime::ZERO, &write(n * c.stripe_sectors() * 3, 4096));
            n += 1;
        }
        assert_eq!(n * 4096, HWRAID5_CACHE_BYTES);
        assert_eq!(c.start_destage(SimTime::ZERO, false), None);
        assert!(c.start_destage(SimTime::ZERO, true).is_some());
        assert!(!c.fits(16) && c.destaging());
        c.destage_done();
        assert!(c.fits(8));
    }

    #[test]
    fn a_late_write_to_a_stripe_still_in_the_cache_joins_it() {
        // 4 KiB writes in order through stripes 0 and 1, two blocks held back: block 3 arrives
        // once the stream is in stripe 1 (its stripe has closed: an entry of its own), then
        // block 1 of stripe 1 arrives late but while the stream is still in stripe 1. Looked up
        // by address, it joins stripe 1's entry, though a newer entry (block 3's) exists, and
        // stripe 1 goes out whole.
        let mut rng = Stream::new(1, 1);
        let mut c = HwRaid5::new(4, HDD_2010, true, ControllerCache::InOrder, &mut rng);
        let b = c.stripe_sectors() / 8;
        let mut now = SimTime::ZERO;
        for i in (0..2 * b).filter(|&i| i != 3 && i != b + 1) {
            now = c.accept_write(now, &write(i * 8, 4096));
            if i == b + 2 {
                now = c.accept_write(now, &write(3 * 8, 4096));
            }
            if i == b + 5 {
                now = c.accept_write(now, &write((b + 1) * 8, 4096));
            }
        }
        assert_eq!(c.ops.backward_writes, 2);
        while let Some(end) = c.start_destage(now, true) {
            c.destage_done();
            now = end;
        }
        assert_eq!(c.ops.full_stripe, 1, "{:?}", c.ops);
    }

    #[test]
    fn a_write_to_a_stripe_the_stream_has_passed_costs_a_partial_stripe_write() {
        // The same held-back block arrives once the stream is in the next stripe: stripe 0 has
        // closed (in-order), so the block starts an entry of its own, written with reads; the
        // stripe it belonged to went out partial too. A gathering cache would have taken it.
        for (policy, partial) in [(ControllerCache::InOrder, 2), (ControllerCache::Gathering, 0)] {
            let mut rng = Stream::new(1, 1);
            let mut c = HwRaid5::new(4, HDD_2010, true, policy, &mut rng);
            let w = c.stripe_sectors();
            let mut now = SimTime::ZERO;
            for i in (0..2 * w / 8).filter(|&i| i != 3) {
                now = c.accept_write(now, &write(i * 8, 4096));
                if i == w / 8 + 2 {
                    now = c.accept_write(now, &write(3 * 8, 4096));
                }
            }
            while let Some(end) = c.start_destage(now, true) {
                c.destage_done();
                now = end;
            }
            let o = c.ops;
            assert_eq!(o.read_modify_write + o.reconstruct_write, partial, "{policy:?}: {o:?}");
            assert_eq!(o.full_stripe, 2 - partial / 2, "{policy:?}: {o:?}");
        }
    }
}
