//! `block/cfq-iosched.c`: per-process queues served round robin in time slices, with
//! `slice_idle` for a sync queue whose process thinks briefly. Two sets of rules: blkviz's
//! simplified cfq (2.6.2x), and 2.6.20's (`queue.cfq = 2.6.20`), whose queues hand quanta to
//! a sorted dispatch list and whose idle window follows the process's sampled think time.

use super::{is_live, is_queued, Elevator, ElevatorKind, Fifo, Owner};
use crate::calib::{CFQ_BACK_MAX_SECTORS, CFQ_BACK_PENALTY, CFQ_SLICE_ASYNC_RQ};
use crate::engine::ids::{ReqId, SortedMap};
use crate::engine::time::SimTime;
use crate::fs::ioprio::{IoClass, IoPrio};
use std::collections::VecDeque;

/// The async queue's key at best-effort 4; the async queue of another priority has a key
/// below it (cfq keeps one async queue per priority: `cfq_find_cfq_hash` matches the key and
/// the priority).
const CFQ_ASYNC: u32 = u32::MAX;

/// `CFQ_IDLE_GRACE` (HZ / 10): an idle-class queue is served only this long after the last
/// request of another class completed.
const CFQ_IDLE_GRACE_NS: u64 = 100 * crate::engine::time::NS_PER_MS;

/// One cfq queue (`cfq_queue`): a process's requests in sector order and in arrival order.
#[derive(Clone, Debug, Default)]
pub(super) struct CfqQueue {
    pub(super) sync: bool,
    /// Its process's I/O priority (`cfq_init_prio_data`), or the async queue's.
    pub(super) ioprio: IoPrio,
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
    /// 2.6.20: `cur_rr`, served first: real-time queues, and a queue that preempted.
    pub(super) cur_rr: VecDeque<u32>,
    /// 2.6.20: idle-class queues (`idle_rr`), served when no other queue has requests.
    pub(super) idle_rr: VecDeque<u32>,
    /// 2.6.20: the best-effort level walk (`cur_prio`, `cur_end_prio`).
    pub(super) cur_prio: u8,
    pub(super) cur_end_prio: u8,
    /// 2.6.20: when a request not of the idle class last completed (`last_end_request`).
    pub(super) last_end_request: SimTime,
    /// 2.6.30-4.0: `cfq_update_hw_tag`'s verdict, its samples and the deepest the driver
    /// held (`hw_tag_est_depth`).
    pub(super) ncq: HwTag,
}

/// `CFQ_HW_QUEUE_MIN`: a device that holds this many requests queues (2.6.29-4.0).
const CFQ_HW_QUEUE_MIN: u32 = 5;

/// 2.6.30-4.0's `hw_tag` detection (`cfq_update_hw_tag`, at each completion): counted only
/// while more than `CFQ_HW_QUEUE_MIN` requests wait in cfq or in the driver; after 50 such
/// samples the device queues if the driver ever held `CFQ_HW_QUEUE_MIN`. Until then `hw_tag`
/// is -1 in 4.0 (1 in 2.6.29), which `blk_queue_nonrot(q) && cfqd->hw_tag` takes as true.
/// 4.0 keeps a verdict of 1; 2.6.29-2.6.31 judge again every 50 samples, which on a device
/// of steady depth says the same (INFERRED for 2.6.30-2.6.31).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HwTag {
    pub(super) off: bool,
    pub(super) samples: u32,
    pub(super) est_depth: u32,
}

impl HwTag {
    /// `cfq_update_hw_tag` with the driver's and cfq's counts before the completion is taken
    /// off. Simplified: 4.0's exception for an active queue that may idle with fewer than
    /// `CFQ_HW_QUEUE_MIN` requests (it does not count the sample) is left out.
    fn update(&mut self, rq_in_driver: u32, rq_queued: u32) {
        self.est_depth = self.est_depth.max(rq_in_driver);
        if self.settled() {
            return;
        }
        if rq_queued <= CFQ_HW_QUEUE_MIN && rq_in_driver <= CFQ_HW_QUEUE_MIN {
            return;
        }
        self.samples += 1;
        if self.samples <= 50 {
            return;
        }
        self.off = self.est_depth < CFQ_HW_QUEUE_MIN;
    }

    /// 4.0 keeps a verdict that the device queues: nothing a completion counts changes it.
    fn settled(&self) -> bool {
        self.samples > 50 && !self.off
    }
}

pub(crate) fn cfq_key(o: Owner) -> u32 {
    if o.sync {
        o.id
    } else if o.ioprio == IoPrio::NORM {
        CFQ_ASYNC
    } else {
        CFQ_ASYNC - 1 - (o.ioprio.class as u32 * u32::from(crate::fs::ioprio::IOPRIO_BE_NR) + u32::from(o.ioprio.level))
    }
}

impl Elevator {
    /// cfq: a request of `owner` completed at `now`.
    pub fn completed(&mut self, owner: Owner, now: SimTime) {
        if self.kind != ElevatorKind::Cfq {
            return;
        }
        // Once the device is found to queue, the counts are not needed: no walk of the queues.
        if !self.cfq.v2620 && !self.cfq.ncq.settled() {
            let in_driver = self.cfq.queues.iter().map(|(_, q)| q.dispatched).sum::<u32>();
            let queued = self.cfq.queues.iter().map(|(_, q)| q.sorted.len() as u32).sum::<u32>();
            self.cfq.ncq.update(in_driver, queued);
        }
        if let Some(q) = self.cfq.queues.get_mut(&cfq_key(owner)) {
            q.dispatched = q.dispatched.saturating_sub(1);
            q.last_done = Some(now);
        }
        if self.cfq.v2620 {
            if owner.ioprio.class != IoClass::Idle {
                self.cfq.last_end_request = now;
            }
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
        // Others that would take the device from the active queue: of its class or a higher
        // one (a best-effort queue's slice is renewed while only idle-class queues wait).
        let busy_others = |c: &Cfq, a: u32| {
            let class = c.queues[&a].ioprio.class;
            c.rr.iter().any(|&k| k != a && c.queues[&k].ioprio.class <= class)
        };
        loop {
            if let Some(a) = self.cfq.active {
                let expired = now >= self.cfq.slice_end;
                let others = busy_others(&self.cfq, a);
                let q = &self.cfq.queues[&a];
                if !q.sorted.is_empty() && (!expired || !others) {
                    if expired {
                        // Alone on the device: its slice ends and `cfq_set_active_queue` gives
                        // it the next one (`__cfq_set_active_queue` clears `fifo_expire`).
                        self.cfq.slice_end = now + q.ioprio.slice(self.tun.cfq_slice_ns(q.sync));
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
                // A non-rotational device that queues (2.6.29+): `cfq_arm_slice_timer` does not
                // idle, and `cfq_should_idle` waits for the queue's requests in the driver
                // only while it is the last on its service tree (no others wait).
                let ssd = self.bfq.nonrot && !self.cfq.ncq.off;
                // slice_idle 0: cfq_should_idle says no, so neither wait nor idle.
                if q.sorted.is_empty() && !expired && q.sync && idle_ok && self.tun.cfq_slice_idle_ns > 0 && !(ssd && others) {
                    if q.dispatched > 0 {
                        // Wait for its requests to complete; the idle window opens then.
                        return None;
                    }
                    if !ssd {
                        let until = *self.cfq.idle_until.get_or_insert(now + self.tun.cfq_slice_idle_ns);
                        if now < until {
                            return None;
                        }
                    }
                }
                // The slice is over (expired, ran dry, or idled in vain).
                self.cfq.active = None;
                self.cfq.idle_until = None;
                if !self.cfq.queues[&a].sorted.is_empty() {
                    self.cfq.rr.push_back(a);
                }
            }
            // The service trees in class order: real time, best effort, idle; in each, the
            // queue waiting longest.
            let queues = &self.cfq.queues;
            let at = self.cfq.rr.iter().enumerate().min_by_key(|&(i, k)| (queues[k].ioprio.class, i)).map(|(i, _)| i)?;
            let next = self.cfq.rr.remove(at).expect("a queue on the round robin");
            let q = &self.cfq.queues[&next];
            self.cfq.active = Some(next);
            self.cfq.idle_until = None;
            self.cfq.fifo_checked = false;
            self.cfq.slice_end = now + q.ioprio.slice(self.tun.cfq_slice_ns(q.sync));
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
        q.ioprio = owner.ioprio;
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
        } else {
            self.cfq_preempt_by_class(key);
        }
    }

    /// `cfq_should_preempt` (2.6.30-2.6.39) by class: a real-time request preempts a queue
    /// of a lower class, and any request one of the idle class (`cfq_preempt_queue`: the
    /// active queue's slice ends, the new one is served next).
    fn cfq_preempt_by_class(&mut self, key: u32) {
        let Some(a) = self.cfq.active else { return };
        let (new, cur) = (self.cfq.queues[&key].ioprio.class, self.cfq.queues[&a].ioprio.class);
        let preempts = (new == IoClass::Rt && cur != IoClass::Rt) || (cur == IoClass::Idle && new != IoClass::Idle);
        if !preempts {
            return;
        }
        self.cfq.active = None;
        self.cfq.idle_until = None;
        if !self.cfq.queues[&a].sorted.is_empty() {
            self.cfq.rr.push_back(a);
        }
        self.cfq.rr.retain(|&k| k != key);
        self.cfq.rr.push_front(key);
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

/// 2.6.20's cfq (`block/cfq-iosched.c` of v2.6.20, `queue.cfq = 2.6.20`), with its classes and
/// levels. Simplified: the best-effort level walk runs at each choice of a queue (the kernel
/// splices a level's whole list at once; the two agree while a level has one busy queue);
/// preemption only of an idle-class queue (`cfq_should_preempt`'s other case needs a waiting
/// new queue with slice left, which these workloads do not make); time in nanoseconds instead
/// of jiffies.
impl Elevator {
    /// Whether a queue is on the round robin (`cfq_cfqq_on_rr`: it has requests in its sort
    /// list; the active queue stays on it in the kernel, here it is held apart).
    fn cfq2620_busy(&self) -> bool {
        let c = &self.cfq;
        !c.rr.is_empty()
            || !c.busy_rr.is_empty()
            || !c.cur_rr.is_empty()
            || !c.idle_rr.is_empty()
            || self.cfq.active.is_some_and(|a| !self.cfq.queues[&a].sorted.is_empty())
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
            // An idle-class queue puts one request at a time on the list.
            let max = if self.cfq.queues[&k].ioprio.class == IoClass::Idle { 1 } else { self.tun.cfq_quantum };
            self.cfq2620_dispatch_quantum(k, max, now);
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
        self.cfq2620_set_active_queue(now)
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
        self.cfq2620_unlist(k);
        let q = &self.cfq.queues[&k];
        let (class, dispatched, queue_new) = (q.ioprio.class, q.dispatched, q.v2620.queue_new);
        let c = &mut self.cfq;
        let list = match class {
            IoClass::Rt => &mut c.cur_rr,
            IoClass::Idle => &mut c.idle_rr,
            IoClass::Be if dispatched > 0 => &mut c.busy_rr,
            IoClass::Be => &mut c.rr,
        };
        if queue_new {
            let queues = &c.queues;
            let at = list.iter().take_while(|x| queues[x].v2620.queue_new).count();
            list.insert(at, k);
        } else {
            list.push_back(k);
        }
    }

    /// The queue off every service list.
    fn cfq2620_unlist(&mut self, k: u32) {
        let c = &mut self.cfq;
        for list in [&mut c.rr, &mut c.busy_rr, &mut c.cur_rr, &mut c.idle_rr] {
            list.retain(|&x| x != k);
        }
    }

    fn cfq2620_listed(&self, k: u32) -> bool {
        let c = &self.cfq;
        [&c.rr, &c.busy_rr, &c.cur_rr, &c.idle_rr].iter().any(|l| l.contains(&k))
    }

    /// `cfq_get_next_prio_level`: the best-effort level to serve next, walking 0; 0,1;
    /// 0,1,2 … 0..7 so a higher level is served more often; the first queue waiting at it.
    fn cfq2620_next_prio_level(&mut self) -> Option<usize> {
        let c = &mut self.cfq;
        let queues = &c.queues;
        let first_at = |p: u8| c.rr.iter().position(|k| queues[k].ioprio.level == p);
        let mut wrap = false;
        let (p, at) = loop {
            if let Some(found) = (c.cur_prio..=c.cur_end_prio).find_map(|p| first_at(p).map(|at| (p, at))) {
                break found;
            }
            c.cur_prio = 0;
            c.cur_end_prio += 1;
            if c.cur_end_prio == crate::fs::ioprio::IOPRIO_BE_NR {
                c.cur_end_prio = 0;
                if wrap {
                    return None;
                }
                wrap = true;
            }
        };
        c.cur_prio = p + 1;
        if c.cur_prio > c.cur_end_prio {
            c.cur_end_prio = c.cur_prio;
            c.cur_prio = 0;
        }
        if c.cur_end_prio == crate::fs::ioprio::IOPRIO_BE_NR {
            c.cur_prio = 0;
            c.cur_end_prio = 0;
        }
        Some(at)
    }

    /// `cfq_set_active_queue`: `cur_rr`'s first queue, else the first of the next best-effort
    /// level, else the first of `busy_rr`, else an idle-class queue once `CFQ_IDLE_GRACE` has
    /// passed since the last other request completed (the idle-class timer runs the queue
    /// then).
    fn cfq2620_set_active_queue(&mut self, now: SimTime) -> Option<u32> {
        let mut k = self.cfq.cur_rr.pop_front();
        if k.is_none() {
            k = self.cfq2620_next_prio_level().and_then(|at| self.cfq.rr.remove(at));
        }
        k = k.or_else(|| self.cfq.busy_rr.pop_front());
        if k.is_none() && !self.cfq.idle_rr.is_empty() {
            let end = self.cfq.last_end_request + CFQ_IDLE_GRACE_NS;
            if now >= end {
                k = self.cfq.idle_rr.pop_front();
            } else {
                self.cfq.idle_until = Some(end);
                return None;
            }
        }
        let k = k?;
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
                self.cfq2620_unlist(k);
                break;
            }
            if n >= max {
                break;
            }
        }
        let q = self.cfq.queues.get_mut(&k).expect("queue");
        if q.v2620.slice_end.is_none() {
            q.v2620.slice_end = Some(now + q.ioprio.slice(self.tun.cfq_slice_ns(q.sync)));
        }
        let maxrq = q.ioprio.maxrq(CFQ_SLICE_ASYNC_RQ);
        if (!q.sync && self.cfq.dispatch_slice >= maxrq) || q.ioprio.class == IoClass::Idle || !q.v2620.idle_window {
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
        q.ioprio = owner.ioprio;
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
        } else {
            if was_empty && !self.cfq2620_listed(key) {
                self.cfq2620_resort_rr_list(key);
            }
            self.cfq2620_preempt_idle(key, now);
        }
    }

    /// `cfq_should_preempt` → `cfq_preempt_queue`: a request of another class ends an
    /// idle-class queue's slice, and its queue goes to the head of `cur_rr`.
    fn cfq2620_preempt_idle(&mut self, key: u32, now: SimTime) {
        let Some(a) = self.cfq.active else { return };
        if self.cfq.queues[&a].ioprio.class != IoClass::Idle || self.cfq.queues[&key].ioprio.class == IoClass::Idle {
            return;
        }
        self.cfq2620_slice_expired(now);
        self.cfq2620_unlist(key);
        self.cfq.cur_rr.push_front(key);
    }

    /// `cfq_completed_request`: a queue with nothing dispatched any more leaves `busy_rr` for
    /// the round robin. (Whether the active queue idles is decided when the queue runs next.)
    fn cfq2620_completed(&mut self, key: u32) {
        self.cfq.rq_in_driver = self.cfq.rq_in_driver.saturating_sub(1);
        let Some(q) = self.cfq.queues.get(&key) else { return };
        if q.dispatched == 0 && self.cfq.busy_rr.contains(&key) {
            self.cfq2620_resort_rr_list(key);
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
#[path = "cfq_tests.rs"]
mod tests;
