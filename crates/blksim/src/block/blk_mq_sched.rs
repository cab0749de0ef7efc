//! `block/blk-mq-sched.c` and the dispatch half of `block/blk-mq.c` as 5.x has them (read in
//! v5.8; `blk_mq.dispatch = 5.0`): a hardware queue's run takes `hctx->dispatch` first, then
//! asks the elevator (`has_work`, `dispatch_request`) or the per-CPU software queues for one
//! request at a time, each only once SCSI's dispatch budget admits it; a request the driver
//! refuses goes back on `hctx->dispatch` and `SCHED_RESTART` has the next completion run the
//! queue. With an elevator a request holds a scheduler tag (`nr_requests` per hardware queue)
//! from its allocation and a driver tag only from its dispatch.
//!
//! A task's plug holds requests until its flush (`blk_mq.plug`, `Sim::blk_mq_plug_request` in
//! `block/blk_mq.rs`), which inserts them here (`blk_mq_sched_insert_requests`). Not
//! modelled: `dispatch_busy`'s
//! one-at-a-time dispatch from the software queues (they are always flushed whole) and merges
//! in the software queues under `none`. The elevators' hooks hold their queue-wide lock
//! (`spin_lock_elevator`): CPUs running them at once spin on it.
//! Shared tag sets (`hctx_may_queue`, `host_tagset`) are `block/blk_mq_tag.rs`'s.

use crate::block::blk_mq_tag::TagWait;
use crate::block::TagMap;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;
use std::collections::{BTreeMap, VecDeque};

/// `BLKDEV_MAX_RQ` (include/linux/blkdev.h, 5.x): the cap in `nr_requests`' default.
pub const BLKDEV_MAX_RQ: u32 = 128;

/// `BLK_MQ_BUDGET_DELAY` and `BLK_MQ_RESOURCE_DELAY` (v5.8 block/blk-mq-sched.c, blk-mq.h):
/// 3 ms, the delayed run after a dispatch gave up for want of a resource.
pub const BLK_MQ_DELAY_NS: u64 = 3_000_000;

/// One hardware queue's scheduling state.
#[derive(Clone, Debug)]
pub struct HctxSched {
    /// `hctx->sched_tags`: with an elevator, every request holds one from allocation to
    /// completion.
    pub sched_tags: TagMap,
    pub sched_wait: TagWait,
    /// `BLK_MQ_S_SCHED_RESTART`: a completion runs the queue again.
    pub restart: bool,
    /// `hctx->dispatch_from`: the software queue `blk_mq_do_dispatch_ctx` looks at next.
    dispatch_from: u16,
}

/// A blk-mq queue's 5.x scheduling: per hardware queue its scheduler tags, the per-CPU
/// software queues, and which request holds which scheduler tag.
#[derive(Clone, Debug)]
pub struct MqSched {
    pub hctx: Vec<HctxSched>,
    /// `ctx->rq_lists`: one software queue per CPU (`none`).
    pub ctx: Vec<VecDeque<ReqId>>,
    /// The scheduler tag each request holds (by request id), with its hardware queue.
    pub sched_tag_of: BTreeMap<u32, u16>,
    /// `q->nr_requests` with an elevator: 2 × min(the tag set's depth, `BLKDEV_MAX_RQ`)
    /// (v5.8 `blk_mq_init_sched`); 0 without one (`none` allocates driver tags).
    pub nr_requests: u32,
    /// kyber's state, when it is the elevator (`block/kyber_iosched.rs`).
    pub kyber: Option<Box<crate::block::kyber_iosched::KyberQueueData>>,
}

impl MqSched {
    /// `blk_mq_init_sched` for `nr_hw` hardware queues over `cores` CPUs; `can_queue` is the
    /// tag set's depth (`scsi_mq_setup_tags`: `shost->can_queue`).
    pub fn new(nr_hw: usize, can_queue: u32, cores: u32, elevator: bool) -> MqSched {
        let nr_requests = if elevator { 2 * can_queue.min(BLKDEV_MAX_RQ) } else { 0 };
        let hctx = (0..nr_hw)
            .map(|_| HctxSched {
                sched_tags: TagMap::new(nr_requests),
                sched_wait: TagWait::new(nr_requests.max(1)),
                restart: false,
                dispatch_from: 0,
            })
            .collect();
        MqSched { hctx, ctx: vec![VecDeque::new(); cores as usize], sched_tag_of: BTreeMap::new(), nr_requests, kyber: None }
    }

    pub fn has_elevator(&self) -> bool {
        self.nr_requests > 0
    }
}

/// What `scsi_queue_rq` (5.x) answered.
pub(crate) enum QueueRq {
    Ok,
    /// `BLK_STS_RESOURCE`: nothing of this LUN in flight to restart the queue.
    Resource,
    /// `BLK_STS_DEV_RESOURCE`: a completion of this LUN will run the queue.
    DevResource,
}

impl Sim {
    pub(crate) fn mq_sched(&self, dev: DevId) -> Option<&MqSched> {
        self.devs[dev].queue.mq_sched.as_ref()
    }

    pub(crate) fn mq_sched_mut(&mut self, dev: DevId) -> &mut MqSched {
        self.devs[dev].queue.mq_sched.as_mut().expect("a 5.x blk-mq queue")
    }

    /// `blk_mq_get_request` (5.x): with an elevator a scheduler tag of the hardware queue,
    /// else a driver tag (`bt_get`'s rules); without one, run the queue from here and try
    /// again, then sleep on the map's next wait queue (None: the caller sleeps).
    pub(crate) fn blk_mq_get_request(&mut self, dev: DevId, h: u16, tid: ThreadId) -> Option<u16> {
        let sched = self.mq_sched(dev).is_some_and(MqSched::has_elevator);
        self.blk_mq_get_tag(dev, h, tid, sched)
    }

    /// `blk_mq_make_request`'s insert (5.x), and the run after it: with an elevator from kblockd
    /// (`blk_mq_sched_insert_request(rq, false, true, true)`), without one from here (the
    /// nearest to `blk_mq_try_issue_directly`, INFERRED).
    pub(crate) fn blk_mq_sched_insert_request(&mut self, dev: DevId, rq: ReqId) {
        let (h, elevator) = self.blk_mq_sched_insert(dev, rq, true);
        self.blk_mq_run_hw_queue(dev, h, elevator);
    }

    /// `blk_mq_sched_insert_requests` (5.10), from a plug's flush: the hardware queue's run of
    /// requests goes to the elevator's `insert_requests` (mq-deadline's under one `dd->lock`,
    /// bfq's a lock each) or onto the software queue, then the queue runs: from the flushing
    /// task, or from kblockd when the flush is the task's going to sleep (`run_queue_async`).
    /// Under `none` 5.10 first issues them directly (`blk_mq_try_issue_list_directly`): the
    /// software queue and a run from here stand for it, as at an insert (INFERRED).
    pub(crate) fn blk_mq_sched_insert_requests(&mut self, dev: DevId, h: u16, list: &[ReqId], run_async: bool, tid: ThreadId) {
        let lock_each = self.devs[dev].queue.elevator.kind() == crate::block::ElevatorKind::Bfq;
        for (i, &rq) in list.iter().enumerate() {
            let r = self.reqs.get(rq.0);
            let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
            self.emit(dev, Action::I, write, sector, bytes, tid, rq.0, 0);
            self.blk_mq_sched_insert(dev, rq, i == 0 || lock_each);
        }
        self.blk_mq_run_hw_queue(dev, h, run_async);
    }

    /// The insert itself: with an elevator the request keeps its scheduler tag aside and goes
    /// to `insert_requests` (mq-deadline: its sort tree and FIFO; `lock`: the hook takes the
    /// elevator's lock); without one onto its CPU's software queue. Returns its hardware queue
    /// and whether there is an elevator.
    fn blk_mq_sched_insert(&mut self, dev: DevId, rq: ReqId, lock: bool) -> (u16, bool) {
        let now = self.now();
        let owner = self.owner(rq);
        let elevator = self.mq_sched(dev).is_some_and(MqSched::has_elevator);
        let r = self.reqs.get_mut(rq.0);
        let (h, write, start, end) = (r.hctx, r.write, r.sector, r.sector + r.bytes / 512);
        let cpu = r.cpu.map_or(self.current.cpu, |c| c.0) as usize;
        if elevator {
            let tag = r.tag.take().expect("a scheduler tag from blk_mq_get_request");
            let s = self.mq_sched_mut(dev);
            assert!(s.sched_tag_of.insert(rq.0, tag).is_none(), "a request holds one scheduler tag");
            if lock {
                self.spin_lock_elevator(dev);
            }
            self.devs[dev].queue.elevator.add(rq, write, start, end, now, owner);
            if let Some(k) = self.mq_sched_mut(dev).kyber.as_deref_mut() {
                k.kyber_insert_requests(h, rq, write, cpu);
            }
        } else {
            // The software queue of the CPU that made it, one of its hardware queue's CPUs
            // (`blk_mq_map_queue`; the submitter's home CPU picked the hardware queue).
            let q = &self.mq(dev).hctx[h as usize];
            let cpu = if q.has_cpu(CoreId(cpu as u16)) { cpu } else { q.first_cpu as usize };
            let s = self.mq_sched_mut(dev);
            assert!(s.ctx[cpu].len() < crate::scenario::limits::BIOS_LIVE_MAX, "software queue over its limit");
            s.ctx[cpu].push_back(rq);
        }
        (h, elevator)
    }

    /// `blk_mq_sched_dispatch_requests` (v5.8): a second pass when the first found
    /// `hctx->dispatch` refilled meanwhile, then a run from kblockd.
    pub(crate) fn blk_mq_sched_dispatch_requests(&mut self, dev: DevId, h: u16) {
        if self.__blk_mq_sched_dispatch_requests(dev, h) && self.__blk_mq_sched_dispatch_requests(dev, h) {
            self.blk_mq_run_hw_queue(dev, h, true);
        }
    }

    /// `__blk_mq_sched_dispatch_requests`: `hctx->dispatch` first (marking the queue for a
    /// restart), and only if that made progress the elevator or the software queues. Requests
    /// inserted past the elevator (dm's clones, `blk_insert_cloned_request`) join the dispatch
    /// list. True: `-EAGAIN`, the dispatch list filled again.
    fn __blk_mq_sched_dispatch_requests(&mut self, dev: DevId, h: u16) -> bool {
        let elevator = self.mq_sched(dev).is_some_and(MqSched::has_elevator);
        let hq = &mut self.mq_mut(dev).hctx[h as usize];
        let mut list: VecDeque<ReqId> = std::mem::take(&mut hq.dispatch);
        list.extend(hq.queued.drain(..));
        if !list.is_empty() {
            self.mq_sched_mut(dev).hctx[h as usize].restart = true;
            if !self.blk_mq_dispatch_rq_list(dev, h, list, false) {
                return false;
            }
        } else if !elevator {
            // blk_mq_flush_busy_ctxs: every software queue of this hardware queue, in order.
            let (first, n) = {
                let q = &self.mq(dev).hctx[h as usize];
                (q.first_cpu as usize, q.nr_cpus as usize)
            };
            let s = self.mq_sched_mut(dev);
            let list: VecDeque<ReqId> = s.ctx[first..first + n].iter_mut().flat_map(|c| c.drain(..)).collect();
            self.blk_mq_dispatch_rq_list(dev, h, list, false);
            return false;
        }
        if elevator {
            self.blk_mq_do_dispatch_sched(dev, h)
        } else {
            self.blk_mq_do_dispatch_ctx(dev, h)
        }
    }

    /// `blk_mq_do_dispatch_sched` (v5.8): while the elevator has work and the dispatch list is
    /// empty, take the budget, then one request (`dispatch_request`: mq-deadline's choice under
    /// `dd->lock`), and hand it to the driver.
    fn blk_mq_do_dispatch_sched(&mut self, dev: DevId, h: u16) -> bool {
        loop {
            if !self.elv_has_work(dev, h) {
                return false;
            }
            if !self.mq(dev).hctx[h as usize].dispatch.is_empty() {
                return true;
            }
            if !self.blk_mq_get_dispatch_budget(dev) {
                return false;
            }
            let Some(rq) = self.elv_dispatch_request(dev, h) else {
                self.blk_mq_put_dispatch_budget(dev);
                self.blk_mq_delay_run_hw_queues(dev);
                return false;
            };
            if !self.blk_mq_dispatch_rq_list(dev, h, VecDeque::from([rq]), true) {
                return false;
            }
        }
    }

    /// An elevator hook of `dev`'s that runs under the elevator's queue-wide lock: bfq's
    /// (`bfqd->lock`: insert, dispatch, completion) and mq-deadline's (`dd->lock`: insert,
    /// dispatch), each hook's time beyond the running work's cost. kyber keeps its state per
    /// hardware queue and domain (`ELEVATOR_F_MQ_AWARE`): no lock of the whole queue.
    pub(crate) fn spin_lock_elevator(&mut self, dev: DevId) {
        use crate::block::ElevatorKind;
        if self.mq_sched(dev).is_none_or(|s| !s.has_elevator()) {
            return;
        }
        let hold = match self.devs[dev].queue.elevator.kind() {
            ElevatorKind::Bfq => crate::calib::BFQ_HOOK_LOCKED_NS,
            ElevatorKind::Deadline => crate::calib::DD_HOOK_LOCKED_NS,
            _ => return,
        };
        self.spin_lock_more(crate::kernel::spinlock::LockId::Elevator(dev), hold);
    }

    /// `e->type->ops.has_work(hctx)`: kyber's per hardware queue, mq-deadline's queue-wide.
    fn elv_has_work(&self, dev: DevId, h: u16) -> bool {
        match self.mq_sched(dev).and_then(|s| s.kyber.as_deref()) {
            Some(k) => k.kyber_has_work(h),
            None => self.devs[dev].queue.elevator.has_work(),
        }
    }

    /// `e->type->ops.dispatch_request(hctx)`: the request taken out of the elevator (kyber's
    /// with a domain token), or None.
    fn elv_dispatch_request(&mut self, dev: DevId, h: u16) -> Option<ReqId> {
        let now = self.now();
        self.spin_lock_elevator(dev);
        let rq = match self.mq_sched_mut(dev).kyber.as_deref_mut() {
            Some(k) => k.kyber_dispatch_request(h),
            None => self.devs[dev].queue.elevator.next(now),
        }?;
        self.devs[dev].queue.elevator.dispatched(rq);
        Some(rq)
    }

    /// `blk_mq_do_dispatch_ctx` (v5.8): one request at a time from the software queues in
    /// turn, each after its budget.
    fn blk_mq_do_dispatch_ctx(&mut self, dev: DevId, h: u16) -> bool {
        let (first, n) = {
            let q = &self.mq(dev).hctx[h as usize];
            (q.first_cpu as usize, q.nr_cpus as usize)
        };
        loop {
            if !self.mq(dev).hctx[h as usize].dispatch.is_empty() {
                return true;
            }
            let s = self.mq_sched_mut(dev);
            if s.ctx[first..first + n].iter().all(VecDeque::is_empty) {
                return false;
            }
            if !self.blk_mq_get_dispatch_budget(dev) {
                return false;
            }
            let s = self.mq_sched_mut(dev);
            let from = s.hctx[h as usize].dispatch_from as usize;
            let i = (0..n).map(|k| (from + k) % n).find(|&i| !s.ctx[first + i].is_empty()).expect("a software queue has one");
            let rq = s.ctx[first + i].pop_front().expect("not empty");
            s.hctx[h as usize].dispatch_from = ((i + 1) % n) as u16;
            if !self.blk_mq_dispatch_rq_list(dev, h, VecDeque::from([rq]), true) {
                return false;
            }
        }
    }

    /// `blk_mq_dispatch_rq_list` (v5.8): each request takes the budget (unless it came with
    /// it) and a driver tag of its own hardware queue (`rq->mq_hctx`: mq-deadline, one
    /// instance for the whole queue, may hand hardware queue `h` another queue's request),
    /// then goes to `scsi_queue_rq`. What is left goes back on that queue's `hctx->dispatch`;
    /// the queue is run again now if nothing will restart it, in 3 ms if the driver had
    /// nothing in flight to restart it or the budget ran out. True: some went.
    pub(crate) fn blk_mq_dispatch_rq_list(&mut self, dev: DevId, mut h: u16, mut list: VecDeque<ReqId>, mut got_budget: bool) -> bool {
        let mut queued = 0;
        let (mut resource, mut no_budget) = (false, false);
        while let Some(&rq) = list.front() {
            h = self.reqs.get(rq.0).hctx;
            if !got_budget && !self.blk_mq_get_dispatch_budget(dev) {
                no_budget = true;
                break;
            }
            if !self.blk_mq_get_driver_tag(dev, h, rq) && !self.blk_mq_mark_tag_wait(dev, h, rq) {
                self.blk_mq_put_dispatch_budget(dev);
                break;
            }
            list.pop_front();
            got_budget = false;
            match self.queue_rq(dev, h, rq) {
                QueueRq::Ok => {
                    self.kyber_io_start(dev, rq);
                    queued += 1;
                }
                ret => {
                    resource = matches!(ret, QueueRq::Resource);
                    self.blk_mq_requeue_driver_tag(dev, h, rq);
                    list.push_front(rq);
                    break;
                }
            }
        }
        if list.is_empty() {
            return queued > 0;
        }
        self.blk_mq_splice_to_dispatch(dev, h, list);
        let restart = self.mq_sched_mut(dev).hctx[h as usize].restart;
        if !restart {
            self.blk_mq_run_hw_queue(dev, h, true);
        } else if resource || no_budget {
            self.blk_mq_delay_run_hw_queue(dev, h);
        }
        false
    }

    /// `blk_mq_get_dispatch_budget`: the driver's `get_budget` where it has one (SCSI's
    /// per-LUN `queue_depth`); NVMe has none, so every request may be taken.
    fn blk_mq_get_dispatch_budget(&mut self, dev: DevId) -> bool {
        self.devs[dev].is_nvme() || self.scsi_mq_get_budget(dev)
    }

    fn blk_mq_put_dispatch_budget(&mut self, dev: DevId) {
        if !self.devs[dev].is_nvme() {
            self.scsi_mq_put_budget(dev);
        }
    }

    /// `q->mq_ops->queue_rq`: `nvme_queue_rq` (never busy: the tag is the queue pair's slot)
    /// or `scsi_queue_rq`.
    fn queue_rq(&mut self, dev: DevId, h: u16, rq: ReqId) -> QueueRq {
        if self.devs[dev].is_nvme() {
            self.nvme_queue_rq(dev, h, rq);
            return QueueRq::Ok;
        }
        self.scsi_mq_queue_rq(dev, h, rq)
    }

    /// `list_splice_tail_init(list, &hctx->dispatch)`, each traced as the requeue it is.
    fn blk_mq_splice_to_dispatch(&mut self, dev: DevId, h: u16, list: VecDeque<ReqId>) {
        for &rq in &list {
            let r = self.reqs.get(rq.0);
            let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
            self.emit(dev, Action::I, write, sector, bytes, self.context(), rq.0, 0);
        }
        let live = self.reqs.live();
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        assert!(q.dispatch.len() + list.len() <= live, "hctx->dispatch over the live requests");
        q.dispatch.extend(list);
    }

    /// `blk_mq_get_driver_tag` (v5.10): a request without one takes a tag of its hardware
    /// queue's map (`__blk_mq_get_driver_tag`: `blk_mq_tag_busy`, then `hctx_may_queue`'s fair
    /// share); a `none` request has had its own since allocation. On a shared set the request
    /// is then counted active (`RQF_MQ_INFLIGHT`).
    fn blk_mq_get_driver_tag(&mut self, dev: DevId, h: u16, rq: ReqId) -> bool {
        let tag = match self.reqs.get(rq.0).tag {
            Some(t) => t,
            None => {
                self.blk_mq_tag_busy(dev, h);
                if !self.hctx_may_queue(dev, h) {
                    return false;
                }
                let Some(t) = self.hctx_tags_mut(dev, h).map.get() else { return false };
                self.mq_mut(dev).hctx[h as usize].tags_held += 1;
                self.reqs.get_mut(rq.0).tag = Some(t);
                t
            }
        };
        self.blk_mq_inc_active_requests(dev, h, tag);
        true
    }

    /// `blk_mq_mark_tag_wait` (v5.10): no driver tag for `rq`. On an unshared set the queue is
    /// marked for a restart (its own next completion runs it); on a shared one its
    /// `dispatch_wait` goes on the map's wait queue, so that a tag freed by any queue of the set
    /// runs it (`blk_mq_dispatch_wake`): a queue with nothing in flight would otherwise wait for
    /// a completion of its own that never comes. Then one more try: true, a tag after all.
    fn blk_mq_mark_tag_wait(&mut self, dev: DevId, h: u16, rq: ReqId) -> bool {
        if !self.mq(dev).shared_tags {
            self.mq_sched_mut(dev).hctx[h as usize].restart = true;
            return self.blk_mq_get_driver_tag(dev, h, rq);
        }
        self.hctx_tags_mut(dev, h).add_dispatch_wait(dev, h);
        if !self.blk_mq_get_driver_tag(dev, h, rq) {
            return false;
        }
        self.hctx_tags_mut(dev, h).dispatch_wait.retain(|w| *w != (dev, h));
        true
    }

    /// `__blk_mq_requeue_request` → `blk_mq_put_driver_tag`: a request with a scheduler tag
    /// gives its driver tag back while it waits on `hctx->dispatch`.
    fn blk_mq_requeue_driver_tag(&mut self, dev: DevId, h: u16, rq: ReqId) {
        if !self.mq_sched(dev).is_some_and(|s| s.sched_tag_of.contains_key(&rq.0)) {
            return;
        }
        if let Some(t) = self.reqs.get_mut(rq.0).tag.take() {
            for w in self.blk_mq_put_driver_tag(dev, h, t) {
                self.wake(w, crate::kernel::sched::Step::RetryTag);
            }
        }
    }

    /// `blk_mq_delay_run_hw_queue(hctx, 3 ms)`: the run goes to kblockd when the timer fires.
    /// With `blk_mq.run_work = mod` (4.18+) the arm replaces a pending run, a queued one too
    /// (`kblockd_mod_delayed_work_on`, `msecs_to_jiffies(3)`).
    fn blk_mq_delay_run_hw_queue(&mut self, dev: DevId, h: u16) {
        let cpu = CoreId(self.current.cpu);
        if self.cfg.scenario.blk_mq.run_work != crate::scenario::RunWork::Queue {
            let jiffies = BLK_MQ_DELAY_NS.div_ceil(crate::calib::RUN_WORK_JIFFY_NS);
            if self.kblockd_mod_delayed_work_on(dev, h, cpu, jiffies) {
                self.mq_mut(dev).runs_taken_back += 1;
            }
            return;
        }
        let at = self.now() + BLK_MQ_DELAY_NS;
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if !q.delay_work.is_armed() && q.delay_work.arm(at, cpu) {
            self.events.schedule(at, Event::MqDelayRun { dev, hctx: h });
        }
    }

    /// `blk_mq_delay_run_hw_queues(q, BLK_MQ_BUDGET_DELAY)`: the hardware queues
    /// `blk_mq.run_hw_queues` picks (`blk_mq_run_hctx_of_all`), each counted call traced.
    fn blk_mq_delay_run_hw_queues(&mut self, dev: DevId) {
        self.acct.totals.funccount.blk_mq_delay_run_hw_queues += 1;
        let sq = self.blk_mq_get_sq_hctx(dev);
        let skip_pending = self.cfg.scenario.blk_mq.run_work == crate::scenario::RunWork::ModUnlessPending;
        for h in 0..self.mq(dev).hctx.len() as u16 {
            let q = &self.mq(dev).hctx[h as usize];
            // 5.18+ (8f5fea65b06d): `if (delayed_work_pending(&hctx->run_work)) continue;`.
            if skip_pending && (q.run_pending || q.delay_work.is_armed()) {
                continue;
            }
            if self.blk_mq_run_hctx_of_all(dev, sq, h) {
                self.blk_mq_delay_run_hw_queue(dev, h);
            }
        }
    }

    /// The 5.x part of a request's end (`__blk_mq_free_request`, after the driver tag went
    /// back): its scheduler tag back to its map, whose sleepers may wake, and
    /// `blk_mq_sched_restart`.
    pub(crate) fn blk_mq_sched_free_request(&mut self, dev: DevId, rq: ReqId, r: &crate::block::Request) {
        let h = r.hctx;
        self.kyber_completed_request(dev, rq, r.write, r.alloc_at);
        let s = self.mq_sched_mut(dev);
        let mut woken = Vec::new();
        if let Some(tag) = s.sched_tag_of.remove(&rq.0) {
            let q = &mut s.hctx[h as usize];
            q.sched_tags.put(tag);
            woken = q.sched_wait.tag_freed();
        }
        for w in woken {
            self.wake(w, crate::kernel::sched::Step::RetryTag);
        }
        let q = &mut self.mq_sched_mut(dev).hctx[h as usize];
        if q.restart {
            q.restart = false;
            self.blk_mq_run_hw_queue(dev, h, true);
        }
    }

    /// The bounds of a 5.x queue: scheduler tags within `nr_requests`, each held by one live
    /// request, the software queues within the live requests.
    pub(crate) fn check_mq_sched(&self, dev: DevId) {
        let Some(s) = self.mq_sched(dev) else { return };
        let busy: u32 = s.hctx.iter().map(|q| q.sched_tags.busy()).sum();
        assert!(s.hctx.iter().all(|q| q.sched_tags.busy() <= s.nr_requests), "scheduler tags over nr_requests");
        assert_eq!(busy as usize, s.sched_tag_of.len(), "a scheduler tag without its request");
        assert!(s.sched_tag_of.keys().all(|&id| self.reqs.is_live(id)), "a scheduler tag held by a freed request");
        let queued: usize = s.ctx.iter().map(VecDeque::len).sum();
        assert!(queued <= self.reqs.live(), "software queues over the live requests");
        self.check_kyber(dev);
        let e = &self.devs[dev].queue.elevator;
        if e.kind() == crate::block::ElevatorKind::Bfq {
            e.bfq().check(e.len());
        }
    }
}

/// A leaf queue's 5.x scheduling over `nr_hw` hardware queues of a tag set `depth` deep, if
/// its disks run blk-mq with `blk_mq.dispatch = 5.0`.
pub fn mq_sched_for(s: &crate::scenario::Scenario, nr_hw: usize, depth: u32) -> Option<MqSched> {
    let on = crate::block::is_mq(s.queue.scheduler) && s.blk_mq.dispatch == crate::scenario::MqDispatch::V5_0;
    let elevator = matches!(
        s.queue.scheduler,
        crate::scenario::Scheduler::MqDeadline | crate::scenario::Scheduler::Kyber | crate::scenario::Scheduler::Bfq
    );
    on.then(|| MqSched { kyber: crate::block::kyber_iosched::kyber_for(s, nr_hw), ..MqSched::new(nr_hw, depth, s.cpu.cores, elevator) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::Request;
    use crate::scenario::{set_knob, Scenario};

    /// One LUN on the RAM target, blk-mq run as 5.x has it, one hardware queue over 2 CPUs,
    /// 8 driver tags and a LUN queue_depth of `depth`.
    fn sim(scheduler: &str, depth: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [
            ("disk.kind", "ramlun"),
            ("queue.scheduler", scheduler),
            ("blk_mq.dispatch", "5.0"),
            ("cpu.cores", "2"),
            ("host.can_queue", "8"),
            ("queue.depth", depth),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    /// A request made as `blk_mq_make_request` makes it, and inserted.
    fn add(sim: &mut Sim, write: bool, sector: u64) -> ReqId {
        let dev = DevId(0);
        let tag = sim.blk_mq_get_request(dev, 0, ThreadId(0));
        assert!(tag.is_some(), "a tag for the request");
        let rq = ReqId(sim.reqs.insert(Request { write, sector, tag, ..Request::for_test(dev, ThreadId(0), sim.now()) }));
        sim.current.cpu = 0;
        sim.blk_mq_sched_insert_request(dev, rq);
        rq
    }

    /// The run mq-deadline's insert queued on kblockd, run here.
    fn run_from_kblockd(sim: &mut Sim) {
        let dev = DevId(0);
        if std::mem::take(&mut sim.mq_mut(dev).hctx[0].run_pending) {
            sim.kblockd_cancel(crate::kernel::workqueue::Work::Hctx(dev, 0));
        }
        sim.blk_mq_sched_dispatch_requests(dev, 0);
    }

    #[test]
    fn on_a_shared_set_a_queue_without_a_driver_tag_waits_on_the_map_and_a_free_runs_it() {
        // Two LUNs on one host of 8 tags, mq-deadline: sda holds every driver tag; sdb has
        // nothing in flight, so no completion of its own would restart it.
        let mut s = Scenario::default();
        for (k, v) in [
            ("disk.kind", "ramlun"),
            ("queue.scheduler", "mq-deadline"),
            ("blk_mq.dispatch", "5.0"),
            ("cpu.cores", "2"),
            ("disks", "2"),
            ("hbas", "1"),
            ("host.can_queue", "8"),
            ("queue.depth", "8"),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        let (sda, sdb) = (DevId(0), DevId(1));
        let held: Vec<u16> = (0..8).map(|_| sim.blk_mq_alloc_driver_tag(sda, 0).unwrap()).collect();
        let tag = sim.blk_mq_get_request(sdb, 0, ThreadId(0));
        let rq = ReqId(sim.reqs.insert(Request { dev: sdb, tag, ..Request::for_test(sdb, ThreadId(0), sim.now()) }));
        sim.current.cpu = 0;
        sim.blk_mq_sched_insert_request(sdb, rq);
        // The insert's run, then (no restart marked yet) the run it queues, which takes
        // hctx->dispatch and marks the restart: each finds no driver tag.
        for _ in 0..2 {
            assert!(std::mem::take(&mut sim.mq_mut(sdb).hctx[0].run_pending));
            sim.kblockd_cancel(crate::kernel::workqueue::Work::Hctx(sdb, 0));
            sim.blk_mq_sched_dispatch_requests(sdb, 0);
        }
        assert!(sim.reqs.get(rq.0).tag.is_none(), "no driver tag for sdb");
        assert_eq!(sim.hctx_tags(sdb, 0).dispatch_wait, vec![(sdb, 0)], "blk_mq_mark_tag_wait");
        assert!(!sim.mq(sdb).hctx[0].run_pending);
        // sda frees one: blk_mq_dispatch_wake runs sdb's hardware queue.
        sim.blk_mq_put_driver_tag(sda, 0, held[0]);
        assert!(sim.mq(sdb).hctx[0].run_pending, "the freed tag runs the waiting queue");
        assert!(sim.hctx_tags(sdb, 0).dispatch_wait.is_empty());
    }

    #[test]
    fn nr_requests_is_twice_the_tag_sets_depth_capped_at_blkdev_max_rq() {
        assert_eq!(MqSched::new(1, 64, 2, true).nr_requests, 128);
        assert_eq!(MqSched::new(1, 1000, 2, true).nr_requests, 256);
        assert_eq!(MqSched::new(1, 64, 2, false).nr_requests, 0, "none allocates driver tags");
        assert_eq!(sim("mq-deadline", "1").mq_sched(DevId(0)).unwrap().nr_requests, 16);
        assert!(sim("none", "1").mq_sched(DevId(0)).is_some_and(|s| !s.has_elevator()));
    }

    #[test]
    fn the_budget_keeps_requests_in_mq_deadline_and_it_sends_the_read_first() {
        let mut sim = sim("mq-deadline", "1");
        let dev = DevId(0);
        let writes: Vec<ReqId> = (0..3).map(|i| add(&mut sim, true, 100 + 8 * i)).collect();
        let read = add(&mut sim, false, 400);
        run_from_kblockd(&mut sim);
        // queue_depth 1: one budget, so one request left the elevator; the read, as reads
        // go first. The writes wait in the elevator, holding scheduler tags but no driver tag.
        assert_eq!(sim.mq(dev).device_busy, 1);
        assert!(sim.reqs.get(read.0).tag.is_some());
        assert_eq!(sim.devs[dev].queue.elevator.len(), 3);
        assert!(writes.iter().all(|w| sim.reqs.get(w.0).tag.is_none()));
        assert_eq!(sim.mq(dev).hctx[0].tags_held, 1, "one driver tag");
        assert_eq!(sim.mq_sched(dev).unwrap().hctx[0].sched_tags.busy(), 4, "four scheduler tags");
        assert!(sim.mq(dev).hctx[0].dispatch.is_empty(), "nothing refused by the driver");
        sim.check_mq_sched(dev);
    }

    #[test]
    fn none_sends_the_software_queue_in_arrival_order() {
        let mut sim = sim("none", "1");
        let dev = DevId(0);
        // Each insert runs the queue from its CPU: the first write takes the one budget.
        let first = add(&mut sim, true, 100);
        let _second = add(&mut sim, true, 108);
        let read = add(&mut sim, false, 400);
        assert_eq!(sim.mq(dev).device_busy, 1);
        assert!(sim.reqs.get(first.0).tag.is_some() && sim.reqs.get(read.0).tag.is_some(), "none: driver tags from allocation");
        let waiting: Vec<ReqId> = sim.mq_sched(dev).unwrap().ctx[0].iter().copied().collect();
        assert_eq!(waiting.len() + sim.mq(dev).hctx[0].dispatch.len(), 2, "the second write and the read wait, in order");
    }

    #[test]
    fn a_busy_host_sends_the_request_to_hctx_dispatch_then_a_restart_or_a_3ms_run_takes_it() {
        let mut sim = sim("mq-deadline", "4");
        let dev = DevId(0);
        let host = HostId(0);
        while sim.hosts[host].try_get(dev) {}
        let rq = add(&mut sim, false, 0);
        run_from_kblockd(&mut sim);
        // BLK_STS_RESOURCE with nothing of this LUN in flight: the budget and the driver tag go
        // back, the request waits on hctx->dispatch, and (no restart marked yet) the queue runs
        // again from kblockd.
        assert_eq!(sim.mq(dev).device_busy, 0);
        assert!(sim.reqs.get(rq.0).tag.is_none());
        assert_eq!(sim.mq(dev).hctx[0].dispatch, VecDeque::from([rq]));
        assert!(sim.mq(dev).hctx[0].run_pending);
        // That run takes hctx->dispatch first and marks the restart; refused again, the
        // queue is run in BLK_MQ_RESOURCE_DELAY.
        run_from_kblockd(&mut sim);
        assert!(sim.mq_sched(dev).unwrap().hctx[0].restart);
        assert!(sim.mq(dev).hctx[0].delay_work.is_armed());
        assert_eq!(sim.mq(dev).hctx[0].dispatch.len(), 1);
    }
}

#[cfg(test)]
mod run_work_tests {
    use super::*;
    use crate::scenario::{set_knob, Scenario};

    /// mq-deadline on the RAM target, blk-mq run as 5.x has it, 2 hardware queues over 2 CPUs,
    /// `blk_mq.run_work` as given.
    fn sim(run_work: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [
            ("disk.kind", "ramlun"),
            ("queue.scheduler", "mq-deadline"),
            ("blk_mq.dispatch", "5.0"),
            ("blk_mq.run_work", run_work),
            ("cpu.cores", "2"),
            ("host.nr_hw_queues", "2"),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn mod_takes_a_queued_run_back_onto_the_next_tick_and_queue_leaves_it() {
        let dev = DevId(0);
        for (rule, pending_after, taken) in [("queue", true, 0), ("mod", false, 1)] {
            let mut sim = sim(rule);
            sim.current.cpu = 0;
            // A run asked now of hardware queue 1 (CPU 1's): queued on kblockd.
            sim.blk_mq_run_hw_queue(dev, 1, true);
            assert!(sim.mq(dev).hctx[1].run_pending);
            // Another queue's dispatch found nothing: the 3 ms re-run of every queue.
            sim.blk_mq_delay_run_hw_queues(dev);
            let q = &sim.mq(dev).hctx[1];
            assert_eq!(q.run_pending, pending_after, "{rule}");
            assert_eq!(sim.mq(dev).runs_taken_back, taken, "{rule}");
            let due = q.delay_work.due().expect("the timer is armed");
            if rule == "mod" {
                // msecs_to_jiffies(3) at HZ=250 is one jiffy: the next tick, 4 ms.
                assert_eq!(due.0, crate::calib::RUN_WORK_JIFFY_NS);
                assert!(sim.kblockd.lists.iter().all(|l| l.is_empty()), "taken off kblockd's list");
            } else {
                assert_eq!(due.0, BLK_MQ_DELAY_NS);
            }
        }
    }

    #[test]
    fn with_mod_a_run_asked_now_takes_the_timers_run_now() {
        let dev = DevId(0);
        let mut sim = sim("mod");
        sim.current.cpu = 0;
        sim.blk_mq_delay_run_hw_queues(dev);
        assert!(sim.mq(dev).hctx[1].delay_work.is_armed());
        sim.blk_mq_run_hw_queue(dev, 1, true);
        assert!(!sim.mq(dev).hctx[1].delay_work.is_armed());
        assert!(sim.mq(dev).hctx[1].run_pending);
    }

    #[test]
    fn a_fua_write_waits_on_its_own_queues_dispatch_list_and_a_re_arm_takes_its_run_back() {
        let dev = DevId(0);
        let mut sim = sim("mod");
        sim.current.cpu = 1;
        let tag = sim.blk_mq_get_request(dev, 1, ThreadId(0));
        let r =
            crate::block::Request { write: true, tag, hctx: 1, fua: true, ..crate::block::Request::for_test(dev, ThreadId(0), sim.now()) };
        let rq = ReqId(sim.reqs.insert(r));
        sim.blk_insert_flush(dev, rq);
        assert!(sim.devs[dev].queue.elevator.is_empty(), "past the elevator");
        assert_eq!(sim.mq(dev).hctx[1].dispatch, [rq]);
        assert!(sim.mq(dev).hctx[1].run_pending, "its own queue's run, from kblockd");
        // Another queue's dispatch found the elevator with nothing to give: every queue
        // re-armed, the FUA write's run with them.
        sim.current.cpu = 0;
        sim.blk_mq_delay_run_hw_queues(dev);
        assert_eq!(sim.mq(dev).runs_taken_back, 1);
        // Hardware queue 0's run does not issue it; only queue 1's does.
        sim.blk_mq_sched_dispatch_requests(dev, 0);
        assert_eq!(sim.mq(dev).hctx[1].dispatch, [rq]);
        sim.current.cpu = 1;
        sim.blk_mq_sched_dispatch_requests(dev, 1);
        assert!(sim.mq(dev).hctx[1].dispatch.is_empty(), "issued by its own queue's run");
    }

    #[test]
    fn from_5_18_the_re_run_skips_a_queue_whose_run_is_pending() {
        let dev = DevId(0);
        let mut sim = sim("mod_unless_pending");
        sim.current.cpu = 0;
        sim.blk_mq_run_hw_queue(dev, 1, true);
        sim.blk_mq_delay_run_hw_queues(dev);
        assert!(sim.mq(dev).hctx[1].run_pending, "8f5fea65b06d: not taken back");
        assert!(!sim.mq(dev).hctx[1].delay_work.is_armed());
        assert!(sim.mq(dev).hctx[0].delay_work.is_armed(), "the other queue is re-armed");
        assert_eq!(sim.mq(dev).runs_taken_back, 0);
    }
}
