//! `block/bfq-iosched.c` and `block/bfq-iosched.h` (v5.10, with `bfq_select_queue`,
//! `__bfq_bfqq_recalc_budget`, `bfq_bfqq_is_slow`, `bfq_bfqq_expire` and `bfq_completed_request`
//! read in the 4.1x and later copies, which 5.10 keeps): per-process queues served by B-WF2Q+
//! (`bfq_wf2q.rs`) in budgets of sectors. The in-service queue keeps the device until its
//! budget is spent, its budget timeout (`timeout_sync`) passes or it empties; a sync queue that
//! empties is given `slice_idle` for its process's next request, and a slow (seeky) queue is
//! charged the time it held the device, not the sectors it moved.
//!
//! Not modelled: cgroups (`bfq_group`), queue merging (`bfq_setup_cooperator`), I/O injection
//! while idling (`bfq_choose_bfqq_for_injection`), the peak-rate estimator
//! (`bfq_update_peak_rate`: `max_budget` 0 stays `bfq_default_max_budget`, and the
//! weight-raising duration stays the one the initial rate gives), burst detection, soft
//! real-time raising (only interactive raising is), `strict_guarantees`, the `IO_bound` flag
//! (every queue is I/O bound), and the per-queue think-time test of the idle window (a sync
//! queue idles unless `hw_tag` and seeky).

use super::bfq_wf2q::{BfqEntity, BfqServiceTree};
use crate::block::elevator::{ElevatorKind, Owner};
use crate::engine::event::Event;
use crate::engine::ids::{DevId, ReqId, SortedMap};
use crate::engine::time::{SimTime, NS_PER_MS};
use crate::engine::Sim;
use crate::fs::ioprio::{IoClass, IoPrio, IOPRIO_BE_NR};

/// `BFQ_WEIGHT_CONVERSION_COEFF`.
const BFQ_WEIGHT_CONVERSION_COEFF: u64 = 10;
/// `bfq_default_max_budget`: 16 Ki sectors.
pub const BFQ_DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// `bfq_async_charge_factor` (v5.10): an async request costs three times its sectors.
const BFQ_ASYNC_CHARGE_FACTOR: u64 = 3;
/// `BFQ_MIN_TT`: the idle slice for a seeky queue (2 ms).
const BFQ_MIN_TT_NS: u64 = 2 * NS_PER_MS;
/// `BFQQ_SEEK_THR` (8 × 100 sectors), `BFQQ_SECT_THR_NONROT` (2 × 32), and `BFQQ_SEEKY`: more
/// than 19 of the last 32 requests seeky.
const BFQQ_SEEK_THR: u64 = 800;
const BFQQ_SECT_THR_NONROT: u64 = 64;
const BFQQ_SEEKY_MIN: u32 = 19;
/// `BFQ_HW_QUEUE_THRESHOLD`: more requests in the driver than this sets `hw_tag`.
const BFQ_HW_QUEUE_THRESHOLD: u32 = 4;
/// `bfq_fifo_expire`: sync 125 ms, async 250 ms.
const BFQ_FIFO_EXPIRE_NS: [u64; 2] = [250 * NS_PER_MS, 125 * NS_PER_MS];
/// `bfq_back_max` (16 Ki sectors) and `bfq_back_penalty` (2).
const BFQ_BACK_MAX: u64 = 16 * 1024;
const BFQ_BACK_PENALTY: u64 = 2;
/// Weight raising: `bfq_wr_coeff` 30, `bfq_wr_min_idle_time` 2 s, `max_service_from_wr`
/// 120000 sectors, and the raising time `bfq_wr_duration` gives at the initial peak rate
/// (`ref_rate × 2/3`): 1.5 × `ref_wr_duration`, 7 s on a rotational disk, 2.5 s otherwise
/// (`bfq_init`), within 3 s to 13 s.
const BFQ_WR_COEFF: u64 = 30;
const BFQ_WR_MIN_IDLE_TIME_NS: u64 = 2000 * NS_PER_MS;
const MAX_SERVICE_FROM_WR: u64 = 120_000;
const BFQ_WR_DURATION_NS: [u64; 2] = [10_500 * NS_PER_MS, 3_750 * NS_PER_MS];
/// The async queues (`async_bfqq[2][IOPRIO_BE_NR]` and `async_idle_bfqq`) above the sync ones.
const BFQ_ASYNC_QUEUES: usize = 2 * IOPRIO_BE_NR as usize + 1;

/// `bfq_ioprio_to_weight`: level 0 weighs 80, level 7 10.
pub fn bfq_ioprio_to_weight(level: u8) -> u64 {
    u64::from(IOPRIO_BE_NR.saturating_sub(level)) * BFQ_WEIGHT_CONVERSION_COEFF
}

/// Why the in-service queue stops being served (`enum bfqq_expiration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiration {
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
}

/// BFQ's sysfs tunables (`queue/iosched/` under bfq).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfqTunables {
    pub slice_idle_ns: u64,
    pub timeout_sync_ns: u64,
    /// `max_budget` in sectors; 0: auto (`bfq_default_max_budget` here).
    pub max_budget: u64,
    pub low_latency: bool,
}

impl Default for BfqTunables {
    fn default() -> Self {
        BfqTunables {
            slice_idle_ns: crate::calib::BFQ_SLICE_IDLE_NS,
            timeout_sync_ns: crate::calib::BFQ_TIMEOUT_SYNC_NS,
            max_budget: 0,
            low_latency: true,
        }
    }
}

/// A waiting request as its queue holds it.
#[derive(Clone, Copy, Debug)]
struct BfqRq {
    start: u64,
    sectors: u64,
    fifo_time: SimTime,
}

/// `bfq_queue`: one process's sync requests, or one priority's async ones.
#[derive(Clone, Debug, Default)]
pub struct BfqQueue {
    pub sync: bool,
    pub ioprio: IoPrio,
    pub entity: BfqEntity,
    /// Its waiting requests: by id, in sector order (`sort_list`) and in arrival order.
    rqs: SortedMap<ReqId, BfqRq>,
    sorted: SortedMap<(u64, ReqId), ()>,
    fifo: SortedMap<(SimTime, ReqId), ()>,
    /// Requests dispatched and not completed.
    pub dispatched: u32,
    /// On a service tree or in service (`bfq_bfqq_busy`).
    pub busy: bool,
    /// `bfqq->max_budget`: the budget its next turn is given.
    pub max_budget: u64,
    pub budget_timeout: SimTime,
    /// The FIFO was looked at this budget (`fifo_expire`).
    fifo_checked: bool,
    /// `seek_history` and `last_request_pos`.
    seek_history: u32,
    last_request_pos: u64,
    /// Weight raising: the coefficient (1: none), since when, and the service while raised.
    pub wr_coeff: u64,
    last_wr_start_finish: SimTime,
    service_from_wr: u64,
    created: bool,
    /// Never busy yet: `bfq_init_bfqq` sets `budget_timeout` in the far past, so a new queue
    /// counts as idle for long.
    never_busy: bool,
}

impl BfqQueue {
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > BFQQ_SEEKY_MIN
    }

    /// `bfq_class_idle`.
    fn class_idle(&self) -> bool {
        self.ioprio.class == IoClass::Idle
    }

    fn budget_left(&self) -> u64 {
        self.entity.budget.saturating_sub(self.entity.service)
    }

    fn class(&self) -> usize {
        self.ioprio.class as usize
    }

    /// What the budget must cover for its next request to be served: the kernel takes
    /// `bfq_serv_to_charge(next_rq)`; here the largest waiting request at the async factor,
    /// so that whichever `next_rq` picks fits (a queue's requests are alike in practice).
    fn largest_charge(&self) -> u64 {
        let factor = if self.sync { 1 } else { BFQ_ASYNC_CHARGE_FACTOR };
        self.rqs.iter().map(|(_, r)| r.sectors).max().unwrap_or(0) * factor
    }
}

/// `bfq_data`: the queues, the three classes' service trees (real time, best effort, idle),
/// the in-service queue and its idle timer.
#[derive(Clone, Debug, Default)]
pub struct BfqData {
    pub tun: BfqTunables,
    /// Not a rotational disk (`blk_queue_nonrot`).
    pub nonrot: bool,
    pub queues: SortedMap<u32, BfqQueue>,
    st: [BfqServiceTree; 3],
    pub in_service: Option<u32>,
    /// The in-service queue is idling (`wait_request`) until the idle timer's deadline.
    pub wait_request: bool,
    pub idle_timer: Option<SimTime>,
    /// A timer armed since the caller last looked (`bfq_arm_slice_timer`'s `hrtimer_start`).
    pub timer_armed: bool,
    last_budget_start: SimTime,
    last_idling_start: SimTime,
    /// Requests in the driver, and whether it ever held more than 4 (`hw_tag`).
    pub rq_in_driver: u32,
    hw_tag: bool,
    /// Waiting requests (`bfqd->queued`) and queues on a tree or in service (`busy_queues`).
    pub queued: u32,
    pub busy_queues: u32,
    /// Where the last dispatched request ended (`last_position`).
    last_position: u64,
}

/// The queue a request of `owner` goes to: the process's sync queue, or its priority's async
/// queue (`bfq_async_queue_prio`), keyed as cfq keys them.
pub fn bfq_key(owner: Owner) -> u32 {
    crate::block::elevator::cfq::cfq_key(owner)
}

impl BfqData {
    /// `bfq_max_budget`: the user's `max_budget`, or `bfq_default_max_budget`.
    fn max_budget(&self) -> u64 {
        if self.tun.max_budget > 0 {
            self.tun.max_budget
        } else {
            BFQ_DEFAULT_MAX_BUDGET
        }
    }

    /// `bfq_min_budget`: max_budget / 32.
    fn min_budget(&self) -> u64 {
        self.max_budget() / 32
    }

    fn wr_duration(&self) -> u64 {
        BFQ_WR_DURATION_NS[self.nonrot as usize]
    }

    /// `bfq_has_work`.
    pub fn has_work(&self) -> bool {
        self.busy_queues > 0
    }

    /// `bfq_symmetric_scenario`: every busy queue of one class and one weight.
    fn symmetric(&self) -> bool {
        let mut busy = self.queues.iter().map(|(_, q)| q).filter(|q| q.busy);
        let Some(first) = busy.next() else { return true };
        busy.all(|q| q.entity.weight == first.entity.weight && q.class() == first.class())
    }

    /// `bfq_serv_to_charge`: the sectors, three times over for an async queue unless raised
    /// or the scenario asymmetric.
    fn serv_to_charge(&self, q: &BfqQueue, sectors: u64) -> u64 {
        if q.sync || q.wr_coeff > 1 || !self.symmetric() {
            sectors
        } else {
            sectors * BFQ_ASYNC_CHARGE_FACTOR
        }
    }

    /// `bfq_better_to_idle` (`bfq_bfqq_may_idle` before 5.0): a sync queue, not of the idle
    /// class, when idling boosts throughput (no `hw_tag`, or a rotational disk and not a
    /// seeky queue's idle window) or the others' share needs it (an asymmetric scenario).
    fn better_to_idle(&self, k: u32) -> bool {
        let q = &self.queues[&k];
        if !q.sync || q.class_idle() || self.tun.slice_idle_ns == 0 {
            return false;
        }
        let idle_window = !(self.hw_tag && q.seeky() && q.wr_coeff == 1);
        let boosts_thr = !self.hw_tag || (!self.nonrot && idle_window);
        let wr_busy = self.queues.iter().any(|(_, q)| q.busy && q.wr_coeff > 1);
        (boosts_thr && !wr_busy) || q.wr_coeff > 1 || !self.symmetric()
    }

    /// `bfq_bfqq_must_idle`: empty, and better to idle.
    fn must_idle(&self, k: u32) -> bool {
        self.queues[&k].sorted.is_empty() && self.better_to_idle(k)
    }

    /// `bfq_may_expire_for_budg_timeout`.
    fn may_expire_for_budg_timeout(&self, k: u32, now: SimTime) -> bool {
        let q = &self.queues[&k];
        (!self.wait_request || q.budget_left() >= q.entity.budget / 3) && now >= q.budget_timeout
    }

    /// `bfq_get_queue` + `bfq_init_bfqq`: a new queue's weight from its priority, and
    /// `max_budget` at two thirds of the device's.
    fn get_queue(&mut self, key: u32, owner: Owner) -> &mut BfqQueue {
        let max_budget = 2 * self.max_budget() / 3;
        assert!(self.queues.len() <= crate::scenario::limits::JOBS_MAX as usize * 4 + BFQ_ASYNC_QUEUES, "bfq queues over their bound");
        let q = self.queues.get_or_insert_default(key);
        if !q.created {
            let weight = bfq_ioprio_to_weight(owner.ioprio.level);
            q.created = true;
            q.sync = owner.sync;
            q.ioprio = owner.ioprio;
            q.entity = BfqEntity { weight, orig_weight: weight, budget: max_budget, ..BfqEntity::default() };
            q.max_budget = max_budget;
            q.seek_history = 1;
            q.wr_coeff = 1;
            q.never_busy = true;
        }
        q
    }

    /// `bfq_insert_request` → `bfq_add_request` and `bfq_rq_enqueued`: the request joins its
    /// queue; an idle queue becomes busy (weight-raised first if it looks interactive); the
    /// in-service queue's idling ends if this is what it waited for.
    pub fn add_request(&mut self, rq: ReqId, start: u64, end: u64, owner: Owner, now: SimTime) {
        let key = bfq_key(owner);
        let nonrot = self.nonrot;
        let q = self.get_queue(key, owner);
        let sectors = end - start;
        // bfq_update_io_seektime.
        let seeky = start.abs_diff(q.last_request_pos) > BFQQ_SEEK_THR && (!nonrot || sectors < BFQQ_SECT_THR_NONROT);
        q.seek_history = (q.seek_history << 1) | seeky as u32;
        q.last_request_pos = end;
        let fifo_time = now + BFQ_FIFO_EXPIRE_NS[owner.sync as usize];
        assert!(q.rqs.insert(rq, BfqRq { start, sectors, fifo_time }).is_none(), "a request in its bfq queue twice");
        q.sorted.insert((start, rq), ());
        q.fifo.insert((fifo_time, rq), ());
        self.queued += 1;
        if !self.queues[&key].busy {
            self.add_bfqq_busy(key, now);
        } else if self.in_service == Some(key) && self.wait_request {
            let q = &self.queues[&key];
            let small = q.rqs.len() == 1 && sectors < 32;
            let timeout = now >= q.budget_timeout;
            let boosts_thr = !self.hw_tag || !nonrot;
            if !(small && boosts_thr && !timeout) {
                self.wait_request = false;
                self.idle_timer = None;
                if timeout {
                    self.expire(now, false, Expiration::BudgetTimeout);
                }
            }
        }
    }

    /// `bfq_bfqq_handle_idle_busy_switch` → `bfq_add_bfqq_busy`: with `low_latency` a sync queue
    /// new or idle for `bfq_wr_min_idle_time` is raised as interactive; its budget covers
    /// its next request (`bfq_bfqq_update_budg_for_activation`), and it joins its class's tree.
    fn add_bfqq_busy(&mut self, key: u32, now: SimTime) {
        let low_latency = self.tun.low_latency;
        let min_budget = self.min_budget();
        let q = self.queues.get_mut(&key).expect("just made");
        let idle_long = std::mem::take(&mut q.never_busy) || now >= q.budget_timeout + BFQ_WR_MIN_IDLE_TIME_NS;
        if low_latency && q.sync && !q.class_idle() && idle_long && q.wr_coeff == 1 {
            q.wr_coeff = BFQ_WR_COEFF;
            q.last_wr_start_finish = now;
            q.service_from_wr = 0;
        }
        q.entity.weight = q.entity.orig_weight * q.wr_coeff;
        let budget = if q.wr_coeff > 1 { 2 * min_budget } else { q.max_budget };
        q.entity.budget = budget.max(q.largest_charge());
        q.busy = true;
        let class = q.class();
        let mut e = q.entity;
        self.st[class].activate(key, &mut e);
        self.queues.get_mut(&key).expect("just made").entity = e;
        self.busy_queues += 1;
    }

    /// `bfq_update_wr_data` at a dispatch: raising ends after its duration or
    /// `max_service_from_wr` sectors.
    fn update_wr_data(&mut self, key: u32, now: SimTime) {
        let wr_duration = self.wr_duration();
        let q = self.queues.get_mut(&key).expect("in service");
        if q.wr_coeff == 1 || (now < q.last_wr_start_finish + wr_duration && q.service_from_wr <= MAX_SERVICE_FROM_WR) {
            return;
        }
        // bfq_bfqq_end_wr: back to its own weight; in service, it is off its tree.
        q.wr_coeff = 1;
        q.last_wr_start_finish = now;
        let (old, new) = (q.entity.weight, q.entity.orig_weight);
        q.entity.weight = new;
        let st = &mut self.st[q.class()];
        st.wsum = st.wsum - old + new;
    }

    /// The request `bfq_dispatch_request` would take at `now`: `bfq_select_queue`, then that
    /// queue's next request. None: nothing, or the in-service queue is idling.
    pub fn next(&mut self, now: SimTime) -> Option<ReqId> {
        let k = self.select_queue(now)?;
        self.next_rq(k, now)
    }

    /// `bfq_check_fifo` (once a budget) and then `bfq_choose_req` from `last_position`: the
    /// nearest request ahead, or one behind within `bfq_back_max` if nearer at twice the cost.
    fn next_rq(&mut self, k: u32, now: SimTime) -> Option<ReqId> {
        let pos = self.last_position;
        let q = self.queues.get_mut(&k).expect("selected");
        if !q.fifo_checked {
            q.fifo_checked = true;
            if let Some((&(t, rq), _)) = q.fifo.iter().next() {
                if now >= t {
                    return Some(rq);
                }
            }
        }
        let ahead = q.sorted.range((pos, ReqId(0))..).next().map(|(&(s, rq), _)| (s - pos, rq));
        let behind = q.sorted.range(..(pos, ReqId(0))).last().map(|(&(s, rq), _)| (pos - s, rq));
        match (ahead, behind) {
            (Some((d1, _)), Some((d2, r2))) if d2 <= BFQ_BACK_MAX && d2 * BFQ_BACK_PENALTY < d1 => Some(r2),
            (Some((_, r1)), _) => Some(r1),
            (None, Some((_, r2))) => Some(r2),
            (None, None) => None,
        }
    }

    /// `bfq_select_queue`: keep the in-service queue while its budget covers its next request
    /// and its budget timeout has not passed; keep it idle while it waits for a request;
    /// otherwise expire it and take the next from B-WF2Q+.
    fn select_queue(&mut self, now: SimTime) -> Option<u32> {
        let mut reason = Expiration::BudgetTimeout;
        let mut k = self.in_service;
        let limit = 2 * self.queues.len() + 4;
        for _ in 0..limit {
            let Some(key) = k else {
                k = Some(self.set_in_service_queue(now)?);
                continue;
            };
            if reason == Expiration::BudgetTimeout
                && self.may_expire_for_budg_timeout(key, now)
                && !self.wait_request
                && !self.must_idle(key)
            {
                self.expire(now, false, reason);
                (k, reason) = (None, Expiration::NoMoreRequests);
                continue;
            }
            reason = Expiration::NoMoreRequests;
            if let Some(rq) = self.next_rq(key, now) {
                let q = &self.queues[&key];
                let charge = self.serv_to_charge(q, q.rqs[&rq].sectors);
                if charge > q.budget_left() {
                    self.expire(now, false, Expiration::BudgetExhausted);
                    k = None;
                    continue;
                }
                if self.wait_request {
                    self.wait_request = false;
                    self.idle_timer = None;
                }
                return Some(key);
            }
            if self.wait_request || (self.queues[&key].dispatched != 0 && self.better_to_idle(key)) {
                return None;
            }
            self.expire(now, false, Expiration::NoMoreRequests);
            k = None;
        }
        unreachable!("bfq_select_queue ends within two passes over its queues")
    }

    /// `bfq_set_in_service_queue` → `bfq_get_next_queue`: the first class with a busy queue,
    /// its next entity by B-WF2Q+; `__bfq_set_in_service_queue` starts its budget timeout.
    fn set_in_service_queue(&mut self, now: SimTime) -> Option<u32> {
        let class = (0..3).find(|&c| !self.st[c].is_empty())?;
        let key = self.st[class].lookup_next().expect("a busy entity");
        let timeout = self.tun.timeout_sync_ns;
        let q = self.queues.get_mut(&key).expect("on a tree");
        self.st[class].extract(key, &q.entity);
        q.fifo_checked = false;
        // bfq_set_budget_timeout: timeout_sync × weight / orig_weight, but 1 for interactive
        // raising (its coefficient is bfq_wr_coeff).
        let coeff = if q.wr_coeff == BFQ_WR_COEFF { 1 } else { q.entity.weight / q.entity.orig_weight.max(1) };
        q.budget_timeout = now + timeout * coeff.max(1);
        self.last_budget_start = now;
        self.in_service = Some(key);
        Some(key)
    }

    /// `bfq_dispatch_rq_from_bfqq`: the chosen request leaves its queue, charged to the
    /// queue's budget and the tree's virtual time (`bfq_bfqq_served`); an idle-class queue
    /// with others busy is expired at once.
    pub fn dispatched(&mut self, rq: ReqId, owner: Owner, now: SimTime) {
        let key = bfq_key(owner);
        let q = &self.queues[&key];
        let r = *q.rqs.get(&rq).expect("dispatching a request not in its bfq queue");
        let charge = self.serv_to_charge(q, r.sectors);
        let q = self.queues.get_mut(&key).expect("its queue");
        q.rqs.remove(&rq);
        q.sorted.remove(&(r.start, rq));
        q.fifo.remove(&(r.fifo_time, rq));
        q.dispatched += 1;
        self.queued -= 1;
        self.rq_in_driver += 1;
        self.hw_tag |= self.rq_in_driver > BFQ_HW_QUEUE_THRESHOLD;
        self.last_position = r.start + r.sectors;
        if self.in_service != Some(key) {
            // Only the in-service queue's requests are chosen; one moved over by a live
            // elevator switch is sent as it is.
            return;
        }
        self.served(key, charge);
        self.update_wr_data(key, now);
        if self.busy_queues > 1 && self.queues[&key].class_idle() {
            self.expire(now, false, Expiration::BudgetExhausted);
        }
    }

    /// `bfq_bfqq_served`: the queue's service and its tree's virtual time.
    fn served(&mut self, key: u32, sectors: u64) {
        let q = self.queues.get_mut(&key).expect("in service");
        q.entity.service += sectors;
        if q.wr_coeff > 1 {
            q.service_from_wr += sectors;
        }
        let class = q.class();
        self.st[class].served(sectors);
    }

    /// `bfq_bfqq_expire`: a slow queue (seeky, or under half of `max_budget` in a turn over
    /// 20 ms), or one that timed out with a third of its budget left, is charged the time it
    /// held the device as `max_budget` × time / `timeout_sync` (`bfq_bfqq_charge_time`); its
    /// next budget follows from why it expired (`__bfq_bfqq_recalc_budget`); then it leaves
    /// service, back on its tree if it has requests (`__bfq_bfqq_expire`).
    pub fn expire(&mut self, now: SimTime, compensate: bool, reason: Expiration) {
        let key = self.in_service.expect("expiring the in-service queue");
        let (slow, delta_ns) = self.is_slow(key, now, compensate);
        let q = &self.queues[&key];
        let left = q.budget_left();
        if q.wr_coeff == 1 && (slow || (reason == Expiration::BudgetTimeout && left >= q.entity.budget / 3)) {
            self.charge_time(key, delta_ns);
        }
        if self.tun.low_latency && self.queues[&key].wr_coeff == 1 {
            self.queues.get_mut(&key).expect("in service").last_wr_start_finish = now;
        }
        self.recalc_budget(key, reason);
        let q = self.queues.get_mut(&key).expect("in service");
        let class = q.class();
        let mut e = q.entity;
        if q.sorted.is_empty() {
            if q.dispatched == 0 {
                q.budget_timeout = now;
            }
            q.busy = false;
            self.st[class].deactivate_in_service(&mut e);
            self.busy_queues -= 1;
        } else {
            self.st[class].requeue_in_service(key, &mut e);
        }
        self.queues.get_mut(&key).expect("in service").entity = e;
        // __bfq_bfqd_reset_in_service: the idle timer is cancelled.
        self.in_service = None;
        self.wait_request = false;
        self.idle_timer = None;
    }

    /// `bfq_bfqq_is_slow`: the time since the budget started (to the idling's start when
    /// `compensate`), at least one seek's (`slice_idle`, or `BFQ_MIN_TT` off rotational
    /// disks) when under 1 ms.
    fn is_slow(&self, key: u32, now: SimTime, compensate: bool) -> (bool, u64) {
        let q = &self.queues[&key];
        if !q.sync {
            return (false, 0);
        }
        let end = if compensate { self.last_idling_start } else { now };
        let delta = end.0.saturating_sub(self.last_budget_start.0);
        if delta < 1_000_000 {
            let min = if self.nonrot { BFQ_MIN_TT_NS } else { crate::calib::BFQ_SLICE_IDLE_NS };
            return (q.seeky(), min);
        }
        let slow = if delta > 20 * NS_PER_MS { q.entity.service < self.max_budget() / 2 } else { q.seeky() };
        (slow, delta)
    }

    /// `bfq_bfqq_charge_time`.
    fn charge_time(&mut self, key: u32, delta_ns: u64) {
        let timeout_ms = (self.tun.timeout_sync_ns / NS_PER_MS).max(1);
        let bounded_ms = (delta_ns / NS_PER_MS).min(timeout_ms);
        let for_time = self.max_budget() * bounded_ms / timeout_ms;
        let q = self.queues.get_mut(&key).expect("in service");
        let total = for_time.max(q.entity.service);
        q.entity.budget = q.entity.budget.max(total);
        let more = total - q.entity.service;
        self.served(key, more);
    }

    /// `__bfq_bfqq_recalc_budget`: a sync queue's next budget doubles on a timeout, grows
    /// fourfold when spent, shrinks to what it used when it emptied, and shrinks by 4 ×
    /// `min_budget` when it idled in vain with nothing in flight; an async queue gets
    /// `max_budget`, a raised one 2 × `min_budget`.
    fn recalc_budget(&mut self, key: u32, reason: Expiration) {
        let (max, min) = (self.max_budget(), self.min_budget());
        let q = self.queues.get_mut(&key).expect("in service");
        let mut budget = if q.wr_coeff == 1 { q.max_budget } else { 2 * min };
        if q.sync && q.wr_coeff == 1 {
            budget = match reason {
                Expiration::TooIdle if q.dispatched > 0 => (budget * 2).min(max),
                Expiration::TooIdle if budget > 5 * min => budget - 4 * min,
                Expiration::TooIdle => min,
                Expiration::BudgetTimeout => (budget * 2).min(max),
                Expiration::BudgetExhausted => (budget * 4).min(max),
                Expiration::NoMoreRequests => q.entity.service.max(min),
            };
        } else if !q.sync {
            budget = max;
        }
        q.max_budget = budget.min(max);
        if !q.rqs.is_empty() {
            q.entity.budget = q.max_budget.max(q.largest_charge());
        }
    }

    /// `bfq_completed_request`: the in-service queue, empty and with nothing left in flight,
    /// idles for its process if it is better to (`bfq_arm_slice_timer`); else it expires on
    /// its budget timeout or for want of requests. True: nothing is left in the driver, and
    /// `bfq_schedule_dispatch` runs the hardware queues.
    pub fn completed(&mut self, owner: Owner, now: SimTime) -> bool {
        let key = bfq_key(owner);
        let Some(q) = self.queues.get_mut(&key) else { return false };
        if q.dispatched == 0 {
            // Issued before a live switch to bfq: nothing of bfq's to account.
            return false;
        }
        q.dispatched -= 1;
        self.rq_in_driver -= 1;
        if self.in_service == Some(key) {
            let q = &self.queues[&key];
            if self.must_idle(key) {
                if q.dispatched == 0 {
                    self.arm_slice_timer(key, now);
                }
            } else if self.may_expire_for_budg_timeout(key, now) {
                self.expire(now, false, Expiration::BudgetTimeout);
            } else if q.sorted.is_empty() && (q.dispatched == 0 || !self.better_to_idle(key)) {
                self.expire(now, false, Expiration::NoMoreRequests);
            }
        }
        self.rq_in_driver == 0
    }

    /// `bfq_arm_slice_timer`: `slice_idle`, or `BFQ_MIN_TT` for a seeky queue not raised in a
    /// symmetric scenario.
    fn arm_slice_timer(&mut self, key: u32, now: SimTime) {
        let q = &self.queues[&key];
        let mut sl = self.tun.slice_idle_ns;
        if q.seeky() && q.wr_coeff == 1 && self.symmetric() {
            sl = sl.min(BFQ_MIN_TT_NS);
        }
        self.wait_request = true;
        self.last_idling_start = now;
        self.idle_timer = Some(now + sl);
        self.timer_armed = true;
    }

    /// `bfq_idle_slice_timer_body`: the in-service queue that idled is expired (budget
    /// timeout if it passed, else too idle; a request that came meanwhile leaves it be).
    /// False: the timer had been cancelled or re-armed.
    pub fn idle_slice_timer(&mut self, now: SimTime) -> bool {
        if self.idle_timer != Some(now) {
            return false;
        }
        self.idle_timer = None;
        let Some(key) = self.in_service else { return true };
        self.wait_request = false;
        let q = &self.queues[&key];
        let reason = if now >= q.budget_timeout {
            Expiration::BudgetTimeout
        } else if q.sorted.is_empty() {
            Expiration::TooIdle
        } else {
            return true;
        };
        self.expire(now, true, reason);
        true
    }

    /// A merge moved a waiting request's start or end.
    pub fn remerged(&mut self, rq: ReqId, owner: Owner, new: (u64, u64)) {
        let q = self.queues.get_mut(&bfq_key(owner)).expect("a merged request's queue");
        let r = q.rqs.get_mut(&rq).expect("a merged request in its queue");
        let old = r.start;
        (r.start, r.sectors) = (new.0, new.1 - new.0);
        q.sorted.remove(&(old, rq));
        q.sorted.insert((new.0, rq), ());
    }

    /// The bounds: each queue's requests within the elevator's, the counts agreeing.
    pub fn check(&self, waiting: usize) {
        let queued: usize = self.queues.iter().map(|(_, q)| q.rqs.len()).sum();
        assert_eq!(queued, self.queued as usize, "bfq's queued count");
        assert_eq!(queued, waiting, "bfq holds what the elevator holds");
        let busy = self.queues.iter().filter(|(_, q)| q.busy).count();
        assert_eq!(busy, self.busy_queues as usize, "bfq's busy queues");
        assert!(self.st.iter().map(BfqServiceTree::len).sum::<usize>() <= busy, "service trees over the busy queues");
        for (_, q) in self.queues.iter() {
            assert!(q.sorted.len() == q.rqs.len() && q.fifo.len() == q.rqs.len(), "a bfq queue's lists disagree");
        }
    }
}

impl Sim {
    /// `bfq_finish_requeue_request` → `bfq_completed_request` for a request of `owner` that
    /// completed on `dev`: the idle timer if the in-service queue idles now, and
    /// `bfq_schedule_dispatch` when nothing is left in the driver.
    pub(crate) fn bfq_finish_request(&mut self, dev: DevId, owner: Owner) {
        if self.devs[dev].queue.elevator.kind() != ElevatorKind::Bfq {
            return;
        }
        let now = self.now();
        self.spin_lock_elevator(dev);
        let drained = self.devs[dev].queue.elevator.bfq_mut().completed(owner, now);
        let b = self.devs[dev].queue.elevator.bfq_mut();
        if std::mem::take(&mut b.timer_armed) {
            let at = b.idle_timer.expect("the timer just armed");
            self.events.schedule(at, Event::ElevatorTimer { dev });
        }
        if drained {
            self.bfq_schedule_dispatch(dev);
        }
    }

    /// `bfq_idle_slice_timer` (`idle_slice_timer`, an hrtimer): the in-service queue's idle
    /// ends, then `bfq_schedule_dispatch`. A timer cancelled since (its request came, or the
    /// queue expired) lapses.
    pub(crate) fn bfq_idle_slice_timer(&mut self, dev: DevId) {
        let now = self.now();
        if self.devs[dev].queue.elevator.bfq_mut().idle_slice_timer(now) {
            self.bfq_schedule_dispatch(dev);
        }
    }

    /// `bfq_schedule_dispatch`: with requests queued, every hardware queue of the device is
    /// run from kblockd (`blk_mq_run_hw_queues(q, true)`): bfq is one instance for all of
    /// them and does not know which one's CPU may dispatch.
    fn bfq_schedule_dispatch(&mut self, dev: DevId) {
        if self.devs[dev].queue.elevator.bfq().queued != 0 {
            self.blk_mq_run_hw_queues(dev);
        }
    }
}
