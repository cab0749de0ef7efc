//! `block/elevator.c`: the elevator's common part (merge candidates by sector, the FIFO of
//! waiting requests, insert, requeue, dispatch). noop is this FIFO itself; deadline and cfq
//! add their own order in `deadline.rs` and `cfq.rs`, bfq in `block/bfq/`.

pub mod cfq;
pub mod deadline;

use crate::calib::*;
use crate::engine::ids::{ReqId, SortedMap};
use crate::engine::time::SimTime;
use cfq::{cfq_key, Cfq};
use std::collections::VecDeque;

/// Which elevator a queue runs. `none` and `mq-deadline` (blk-mq) run as noop and deadline.
/// Under kyber the elevator holds the waiting requests (merge candidates, arrival order) and
/// kyber's own lists choose (`block/kyber_iosched.rs`, per hardware queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElevatorKind {
    Noop,
    Deadline,
    Cfq,
    Kyber,
    /// blk-mq's BFQ (`block/bfq/`), on 5.x's dispatch only.
    Bfq,
}

/// Whose I/O a request is, for cfq: the submitting process, and whether it is synchronous
/// (reads and direct writes; writeback is asynchronous and shares one queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub id: u32,
    pub sync: bool,
    pub ioprio: crate::fs::ioprio::IoPrio,
}

/// The elevators' sysfs tunables (`/sys/block/sdX/queue/iosched/`): cfq's and deadline's,
/// in nanoseconds and counts; the defaults are the kernel's (`calib.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    pub cfq_slice_idle_ns: u64,
    pub cfq_quantum: u32,
    pub cfq_slice_sync_ns: u64,
    pub cfq_slice_async_ns: u64,
    pub cfq_fifo_expire_sync_ns: u64,
    pub cfq_fifo_expire_async_ns: u64,
    pub deadline_fifo_batch: u32,
    pub deadline_read_expire_ns: u64,
    pub deadline_write_expire_ns: u64,
    pub deadline_writes_starved: u32,
    pub bfq: crate::block::bfq::BfqTunables,
}

impl Tunables {
    /// A cfq time slice: `slice_sync` for a sync queue, `slice_async` for the async one.
    pub fn cfq_slice_ns(&self, sync: bool) -> u64 {
        if sync {
            self.cfq_slice_sync_ns
        } else {
            self.cfq_slice_async_ns
        }
    }
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            cfq_slice_idle_ns: CFQ_SLICE_IDLE_NS,
            cfq_quantum: CFQ_QUANTUM,
            cfq_slice_sync_ns: CFQ_SLICE_SYNC_NS,
            cfq_slice_async_ns: CFQ_SLICE_ASYNC_NS,
            cfq_fifo_expire_sync_ns: CFQ_FIFO_EXPIRE_SYNC_NS,
            cfq_fifo_expire_async_ns: CFQ_FIFO_EXPIRE_ASYNC_NS,
            deadline_fifo_batch: DEADLINE_FIFO_BATCH,
            deadline_read_expire_ns: DEADLINE_READ_EXPIRE_NS,
            deadline_write_expire_ns: DEADLINE_WRITE_EXPIRE_NS,
            deadline_writes_starved: DEADLINE_WRITES_STARVED,
            bfq: crate::block::bfq::BfqTunables::default(),
        }
    }
}

/// The tunables a scenario's `iosched.*` knobs give (milliseconds to nanoseconds).
pub fn tunables(k: &crate::scenario::IoschedKnobs) -> Tunables {
    let ms = |v: u32| v as u64 * crate::engine::time::NS_PER_MS;
    Tunables {
        cfq_slice_idle_ns: ms(k.slice_idle),
        cfq_quantum: k.quantum,
        cfq_slice_sync_ns: ms(k.slice_sync),
        cfq_slice_async_ns: ms(k.slice_async),
        cfq_fifo_expire_sync_ns: ms(k.fifo_expire_sync),
        cfq_fifo_expire_async_ns: ms(k.fifo_expire_async),
        deadline_fifo_batch: k.fifo_batch,
        deadline_read_expire_ns: ms(k.read_expire),
        deadline_write_expire_ns: ms(k.write_expire),
        deadline_writes_starved: k.writes_starved,
        bfq: crate::block::bfq::BfqTunables {
            slice_idle_ns: ms(k.bfq_slice_idle),
            timeout_sync_ns: ms(k.bfq_timeout_sync),
            max_budget: u64::from(k.bfq_max_budget),
            low_latency: k.bfq_low_latency,
        },
    }
}

/// Waiting requests in arrival order, with their FIFO deadlines. Taking one out of the middle
/// (deadline and cfq dispatch in sector order) leaves a stale entry behind instead of shifting
/// the rest: an entry is live while the elevator still holds its request under the same
/// insertion number. Stale entries are dropped when they reach the front, and the list is
/// compacted when they outnumber the live ones, so its length stays within 2 × live + 64.
#[derive(Clone, Debug, Default)]
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
    /// On the dispatch list (2.6.20 cfq): out of its cfq queue, no longer a merge candidate,
    /// waiting for the driver.
    listed: bool,
}

fn is_live(entries: &SortedMap<ReqId, Entry>, rq: ReqId, seq: u64) -> bool {
    entries.get(&rq).is_some_and(|e| e.seq == seq)
}

/// Still in its cfq queue (live and not moved to the dispatch list).
fn is_queued(entries: &SortedMap<ReqId, Entry>, rq: ReqId, seq: u64) -> bool {
    entries.get(&rq).is_some_and(|e| e.seq == seq && !e.listed)
}

/// A request on the dispatch list (`q->queue_head`), as `elv_dispatch_sort` orders it.
#[derive(Clone, Copy, Debug)]
struct Listed {
    rq: ReqId,
    write: bool,
    start: u64,
    end: u64,
    /// A requeued request: nothing is sorted in front of it.
    barrier: bool,
}

/// The elevator: noop (FIFO) or deadline (2.6 `deadline-iosched.c`: per-direction sector order
/// and FIFO expiry, batches of `fifo_batch`, reads preferred unless writes starved twice).
/// Back- and front-merge candidates are found by sector, as the elevator hash and rb-tree do.
#[derive(Clone, Debug)]
pub struct Elevator {
    kind: ElevatorKind,
    /// `iosched/`'s tunables.
    pub(super) tun: Tunables,
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
    /// 2.6.20 cfq: the dispatch list, and where the driver's last request ended
    /// (`q->end_sector`, the boundary `elv_dispatch_sort` sorts around).
    dispatch_list: VecDeque<Listed>,
    end_sector: u64,
    /// bfq's state (`bfq_data`), and the time of its last `next` (its dispatch follows).
    bfq: Box<crate::block::bfq::BfqData>,
    bfq_now: SimTime,
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
            tun: Tunables::default(),
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
            dispatch_list: VecDeque::new(),
            end_sector: 0,
            bfq: Box::default(),
            bfq_now: SimTime::ZERO,
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
        // cfq's accounting of requests already issued carries over (their completions come);
        // those still on the dispatch list are re-added.
        let listed = |k: u32| self.dispatch_list.iter().filter(|l| cfq_key(self.entries[&l.rq].owner) == k).count() as u32;
        let issued: Vec<(u32, u32)> = self.cfq.queues.iter().map(|(&k, q)| (k, q.dispatched - listed(k))).filter(|&(_, d)| d > 0).collect();
        let (v2620, tun, nonrot) = (self.cfq.v2620, self.tun, self.bfq.nonrot);
        *self = Elevator::new(kind);
        self.cfq.v2620 = v2620;
        self.set_tunables(tun);
        self.bfq.nonrot = nonrot;
        for (k, d) in issued {
            self.cfq.queues.get_or_insert_default(k).dispatched = d;
        }
        for (rq, t, (write, start, end), owner) in waiting {
            self.add_at(rq, write, start, end, t, true, owner, t);
        }
    }

    /// Sets the `iosched/` tunables (a sysfs write): requests already waiting keep their
    /// deadlines, as in the kernel, where an expiry is stamped at insertion.
    pub fn set_tunables(&mut self, tun: Tunables) {
        self.tun = tun;
        self.bfq.tun = tun.bfq;
    }

    /// bfq and cfq: whether the disk is not rotational (`blk_queue_nonrot`).
    pub fn set_nonrot(&mut self, nonrot: bool) {
        self.bfq.nonrot = nonrot;
    }

    /// bfq's state, for the hooks on the queue (`Sim`'s side of `bfq-iosched.c`).
    pub(crate) fn bfq_mut(&mut self) -> &mut crate::block::bfq::BfqData {
        &mut self.bfq
    }

    pub fn bfq(&self) -> &crate::block::bfq::BfqData {
        &self.bfq
    }

    /// The scheduler's `has_work`: bfq has work while a queue is busy, even one idling with
    /// no request (`bfq_has_work`); the others while they hold a request.
    pub fn has_work(&self) -> bool {
        if self.kind == ElevatorKind::Bfq {
            return self.bfq.has_work();
        }
        !self.is_empty()
    }

    /// cfq's rules: 2.6.20's (`queue.cfq = 2.6.20`) or the simplified ones. Waiting requests
    /// move over as on a scheduler switch.
    pub fn set_cfq_2620(&mut self, v2620: bool) {
        if self.cfq.v2620 != v2620 {
            self.cfq.v2620 = v2620;
            self.set_kind(self.kind);
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
            (ElevatorKind::Cfq, true, _) => self.tun.cfq_fifo_expire_sync_ns,
            (ElevatorKind::Cfq, false, _) => self.tun.cfq_fifo_expire_async_ns,
            (_, _, true) => self.tun.deadline_write_expire_ns,
            (_, _, false) => self.tun.deadline_read_expire_ns,
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
        if self.kind == ElevatorKind::Cfq && self.cfq.v2620 {
            // 2.6.20: ELEVATOR_INSERT_REQUEUE puts it at the front of the dispatch list; cfq
            // still counts it as dispatched.
            let seq = self.next_seq;
            self.next_seq += 1;
            self.fifo.push_back(rq, now, seq);
            self.fifo.back_to_front(now);
            let old = self.entries.insert(rq, Entry { write, start, end, owner, seq, listed: true });
            assert!(old.is_none(), "request added to the elevator twice");
            self.dispatch_list.push_front(Listed { rq, write, start, end, barrier: true });
            return;
        }
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
        let old = self.entries.insert(rq, Entry { write, start, end, owner, seq, listed: false });
        assert!(old.is_none(), "request added to the elevator twice");
        if mergeable {
            self.index(rq, write, start, end);
        }
        if self.kind == ElevatorKind::Cfq {
            self.cfq_add(rq, start, deadline, seq, owner, now);
        }
        if self.kind == ElevatorKind::Bfq {
            self.bfq.add_request(rq, start, end, owner, now);
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
        // Only a moved end is taken out of its index (a back merge keeps its start); an
        // unmoved one is only put back if absent, which is what taking it out and `index`
        // would leave, without shifting the map's tail twice.
        if old.0 != new.0 {
            self.by_start.remove_if(&(write, old.0), |&r| r == rq);
        }
        if old.1 != new.1 {
            self.by_end.remove_if(&(write, old.1), |&r| r == rq);
        }
        let e = self.entries.get_mut(&rq).expect("request not in the elevator");
        (e.start, e.end) = new;
        let owner = e.owner;
        if old.0 != new.0 && self.kind == ElevatorKind::Deadline {
            self.sorted[write as usize].remove(&(old.0, rq));
            self.sorted[write as usize].insert((new.0, rq), ());
        }
        self.index(rq, write, new.0, new.1);
        if self.kind == ElevatorKind::Cfq && old.0 != new.0 {
            self.cfq_remerged(rq, owner, old.0, new.0);
        }
        if self.kind == ElevatorKind::Bfq {
            self.bfq.remerged(rq, owner, new);
        }
    }

    /// The request to dispatch next at `now`, without taking it (cfq may start or end a
    /// queue's slice doing so).
    pub fn next(&mut self, now: SimTime) -> Option<ReqId> {
        match self.kind {
            ElevatorKind::Noop | ElevatorKind::Kyber => self.fifo.front().map(|(rq, _)| rq),
            ElevatorKind::Deadline => self.deadline_next(now),
            ElevatorKind::Cfq => self.cfq_next(now),
            ElevatorKind::Bfq => {
                self.bfq_now = now;
                self.bfq.next(now)
            }
        }
    }

    /// Takes `rq` (the one `next` chose) out for dispatch.
    pub fn dispatched(&mut self, rq: ReqId) {
        let Entry { write, start, end, owner, .. } = self.entries.remove(&rq).expect("dispatching a request not in the elevator");
        let entries = &self.entries;
        self.fifo.removed(|r, seq| is_live(entries, r, seq));
        if self.kind == ElevatorKind::Cfq {
            self.cfq_dispatched(rq, owner, start, end);
        }
        if self.kind == ElevatorKind::Bfq {
            self.bfq.dispatched(rq, owner, self.bfq_now);
        }
        self.unindex(rq, write, start, end);
        if self.kind == ElevatorKind::Deadline {
            self.deadline_dispatched(rq, write, start, end);
        }
    }

    /// `elv_dispatch_sort` (2.6.20 `elevator.c`): a request leaves its cfq queue for the
    /// dispatch list, inserted in one-way sector order from the boundary (where the driver's
    /// last request ended), behind requests of the other direction or requeued ones; it is no
    /// longer a merge candidate (`elv_rqhash_del`). Returns where the list's tail ends
    /// (`cfqd->last_sector`).
    fn elv_dispatch_sort(&mut self, rq: ReqId) -> u64 {
        let e = self.entries.get_mut(&rq).expect("sorting a request not in the elevator");
        assert!(!e.listed, "request on the dispatch list twice");
        e.listed = true;
        let Entry { write, start, end, .. } = *e;
        self.unindex(rq, write, start, end);
        let boundary = self.end_sector;
        let mut at = self.dispatch_list.len();
        while at > 0 {
            let p = self.dispatch_list[at - 1];
            if p.write != write || p.barrier {
                break;
            }
            if start >= boundary {
                if p.start < boundary {
                    at -= 1;
                    continue;
                }
            } else if p.start >= boundary {
                break;
            }
            if start >= p.start {
                break;
            }
            at -= 1;
        }
        self.dispatch_list.insert(at, Listed { rq, write, start, end, barrier: false });
        self.dispatch_list.back().expect("just inserted").end
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

/// The elevator a `queue/scheduler` name runs.
pub fn elevator_kind(s: crate::scenario::Scheduler) -> ElevatorKind {
    use crate::scenario::Scheduler;
    match s {
        Scheduler::Deadline | Scheduler::MqDeadline => ElevatorKind::Deadline,
        Scheduler::Cfq => ElevatorKind::Cfq,
        Scheduler::Bfq => ElevatorKind::Bfq,
        Scheduler::Noop | Scheduler::None => ElevatorKind::Noop,
        Scheduler::Kyber => ElevatorKind::Kyber,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const O: Owner = Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM };

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
}
