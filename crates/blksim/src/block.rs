//! The block layer's data: bios, requests, the request pool, the elevator and the tag map.

use crate::calib::{
    CFQ_FIFO_EXPIRE_ASYNC_NS, CFQ_FIFO_EXPIRE_SYNC_NS, CFQ_QUANTUM, CFQ_SLICE_ASYNC_NS, CFQ_SLICE_IDLE_NS, CFQ_SLICE_SYNC_NS,
    DEADLINE_FIFO_BATCH, DEADLINE_READ_EXPIRE_NS, DEADLINE_WRITES_STARVED, DEADLINE_WRITE_EXPIRE_NS,
};
use crate::ids::{BioId, DevId, DiskId, HostId, IoId, ReqId, SortedMap, ThreadId};
use crate::scenario::Scenario;
use crate::stats::DiskStats;
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
pub struct Bio {
    pub io: IoId,
    pub dev: DevId,
    pub sector: u64,
    pub bytes: u32,
    pub write: bool,
    /// A bio a stacking driver made from another (md's aligned read, a split): it ends its
    /// parent's piece instead of an I/O.
    pub parent: Option<BioId>,
    /// Pieces still outstanding on a bio a stacking driver took apart (md's
    /// `bi_phys_segments` counter), and how many bytes of it were mapped so far.
    pub remaining: u32,
    pub mapped: u32,
    /// When it was submitted (a bio-based device's diskstats count from here).
    pub started: SimTime,
    /// How many bios of `bytes / pages` each this entry stands for: 1, or a run of a
    /// readahead window's page bios (see `Sim::submit_readahead`), which is submitted, merged
    /// and ended exactly as that many bios one after another would be.
    pub pages: u32,
    /// Whether `generic_make_request` has taken it (and traced its Q) yet.
    pub queued: bool,
    /// For a piece of a direct I/O cut at the queue's `max_sectors`: the bytes from this
    /// piece's start to the I/O's end, what `generic_make_request` takes before
    /// `blk_queue_split` cuts this piece off (traced as its Q, then X). 0: not cut.
    pub split_rest: u32,
}

impl Bio {
    pub fn new(io: IoId, dev: DevId, sector: u64, bytes: u32, write: bool, now: SimTime) -> Bio {
        Bio { io, dev, sector, bytes, write, parent: None, remaining: 0, mapped: 0, started: now, pages: 1, queued: false, split_rest: 0 }
    }

    /// The size of each bio it stands for.
    pub fn page_bytes(&self) -> u32 {
        self.bytes / self.pages
    }
}

#[derive(Debug)]
pub struct Request {
    pub dev: DevId,
    pub write: bool,
    pub sector: u64,
    pub bytes: u64,
    pub bios: Vec<BioId>,
    /// How many bios it holds (a run in `bios` counts as its `pages`).
    pub nr_bios: u32,
    /// `rq->start_time`: diskstats count a request in flight from allocation.
    pub alloc_at: SimTime,
    pub tag: Option<u16>,
    pub submitter: ThreadId,
    /// `REQ_SYNC` (from its first bio's I/O): cfq keeps synchronous requests in the
    /// submitter's own queue and asynchronous ones in the shared async queue.
    pub sync: bool,
    /// A clone made by request-based dm (`blk_rq_prep_clone`): the original request on the dm
    /// device. A clone carries one clone bio per original bio; they are not separate `Bio`s
    /// because they are freed with the clone (`nr_clone_bios` counts them).
    pub clone_of: Option<ReqId>,
    pub nr_clone_bios: u32,
}

/// Which elevator a queue runs. `none` and `mq-deadline` (blk-mq) run as noop and deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElevatorKind {
    Noop,
    Deadline,
    Cfq,
}

/// Whose I/O a request is, for cfq: the submitting process, and whether it is synchronous
/// (reads and direct writes; writeback is asynchronous and shares one queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub id: u32,
    pub sync: bool,
}

/// The async queue's key (2.6 cfq: one async queue per priority; we have one priority).
const CFQ_ASYNC: u32 = u32::MAX;

/// One cfq queue (`cfq_queue`): a process's requests in sector order and in arrival order.
#[derive(Debug, Default)]
struct CfqQueue {
    sync: bool,
    sorted: SortedMap<(u64, ReqId), ()>,
    fifo: Fifo,
    /// Requests of this queue issued to the driver and not completed.
    dispatched: u32,
    /// Where its last dispatched request ended (the next one is chosen from there).
    last_end: u64,
    /// When its last request completed, and its mean think time (7/8 EWMA), for idling.
    last_done: Option<SimTime>,
    ttime_mean_ns: u64,
    ttime_samples: u32,
}

/// cfq's service state (2.6.2x `cfq-iosched.c`, simplified): busy queues served round robin,
/// each for a time slice; a sync queue that runs dry is given `slice_idle` for its process's
/// next request when its think time says one will come.
#[derive(Debug, Default)]
struct Cfq {
    /// By key: a device rarely has more than a few (one per process that submits to it, and
    /// the async queue).
    queues: SortedMap<u32, CfqQueue>,
    /// Busy queues waiting for a slice, in order.
    rr: VecDeque<u32>,
    active: Option<u32>,
    slice_end: SimTime,
    /// The active queue is idling until then.
    idle_until: Option<SimTime>,
}

/// Waiting requests in arrival order, with their FIFO deadlines. Taking one out of the middle
/// (deadline and cfq dispatch in sector order) leaves a stale entry behind instead of shifting
/// the rest: an entry is live while the elevator still holds its request under the same
/// insertion number. Stale entries are dropped when they reach the front, and the list is
/// compacted when they outnumber the live ones, so its length stays within 2 × live + 64.
#[derive(Debug, Default)]
struct Fifo {
    items: VecDeque<(ReqId, SimTime, u64)>,
    live: usize,
}

impl Fifo {
    fn push_back(&mut self, rq: ReqId, deadline: SimTime, seq: u64) {
        self.items.push_back((rq, deadline, seq));
        self.live += 1;
    }

    /// `blk_requeue_request`: the entry just pushed goes to the front with a new deadline.
    fn back_to_front(&mut self, now: SimTime) {
        let (rq, _, seq) = self.items.pop_back().expect("just added");
        self.items.push_front((rq, now, seq));
    }

    /// One of its requests left; `live` says which entries still stand for a waiting request.
    fn removed(&mut self, live: impl Fn(ReqId, u64) -> bool) {
        self.live -= 1;
        while let Some(&(rq, _, seq)) = self.items.front() {
            if live(rq, seq) {
                break;
            }
            self.items.pop_front();
        }
        if self.items.len() > 2 * self.live + 64 {
            self.items.retain(|&(rq, _, seq)| live(rq, seq));
        }
        assert!(self.items.len() <= 2 * self.live + 64 + 1, "elevator fifo over its bound");
    }

    /// The oldest waiting request (the front is never stale).
    fn front(&self) -> Option<(ReqId, SimTime)> {
        self.items.front().map(|&(rq, t, _)| (rq, t))
    }

    fn iter<'a>(&'a self, live: impl Fn(ReqId, u64) -> bool + 'a) -> impl Iterator<Item = (ReqId, SimTime)> + 'a {
        self.items.iter().filter(move |&&(rq, _, seq)| live(rq, seq)).map(|&(rq, t, _)| (rq, t))
    }
}

/// A waiting request as the elevator holds it.
#[derive(Clone, Copy, Debug)]
struct Entry {
    write: bool,
    start: u64,
    end: u64,
    owner: Owner,
    /// Its insertion number, which tells its FIFO entries from stale ones.
    seq: u64,
}

fn is_live(entries: &SortedMap<ReqId, Entry>, rq: ReqId, seq: u64) -> bool {
    entries.get(&rq).is_some_and(|e| e.seq == seq)
}

/// The elevator: noop (FIFO) or deadline (2.6 `deadline-iosched.c`: per-direction sector order
/// and FIFO expiry, batches of `fifo_batch`, reads preferred unless writes starved twice).
/// Back- and front-merge candidates are found by sector, as the elevator hash and rb-tree do.
#[derive(Debug)]
pub struct Elevator {
    kind: ElevatorKind,
    /// Every waiting request in insertion order (noop's dispatch order), with its deadline.
    fifo: Fifo,
    by_end: SortedMap<(bool, u64), ReqId>,
    by_start: SortedMap<(bool, u64), ReqId>,
    /// Every waiting request: its extent, owner and insertion number.
    entries: SortedMap<ReqId, Entry>,
    next_seq: u64,
    /// deadline: per direction, the waiting requests in sector order (kept by deadline only).
    sorted: [SortedMap<(u64, ReqId), ()>; 2],
    /// deadline: the direction and end sector of the last dispatch, and the batch so far.
    last: Option<(bool, u64)>,
    batch: u32,
    writes_starved: u32,
    cfq: Cfq,
}

impl Default for Elevator {
    fn default() -> Self {
        Elevator::new(ElevatorKind::Noop)
    }
}

impl Elevator {
    pub fn new(kind: ElevatorKind) -> Elevator {
        Elevator {
            kind,
            fifo: Fifo::default(),
            by_end: SortedMap::default(),
            by_start: SortedMap::default(),
            entries: SortedMap::default(),
            next_seq: 0,
            sorted: Default::default(),
            last: None,
            batch: 0,
            writes_starved: 0,
            cfq: Cfq::default(),
        }
    }

    pub fn kind(&self) -> ElevatorKind {
        self.kind
    }

    /// Switches the elevator (a write to `queue/scheduler`): the waiting requests move over in
    /// their arrival order.
    pub fn set_kind(&mut self, kind: ElevatorKind) {
        type Waiting = (ReqId, SimTime, (bool, u64, u64), Owner);
        let waiting: Vec<Waiting> = self
            .iter_with_deadlines()
            .map(|(rq, t)| {
                let e = self.entries[&rq];
                (rq, t, (e.write, e.start, e.end), e.owner)
            })
            .collect();
        // cfq's accounting of requests already issued carries over (their completions come).
        let issued: Vec<(u32, u32)> = self.cfq.queues.iter().map(|(&k, q)| (k, q.dispatched)).filter(|&(_, d)| d > 0).collect();
        *self = Elevator::new(kind);
        for (k, d) in issued {
            self.cfq.queues.get_or_insert_default(k).dispatched = d;
        }
        for (rq, t, (write, start, end), owner) in waiting {
            self.add_at(rq, write, start, end, t, true, owner, t);
        }
    }

    pub fn len(&self) -> usize {
        self.fifo.live
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.live == 0
    }

    /// When a request added at `now` expires: deadline's per-direction expiry, or cfq's
    /// per-class FIFO expiry.
    fn deadline_of(&self, write: bool, owner: Owner, now: SimTime) -> SimTime {
        now + match (self.kind, owner.sync, write) {
            (ElevatorKind::Cfq, true, _) => CFQ_FIFO_EXPIRE_SYNC_NS,
            (ElevatorKind::Cfq, false, _) => CFQ_FIFO_EXPIRE_ASYNC_NS,
            (_, _, true) => DEADLINE_WRITE_EXPIRE_NS,
            (_, _, false) => DEADLINE_READ_EXPIRE_NS,
        }
    }

    /// Inserts a request at `now` (its FIFO deadline follows from the direction and class).
    pub fn add(&mut self, rq: ReqId, write: bool, start: u64, end: u64, now: SimTime, owner: Owner) {
        let t = self.deadline_of(write, owner, now);
        self.add_at(rq, write, start, end, t, true, owner, now);
    }

    /// Inserts a request that nothing may merge into (`REQ_NOMERGE`: a dm clone inserted with
    /// `blk_insert_cloned_request`).
    pub fn add_nomerge(&mut self, rq: ReqId, write: bool, start: u64, end: u64, now: SimTime, owner: Owner) {
        let t = self.deadline_of(write, owner, now);
        self.add_at(rq, write, start, end, t, false, owner, now);
    }

    /// `blk_requeue_request`: the request goes back to the front, to be dispatched next, and
    /// takes no more merges.
    pub fn requeue(&mut self, rq: ReqId, write: bool, start: u64, end: u64, now: SimTime, owner: Owner) {
        self.add_nomerge(rq, write, start, end, now, owner);
        self.fifo.back_to_front(now);
        if self.kind == ElevatorKind::Cfq {
            self.cfq.queues.get_mut(&cfq_key(owner)).expect("just added").fifo.back_to_front(now);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add_at(&mut self, rq: ReqId, write: bool, start: u64, end: u64, deadline: SimTime, mergeable: bool, owner: Owner, now: SimTime) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.fifo.push_back(rq, deadline, seq);
        if self.kind == ElevatorKind::Deadline {
            self.sorted[write as usize].insert((start, rq), ());
        }
        let old = self.entries.insert(rq, Entry { write, start, end, owner, seq });
        assert!(old.is_none(), "request added to the elevator twice");
        if mergeable {
            self.index(rq, write, start, end);
        }
        if self.kind == ElevatorKind::Cfq {
            let key = cfq_key(owner);
            let active = self.cfq.active == Some(key);
            let q = self.cfq.queues.get_or_insert_default(key);
            q.sync = owner.sync;
            let was_empty = q.sorted.is_empty();
            // Think time: from the completion of its last request to this new one, when it
            // had nothing outstanding (cfq_update_io_thinktime).
            if was_empty && q.dispatched == 0 {
                if let Some(done) = q.last_done {
                    let sample = now.ns().saturating_sub(done.ns());
                    q.ttime_mean_ns = (7 * q.ttime_mean_ns + sample) / 8;
                    q.ttime_samples = (q.ttime_samples + 1).min(8);
                }
            }
            q.sorted.insert((start, rq), ());
            q.fifo.push_back(rq, deadline, seq);
            if was_empty && !active && !self.cfq.rr.contains(&key) {
                self.cfq.rr.push_back(key);
            }
            if active {
                // Its process came back: no more idling.
                self.cfq.idle_until = None;
            }
        }
    }

    /// cfq: a request of `owner` completed at `now`.
    pub fn completed(&mut self, owner: Owner, now: SimTime) {
        if self.kind != ElevatorKind::Cfq {
            return;
        }
        if let Some(q) = self.cfq.queues.get_mut(&cfq_key(owner)) {
            q.dispatched = q.dispatched.saturating_sub(1);
            q.last_done = Some(now);
        }
    }

    /// cfq: when the active queue's idling ends (the queue must be run again then).
    pub fn idle_until(&self) -> Option<SimTime> {
        self.cfq.idle_until
    }

    fn cfq_next(&mut self, now: SimTime) -> Option<ReqId> {
        let busy_others = |c: &Cfq, a: u32| c.rr.iter().any(|&k| k != a);
        loop {
            if let Some(a) = self.cfq.active {
                let expired = now >= self.cfq.slice_end;
                let others = busy_others(&self.cfq, a);
                let q = &self.cfq.queues[&a];
                if !q.sorted.is_empty() && (!expired || !others) {
                    // cfq_quantum: a queue does not fill the device while others wait.
                    if q.dispatched >= CFQ_QUANTUM && others {
                        return None;
                    }
                    // The FIFO head if it expired, else the next request on from the last.
                    if let Some((rq, t)) = q.fifo.front() {
                        if now >= t {
                            return Some(rq);
                        }
                    }
                    let pick = q.sorted.range((q.last_end, ReqId(0))..).next().or_else(|| q.sorted.iter().next());
                    return pick.map(|(&(_, rq), _)| rq);
                }
                let idle_ok = q.ttime_samples == 0 || q.ttime_mean_ns <= CFQ_SLICE_IDLE_NS;
                if q.sorted.is_empty() && !expired && q.sync && idle_ok {
                    if q.dispatched > 0 {
                        // Wait for its requests to complete; the idle window opens then.
                        return None;
                    }
                    let until = *self.cfq.idle_until.get_or_insert(now + CFQ_SLICE_IDLE_NS);
                    if now < until {
                        return None;
                    }
                }
                // The slice is over (expired, ran dry, or idled in vain).
                self.cfq.active = None;
                self.cfq.idle_until = None;
                if !self.cfq.queues[&a].sorted.is_empty() {
                    self.cfq.rr.push_back(a);
                }
            }
            let next = self.cfq.rr.pop_front()?;
            let q = &self.cfq.queues[&next];
            self.cfq.active = Some(next);
            self.cfq.idle_until = None;
            self.cfq.slice_end = now + if q.sync { CFQ_SLICE_SYNC_NS } else { CFQ_SLICE_ASYNC_NS };
        }
    }

    /// Makes a request a merge candidate by its two ends.
    fn index(&mut self, rq: ReqId, write: bool, start: u64, end: u64) {
        self.by_end.insert_if_absent((write, end), rq);
        self.by_start.insert_if_absent((write, start), rq);
    }

    fn unindex(&mut self, rq: ReqId, write: bool, start: u64, end: u64) {
        self.by_end.remove_if(&(write, end), |&r| r == rq);
        self.by_start.remove_if(&(write, start), |&r| r == rq);
    }

    /// A waiting request that ends at `sector`, which a bio starting there can join at the back.
    pub fn back_candidate(&self, write: bool, sector: u64) -> Option<ReqId> {
        self.by_end.get(&(write, sector)).copied()
    }

    /// The lowest end in `lo..=hi` of a waiting request other than `except` that lies a whole
    /// number of `step`s from `base` (where a later bio of a run would back-merge instead).
    pub fn other_end_in(&self, write: bool, lo: u64, hi: u64, except: ReqId, step: u64, base: u64) -> Option<u64> {
        if lo > hi {
            return None;
        }
        self.by_end
            .range((write, lo)..=(write, hi))
            .find(|(&(_, end), &rq)| rq != except && (end - base) % step == 0)
            .map(|(&(_, end), _)| end)
    }

    /// A waiting request that starts at `end`, which a bio ending there can join at the front.
    pub fn front_candidate(&self, write: bool, end: u64) -> Option<ReqId> {
        self.by_start.get(&(write, end)).copied()
    }

    /// A merge changed a waiting request's extent.
    pub fn remerged(&mut self, rq: ReqId, write: bool, old: (u64, u64), new: (u64, u64)) {
        self.unindex(rq, write, old.0, old.1);
        let e = self.entries.get_mut(&rq).expect("request not in the elevator");
        (e.start, e.end) = new;
        let owner = e.owner;
        if old.0 != new.0 && self.kind == ElevatorKind::Deadline {
            self.sorted[write as usize].remove(&(old.0, rq));
            self.sorted[write as usize].insert((new.0, rq), ());
        }
        self.index(rq, write, new.0, new.1);
        if self.kind == ElevatorKind::Cfq && old.0 != new.0 {
            let key = cfq_key(owner);
            let q = self.cfq.queues.get_mut(&key).expect("its queue");
            q.sorted.remove(&(old.0, rq));
            q.sorted.insert((new.0, rq), ());
        }
    }

    /// The request to dispatch next at `now`, without taking it (cfq may start or end a
    /// queue's slice doing so).
    pub fn next(&mut self, now: SimTime) -> Option<ReqId> {
        match self.kind {
            ElevatorKind::Noop => self.fifo.front().map(|(rq, _)| rq),
            ElevatorKind::Deadline => self.deadline_next(now),
            ElevatorKind::Cfq => self.cfq_next(now),
        }
    }

    /// The oldest waiting request of a direction, and whether its deadline has passed.
    fn fifo_head(&self, write: bool, now: SimTime) -> Option<(ReqId, bool)> {
        self.iter_with_deadlines().find(|(rq, _)| self.entries[rq].write == write).map(|(rq, t)| (rq, now >= t))
    }

    fn deadline_next(&self, now: SimTime) -> Option<ReqId> {
        // Continue the batch in sector order while it lasts.
        if let Some((write, end)) = self.last {
            if self.batch < DEADLINE_FIFO_BATCH {
                if let Some((&(_, rq), _)) = self.sorted[write as usize].range((end, ReqId(0))..).next() {
                    return Some(rq);
                }
            }
        }
        // A new batch: reads first, unless writes have been passed over writes_starved times.
        let reads = !self.sorted[0].is_empty();
        let writes = !self.sorted[1].is_empty();
        let write = match (reads, writes) {
            (false, false) => return None,
            (true, true) => self.writes_starved >= DEADLINE_WRITES_STARVED,
            (r, _) => !r,
        };
        // Start from the FIFO head if it expired, else from where the last batch of this
        // direction left off (wrapping to the lowest sector).
        let (head, expired) = self.fifo_head(write, now).expect("direction has requests");
        if expired {
            return Some(head);
        }
        let from = match self.last {
            Some((w, end)) if w == write => end,
            _ => 0,
        };
        let dir = &self.sorted[write as usize];
        dir.range((from, ReqId(0))..).next().or_else(|| dir.iter().next()).map(|(&(_, rq), _)| rq)
    }

    /// Takes `rq` (the one `next` chose) out for dispatch.
    pub fn dispatched(&mut self, rq: ReqId) {
        let Entry { write, start, end, owner, .. } = self.entries.remove(&rq).expect("dispatching a request not in the elevator");
        let entries = &self.entries;
        self.fifo.removed(|r, seq| is_live(entries, r, seq));
        if self.kind == ElevatorKind::Cfq {
            let key = cfq_key(owner);
            let q = self.cfq.queues.get_mut(&key).expect("its queue");
            q.fifo.removed(|r, seq| is_live(entries, r, seq));
            q.sorted.remove(&(start, rq));
            q.dispatched += 1;
            q.last_end = end;
            if q.sorted.is_empty() {
                self.cfq.rr.retain(|&k| k != key);
            }
        }
        self.unindex(rq, write, start, end);
        if self.kind == ElevatorKind::Deadline {
            self.sorted[write as usize].remove(&(start, rq));
        }
        if self.kind == ElevatorKind::Deadline {
            let continues = self.last.is_some_and(|(w, e)| w == write && start >= e) && self.batch < DEADLINE_FIFO_BATCH;
            if continues {
                self.batch += 1;
            } else {
                // A new batch: count a read batch chosen while writes waited.
                self.batch = 1;
                if write {
                    self.writes_starved = 0;
                } else if !self.sorted[1].is_empty() {
                    self.writes_starved += 1;
                }
            }
            self.last = Some((write, end));
        }
    }

    /// Waiting requests in arrival order (for the UI).
    pub fn iter(&self) -> impl Iterator<Item = ReqId> + '_ {
        self.iter_with_deadlines().map(|(rq, _)| rq)
    }

    fn iter_with_deadlines(&self) -> impl Iterator<Item = (ReqId, SimTime)> + '_ {
        let entries = &self.entries;
        self.fifo.iter(move |rq, seq| is_live(entries, rq, seq))
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
    pub max_segments: u32,
    /// Requests allocated per direction (`rl->count[READ|WRITE]`).
    pub pool_count: [u32; 2],
    /// Set when a live write lowered `nr_requests` below what is allocated: the pool may hold
    /// more than `nr_requests` until it drains (as in the kernel); no allocation happens then.
    pub draining: bool,
    /// `blk_queue_full` per direction: set when an allocation fills the pool, cleared when a
    /// freed request brings it back below `nr_requests`.
    pub full: [bool; 2],
    /// The backing device's congestion bit per direction: set when an allocation reaches
    /// `congestion_on()`, cleared when a free brings the count below `congestion_off()`.
    pub congested: [bool; 2],
    /// Threads sleeping in `get_request_wait`, per direction, in FIFO order.
    pub waiters: [VecDeque<ThreadId>; 2],
    pub elevator: Elevator,
    pub tags: TagMap,
    /// blk-mq (`none`, `mq-deadline`): a request is a tag, allocated at submission; who waits
    /// for one sleeps in `bt_get` by these rules. None: the legacy request pool.
    pub mq: Option<crate::blk_mq::TagWait>,
}

/// The elevator a `queue/scheduler` name runs.
pub fn elevator_kind(s: crate::scenario::Scheduler) -> ElevatorKind {
    use crate::scenario::Scheduler;
    match s {
        Scheduler::Deadline | Scheduler::MqDeadline => ElevatorKind::Deadline,
        Scheduler::Cfq => ElevatorKind::Cfq,
        Scheduler::Noop | Scheduler::None => ElevatorKind::Noop,
    }
}

fn cfq_key(o: Owner) -> u32 {
    if o.sync {
        o.id
    } else {
        CFQ_ASYNC
    }
}

/// What is behind a block device: a disk on a SCSI host, or a stacking driver that maps onto
/// lower block devices.
#[derive(Debug, Clone)]
pub enum DevKind {
    /// An `sd` disk: its device model and the HBA it hangs off.
    Sd { disk: DiskId, host: HostId },
    /// Request-based dm-multipath (`dm-N`): requests are cloned onto the active path.
    DmMpath { paths: Vec<DevId> },
    /// md RAID5 (`mdN`): bio-based, over its member devices.
    Md { members: Vec<DevId> },
    /// LVM2's dm-linear (`dm-N`): bio-based, each bio remapped onto `lower` past the physical
    /// volume's metadata, in the submitter's context (`__map_bio` → `generic_make_request`).
    DmLinear { lower: DevId },
}

/// Where LVM2 puts the first physical extent by default (`pe_start`, 192 KiB).
pub const LVM_PE_START_SECTORS: u64 = 384;

/// A block device in iostat's list.
#[derive(Debug)]
pub struct BlockDev {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DevKind,
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

impl RequestQueue {
    /// The most a request (or a bio built for this queue) may carry: `max_sectors_kb`, and
    /// `max_segments` page-sized segments (page-cache and user pages are not contiguous).
    pub fn max_request_bytes(&self) -> u64 {
        self.max_sectors_bytes.min(self.max_segments as u64 * 4096)
    }

    /// `queue_congestion_on_threshold`: nr − nr/8 + 1, at most nr (`blk_queue_congestion_threshold`).
    pub fn congestion_on(&self) -> u32 {
        (self.nr_requests - self.nr_requests / 8 + 1).min(self.nr_requests)
    }

    /// `queue_congestion_off_threshold`: nr − nr/8 − 1, at least 1 (2.6.2-2.6.6; later kernels
    /// also subtract nr/16).
    pub fn congestion_off(&self) -> u32 {
        (self.nr_requests - self.nr_requests / 8).saturating_sub(1).max(1)
    }

    fn new(s: &Scenario, max_sectors_kb: u32, depth: u32) -> RequestQueue {
        RequestQueue {
            nr_requests: s.queue.nr_requests,
            max_sectors_bytes: max_sectors_kb as u64 * 1024,
            max_segments: s.queue.max_segments,
            pool_count: [0, 0],
            draining: false,
            full: [false, false],
            congested: [false, false],
            waiters: Default::default(),
            elevator: Elevator::new(elevator_kind(s.queue.scheduler)),
            tags: TagMap::new(depth),
            mq: None,
        }
    }
}

/// The tag depth a leaf queue gets: `queue_depth`, capped at 2 × `nr_requests` by
/// `init_tag_map` when the driver uses the generic block tagging (legacy queues only).
pub fn tag_depth(s: &Scenario) -> u32 {
    if s.queue.generic_tagging && !is_mq(s.queue.scheduler) {
        s.queue.depth.min(2 * s.queue.nr_requests)
    } else {
        s.queue.depth
    }
}

/// Whether leaf queues run blk-mq: its schedulers are `none` and `mq-deadline`.
pub fn is_mq(s: crate::scenario::Scheduler) -> bool {
    matches!(s, crate::scenario::Scheduler::None | crate::scenario::Scheduler::MqDeadline)
}

/// The major number the kernel gives device-mapper dynamically; 253 on most systems.
pub const DM_MAJOR: u32 = 253;
/// md's major (Documentation/devices.txt).
pub const MD_MAJOR: u32 = 9;

impl BlockDev {
    pub fn leaf(index: u32, disk: DiskId, host: HostId, s: &Scenario) -> BlockDev {
        let (major, minor) = sd_major_minor(index);
        BlockDev {
            name: sd_name(index),
            major,
            minor,
            kind: DevKind::Sd { disk, host },
            queue: RequestQueue {
                mq: is_mq(s.queue.scheduler).then(|| crate::blk_mq::TagWait::new(s.queue.depth)),
                ..RequestQueue::new(s, s.disk.max_sectors_kb, tag_depth(s))
            },
            stats: DiskStats::default(),
        }
    }

    /// `dm-N`: a request-based multipath device over `paths`, with its own request queue and
    /// elevator (no tags: its "driver" is the map to the lower queue).
    pub fn dm_mpath(index: u32, paths: Vec<DevId>, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("dm-{index}"),
            major: DM_MAJOR,
            minor: index,
            kind: DevKind::DmMpath { paths },
            queue: RequestQueue::new(s, s.dm.max_sectors_kb, 0),
            stats: DiskStats::default(),
        }
    }

    /// `dm-N`: an LVM2 logical volume on `lower` (dm-linear). Bio-based: no request pool.
    pub fn dm_linear(index: u32, lower: DevId, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("dm-{index}"),
            major: DM_MAJOR,
            minor: index,
            kind: DevKind::DmLinear { lower },
            queue: RequestQueue::new(s, s.disk.max_sectors_kb, 0),
            stats: DiskStats::default(),
        }
    }

    /// Bio-based devices (md, dm-linear) count bios in diskstats, not requests.
    pub fn is_bio_based(&self) -> bool {
        matches!(self.kind, DevKind::Md { .. } | DevKind::DmLinear { .. })
    }

    /// `mdN`: md RAID5 over `members`. Bio-based: it has no request pool or elevator of its own;
    /// its queue limit is the chunk (2.6.20 `blk_queue_max_sectors(mddev->queue, chunk)`).
    pub fn md(index: u32, members: Vec<DevId>, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("md{index}"),
            major: MD_MAJOR,
            minor: index,
            kind: DevKind::Md { members },
            queue: RequestQueue::new(s, s.md.chunk_kb, 0),
            stats: DiskStats::default(),
        }
    }

    /// A disk at the bottom of the stack (the fairness index is over these).
    pub fn is_leaf(&self) -> bool {
        matches!(self.kind, DevKind::Sd { .. })
    }

    /// The disk and host of an `sd` device. Panics for a stacking device: only leaf queues
    /// dispatch to hardware.
    pub fn sd(&self) -> (DiskId, HostId) {
        match self.kind {
            DevKind::Sd { disk, host } => (disk, host),
            _ => panic!("{} is not a SCSI disk", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const O: Owner = Owner { id: 1, sync: true };

    #[test]
    fn the_fifo_keeps_arrival_order_and_stays_bounded_when_taken_from_the_middle() {
        // Deadline takes requests in sector order, so mostly from the middle of the FIFO; a
        // request id comes back (the slab reuses it) while its stale entry is still there.
        let mut e = Elevator::new(ElevatorKind::Deadline);
        let t0 = SimTime::ZERO;
        for i in 0..100u32 {
            e.add(ReqId(i), false, 10_000 - 8 * i as u64, 10_008 - 8 * i as u64, t0, O);
        }
        for round in 0..1000u32 {
            let rq = e.next(t0).unwrap();
            e.dispatched(rq);
            e.add(rq, false, 20_000 + 8 * round as u64, 20_008 + 8 * round as u64, t0, O);
            assert_eq!(e.len(), 100);
            assert!(e.fifo.items.len() <= 2 * 100 + 64 + 1, "{} entries for 100 requests", e.fifo.items.len());
        }
        // What iter() lists is every waiting request once, oldest first.
        let listed: Vec<ReqId> = e.iter().collect();
        let mut sorted = listed.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 100);
        let seqs: Vec<u64> = listed.iter().map(|rq| e.entries[rq].seq).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "arrival order");
    }

    #[test]
    fn deadline_dispatches_in_sector_order_prefers_reads_and_honours_expiry() {
        let mut e = Elevator::new(ElevatorKind::Deadline);
        let t0 = SimTime::ZERO;
        e.add(ReqId(1), true, 900, 908, t0, O);
        e.add(ReqId(2), false, 500, 508, t0, O);
        e.add(ReqId(3), false, 100, 108, t0, O);
        e.add(ReqId(4), false, 300, 308, t0, O);
        // Reads first, in sector order from the lowest.
        for want in [3, 4, 2] {
            let rq = e.next(t0).unwrap();
            assert_eq!(rq, ReqId(want));
            e.dispatched(rq);
        }
        assert_eq!(e.next(t0), Some(ReqId(1)));
        e.dispatched(ReqId(1));
        // An expired read goes first even when sector order would pick another.
        e.add(ReqId(5), false, 700, 708, t0, O);
        e.add(ReqId(6), false, 50, 58, SimTime(400_000_000), O);
        let late = SimTime(600_000_000);
        assert_eq!(e.next(late), Some(ReqId(5)), "the oldest read has expired");
    }

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
        e.add(ReqId(1), false, 100, 108, SimTime::ZERO, O);
        assert_eq!(e.back_candidate(false, 108), Some(ReqId(1)));
        assert_eq!(e.back_candidate(true, 108), None);
        assert_eq!(e.front_candidate(false, 100), Some(ReqId(1)));
        e.remerged(ReqId(1), false, (100, 108), (100, 116));
        assert_eq!(e.back_candidate(false, 108), None);
        assert_eq!(e.back_candidate(false, 116), Some(ReqId(1)));
        assert_eq!(e.next(SimTime::ZERO), Some(ReqId(1)));
        e.dispatched(ReqId(1));
        assert!(e.is_empty());
        assert_eq!(e.back_candidate(false, 116), None);
    }

    #[test]
    fn cfq_serves_one_process_for_a_slice_and_idles_for_its_next_request() {
        let mut e = Elevator::new(ElevatorKind::Cfq);
        let (a, b) = (Owner { id: 1, sync: true }, Owner { id: 2, sync: true });
        let ms = |n: u64| SimTime(n * 1_000_000);
        // Interleaved arrivals of two sequential readers far apart on the disk.
        e.add(ReqId(1), false, 0, 8, ms(0), a);
        e.add(ReqId(2), false, 900_000, 900_008, ms(0), b);
        e.add(ReqId(3), false, 8, 16, ms(0), a);
        e.add(ReqId(4), false, 900_008, 900_016, ms(0), b);
        // a's slice: its requests in sector order; b waits although the device has room.
        for want in [1, 3] {
            assert_eq!(e.next(ms(0)), Some(ReqId(want)));
            e.dispatched(ReqId(want));
        }
        assert_eq!(e.next(ms(0)), None, "a still has requests in flight: cfq waits for a");
        e.completed(a, ms(1));
        e.completed(a, ms(1));
        // a ran dry: cfq idles slice_idle for a's next request instead of seeking to b.
        assert_eq!(e.next(ms(1)), None);
        assert_eq!(e.idle_until(), Some(ms(1) + CFQ_SLICE_IDLE_NS));
        // a comes back within the window and is served at once.
        e.add(ReqId(5), false, 16, 24, ms(3), a);
        assert_eq!(e.next(ms(3)), Some(ReqId(5)));
        e.dispatched(ReqId(5));
        e.completed(a, ms(4));
        // This time a does not come back: when the window closes, b gets its slice.
        assert_eq!(e.next(ms(4)), None);
        let until = e.idle_until().unwrap();
        assert_eq!(e.next(until), Some(ReqId(2)));
    }

    #[test]
    fn init_tag_map_caps_the_depth_at_twice_nr_requests_for_generic_tagging_only() {
        let mut s = Scenario::default();
        s.queue.depth = 254;
        s.queue.nr_requests = 64;
        assert_eq!(tag_depth(&s), 254);
        s.queue.generic_tagging = true;
        assert_eq!(tag_depth(&s), 128);
        s.queue.nr_requests = 512;
        assert_eq!(tag_depth(&s), 254, "it caps, it never raises");
    }
}
