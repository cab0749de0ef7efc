//! md RAID5 (2.6.20-2.6.22 `drivers/md/raid5.c`): the geometry (left-symmetric parity), the
//! aligned-read test, and the stripe cache with its `wait_for_stripe` hysteresis. Its code
//! paths: `make_request`, `raid5d` (`handle_stripe`), and the member completions. Before
//! 2.6.20 (`md.aligned_reads` off) the same paths take every read through the stripe cache.

use crate::block::Bio;
use crate::calib::*;
use crate::engine::ids::{BioId, DevId, ThreadId, *};
use crate::engine::{Next, Sim};
use crate::fio::job::{Io, IoOwner};
use crate::kernel::sched::{Step, ThreadKind, Wait};
use std::collections::VecDeque;

/// `STRIPE_SECTORS`: a stripe head covers one page per member.
pub const STRIPE_BYTES: u64 = 4096;

/// Where a logical sector of the array lives (`raid5_compute_sector`, ALGORITHM_LEFT_SYMMETRIC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapped {
    /// Index of the member holding the data.
    pub disk: u16,
    /// Sector on that member.
    pub sector: u64,
    /// The parity member of that stripe row.
    pub parity: u16,
}

pub fn compute_sector(logical: u64, chunk_sectors: u64, raid_disks: u16) -> Mapped {
    let n = raid_disks as u64;
    let data_disks = n - 1;
    let chunk_number = logical / chunk_sectors;
    let chunk_offset = logical % chunk_sectors;
    let stripe = chunk_number / data_disks;
    let dd = chunk_number % data_disks;
    let pd = data_disks - stripe % n;
    let disk = (pd + 1 + dd) % n;
    Mapped { disk: disk as u16, sector: stripe * chunk_sectors + chunk_offset, parity: pd as u16 }
}

/// `in_chunk_boundary`: the bio lies inside one chunk.
pub fn in_chunk_boundary(sector: u64, bytes: u64, chunk_sectors: u64) -> bool {
    sector % chunk_sectors + bytes / 512 <= chunk_sectors
}

/// One piece of an md bio waiting on a stripe head: which bio and which member page, and for a
/// write whether its page is in the write batch now being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub bio: BioId,
    pub disk: u16,
    pub write: bool,
    pub issued: bool,
}

/// A set of an array's members (at most `DISKS_MAX`, 256): raid5d's per-stripe scratch,
/// on the stack rather than a vector allocated per `handle_stripe`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Members([u64; 4]);

impl Members {
    pub fn set(&mut self, d: usize) {
        self.0[d / 64] |= 1 << (d % 64);
    }

    pub fn get(&self, d: usize) -> bool {
        self.0[d / 64] & (1 << (d % 64)) != 0
    }

    pub fn clear(&mut self, d: usize) {
        self.0[d / 64] &= !(1 << (d % 64));
    }

    pub fn any(&self) -> bool {
        self.0.iter().any(|&w| w != 0)
    }

    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// What one `handle_stripe` does: member pages to read and to write, the bio pieces it
/// returns, and how many pages it XORs for parity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handle {
    pub reads: Vec<u16>,
    pub writes: Vec<u16>,
    pub done: Vec<BioId>,
    pub xor_pages: u32,
    /// Nothing left on the head: it can go back to the inactive list.
    pub idle: bool,
}

#[derive(Clone, Debug, Default)]
pub struct StripeHead {
    /// The member sector of this stripe row (all members at the same offset).
    pub sector: u64,
    /// Bio pieces attached by `add_stripe_bio` and not yet returned.
    pub pieces: Vec<Piece>,
    /// Members whose page is up to date, being read, and being written now: bit sets in the
    /// head itself, which `handle_stripe` tests for every piece.
    pub uptodate: Members,
    pub reading: Members,
    pub writing: Members,
    /// The row's parity member.
    pub parity: u16,
    /// On `handle_list`, waiting for raid5d.
    pub queued: bool,
    /// The next head on this one's `stripe_hashtbl` chain (`NO_HEAD`: the last).
    hash_next: u32,
}

/// `NR_HASH` (2.6.20 raid5.c: `PAGE_SIZE / sizeof(struct hlist_head)`, 4096 / 8): the stripe
/// hash table's buckets, each a chain of active heads.
const NR_HASH: usize = 512;
/// An empty chain, or the end of one.
const NO_HEAD: u32 = u32::MAX;

/// `stripe_hash`: the bucket of a member sector (`(sect >> STRIPE_SHIFT) & HASH_MASK`, a
/// page being 8 sectors).
fn stripe_hash(sector: u64) -> usize {
    (sector >> 3) as usize & (NR_HASH - 1)
}

/// The per-array state: the stripe cache and raid5d.
#[derive(Clone, Debug)]
pub struct Raid5 {
    pub dev: DevId,
    pub members: Vec<DevId>,
    pub chunk_sectors: u64,
    /// `max_nr_stripes` (`stripe_cache_size`).
    pub max_stripes: u32,
    heads: Vec<StripeHead>,
    /// Active heads by member sector (`stripe_hashtbl`): each bucket's first head, chained
    /// through `StripeHead::hash_next`. Looked up by sector only, never walked in order.
    hash: Vec<u32>,
    /// Free heads (`inactive_list`), reused last-freed first.
    inactive: Vec<u32>,
    pub active: u32,
    /// Set when a request found the cache empty; new heads are then only handed out once
    /// active stripes fall below 3/4 of the cache.
    pub inactive_blocked: bool,
    pub handle_list: VecDeque<u32>,
    /// `wait_for_stripe`: the threads in `get_active_stripe`'s wait loop, newest first
    /// (`add_wait_queue` adds at the head, and `wake_up` walks from it). A thread stays on it
    /// while it loops (woken, checking, sleeping again) and leaves when the condition holds.
    pub waiters: VecDeque<ThreadId>,
    /// How many of `waiters` are asleep (the rest are woken and yet to check): a head freed
    /// with none asleep wakes nobody, and the walk stops at the last sleeper, so the herd's
    /// bookkeeping does not walk ~100 mostly running waiters for every freed head.
    pub asleep: u32,
    pub raid5d: ThreadId,
    /// `THREAD_WAKEUP` of raid5d's md thread: set by `md_wakeup_thread` while raid5d runs, it
    /// makes raid5d run one more pass when the current one ends.
    pub wakeup: bool,
}

impl Raid5 {
    pub fn new(dev: DevId, members: Vec<DevId>, chunk_kb: u32, max_stripes: u32, raid5d: ThreadId) -> Raid5 {
        let heads = (0..max_stripes).map(|_| StripeHead { hash_next: NO_HEAD, ..Default::default() }).collect();
        Raid5 {
            dev,
            members,
            chunk_sectors: chunk_kb as u64 * 2,
            max_stripes,
            heads,
            hash: vec![NO_HEAD; NR_HASH],
            inactive: (0..max_stripes).rev().collect(),
            active: 0,
            inactive_blocked: false,
            handle_list: VecDeque::new(),
            waiters: VecDeque::new(),
            asleep: 0,
            raid5d,
            wakeup: false,
        }
    }

    pub fn map(&self, logical: u64) -> Mapped {
        compute_sector(logical, self.chunk_sectors, self.members.len() as u16)
    }

    pub fn head(&self, h: u32) -> &StripeHead {
        &self.heads[h as usize]
    }

    pub fn head_mut(&mut self, h: u32) -> &mut StripeHead {
        &mut self.heads[h as usize]
    }

    /// `get_active_stripe` (2.6.20): the head for `sector` if one is active (`__find_stripe`),
    /// else a free one, but only while `inactive_blocked` is clear: once a request found the
    /// cache empty, free heads are not even tried until a sleeper passes the wait
    /// (`can_proceed`) and clears it. None: the caller sets `inactive_blocked` and sleeps on
    /// `wait_for_stripe`.
    pub fn get_active_stripe(&mut self, sector: u64) -> Option<u32> {
        if let Some(h) = self.find_stripe(sector) {
            return Some(h);
        }
        let h = if self.inactive_blocked { None } else { self.inactive.pop() };
        let Some(h) = h else {
            self.inactive_blocked = true;
            return None;
        };
        self.active += 1;
        assert!(self.active <= self.max_stripes, "more active stripes than stripe_cache_size");
        let head = &mut self.heads[h as usize];
        head.sector = sector;
        head.uptodate = Members::default();
        head.reading = Members::default();
        head.writing = Members::default();
        // insert_hash: at the head of its bucket's chain.
        let bucket = stripe_hash(sector);
        head.hash_next = self.hash[bucket];
        self.hash[bucket] = h;
        Some(h)
    }

    /// `__find_stripe`: the active head for a member sector.
    fn find_stripe(&self, sector: u64) -> Option<u32> {
        let mut h = self.hash[stripe_hash(sector)];
        while h != NO_HEAD {
            let head = &self.heads[h as usize];
            if head.sector == sector {
                return Some(h);
            }
            h = head.hash_next;
        }
        None
    }

    /// `remove_hash`: unlinks an active head from its bucket's chain.
    fn remove_hash(&mut self, h: u32) {
        let bucket = stripe_hash(self.heads[h as usize].sector);
        let next = self.heads[h as usize].hash_next;
        if self.hash[bucket] == h {
            self.hash[bucket] = next;
        } else {
            let mut p = self.hash[bucket];
            while self.heads[p as usize].hash_next != h {
                p = self.heads[p as usize].hash_next;
                assert_ne!(p, NO_HEAD, "an active stripe head is on its bucket's chain");
            }
            self.heads[p as usize].hash_next = next;
        }
        self.heads[h as usize].hash_next = NO_HEAD;
    }

    /// `handle_stripe` (2.6 `handle_stripe5`, simplified to what the model needs):
    /// - return read pieces whose page is up to date, and write pieces whose write completed;
    /// - for pending writes, when no write is in flight: a full stripe (every data page of the
    ///   row written) needs no reads; otherwise read-modify-write (read the old pages being
    ///   written and the old parity) or reconstruct-write (read the data pages not being
    ///   written), whichever needs fewer reads; once those are in, write the pages and parity;
    /// - start reads for read pieces whose page is not up to date.
    pub fn handle_stripe(&mut self, h: u32) -> Handle {
        let mut out = Handle::default();
        self.handle_stripe_into(h, &mut out);
        out
    }

    /// `handle_stripe` into `out`, whose vectors are cleared and reused (raid5d runs it tens
    /// of thousands of times a second).
    pub fn handle_stripe_into(&mut self, h: u32, out: &mut Handle) {
        let n = self.members.len();
        let head = &mut self.heads[h as usize];
        out.reads.clear();
        out.writes.clear();
        out.done.clear();
        out.xor_pages = 0;
        out.idle = false;
        let (uptodate, writing) = (head.uptodate, head.writing);
        head.pieces.retain(|p| {
            let d = p.disk as usize;
            let finished = if p.write { p.issued && !writing.get(d) } else { uptodate.get(d) && !writing.get(d) };
            if finished {
                out.done.push(p.bio);
            }
            !finished
        });
        let mut pending = Members::default();
        for p in head.pieces.iter().filter(|p| p.write && !p.issued) {
            pending.set(p.disk as usize);
        }
        if pending.any() && !head.writing.any() {
            let parity = head.parity as usize;
            let pending = |d: usize| pending.get(d);
            let full = (0..n).filter(|&d| d != parity).all(pending);
            // The members to have up to date before writing, as a set (walked in member order).
            let mut need = Members::default();
            if !full {
                let (mut rmw, mut rcw) = (Members::default(), Members::default());
                for d in 0..n {
                    if pending(d) || d == parity {
                        rmw.set(d);
                    } else {
                        rcw.set(d);
                    }
                }
                let missing = |set: &Members| (0..n).filter(|&d| set.get(d) && !head.uptodate.get(d)).count();
                need = if missing(&rmw) < missing(&rcw) { rmw } else { rcw };
            }
            let mut missing = false;
            for d in (0..n).filter(|&d| need.get(d) && !head.uptodate.get(d)) {
                missing = true;
                if !head.reading.get(d) {
                    head.reading.set(d);
                    out.reads.push(d as u16);
                }
            }
            if !missing {
                out.xor_pages = (need.count() + (0..n).filter(|&d| pending(d)).count()) as u32;
                for d in (0..n).filter(|&d| pending(d) || d == parity) {
                    head.writing.set(d);
                    out.writes.push(d as u16);
                }
                for p in head.pieces.iter_mut().filter(|p| p.write) {
                    p.issued = true;
                }
            }
        }
        for p in head.pieces.iter().filter(|p| !p.write) {
            let d = p.disk as usize;
            if !head.uptodate.get(d) && !head.reading.get(d) {
                head.reading.set(d);
                out.reads.push(p.disk);
            }
        }
        out.idle = head.pieces.is_empty() && !head.reading.any() && !head.writing.any();
    }

    /// The condition a sleeper in `get_active_stripe` waits for: a free head, and active
    /// stripes below 3/4 of the cache or the cache no longer blocked.
    pub fn can_proceed(&self) -> bool {
        !self.inactive.is_empty() && (self.active < self.max_stripes * 3 / 4 || !self.inactive_blocked)
    }

    /// A sleeper passed the wait: `get_active_stripe` clears `inactive_blocked` after it.
    pub fn unblock(&mut self) {
        self.inactive_blocked = false;
    }

    /// `release_stripe` of an idle head: back to the inactive list, after which 2.6.20's
    /// `__release_stripe` wakes `wait_for_stripe` unconditionally (the caller does). Returns
    /// whether the sleepers' condition now holds (`can_proceed`).
    pub fn free(&mut self, h: u32) -> bool {
        let head = &mut self.heads[h as usize];
        debug_assert!(head.pieces.is_empty() && !head.queued);
        self.remove_hash(h);
        self.inactive.push(h);
        self.active -= 1;
        !self.inactive_blocked || self.active < self.max_stripes * 3 / 4
    }

    /// Puts a head on `handle_list` for raid5d. Returns true if it was not there yet.
    pub fn queue(&mut self, h: u32) -> bool {
        let head = &mut self.heads[h as usize];
        if head.queued {
            return false;
        }
        head.queued = true;
        self.handle_list.push_back(h);
        true
    }

    pub fn free_heads(&self) -> usize {
        self.inactive.len()
    }
}

/// md: the RAID5 arrays (their devices are `DevKind::Md`), and raid5d's `handle_stripe`
/// result, its vectors reused from step to step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Md {
    pub raid5: Vec<Raid5>,
    pub stripe_handle: Handle,
    /// `wake_up_stripe_waiters`' list of the sleepers it wakes, reused.
    pub stripe_wakers: Vec<ThreadId>,
}

impl Sim {
    pub(crate) fn raid5_of(&self, dev: DevId) -> usize {
        self.md.raid5.iter().position(|r| r.dev == dev).expect("an md device has its array")
    }

    /// raid5's `make_request`. From 2.6.20 a read first tries `chunk_aligned_read`: inside one
    /// chunk and within the member's `max_sectors_kb` (`bio_fits_rdev`), it goes straight to
    /// the member that holds it; with `md.split_aligned_reads` (v4.3+) an oversized one is
    /// split to fit. Before 2.6.20 (`md.aligned_reads` off) raid5 has no such test.
    /// Anything else is mapped onto stripe heads, one page at a time: `get_active_stripe`,
    /// `add_stripe_bio`, then (2.6.20) `handle_stripe` in the submitter's own context, which for
    /// a read starts the one-page read of that member at once (`generic_make_request`, straight
    /// into the member's queue: the read is the submitter's, for cfq too), and
    /// `release_stripe`. With no free head the submitter sleeps on `wait_for_stripe`; the bio
    /// remembers how far it got. Writes go through the stripe cache by raid5d
    /// (read-modify-write, reconstruct-write or full-stripe writes, see `Raid5::handle_stripe`).
    pub(crate) fn md_make_request(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let r = self.raid5_of(self.bios.get(bio_id.0).dev);
        let bio = *self.bios.get(bio_id.0);
        let member_max = self.devs[self.md.raid5[r].members[0]].queue.max_request_bytes();
        if bio.mapped == 0 && bio.remaining == 0 {
            let at = self.stamp_now(bio.dev);
            self.devs[bio.dev].stats.start(at);
            // The bias that keeps the bio alive while it is being mapped (bi_phys_segments = 1).
            // Its await counts from here, where it became in flight, so that iostat's
            // avgqu-sz = (r/s + w/s) × await holds on md as on every other device.
            let b = self.bios.get_mut(bio_id.0);
            b.remaining = 1;
            b.started = at;
        }
        let pending = if !bio.write && self.chunk_aligned_read_takes(r, bio.sector, bio.bytes as u64) {
            self.aligned_read_pieces(r, &bio, member_max)
        } else {
            if let Some(done) = self.add_to_stripes(r, bio_id, tid) {
                return done;
            }
            Vec::new()
        };
        // Children go first in line, in order, ahead of whatever else the thread has pending.
        let children: Vec<BioId> =
            pending.iter().map(|&(dev, sector, bytes, split, from)| self.child_bio(bio_id, dev, sector, bytes, tid, split, from)).collect();
        for id in children.into_iter().rev() {
            self.threads[tid].pending.push_front(id);
        }
        self.bios.get_mut(bio_id.0).mapped = bio.bytes;
        // Drop the bias: if every piece is already done, the bio ends here.
        self.bio_piece_done(bio_id);
        Ok(())
    }

    /// Whether `chunk_aligned_read` takes a read of `bytes` at logical `sector`: raid5 has it
    /// (`md.aligned_reads`, 2.6.20+), the read lies in one chunk (`in_chunk_boundary`), and it
    /// fits the member (`bio_fits_rdev`) or is split to fit (`md.split_aligned_reads`, v4.3+).
    /// Every other read goes through the stripe cache.
    pub(crate) fn chunk_aligned_read_takes(&self, r: usize, sector: u64, bytes: u64) -> bool {
        let md = &self.cfg.scenario.md;
        let raid = &self.md.raid5[r];
        let member_max = self.devs[raid.members[0]].queue.max_request_bytes();
        md.aligned_reads && in_chunk_boundary(sector, bytes, raid.chunk_sectors) && (bytes <= member_max || md.split_aligned_reads)
    }

    /// Whether a buffered reader's readahead bios on md go through the stripe cache: the bio
    /// is as large as the filesystem builds it, ended at a chunk where `raid5_mergeable_bvec`
    /// is (`BlockDev::bio_boundary`), and `chunk_aligned_read` does not take it. False off md.
    pub(crate) fn md_reads_through_stripes(&self, job: &crate::fio::job::Job) -> bool {
        let crate::block::DevKind::Md { members } = &self.devs[job.dev].kind else { return false };
        let s = &self.cfg.scenario;
        let member_max = self.devs[members[0]].queue.max_request_bytes();
        let bio = self.ra_bio_bytes(job).min(self.devs[job.dev].bio_boundary(s, false).unwrap_or(u64::MAX));
        !s.md.aligned_reads || (bio > member_max && !s.md.split_aligned_reads)
    }

    /// A read within a chunk bypasses the stripe cache: `chunk_aligned_read`, one piece per
    /// chunk; or, larger than the member's queue takes (`md.split_aligned_reads`), pieces of
    /// the member's request size. Each piece: (member, sector, bytes, split, logical sector).
    fn aligned_read_pieces(&self, r: usize, bio: &Bio, member_max: u64) -> Vec<(DevId, u64, u32, bool, u64)> {
        let raid = &self.md.raid5[r];
        let chunk = raid.chunk_sectors;
        let mut pending = Vec::new();
        let mut off = 0u64;
        if bio.bytes as u64 <= member_max {
            while off < bio.bytes as u64 {
                let logical = bio.sector + off / 512;
                let len = (bio.bytes as u64 - off).min((chunk - logical % chunk) * 512);
                let m = raid.map(logical);
                pending.push((raid.members[m.disk as usize], m.sector, len as u32, off > 0, logical));
                off += len;
            }
        } else {
            let m = raid.map(bio.sector);
            let member = raid.members[m.disk as usize];
            while off < bio.bytes as u64 {
                let len = (bio.bytes as u64 - off).min(member_max);
                pending.push((member, m.sector + off / 512, len as u32, off > 0, bio.sector + off / 512));
                off += len;
            }
        }
        pending
    }

    /// `add_stripe_bio` for each page of the bio not mapped yet. Returns the request's
    /// result when it stops early: the reader's page read goes first (`generic_make_request`
    /// recursing), or no stripe head is free (it waits); None once every page is mapped.
    fn add_to_stripes(&mut self, r: usize, bio_id: BioId, tid: ThreadId) -> Option<Result<(), Wait>> {
        let bio = *self.bios.get(bio_id.0);
        let chunk = self.md.raid5[r].chunk_sectors;
        // compute_sector once per chunk: a chunk's pages lie on one member, one after another.
        let mut chunk_map: Option<(u64, Mapped)> = None;
        while (self.bios.get(bio_id.0).mapped as u64) < bio.bytes as u64 {
            let off = self.bios.get(bio_id.0).mapped as u64;
            let logical = bio.sector + off / 512;
            let (start, m0) = match chunk_map {
                Some((start, m0)) if logical >= start && logical < start + chunk => (start, m0),
                _ => {
                    let start = logical - logical % chunk;
                    let m0 = self.md.raid5[r].map(start);
                    chunk_map = Some((start, m0));
                    (start, m0)
                }
            };
            let m = Mapped { sector: m0.sector + (logical - start), ..m0 };
            debug_assert_eq!(m, self.md.raid5[r].map(logical));
            let raid = &mut self.md.raid5[r];
            let Some(h) = raid.get_active_stripe(m.sector) else {
                // wait_event_lock_irq: on the wait queue (at its head), then the check
                // fails and `cmd`, raid5_unplug_device, runs before the first schedule().
                raid.waiters.push_front(tid);
                self.raid5_unplug_device(r);
                return Some(Err(Wait::Stripe));
            };
            self.charge(STRIPE_ADD_NS + STRIPE_HANDLE_NS);
            let raid = &mut self.md.raid5[r];
            let head = raid.head_mut(h);
            head.parity = m.parity;
            head.pieces.push(Piece { bio: bio_id, disk: m.disk, write: bio.write, issued: false });
            let b = self.bios.get_mut(bio_id.0);
            b.mapped += STRIPE_BYTES as u32;
            b.remaining += 1;
            if bio.write {
                self.release_stripe(r, h);
                continue;
            }
            // handle_stripe5 in the reader's context: the page's read starts now.
            let read = self.handle_stripe_read(r, h);
            if let Some(member_bio) = read {
                // generic_make_request recurses into the member's queue: the member bio
                // goes next, and this bio's mapping goes on after it.
                let pending = &mut self.threads[tid].pending;
                pending.push_front(bio_id);
                pending.push_front(member_bio);
                return Some(Ok(()));
            }
        }
        None
    }

    /// `handle_stripe5` of a read head by the submitter, then its `release_stripe`: a read of a
    /// page not up to date and not being read starts (the member bio, returned for the caller to
    /// submit next); a page already up to date is copied and its piece returned; a head left
    /// with nothing to do goes back to the inactive list.
    pub(crate) fn handle_stripe_read(&mut self, r: usize, h: u32) -> Option<BioId> {
        let now = self.now();
        let mut out = std::mem::take(&mut self.md.stripe_handle);
        self.md.raid5[r].handle_stripe_into(h, &mut out);
        debug_assert!(out.writes.is_empty() && out.reads.len() <= 1, "a read piece starts at most its own page's read");
        let sector = self.md.raid5[r].head(h).sector;
        let read = out.reads.first().map(|&disk| {
            let member = self.md.raid5[r].members[disk as usize];
            let io = IoId(self.ios.insert(Io {
                owner: IoOwner::StripeRead { md: r as u16, head: h, disk },
                bytes: STRIPE_BYTES,
                bios_left: 1,
                started: now,
                sync: true,
                write: false,
            }));
            self.acct.totals.bios_submitted += 1;
            BioId(self.bios.insert(Bio::new(io, member, sector, STRIPE_BYTES as u32, false, now)))
        });
        self.acct.totals.stripe_returned_bytes += out.done.len() as u64 * STRIPE_BYTES;
        for &bio in &out.done {
            self.bio_piece_done(bio);
        }
        // A head on handle_list is raid5d's to release (the list holds a reference, as
        // 2.6.20's stripe count does): the reader's release only drops its own, and raid5d
        // frees the head when it handles it.
        if out.idle && !self.md.raid5[r].head(h).queued {
            self.md.raid5[r].free(h);
            self.wake_up_stripe_waiters(r);
        }
        self.md.stripe_handle = out;
        read
    }

    /// What raid5d's next `handle_stripe` costs: the state machine, a bio per member page it
    /// starts reading, and a page copy per piece it returns.
    pub(crate) fn raid5d_cost(&self, tid: ThreadId) -> u64 {
        let ThreadKind::Raid5d(dev) = self.threads[tid].kind else { unreachable!("not raid5d") };
        let raid = &self.md.raid5[self.raid5_of(dev)];
        let r = self.raid5_of(dev);
        // The pass's last stripe, or an empty pass: unplug_slaves.
        let unplug = if raid.handle_list.len() <= 1 { self.unplug_slaves_ns(r) } else { 0 };
        let Some(&h) = raid.handle_list.front() else { return STRIPE_HANDLE_NS + unplug };
        let head = raid.head(h);
        let mut ios = 0;
        let mut copies = 0;
        let mut seen = crate::drivers::md::raid5::Members::default();
        for p in &head.pieces {
            let d = p.disk as usize;
            if head.uptodate.get(d) || p.issued {
                copies += 1;
            } else if !head.reading.get(d) && !seen.get(d) {
                seen.set(d);
                ios += 1;
            }
        }
        // A write batch also writes parity and XORs each page it touches.
        let writes = head.pieces.iter().any(|p| p.write && !p.issued) as u64;
        STRIPE_HANDLE_NS + (ios + writes) * BIO_SUBMIT_NS + copies * PAGE_COPY_NS + (ios + writes) * XOR_PAGE_NS + unplug
    }

    /// What one page of a read through the stripe cache costs its submitter:
    /// `get_active_stripe` + `add_stripe_bio` + `release_stripe`, `handle_stripe`, and the
    /// one-page bio to the member.
    pub(crate) fn stripe_read_page_ns() -> u64 {
        STRIPE_ADD_NS + STRIPE_HANDLE_NS + BIO_SUBMIT_NS
    }

    /// What a reader woken on `wait_for_stripe` costs: the check, and, when it may go on, the
    /// pages it maps before the cache is empty again or its pending md bios are mapped.
    pub(crate) fn retry_stripe_cost(&self, tid: ThreadId) -> u64 {
        let Some(&bio) = self.threads[tid].pending.front() else { return STRIPE_ADD_NS };
        let r = self.raid5_of(self.bios.get(bio.0).dev);
        let raid = &self.md.raid5[r];
        if !raid.can_proceed() {
            // The check fails: raid5_unplug_device, then schedule().
            return STRIPE_ADD_NS + self.unplug_slaves_ns(r);
        }
        let unmapped: u64 = self.threads[tid]
            .pending
            .iter()
            .map(|b| self.bios.get(b.0))
            .filter(|b| b.dev == raid.dev && !b.write)
            .map(|b| (b.bytes - b.mapped) as u64 / STRIPE_BYTES)
            .sum();
        STRIPE_ADD_NS + unmapped.min(raid.free_heads() as u64) * Self::stripe_read_page_ns()
    }

    /// One `handle_stripe` by raid5d: start reading the member pages its pieces need, return
    /// the pieces whose pages are up to date (copying the data into the bio), and free the head
    /// once nothing is left on it, waking `wait_for_stripe` by the 3/4 rule.
    pub(crate) fn raid5d_step(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Raid5d(dev) = self.threads[tid].kind else { unreachable!("not raid5d") };
        let r = self.raid5_of(dev);
        let now = self.now();
        self.charge(STRIPE_HANDLE_NS);
        let Some(h) = self.md.raid5[r].handle_list.pop_front() else {
            // Woken with nothing to handle (md_wakeup_thread): the pass ends at once.
            return self.raid5d_pass_end(r);
        };
        self.md.raid5[r].head_mut(h).queued = false;
        let sector = self.md.raid5[r].head(h).sector;
        let mut out = std::mem::take(&mut self.md.stripe_handle);
        self.md.raid5[r].handle_stripe_into(h, &mut out);
        for (disk, write) in out.reads.iter().map(|&d| (d, false)).chain(out.writes.iter().map(|&d| (d, true))) {
            let member = self.md.raid5[r].members[disk as usize];
            let owner = if write {
                IoOwner::StripeWrite { md: r as u16, head: h, disk }
            } else {
                IoOwner::StripeRead { md: r as u16, head: h, disk }
            };
            let io = IoId(self.ios.insert(Io { owner, bytes: STRIPE_BYTES, bios_left: 1, started: now, sync: !write, write }));
            let bio = BioId(self.bios.insert(Bio::new(io, member, sector, STRIPE_BYTES as u32, write, now)));
            self.acct.totals.bios_submitted += 1;
            self.threads[tid].pending.push_back(bio);
        }
        self.acct.totals.stripe_returned_bytes += out.done.len() as u64 * STRIPE_BYTES;
        for &bio in &out.done {
            self.bio_piece_done(bio);
        }
        if out.idle {
            self.md.raid5[r].free(h);
            self.wake_up_stripe_waiters(r);
        }
        self.md.stripe_handle = out;
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        if self.md.raid5[r].handle_list.is_empty() {
            self.raid5d_pass_end(r)
        } else {
            Next::Continue(Step::Raid5d)
        }
    }

    /// The end of a raid5d pass: `unplug_slaves`; then md_thread runs another pass at once if
    /// `md_wakeup_thread` was called meanwhile (`THREAD_WAKEUP`), else raid5d sleeps.
    fn raid5d_pass_end(&mut self, r: usize) -> Next {
        self.unplug_slaves(r);
        if std::mem::take(&mut self.md.raid5[r].wakeup) {
            Next::Continue(Step::Raid5d)
        } else {
            Next::Idle
        }
    }

    /// `raid5_unplug_device`, md's `unplug_fn`: wake raid5d and unplug every member
    /// (`unplug_slaves`). Stripe waiters run it each time round their wait loop, and a reader
    /// waiting on a page of md runs it through `sync_page`.
    pub(crate) fn raid5_unplug_device(&mut self, r: usize) {
        self.md_wakeup_thread(r);
        self.unplug_slaves(r);
    }

    /// `wake_up(&conf->wait_for_stripe)` (2.6.20 `__release_stripe`, for every stripe that goes
    /// back to the inactive list): the wait is not exclusive, so every thread on it that is
    /// asleep wakes, newest first, to check the condition again.
    pub(crate) fn wake_up_stripe_waiters(&mut self, r: usize) {
        // The sleepers first, then their wakeups: `wake` changes no other thread's wait nor
        // the queue, so this is the walk the kernel does, without re-indexing the queue of
        // ~100 (mostly running) waiters for each one (the herd was 13% of raid5-chunk's run).
        // Into a list kept from call to call: this runs for every head that goes free.
        // With none asleep the walk takes nothing and stops at once.
        let raid = &mut self.md.raid5[r];
        let n = std::mem::take(&mut raid.asleep) as usize;
        let threads = &self.threads;
        let mut asleep = std::mem::take(&mut self.md.stripe_wakers);
        asleep.clear();
        asleep.extend(raid.waiters.iter().copied().filter(|w| threads[*w].wait == Some(Wait::Stripe)).take(n));
        debug_assert_eq!(
            asleep.len(),
            raid.waiters.iter().filter(|w| threads[**w].wait == Some(Wait::Stripe)).count(),
            "stripe sleepers miscounted"
        );
        for &w in &asleep {
            self.wake(w, Step::RetryStripe);
        }
        self.md.stripe_wakers = asleep;
    }

    /// A thread in `get_active_stripe`'s wait loop goes to sleep (its step ended in
    /// `Wait::Stripe`): one more sleeper on its array's `wait_for_stripe`.
    pub(crate) fn stripe_waiter_sleeps(&mut self, tid: ThreadId) {
        let bio = *self.threads[tid].pending.front().expect("a stripe sleeper has its bio");
        let r = self.raid5_of(self.bios.get(bio.0).dev);
        debug_assert!(self.md.raid5[r].waiters.contains(&tid), "a stripe sleeper is on the wait queue");
        self.md.raid5[r].asleep += 1;
    }

    /// `unplug_slaves`: every member's `unplug_fn` (with 2.6.20 plugging, a plugged member
    /// queue is unplugged and run).
    pub(crate) fn unplug_slaves(&mut self, r: usize) {
        if self.blk.nr_plugged == 0 {
            debug_assert!(self.md.raid5[r].members.iter().all(|&m| !self.devs[m].queue.plugged), "a plugged queue not counted");
            return;
        }
        for i in 0..self.md.raid5[r].members.len() {
            let m = self.md.raid5[r].members[i];
            self.unplug_device(m);
        }
    }

    /// What `unplug_slaves` costs.
    pub(crate) fn unplug_slaves_ns(&self, r: usize) -> u64 {
        self.md.raid5[r].members.len() as u64 * UNPLUG_NS
    }

    /// `release_stripe` of a head with work: it goes on `handle_list` and raid5d is woken
    /// (`md_wakeup_thread`).
    pub(crate) fn release_stripe(&mut self, r: usize, h: u32) {
        if self.md.raid5[r].queue(h) {
            self.md_wakeup_thread(r);
        }
    }

    /// `raid5_end_read_request` / `raid5_end_write_request` (softirq): the member page is read
    /// (up to date) or written (on the disk, and still up to date); the head goes back to raid5d.
    pub(crate) fn stripe_io_done(&mut self, r: usize, h: u32, disk: u16, write: bool) {
        let head = self.md.raid5[r].head_mut(h);
        if write {
            head.writing.clear(disk as usize);
        } else {
            head.reading.clear(disk as usize);
        }
        head.uptodate.set(disk as usize);
        self.release_stripe(r, h);
    }

    /// Woken on `wait_for_stripe`: the wait condition is checked again. If it holds, the
    /// thread leaves the wait queue, clears `inactive_blocked` and goes on mapping its bio;
    /// else it runs `raid5_unplug_device` and sleeps again, still on the queue.
    pub(crate) fn retry_stripe(&mut self, tid: ThreadId) -> Next {
        let bio = *self.threads[tid].pending.front().expect("a stripe sleeper has its bio");
        let r = self.raid5_of(self.bios.get(bio.0).dev);
        if !self.md.raid5[r].can_proceed() {
            self.raid5_unplug_device(r);
            return Next::Sleep(Wait::Stripe);
        }
        self.md.raid5[r].waiters.retain(|&w| w != tid);
        self.md.raid5[r].unblock();
        self.submit_pending(tid)
    }
}

#[cfg(test)]
#[path = "raid5_tests.rs"]
mod tests;
