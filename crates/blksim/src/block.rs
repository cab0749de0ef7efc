//! The block layer's data: bios, requests, the request pool, the elevator and the tag map.

use crate::ids::{BioId, DevId, DiskId, HostId, IoId, ReqId, ThreadId};
use crate::scenario::Scenario;
use crate::stats::DiskStats;
use crate::time::SimTime;
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub struct Bio {
    pub io: IoId,
    pub dev: DevId,
    pub sector: u64,
    pub bytes: u32,
    pub write: bool,
}

#[derive(Debug)]
pub struct Request {
    pub dev: DevId,
    pub write: bool,
    pub sector: u64,
    pub bytes: u64,
    pub bios: Vec<BioId>,
    /// `rq->start_time`: diskstats count a request in flight from allocation.
    pub alloc_at: SimTime,
    pub tag: Option<u16>,
    pub submitter: ThreadId,
}

/// The noop elevator: FIFO dispatch, with back- and front-merge lookups by sector
/// (the elevator hash and `last_merge` of 2.6 find the same candidates).
#[derive(Debug, Default)]
pub struct Elevator {
    fifo: VecDeque<ReqId>,
    by_end: BTreeMap<(bool, u64), ReqId>,
    by_start: BTreeMap<(bool, u64), ReqId>,
    extents: BTreeMap<ReqId, (bool, u64, u64)>,
}

impl Elevator {
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    pub fn add(&mut self, rq: ReqId, write: bool, start: u64, end: u64) {
        self.fifo.push_back(rq);
        self.index(rq, write, start, end);
    }

    fn index(&mut self, rq: ReqId, write: bool, start: u64, end: u64) {
        self.by_end.entry((write, end)).or_insert(rq);
        self.by_start.entry((write, start)).or_insert(rq);
        self.extents.insert(rq, (write, start, end));
    }

    fn unindex(&mut self, rq: ReqId) {
        let (write, start, end) = self.extents.remove(&rq).expect("request not in the elevator");
        if self.by_end.get(&(write, end)) == Some(&rq) {
            self.by_end.remove(&(write, end));
        }
        if self.by_start.get(&(write, start)) == Some(&rq) {
            self.by_start.remove(&(write, start));
        }
    }

    /// A waiting request that ends at `sector`, which a bio starting there can join at the back.
    pub fn back_candidate(&self, write: bool, sector: u64) -> Option<ReqId> {
        self.by_end.get(&(write, sector)).copied()
    }

    /// A waiting request that starts at `end`, which a bio ending there can join at the front.
    pub fn front_candidate(&self, write: bool, end: u64) -> Option<ReqId> {
        self.by_start.get(&(write, end)).copied()
    }

    /// A merge changed a waiting request's extent.
    pub fn remerged(&mut self, rq: ReqId, write: bool, _old: (u64, u64), new: (u64, u64)) {
        self.unindex(rq);
        self.index(rq, write, new.0, new.1);
    }

    pub fn front(&self) -> Option<ReqId> {
        self.fifo.front().copied()
    }

    pub fn remove_front(&mut self, rq: ReqId) {
        assert_eq!(self.fifo.pop_front(), Some(rq));
        self.unindex(rq);
    }

    /// Waiting requests in dispatch order (for the UI).
    pub fn iter(&self) -> impl Iterator<Item = ReqId> + '_ {
        self.fifo.iter().copied()
    }
}

/// Device tags (TCQ/NCQ `queue_depth`): a bitmap, lowest free tag first.
#[derive(Debug)]
pub struct TagMap {
    depth: u32,
    busy: u32,
    bits: Vec<u64>,
}

impl TagMap {
    pub fn new(depth: u32) -> TagMap {
        TagMap { depth, busy: 0, bits: vec![0; (depth as usize).div_ceil(64)] }
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Changes the depth (a write to `queue_depth`). Tags in use above a lowered depth stay
    /// in use until they complete; no new tag is handed out until busy < depth.
    pub fn set_depth(&mut self, depth: u32) {
        let words = (depth as usize).div_ceil(64).max(self.bits.len());
        self.bits.resize(words, 0);
        self.depth = depth;
    }

    pub fn busy(&self) -> u32 {
        self.busy
    }

    pub fn is_full(&self) -> bool {
        self.busy >= self.depth
    }

    pub fn get(&mut self) -> Option<u16> {
        if self.is_full() {
            return None;
        }
        for (w, word) in self.bits.iter_mut().enumerate() {
            if *word != u64::MAX {
                let b = (!*word).trailing_zeros();
                let tag = w as u32 * 64 + b;
                if tag >= self.depth {
                    // Only tags above a lowered depth are free in this word: look no further.
                    break;
                }
                *word |= 1 << b;
                self.busy += 1;
                return Some(tag as u16);
            }
        }
        unreachable!("busy < depth but no free tag")
    }

    pub fn put(&mut self, tag: u16) {
        let (w, b) = (tag as usize / 64, tag % 64);
        assert!(self.bits[w] & (1 << b) != 0, "tag {tag} freed twice");
        self.bits[w] &= !(1 << b);
        self.busy -= 1;
    }
}

/// A request queue: pool, elevator and tags, with the queue limits.
#[derive(Debug)]
pub struct RequestQueue {
    pub nr_requests: u32,
    pub max_sectors_bytes: u64,
    /// Requests allocated per direction (`rl->count[READ|WRITE]`).
    pub pool_count: [u32; 2],
    /// Set when a live write lowered `nr_requests` below what is allocated: the pool may hold
    /// more than `nr_requests` until it drains (as in the kernel); no allocation happens then.
    pub draining: bool,
    /// `blk_queue_full` per direction: set when an allocation fills the pool, cleared when a
    /// freed request brings it back below `nr_requests`.
    pub full: [bool; 2],
    /// Threads sleeping in `get_request_wait`, per direction, in FIFO order.
    pub waiters: [VecDeque<ThreadId>; 2],
    pub elevator: Elevator,
    pub tags: TagMap,
}

/// A block device in iostat's list.
#[derive(Debug)]
pub struct BlockDev {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub disk: DiskId,
    pub host: HostId,
    pub queue: RequestQueue,
    pub stats: DiskStats,
}

/// `sd` names in the kernel's order: sda..sdz, sdaa..sdzz.
pub fn sd_name(i: u32) -> String {
    fn letters(mut n: u32) -> String {
        let mut s = Vec::new();
        loop {
            s.push(b'a' + (n % 26) as u8);
            if n < 26 {
                break;
            }
            n = n / 26 - 1;
        }
        s.reverse();
        String::from_utf8(s).expect("ascii")
    }
    format!("sd{}", letters(i))
}

/// sd major:minor: 16 minors per disk; majors 8, 65-71, 128-135 (Documentation/devices.txt).
pub fn sd_major_minor(i: u32) -> (u32, u32) {
    let group = i / 16;
    let major = match group {
        0 => 8,
        1..=7 => 64 + group,
        _ => 120 + group,
    };
    (major, (i % 16) * 16)
}

impl BlockDev {
    pub fn leaf(index: u32, disk: DiskId, host: HostId, s: &Scenario) -> BlockDev {
        let (major, minor) = sd_major_minor(index);
        BlockDev {
            name: sd_name(index),
            major,
            minor,
            disk,
            host,
            queue: RequestQueue {
                nr_requests: s.queue.nr_requests,
                max_sectors_bytes: s.disk.max_sectors_kb as u64 * 1024,
                pool_count: [0, 0],
                draining: false,
                full: [false, false],
                waiters: Default::default(),
                elevator: Elevator::default(),
                tags: TagMap::new(s.queue.depth),
            },
            stats: DiskStats::default(),
        }
    }

    pub fn is_leaf(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sd_names_follow_the_kernel() {
        assert_eq!(sd_name(0), "sda");
        assert_eq!(sd_name(25), "sdz");
        assert_eq!(sd_name(26), "sdaa");
        assert_eq!(sd_name(79), "sdcb");
        assert_eq!(sd_major_minor(0), (8, 0));
        assert_eq!(sd_major_minor(17), (65, 16));
        assert_eq!(sd_major_minor(128), (128, 0));
    }

    #[test]
    fn tags_are_bounded_by_the_depth() {
        let mut t = TagMap::new(3);
        assert_eq!((t.get(), t.get(), t.get(), t.get()), (Some(0), Some(1), Some(2), None));
        t.put(1);
        assert_eq!(t.get(), Some(1));
    }

    #[test]
    fn the_elevator_finds_back_and_front_merge_candidates() {
        let mut e = Elevator::default();
        e.add(ReqId(1), false, 100, 108);
        assert_eq!(e.back_candidate(false, 108), Some(ReqId(1)));
        assert_eq!(e.back_candidate(true, 108), None);
        assert_eq!(e.front_candidate(false, 100), Some(ReqId(1)));
        e.remerged(ReqId(1), false, (100, 108), (100, 116));
        assert_eq!(e.back_candidate(false, 108), None);
        assert_eq!(e.back_candidate(false, 116), Some(ReqId(1)));
        e.remove_front(ReqId(1));
        assert!(e.is_empty());
        assert_eq!(e.back_candidate(false, 116), None);
    }
}
