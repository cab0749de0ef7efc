//! md RAID5 (2.6.20-2.6.22 `drivers/md/raid5.c`): the geometry (left-symmetric parity), the
//! aligned-read test, and the stripe cache with its `wait_for_stripe` hysteresis. The engine
//! (`sim.rs`) runs the code paths: `make_request`, `raid5d`, and the member completions.

use crate::ids::{BioId, DevId, ThreadId};
use std::collections::{BTreeMap, VecDeque};

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
}

/// What one `handle_stripe` does: member pages to read and to write, the bio pieces it
/// returns, and how many pages it XORs for parity.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Handle {
    pub reads: Vec<u16>,
    pub writes: Vec<u16>,
    pub done: Vec<BioId>,
    pub xor_pages: u32,
    /// Nothing left on the head: it can go back to the inactive list.
    pub idle: bool,
}

#[derive(Debug, Default)]
pub struct StripeHead {
    /// The member sector of this stripe row (all members at the same offset).
    pub sector: u64,
    /// Bio pieces attached by `add_stripe_bio` and not yet returned.
    pub pieces: Vec<Piece>,
    /// Members whose page is up to date, being read, and being written now.
    pub uptodate: Vec<bool>,
    pub reading: Vec<bool>,
    pub writing: Vec<bool>,
    /// The row's parity member.
    pub parity: u16,
    /// On `handle_list`, waiting for raid5d.
    pub queued: bool,
}

/// The per-array state: the stripe cache and raid5d.
#[derive(Debug)]
pub struct Raid5 {
    pub dev: DevId,
    pub members: Vec<DevId>,
    pub chunk_sectors: u64,
    /// `max_nr_stripes` (`stripe_cache_size`).
    pub max_stripes: u32,
    heads: Vec<StripeHead>,
    /// Active heads by member sector (`stripe_hashtbl`).
    hash: BTreeMap<u64, u32>,
    /// Free heads (`inactive_list`), reused last-freed first.
    inactive: Vec<u32>,
    pub active: u32,
    /// Set when a request found the cache empty; new heads are then only handed out once
    /// active stripes fall below 3/4 of the cache.
    pub inactive_blocked: bool,
    pub handle_list: VecDeque<u32>,
    /// Threads sleeping in `get_active_stripe` (`wait_for_stripe`), in arrival order.
    pub waiters: VecDeque<ThreadId>,
    pub raid5d: ThreadId,
}

impl Raid5 {
    pub fn new(dev: DevId, members: Vec<DevId>, chunk_kb: u32, max_stripes: u32, raid5d: ThreadId) -> Raid5 {
        let n = members.len();
        let heads = (0..max_stripes)
            .map(|_| StripeHead { uptodate: vec![false; n], reading: vec![false; n], writing: vec![false; n], ..Default::default() })
            .collect();
        Raid5 {
            dev,
            members,
            chunk_sectors: chunk_kb as u64 * 2,
            max_stripes,
            heads,
            hash: BTreeMap::new(),
            inactive: (0..max_stripes).rev().collect(),
            active: 0,
            inactive_blocked: false,
            handle_list: VecDeque::new(),
            waiters: VecDeque::new(),
            raid5d,
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

    /// `get_active_stripe`: the head for `sector` if one is active, else a free one unless the
    /// cache is blocked. None: the caller must sleep on `wait_for_stripe`.
    pub fn get_active_stripe(&mut self, sector: u64) -> Option<u32> {
        if let Some(&h) = self.hash.get(&sector) {
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
        head.uptodate.iter_mut().for_each(|b| *b = false);
        head.reading.iter_mut().for_each(|b| *b = false);
        head.writing.iter_mut().for_each(|b| *b = false);
        self.hash.insert(sector, h);
        Some(h)
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
        let head = &mut self.heads[h as usize];
        let n = head.uptodate.len();
        out.reads.clear();
        out.writes.clear();
        out.done.clear();
        out.xor_pages = 0;
        out.idle = false;
        let (uptodate, writing) = (&head.uptodate, &head.writing);
        head.pieces.retain(|p| {
            let d = p.disk as usize;
            let finished = if p.write { p.issued && !writing[d] } else { uptodate[d] && !writing[d] };
            if finished {
                out.done.push(p.bio);
            }
            !finished
        });
        let mut pending = Members::default();
        for p in head.pieces.iter().filter(|p| p.write && !p.issued) {
            pending.set(p.disk as usize);
        }
        let pending = |d: usize| pending.get(d);
        if (0..n).any(pending) && !head.writing.iter().any(|&b| b) {
            let parity = head.parity as usize;
            let full = (0..n).filter(|&d| d != parity).all(pending);
            let need: Vec<usize> = if full {
                Vec::new()
            } else {
                let rmw: Vec<usize> = (0..n).filter(|&d| pending(d) || d == parity).collect();
                let rcw: Vec<usize> = (0..n).filter(|&d| d != parity && !pending(d)).collect();
                let missing = |set: &Vec<usize>| set.iter().filter(|&&d| !head.uptodate[d]).count();
                if missing(&rmw) < missing(&rcw) {
                    rmw
                } else {
                    rcw
                }
            };
            let missing: Vec<usize> = need.iter().copied().filter(|&d| !head.uptodate[d]).collect();
            for &d in &missing {
                if !head.reading[d] {
                    head.reading[d] = true;
                    out.reads.push(d as u16);
                }
            }
            if missing.is_empty() {
                out.xor_pages = (need.len() + (0..n).filter(|&d| pending(d)).count()) as u32;
                for d in (0..n).filter(|&d| pending(d) || d == parity) {
                    head.writing[d] = true;
                    out.writes.push(d as u16);
                }
                for p in head.pieces.iter_mut().filter(|p| p.write) {
                    p.issued = true;
                }
            }
        }
        for p in head.pieces.iter().filter(|p| !p.write) {
            let d = p.disk as usize;
            if !head.uptodate[d] && !head.reading[d] {
                head.reading[d] = true;
                out.reads.push(p.disk);
            }
        }
        out.idle = head.pieces.is_empty() && !head.reading.iter().any(|&b| b) && !head.writing.iter().any(|&b| b);
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

    /// `release_stripe` of an idle head: back to the inactive list. Returns whether
    /// `wait_for_stripe` is woken (`!inactive_blocked || active < 3/4`).
    pub fn free(&mut self, h: u32) -> bool {
        let head = &mut self.heads[h as usize];
        debug_assert!(head.pieces.is_empty() && !head.queued);
        self.hash.remove(&head.sector);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_symmetric_parity_rotates_and_data_follows_it() {
        // 4 disks, chunk 8 sectors: row 0 parity on disk 3, data on 0,1,2; row 1 parity on 2.
        let m = |l| compute_sector(l, 8, 4);
        assert_eq!(m(0), Mapped { disk: 0, sector: 0, parity: 3 });
        assert_eq!(m(8), Mapped { disk: 1, sector: 0, parity: 3 });
        assert_eq!(m(16), Mapped { disk: 2, sector: 0, parity: 3 });
        assert_eq!(m(24), Mapped { disk: 3, sector: 8, parity: 2 });
        assert_eq!(m(32), Mapped { disk: 0, sector: 8, parity: 2 });
        assert_eq!(m(27).sector, 11);
    }

    #[test]
    fn the_cache_blocks_when_empty_and_reopens_below_three_quarters() {
        let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2)], 64, 4, ThreadId(0));
        for s in 0..4 {
            assert!(r.get_active_stripe(s * 8).is_some());
        }
        assert_eq!(r.get_active_stripe(99), None);
        assert!(r.inactive_blocked);
        // One free head: still 3 active = 3/4 of 4, so sleepers stay asleep.
        assert!(!r.free(0));
        assert!(!r.can_proceed());
        assert!(r.free(1));
        assert!(r.can_proceed());
        r.unblock();
        assert!(r.get_active_stripe(99).is_some());
    }

    fn head_with(r: &mut Raid5, writes: &[u16]) -> u32 {
        let h = r.get_active_stripe(0).unwrap();
        let head = r.head_mut(h);
        head.parity = 3;
        for &d in writes {
            head.pieces.push(Piece { bio: BioId(d as u32), disk: d, write: true, issued: false });
        }
        h
    }

    #[test]
    fn a_full_stripe_write_reads_nothing_and_a_small_one_reads_first() {
        // 4 disks: data 0,1,2, parity 3.
        let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2), DevId(3)], 64, 8, ThreadId(0));
        let h = head_with(&mut r, &[0, 1, 2]);
        let first = r.handle_stripe(h);
        assert_eq!((first.reads.len(), first.writes), (0, vec![0, 1, 2, 3]), "full stripe: write data and parity at once");
        // One page of three: read-modify-write reads the old page and the old parity (2 reads),
        // reconstruct-write the two other pages (2 reads); on a tie the model reconstructs.
        let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2), DevId(3)], 64, 8, ThreadId(0));
        let h = head_with(&mut r, &[0]);
        let first = r.handle_stripe(h);
        assert_eq!(first.reads, vec![1, 2]);
        assert!(first.writes.is_empty());
        for d in [1, 2] {
            r.head_mut(h).reading[d] = false;
            r.head_mut(h).uptodate[d] = true;
        }
        let second = r.handle_stripe(h);
        assert_eq!(second.writes, vec![0, 3]);
        for d in [0, 3] {
            r.head_mut(h).writing[d] = false;
            r.head_mut(h).uptodate[d] = true;
        }
        let third = r.handle_stripe(h);
        assert_eq!(third.done, vec![BioId(0)]);
        assert!(third.idle);
        // With 8 disks, one page written: read-modify-write (2 reads) beats reconstruct (6).
        let disks: Vec<DevId> = (0..8).map(DevId).collect();
        let mut r = Raid5::new(DevId(9), disks, 64, 8, ThreadId(0));
        let h = r.get_active_stripe(0).unwrap();
        r.head_mut(h).parity = 7;
        r.head_mut(h).pieces.push(Piece { bio: BioId(1), disk: 2, write: true, issued: false });
        assert_eq!(r.handle_stripe(h).reads, vec![2, 7]);
    }
}
