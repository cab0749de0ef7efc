//! `block/cfq-iosched.c` (2.6.2x, simplified): per-process queues served round robin in time
//! slices, with `slice_idle` for a sync queue whose process thinks briefly.

use super::{is_live, Elevator, ElevatorKind, Fifo, Owner};
use crate::calib::{CFQ_QUANTUM, CFQ_SLICE_ASYNC_NS, CFQ_SLICE_IDLE_NS, CFQ_SLICE_SYNC_NS};
use crate::engine::ids::{ReqId, SortedMap};
use crate::engine::time::SimTime;
use std::collections::VecDeque;

/// The async queue's key (2.6 cfq: one async queue per priority; we have one priority).
const CFQ_ASYNC: u32 = u32::MAX;

/// One cfq queue (`cfq_queue`): a process's requests in sector order and in arrival order.
#[derive(Debug, Default)]
pub(super) struct CfqQueue {
    pub(super) sync: bool,
    pub(super) sorted: SortedMap<(u64, ReqId), ()>,
    pub(super) fifo: Fifo,
    /// Requests of this queue issued to the driver and not completed.
    pub(super) dispatched: u32,
    /// Where its last dispatched request ended (the next one is chosen from there).
    pub(super) last_end: u64,
    /// When its last request completed, and its mean think time (7/8 EWMA), for idling.
    pub(super) last_done: Option<SimTime>,
    pub(super) ttime_mean_ns: u64,
    pub(super) ttime_samples: u32,
}

/// cfq's service state (2.6.2x `cfq-iosched.c`, simplified): busy queues served round robin,
/// each for a time slice; a sync queue that runs dry is given `slice_idle` for its process's
/// next request when its think time says one will come.
#[derive(Debug, Default)]
pub(crate) struct Cfq {
    /// By key: a device rarely has more than a few (one per process that submits to it, and
    /// the async queue).
    pub(super) queues: SortedMap<u32, CfqQueue>,
    /// Busy queues waiting for a slice, in order.
    pub(super) rr: VecDeque<u32>,
    pub(super) active: Option<u32>,
    pub(super) slice_end: SimTime,
    /// The active queue is idling until then.
    pub(super) idle_until: Option<SimTime>,
}

pub(crate) fn cfq_key(o: Owner) -> u32 {
    if o.sync {
        o.id
    } else {
        CFQ_ASYNC
    }
}

impl Elevator {
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

    pub(super) fn cfq_next(&mut self, now: SimTime) -> Option<ReqId> {
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

    /// cfq's part of inserting a request: into its process's queue (sorted and FIFO), with
    /// the think-time sample, and the queue onto the round robin if it was idle.
    pub(super) fn cfq_add(&mut self, rq: ReqId, start: u64, deadline: SimTime, seq: u64, owner: Owner, now: SimTime) {
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

    /// cfq's part of a front merge: the request moves in its queue's sector order.
    pub(super) fn cfq_remerged(&mut self, rq: ReqId, owner: Owner, old_start: u64, new_start: u64) {
        let key = cfq_key(owner);
        let q = self.cfq.queues.get_mut(&key).expect("its queue");
        q.sorted.remove(&(old_start, rq));
        q.sorted.insert((new_start, rq), ());
    }

    /// cfq's part of a dispatch: out of its queue, counted as issued; a queue left empty
    /// leaves the round robin.
    pub(super) fn cfq_dispatched(&mut self, rq: ReqId, owner: Owner, start: u64, end: u64) {
        let entries = &self.entries;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
