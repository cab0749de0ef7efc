//! `block/cfq-iosched.c`: per-process queues served round robin in time slices, with
//! `slice_idle` for a sync queue whose process thinks briefly. Two sets of rules: blkviz's
//! simplified cfq (2.6.2x), and 2.6.20's (`queue.cfq = 2.6.20`), whose queues hand quanta to
//! a sorted dispatch list and whose idle window follows the process's sampled think time.

use super::{is_live, is_queued, Elevator, ElevatorKind, Fifo, Owner};
use crate::calib::{CFQ_BACK_MAX_SECTORS, CFQ_BACK_PENALTY, CFQ_SLICE_ASYNC_RQ};
use crate::engine::ids::{ReqId, SortedMap};
use crate::engine::time::SimTime;
use std::collections::VecDeque;

/// The async queue's key (2.6 cfq: one async queue per priority; we have one priority).
const CFQ_ASYNC: u32 = u32::MAX;

/// One cfq queue (`cfq_queue`): a process's requests in sector order and in arrival order.
#[derive(Clone, Debug, Default)]
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
    /// 2.6.20: the process's `cfq_io_context` on this device and the queue's flags.
    pub(super) v2620: CfqQueue2620,
}

/// 2.6.20's per-queue state (`cfq_queue` flags and the `cfq_io_context` of its process on
/// this device: think time and seek distance, each a 7/8 running mean in fixed point with
/// 256 as one sample).
#[derive(Clone, Debug, Default)]
pub(super) struct CfqQueue2620 {
    /// Ever had a request: `cfq_get_queue` marks a new queue `idle_window` and `queue_new`,
    /// and `cfq_alloc_io_context` starts `last_end_request` then.
    pub(super) created: bool,
    pub(super) idle_window: bool,
    pub(super) queue_new: bool,
    pub(super) must_dispatch: bool,
    pub(super) fifo_expire: bool,
    pub(super) slice_end: Option<SimTime>,
    pub(super) ttime_samples: u64,
    pub(super) ttime_total: u64,
    pub(super) ttime_mean_ns: u64,
    pub(super) seek_samples: u64,
    pub(super) seek_total: u64,
    pub(super) seek_mean: u64,
    pub(super) last_request_pos: u64,
}

/// `sample_valid`: more than 80/256, i.e. after three samples.
fn sample_valid(samples: u64) -> bool {
    samples > 80
}

/// `CIC_SEEKY`: a mean seek over 128 Ki sectors (64 MiB).
fn cic_seeky(q: &CfqQueue2620) -> bool {
    q.seek_mean > 128 * 1024
}

/// cfq's service state (2.6.2x `cfq-iosched.c`, simplified): busy queues served round robin,
/// each for a time slice; a sync queue that runs dry is given `slice_idle` for its process's
/// next request when its think time says one will come.
#[derive(Clone, Debug, Default)]
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
    /// The active queue's FIFO was checked this slice (`cfq_cfqq_fifo_expire`).
    pub(super) fifo_checked: bool,
    /// 2.6.20's rules (`queue.cfq = 2.6.20`).
    pub(super) v2620: bool,
    /// 2.6.20: queues waiting with requests still dispatched (`busy_rr`), served after `rr`.
    pub(super) busy_rr: VecDeque<u32>,
    /// 2.6.20: requests the active queue put on the dispatch list this slice.
    pub(super) dispatch_slice: u32,
    /// 2.6.20: where the dispatch list's tail ends (`cfqd->last_sector`).
    pub(super) last_sector: u64,
    /// 2.6.20: requests in the driver, and whether it ever held more than 4 (`hw_tag`).
    pub(super) rq_in_driver: u32,
    pub(super) hw_tag: bool,
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
        if self.cfq.v2620 {
            self.cfq2620_completed(cfq_key(owner));
        }
    }

    /// cfq: when the active queue's idling ends (the queue must be run again then).
    pub fn idle_until(&self) -> Option<SimTime> {
        self.cfq.idle_until
    }

    pub(super) fn cfq_next(&mut self, now: SimTime) -> Option<ReqId> {
        if self.cfq.v2620 {
            return self.cfq2620_next(now);
        }
        let busy_others = |c: &Cfq, a: u32| c.rr.iter().any(|&k| k != a);
        loop {
            if let Some(a) = self.cfq.active {
                let expired = now >= self.cfq.slice_end;
                let others = busy_others(&self.cfq, a);
                let q = &self.cfq.queues[&a];
                if !q.sorted.is_empty() && (!expired || !others) {
                    if expired {
                        // Alone on the device: its slice ends and `cfq_set_active_queue` gives
                        // it the next one (`__cfq_set_active_queue` clears `fifo_expire`).
                        self.cfq.slice_end = now + self.tun.cfq_slice_ns(q.sync);
                        self.cfq.fifo_checked = false;
                    }
                    // cfq_quantum: a queue does not fill the device while others wait.
                    if q.dispatched >= self.tun.cfq_quantum && others {
                        return None;
                    }
                    // The FIFO head if it expired, else the next request on from the last. The
                    // FIFO is looked at once a slice, at its first dispatch (`cfq_check_fifo` of
                    // 2.6.30-2.6.39, inside `cfq_dispatch_request`, marks `fifo_expire` at its
                    // first look, expired head or not; 2.6.20's marks it when it takes one):
                    // past it, a slice serves in sector order even when every request has
                    // waited past fifo_expire_sync. The look is spent in `cfq_dispatched`: a
                    // pick the driver does not take (its tags full) spends nothing.
                    if !self.cfq.fifo_checked {
                        if let Some((rq, _)) = q.fifo.front().filter(|&(_, t)| now >= t) {
                            return Some(rq);
                        }
                    }
                    let pick = q.sorted.range((q.last_end, ReqId(0))..).next().or_else(|| q.sorted.iter().next());
                    return pick.map(|(&(_, rq), _)| rq);
                }
                let idle_ok = q.ttime_samples == 0 || q.ttime_mean_ns <= self.tun.cfq_slice_idle_ns;
                // slice_idle 0: cfq_should_idle says no, so neither wait nor idle.
                if q.sorted.is_empty() && !expired && q.sync && idle_ok && self.tun.cfq_slice_idle_ns > 0 {
                    if q.dispatched > 0 {
                        // Wait for its requests to complete; the idle window opens then.
                        return None;
                    }
                    let until = *self.cfq.idle_until.get_or_insert(now + self.tun.cfq_slice_idle_ns);
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
            self.cfq.fifo_checked = false;
            self.cfq.slice_end = now + self.tun.cfq_slice_ns(q.sync);
        }
    }

    /// cfq's part of inserting a request: into its process's queue (sorted and FIFO), with
    /// the think-time sample, and the queue onto the round robin if it was idle.
    pub(super) fn cfq_add(&mut self, rq: ReqId, start: u64, deadline: SimTime, seq: u64, owner: Owner, now: SimTime) {
        if self.cfq.v2620 {
            return self.cfq2620_add(rq, start, deadline, seq, owner, now);
        }
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
        if self.cfq.v2620 {
            // The driver takes the dispatch list's head (`elv_next_request`, which sets the
            // boundary the next sort goes from); cfq counted it when it left its queue.
            let head = self.dispatch_list.pop_front().expect("2.6.20 cfq dispatches from its dispatch list");
            assert_eq!(head.rq, rq, "the driver takes the dispatch list's head");
            self.end_sector = end;
            self.cfq.rq_in_driver += 1;
            if self.cfq.rq_in_driver > 4 {
                self.cfq.hw_tag = true;
            }
            let _ = (owner, start);
            return;
        }
        let entries = &self.entries;
        let key = cfq_key(owner);
        if self.cfq.active == Some(key) {
            self.cfq.fifo_checked = true;
        }
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

/// 2.6.20's cfq (`block/cfq-iosched.c` of v2.6.20, `queue.cfq = 2.6.20`). Simplified: one
/// priority (every reader is best-effort 4), no idle class, no preemption (`cfq_should_preempt`
/// needs a waiting new queue with slice left, which these workloads do not make), time in
/// nanoseconds instead of jiffies.
impl Elevator {
    /// Whether a queue is on the round robin (`cfq_cfqq_on_rr`: it has requests in its sort
    /// list; the active queue stays on it in the kernel, here it is held apart).
    fn cfq2620_busy(&self) -> bool {
        !self.cfq.rr.is_empty() || !self.cfq.busy_rr.is_empty() || self.cfq.active.is_some_and(|a| !self.cfq.queues[&a].sorted.is_empty())
    }

    /// `elv_next_request` with 2.6.20 cfq: the dispatch list's head; when the list is empty,
    /// `cfq_dispatch_requests` fills it first.
    fn cfq2620_next(&mut self, now: SimTime) -> Option<ReqId> {
        if self.dispatch_list.is_empty() {
            self.cfq2620_dispatch_requests(now);
        }
        self.dispatch_list.front().map(|l| l.rq)
    }

    /// `cfq_dispatch_requests`: the selected queue puts up to `cfq_quantum` requests on the
    /// dispatch list; a queue with its idle window keeps the device (the loop stops), one
    /// without it has its slice ended at once and the next queue goes on, so queues of
    /// processes that think long are all put on the sorted list together.
    fn cfq2620_dispatch_requests(&mut self, now: SimTime) {
        if !self.cfq2620_busy() {
            return;
        }
        let mut prev = None;
        while let Some(k) = self.cfq2620_select_queue(now) {
            if prev == Some(k) {
                break;
            }
            let q = self.cfq.queues.get_mut(&k).expect("the active queue");
            q.v2620.must_dispatch = false;
            self.cfq.idle_until = None;
            self.cfq2620_dispatch_quantum(k, self.tun.cfq_quantum, now);
            if self.cfq.queues[&k].v2620.idle_window && self.cfq.active.is_some() {
                break;
            }
            prev = Some(k);
        }
    }

    /// `cfq_select_queue`: keep the active queue while its slice lasts and it has requests;
    /// wait for its requests in flight; idle for its process's next request
    /// (`cfq_arm_slice_timer`); else end its slice and take the next queue.
    fn cfq2620_select_queue(&mut self, now: SimTime) -> Option<u32> {
        if let Some(a) = self.cfq.active {
            let q = &self.cfq.queues[&a];
            let expired = !q.v2620.must_dispatch && q.v2620.slice_end.is_some_and(|end| now > end);
            if !expired {
                if !q.sorted.is_empty() {
                    return Some(a);
                }
                if q.dispatched > 0 {
                    return None;
                }
                if q.sync {
                    match self.cfq.idle_until {
                        // cfq_idle_slice_timer fired: the slice ends.
                        Some(until) if now >= until => {}
                        Some(_) => return None,
                        None => {
                            if self.cfq2620_arm_slice_timer(a, now) {
                                return None;
                            }
                        }
                    }
                }
            }
            self.cfq2620_slice_expired(now);
        }
        self.cfq2620_set_active_queue()
    }

    /// `cfq_arm_slice_timer`: idle `slice_idle` (2 ms for a seeky process) for the next
    /// request of a queue that has its idle window.
    fn cfq2620_arm_slice_timer(&mut self, a: u32, now: SimTime) -> bool {
        let q = &mut self.cfq.queues.get_mut(&a).expect("the active queue").v2620;
        if self.tun.cfq_slice_idle_ns == 0 || !q.idle_window {
            return false;
        }
        q.must_dispatch = true;
        // min(slice_end - 1, slice_idle) compares a time with a length: slice_idle it is.
        let mut sl = self.tun.cfq_slice_idle_ns;
        if sample_valid(q.seek_samples) && cic_seeky(q) {
            sl = sl.min(2 * crate::engine::time::NS_PER_MS);
        }
        self.cfq.idle_until = Some(now + sl);
        true
    }

    /// `__cfq_slice_expired`: the active queue goes back on the round robin if it still has
    /// requests (`busy_rr` while some are dispatched).
    fn cfq2620_slice_expired(&mut self, _now: SimTime) {
        let Some(a) = self.cfq.active.take() else { return };
        self.cfq.idle_until = None;
        self.cfq.dispatch_slice = 0;
        let q = self.cfq.queues.get_mut(&a).expect("the active queue");
        q.v2620.must_dispatch = false;
        q.v2620.queue_new = false;
        if !q.sorted.is_empty() {
            self.cfq2620_resort_rr_list(a);
        }
    }

    /// `cfq_resort_rr_list`: to `busy_rr` while it has requests dispatched, else to the
    /// round robin's tail, a queue never served yet ahead of all but other new ones.
    fn cfq2620_resort_rr_list(&mut self, k: u32) {
        self.cfq.rr.retain(|&x| x != k);
        self.cfq.busy_rr.retain(|&x| x != k);
        let q = &self.cfq.queues[&k];
        if q.dispatched > 0 {
            self.cfq.busy_rr.push_back(k);
        } else if q.v2620.queue_new {
            let queues = &self.cfq.queues;
            let at = self.cfq.rr.iter().take_while(|x| queues[x].v2620.queue_new).count();
            self.cfq.rr.insert(at, k);
        } else {
            self.cfq.rr.push_back(k);
        }
    }

    /// `cfq_set_active_queue`: the round robin's first queue, else the first of `busy_rr`.
    fn cfq2620_set_active_queue(&mut self) -> Option<u32> {
        let k = self.cfq.rr.pop_front().or_else(|| self.cfq.busy_rr.pop_front())?;
        let q = self.cfq.queues.get_mut(&k).expect("a queued cfq queue");
        q.v2620.slice_end = None;
        q.v2620.fifo_expire = false;
        self.cfq.active = Some(k);
        self.cfq.idle_until = None;
        Some(k)
    }

    /// `__cfq_dispatch_requests`: up to `max` of the queue's requests onto the dispatch list
    /// (the FIFO's expired head once per slice, else the request nearest on from the last
    /// one put there); the slice starts; an async queue past its request budget, or a queue
    /// without its idle window, ends its slice at once.
    fn cfq2620_dispatch_quantum(&mut self, k: u32, max: u32, now: SimTime) {
        let mut n = 0;
        loop {
            let q = &self.cfq.queues[&k];
            let expired_head = match q.fifo.front() {
                Some((rq, t)) if !q.v2620.fifo_expire && now > t => Some(rq),
                _ => None,
            };
            let rq = match expired_head {
                Some(rq) => {
                    self.cfq.queues.get_mut(&k).expect("queue").v2620.fifo_expire = true;
                    rq
                }
                None => cfq2620_choose_req(&q.sorted, self.cfq.last_sector).expect("a busy queue has requests"),
            };
            // cfq_dispatch_insert: out of the queue, counted as dispatched, sorted onto the list.
            let start = self.entries[&rq].start;
            let q = self.cfq.queues.get_mut(&k).expect("queue");
            q.sorted.remove(&(start, rq));
            q.dispatched += 1;
            self.cfq.last_sector = self.elv_dispatch_sort(rq);
            let entries = &self.entries;
            let q = self.cfq.queues.get_mut(&k).expect("queue");
            q.fifo.removed(|r, seq| is_queued(entries, r, seq));
            self.cfq.dispatch_slice += 1;
            n += 1;
            if q.sorted.is_empty() {
                self.cfq.rr.retain(|&x| x != k);
                self.cfq.busy_rr.retain(|&x| x != k);
                break;
            }
            if n >= max {
                break;
            }
        }
        let q = self.cfq.queues.get_mut(&k).expect("queue");
        if q.v2620.slice_end.is_none() {
            q.v2620.slice_end = Some(now + self.tun.cfq_slice_ns(q.sync));
        }
        // cfq_prio_to_maxrq at best-effort priority 4: 2 × (base + base × 3).
        let maxrq = 2 * (CFQ_SLICE_ASYNC_RQ + CFQ_SLICE_ASYNC_RQ * 3);
        if (!q.sync && self.cfq.dispatch_slice >= maxrq) || !q.v2620.idle_window {
            self.cfq2620_slice_expired(now);
        }
    }

    /// `cfq_insert_request` → `cfq_rq_enqueued`: into the queue (a new queue is marked for
    /// idling), a sync request samples its process's think time (since its last completion on
    /// this device, at most 2 × `slice_idle`) and seek distance, which decide the queue's idle
    /// window (`cfq_update_idle_window`); its process coming back ends the active queue's idling.
    fn cfq2620_add(&mut self, rq: ReqId, start: u64, deadline: SimTime, seq: u64, owner: Owner, now: SimTime) {
        let key = cfq_key(owner);
        let end = self.entries[&rq].end;
        let hw_tag = self.cfq.hw_tag;
        let q = self.cfq.queues.get_or_insert_default(key);
        q.sync = owner.sync;
        if !q.v2620.created {
            q.v2620.created = true;
            q.v2620.idle_window = true;
            q.v2620.queue_new = true;
            q.last_done = Some(now);
        }
        let was_empty = q.sorted.is_empty();
        q.sorted.insert((start, rq), ());
        q.fifo.push_back(rq, deadline, seq);
        if owner.sync {
            let c = &mut q.v2620;
            let elapsed = now.ns().saturating_sub(q.last_done.map_or(now.ns(), |t| t.ns()));
            let ttime = elapsed.min(2 * self.tun.cfq_slice_idle_ns);
            c.ttime_samples = (7 * c.ttime_samples + 256) / 8;
            c.ttime_total = (7 * c.ttime_total + 256 * ttime) / 8;
            c.ttime_mean_ns = (c.ttime_total + 128) / c.ttime_samples;
            let mut sdist = start.abs_diff(c.last_request_pos);
            sdist = sdist.min(c.seek_mean * 4 + if c.seek_samples <= 60 { 2 * 1024 * 1024 } else { 2 * 1024 * 64 });
            c.seek_samples = (7 * c.seek_samples + 256) / 8;
            c.seek_total = (7 * c.seek_total + 256 * sdist) / 8;
            c.seek_mean = (c.seek_total + c.seek_samples / 2) / c.seek_samples;
            if hw_tag && cic_seeky(c) {
                c.idle_window = false;
            } else if sample_valid(c.ttime_samples) {
                c.idle_window = c.ttime_mean_ns <= self.tun.cfq_slice_idle_ns;
            }
            c.last_request_pos = end;
        }
        let active = self.cfq.active == Some(key);
        if active {
            if self.cfq.idle_until.take().is_some() {
                // It was waiting for this: dispatch it now, do not expire the slice just yet.
                self.cfq.queues.get_mut(&key).expect("queue").v2620.must_dispatch = true;
            }
        } else if was_empty && !self.cfq.rr.contains(&key) && !self.cfq.busy_rr.contains(&key) {
            self.cfq2620_resort_rr_list(key);
        }
    }

    /// `cfq_completed_request`: a queue with nothing dispatched any more leaves `busy_rr` for
    /// the round robin. (Whether the active queue idles is decided when the queue runs next.)
    fn cfq2620_completed(&mut self, key: u32) {
        self.cfq.rq_in_driver = self.cfq.rq_in_driver.saturating_sub(1);
        let Some(q) = self.cfq.queues.get(&key) else { return };
        if q.dispatched == 0 && self.cfq.busy_rr.contains(&key) {
            self.cfq.busy_rr.retain(|&x| x != key);
            self.cfq.rr.push_back(key);
        }
    }
}

/// `cfq_choose_req` between the queue's requests either side of `last` (`cfqd->last_sector`):
/// the nearer, a backward seek counting double and allowed up to `cfq_back_max`; if both lie
/// further back, the lowest.
fn cfq2620_choose_req(sorted: &SortedMap<(u64, ReqId), ()>, last: u64) -> Option<ReqId> {
    let next = sorted.range((last, ReqId(0))..).next().map(|(&k, _)| k);
    let prev = sorted.range(..(last, ReqId(0))).last().map(|(&k, _)| k);
    let dist = |s: u64| -> Option<u64> {
        if s >= last {
            Some(s - last)
        } else if s + CFQ_BACK_MAX_SECTORS >= last {
            Some((last - s) * CFQ_BACK_PENALTY)
        } else {
            None
        }
    };
    let pick = match (next, prev) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a),
        (Some(a), Some(b)) => match (dist(a.0), dist(b.0)) {
            (Some(da), Some(db)) => Some(if da < db || (da == db && a.0 >= b.0) { a } else { b }),
            (Some(_), None) => Some(a),
            (None, Some(_)) => Some(b),
            (None, None) => Some(if a.0 <= b.0 { a } else { b }),
        },
    };
    // With no candidate behind, the lowest request (the rb-tree's first) wraps around.
    pick.or_else(|| sorted.iter().next().map(|(&k, _)| k)).map(|(_, rq)| rq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::CFQ_SLICE_IDLE_NS;

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
    fn cfq_takes_one_expired_request_a_slice_and_then_serves_in_sector_order() {
        let mut e = Elevator::new(ElevatorKind::Cfq);
        let a = Owner { id: 1, sync: true };
        let ms = |n: u64| SimTime(n * 1_000_000);
        // A deep queue of random reads, queued at t = 0 in this order of sectors.
        let sectors = [500_000u64, 100_000, 900_000, 300_000, 700_000];
        for (i, &s) in sectors.iter().enumerate() {
            e.add(ReqId(i as u32 + 1), false, s, s + 8, ms(0), a);
        }
        // Later than fifo_expire_sync (125 ms), but inside a fresh slice: every one has expired.
        let now = ms(200);
        let mut order = Vec::new();
        for _ in 0..sectors.len() {
            let rq = e.next(now).expect("a request");
            e.dispatched(rq);
            order.push(rq.0);
        }
        // cfq_check_fifo once: the oldest; then on in sector order from it, wrapping around
        // (not the FIFO's arrival order, which every expired head would give).
        assert_eq!(order, vec![1, 5, 3, 2, 4]);
    }

    #[test]
    fn cfq_spends_its_fifo_look_on_a_dispatch_and_a_lone_queue_looks_again_each_slice() {
        let mut e = Elevator::new(ElevatorKind::Cfq);
        let a = Owner { id: 1, sync: true };
        let ms = |n: u64| SimTime(n * 1_000_000);
        for (i, s) in [500_000u64, 100_000, 900_000, 300_000, 700_000, 200_000].into_iter().enumerate() {
            e.add(ReqId(i as u32 + 1), false, s, s + 8, ms(0), a);
        }
        // Picks the driver does not take (its tags full) spend nothing: the oldest, again.
        assert_eq!(e.next(ms(200)), Some(ReqId(1)));
        assert_eq!(e.next(ms(201)), Some(ReqId(1)));
        e.dispatched(ReqId(1));
        // Then sector order on from 500 000.
        assert_eq!(e.next(ms(201)), Some(ReqId(5)));
        e.dispatched(ReqId(5));
        // Alone on the device, the queue's slice (slice_sync, 100 ms) runs out and the next
        // one looks at the FIFO again: the oldest left (2, at 100 000), not the next on (3).
        let later = ms(200) + crate::calib::CFQ_SLICE_SYNC_NS + 1;
        assert_eq!(e.next(later), Some(ReqId(2)));
    }

    /// Runs the elevator as a driver with one slot would: takes what `next` gives, completes it
    /// at once, and waits out cfq's idle windows. Returns the requests in dispatch order.
    fn drain(e: &mut Elevator, owners: &[(ReqId, Owner)], now: &mut SimTime) -> Vec<ReqId> {
        let mut order = Vec::new();
        loop {
            let Some(rq) = e.next(*now) else {
                match e.idle_until() {
                    Some(t) if t > *now => {
                        *now = t;
                        continue;
                    }
                    _ => break,
                }
            };
            e.dispatched(rq);
            let owner = owners.iter().find(|(r, _)| *r == rq).expect("an owner").1;
            *now = *now + 100_000;
            e.completed(owner, *now);
            order.push(rq);
        }
        order
    }

    #[test]
    fn cfq_2620_readers_that_think_long_lose_the_idle_window_and_share_one_sorted_dispatch_list() {
        let mut e = Elevator::new(ElevatorKind::Cfq);
        e.set_cfq_2620(true);
        let ms = |n: u64| SimTime(n * 1_000_000);
        let readers = [Owner { id: 1, sync: true }, Owner { id: 2, sync: true }, Owner { id: 3, sync: true }];
        let base = [1_000u64, 400_000, 600_000];
        let mut owners = Vec::new();
        let mut now = ms(0);
        let mut id = 0;
        // Each reader reads one request every 50 ms: a new queue idles for its process first
        // (cfq_get_queue marks idle_window), so the first rounds wait out slice_idle.
        let mut idled = false;
        for round in 0..4u64 {
            now = now.max(ms(50 * round));
            for (r, &o) in readers.iter().enumerate() {
                let s = base[r] + 8 * round;
                e.add(ReqId(id), false, s, s + 8, now, o);
                owners.push((ReqId(id), o));
                id += 1;
            }
            let t0 = now;
            drain(&mut e, &owners, &mut now);
            idled |= now - t0 >= CFQ_SLICE_IDLE_NS;
        }
        assert!(idled, "young queues idle for their process's next request");
        // Three samples of a think time capped at 16 ms: no idle window any more. All three
        // queues go onto the dispatch list at once, in one-way order from where the last
        // request ended (600_032): 600_032 on up first, then round from the lowest.
        now = ms(500);
        let mut batch = Vec::new();
        for (r, &o) in readers.iter().enumerate() {
            for k in 0..2u64 {
                let s = base[r] + 32 + 8 * k;
                e.add(ReqId(id), false, s, s + 8, now, o);
                owners.push((ReqId(id), o));
                batch.push((s, ReqId(id)));
                id += 1;
            }
        }
        let first = e.next(now);
        assert_eq!(e.dispatch_list.len(), 6, "every queue's quantum is on the dispatch list");
        assert_eq!(e.idle_until(), None);
        let order = drain(&mut e, &owners, &mut now);
        assert_eq!(first, order.first().copied());
        let by_sector: Vec<ReqId> = [4, 5, 0, 1, 2, 3].iter().map(|&i| batch[i].1).collect();
        assert_eq!(order, by_sector);
        assert!(now < ms(501), "no idling between the readers: {now:?}");
    }
}
