//! `block/blk-mq.c` (4.0): a blk-mq queue's hardware queues, each taking driver tags from the
//! tag set's map for it (`block/blk_mq_tag.rs`), the requests inserted into its software
//! queues, its `dispatch` list and its STOPPED bit; and the runs: `blk_mq_run_hw_queue`,
//! `__blk_mq_run_hw_queue` with its BUSY splice, `blk_mq_stop_hw_queue`,
//! `blk_mq_start_stopped_hw_queues`, `blk_mq_delay_queue`.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{Fired, OneShotTimer, SimTime};
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;
use std::collections::VecDeque;

/// `BLK_MQ_CPU_WORK_BATCH`: async runs go to one CPU of the hardware queue this many times
/// before `blk_mq_hctx_next_cpu` moves to the next.
pub const BLK_MQ_CPU_WORK_BATCH: u32 = 8;

/// One hardware queue (`struct blk_mq_hw_ctx`) over the CPUs `first_cpu..first_cpu+nr_cpus`.
#[derive(Clone, Debug)]
pub struct Hctx {
    /// Driver tags of the set's map this hardware queue's requests hold.
    pub tags_held: u32,
    /// `BLK_MQ_S_TAG_ACTIVE`: counted in its map's `active_queues` (a shared set only).
    pub tag_active: bool,
    /// `hctx->nr_active`: its requests counted against the fair share (`RQF_MQ_INFLIGHT`).
    pub nr_active: u32,
    /// Inserted, not yet taken by a run (the software queues' `ctx->rq_list`).
    pub queued: VecDeque<ReqId>,
    /// `hctx->dispatch`: leftovers of a BUSY run, taken first by the next run.
    pub dispatch: VecDeque<ReqId>,
    /// `BLK_MQ_S_STOPPED`.
    pub stopped: bool,
    /// Its `run_work` is queued on kblockd.
    pub run_pending: bool,
    /// Its `delay_work`'s timer (`blk_mq_delay_queue`).
    pub delay_work: OneShotTimer,
    /// BUSY runs between `blk_mq_stop_hw_queue` and their splice: the CPU running each, and
    /// its leftovers (at most one per CPU).
    pub splicing: Vec<(CoreId, Vec<ReqId>)>,
    pub first_cpu: u16,
    pub nr_cpus: u16,
    next_cpu: u16,
    next_cpu_batch: u32,
}

/// The blk-mq side of a SCSI LUN's request queue (4.0 scsi-mq).
#[derive(Clone, Debug)]
pub struct BlkMq {
    pub hctx: Vec<Hctx>,
    /// `sdev->device_busy`: commands of this LUN started, over all its hardware queues.
    pub device_busy: u32,
    /// `sdev->queue_depth`: `scsi_dev_queue_ready` admits below it.
    pub device_depth: u32,
    /// The tag set is shared with another LUN (`BLK_MQ_F_TAG_SHARED`).
    pub shared_tags: bool,
    /// Its tag set (`q->tag_set`), an index into `Sim::tag_sets`, and the depth of each of the
    /// set's maps (`set->queue_depth`).
    pub set: u16,
    pub tag_depth: u32,
    /// `QUEUE_FLAG_HCTX_ACTIVE` and `q->nr_active_requests_shared_sbitmap` (`host_tagset`).
    pub hctx_active: bool,
    pub nr_active_shared: u32,
    /// The driver tags, by (hardware queue, tag), whose requests are counted active
    /// (`RQF_MQ_INFLIGHT`).
    pub mq_inflight: std::collections::BTreeSet<(u16, u16)>,
    /// `q->timeout` (`blk_mq_rq_timer`) is armed for then.
    pub timer_at: Option<SimTime>,
    /// Runs queued on kblockd that a 3 ms re-run took back onto the timer
    /// (`blk_mq.run_work = mod`).
    pub runs_taken_back: u64,
}

impl BlkMq {
    /// `nr_hw` hardware queues of `depth` tags over `cores` CPUs, split evenly in order
    /// (4.0 `blk_mq_update_queue_map`: with 8 CPUs and 4 queues, CPU pairs).
    pub fn new(nr_hw: u32, depth: u32, device_depth: u32, cores: u32) -> BlkMq {
        let nr_hw = nr_hw.clamp(1, cores.max(1));
        let hctx = (0..nr_hw)
            .map(|h| {
                let first = h * cores / nr_hw;
                let next = (h + 1) * cores / nr_hw;
                Hctx {
                    tags_held: 0,
                    tag_active: false,
                    nr_active: 0,
                    queued: VecDeque::new(),
                    dispatch: VecDeque::new(),
                    stopped: false,
                    run_pending: false,
                    delay_work: OneShotTimer::default(),
                    splicing: Vec::new(),
                    first_cpu: first as u16,
                    nr_cpus: (next - first) as u16,
                    next_cpu: first as u16,
                    next_cpu_batch: BLK_MQ_CPU_WORK_BATCH,
                }
            })
            .collect();
        BlkMq {
            hctx,
            device_busy: 0,
            device_depth,
            shared_tags: false,
            set: 0,
            tag_depth: depth,
            hctx_active: false,
            nr_active_shared: 0,
            mq_inflight: std::collections::BTreeSet::new(),
            timer_at: None,
            runs_taken_back: 0,
        }
    }

    /// `map_queue`: the hardware queue of CPU `cpu`.
    pub fn hctx_of(&self, cpu: CoreId) -> u16 {
        self.hctx.iter().rposition(|h| h.first_cpu <= cpu.0).unwrap_or(0) as u16
    }

    /// Driver tags its requests hold over all hardware queues.
    pub fn tags_busy(&self) -> u32 {
        self.hctx.iter().map(|h| h.tags_held).sum()
    }
}

impl Hctx {
    /// `blk_mq_hctx_next_cpu` (4.0): where an async run goes; `None` with one hardware queue
    /// (`WORK_CPU_UNBOUND`: the submitting CPU's worker).
    fn next_cpu(&mut self, single: bool) -> Option<CoreId> {
        if single {
            return None;
        }
        self.next_cpu_batch -= 1;
        if self.next_cpu_batch == 0 {
            let cpu = self.next_cpu;
            self.next_cpu = if cpu + 1 < self.first_cpu + self.nr_cpus { cpu + 1 } else { self.first_cpu };
            self.next_cpu_batch = BLK_MQ_CPU_WORK_BATCH;
            return Some(CoreId(cpu));
        }
        Some(CoreId(self.next_cpu))
    }

    pub fn has_cpu(&self, cpu: CoreId) -> bool {
        cpu.0 >= self.first_cpu && cpu.0 < self.first_cpu + self.nr_cpus
    }
}

/// What `scsi_queue_rq` answered.
enum QueueRq {
    Ok,
    Busy,
}

impl Sim {
    pub(crate) fn mq(&self, dev: DevId) -> &BlkMq {
        self.devs[dev].queue.mq.as_ref().expect("a blk-mq queue")
    }

    pub(crate) fn mq_mut(&mut self, dev: DevId) -> &mut BlkMq {
        self.devs[dev].queue.mq.as_mut().expect("a blk-mq queue")
    }

    /// `blk_mq_insert_request`: `rq` (with its tag) goes on its hardware queue's software queue.
    pub(crate) fn blk_mq_insert(&mut self, dev: DevId, rq: ReqId) {
        let h = self.reqs.get(rq.0).hctx as usize;
        let q = &mut self.mq_mut(dev).hctx[h];
        assert!(q.queued.len() < crate::scenario::limits::BIOS_LIVE_MAX, "software queue over its limit");
        q.queued.push_back(rq);
    }

    /// `blk_mq_run_hw_queues` (async): the hardware queues `blk_mq.run_hw_queues` picks.
    pub(crate) fn blk_mq_run_hw_queues(&mut self, dev: DevId) {
        let sq = self.blk_mq_get_sq_hctx(dev);
        for h in 0..self.mq(dev).hctx.len() as u16 {
            if self.blk_mq_run_hctx_of_all(dev, sq, h) {
                self.blk_mq_run_hw_queue(dev, h, true);
            }
        }
    }

    /// `blk_mq_has_sqsched` then `blk_mq_get_sq_hctx` (v5.12 block/blk-mq.c, b6e68ee82585;
    /// `blk_mq.run_hw_queues = sq_hctx`): for an elevator whose `dispatch_request` ignores the
    /// hardware queue it is asked for (bfq and mq-deadline, one instance and one lock for the
    /// whole queue; kyber sets `ELEVATOR_F_MQ_AWARE`), the current CPU's hardware queue if it
    /// is not stopped. None: run them all (to 5.11 always, `all`).
    pub(crate) fn blk_mq_get_sq_hctx(&self, dev: DevId) -> Option<u16> {
        use crate::scenario::{RunHwQueues, Scheduler};
        if self.cfg.scenario.blk_mq.run_hw_queues != RunHwQueues::SqHctx {
            return None;
        }
        let sq_sched = matches!(self.devs[dev].queue.mq_sched.as_ref(), Some(s) if s.has_elevator())
            && matches!(self.cfg.scenario.queue.scheduler, Scheduler::Bfq | Scheduler::MqDeadline);
        let m = self.mq(dev);
        let h = m.hctx_of(CoreId(self.current.cpu));
        (sq_sched && !m.hctx[h as usize].stopped).then_some(h)
    }

    /// Whether a queue-wide run (`blk_mq_run_hw_queues`, `blk_mq_delay_run_hw_queues`) runs
    /// hardware queue `h`: not stopped, and with no preferred queue `sq`, or `h` is it, or `h`
    /// holds requests that bypass the elevator on `hctx->dispatch` (v5.12).
    pub(crate) fn blk_mq_run_hctx_of_all(&self, dev: DevId, sq: Option<u16>, h: u16) -> bool {
        let q = &self.mq(dev).hctx[h as usize];
        !q.stopped && (sq.is_none_or(|s| s == h) || !q.dispatch.is_empty())
    }

    /// `blk_mq_run_hw_queue`: nothing if the queue is STOPPED; synchronously if asked and this
    /// CPU is one of the queue's; else its `run_work` on kblockd of `blk_mq_hctx_next_cpu`.
    pub(crate) fn blk_mq_run_hw_queue(&mut self, dev: DevId, h: u16, async_run: bool) {
        let cur = CoreId(self.current.cpu);
        let single = self.mq(dev).hctx.len() == 1;
        let run_mod = self.cfg.scenario.blk_mq.run_work != crate::scenario::RunWork::Queue;
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if q.stopped {
            return;
        }
        if !async_run && q.has_cpu(cur) {
            self.blk_mq_dispatch(dev, h);
            return;
        }
        if run_mod {
            // 4.18+: kblockd_mod_delayed_work_on(.., 0), which also takes a timer's run now.
            let cpu = q.next_cpu(single).unwrap_or(cur);
            self.kblockd_mod_delayed_work_on(dev, h, cpu, 0);
            return;
        }
        if q.run_pending {
            return;
        }
        q.run_pending = true;
        let cpu = q.next_cpu(single).unwrap_or(cur);
        self.kblockd_queue_work(crate::kernel::workqueue::Work::Hctx(dev, h), cpu);
    }

    /// `blk_add_timer` for a started blk-mq request: the queue's one timeout timer
    /// (`q->timeout`, `blk_mq_rq_timer`) is armed if it is not, for the 30 s deadline capped at
    /// `BLK_MAX_TIMEOUT` from now.
    pub(crate) fn blk_add_timer(&mut self, dev: DevId) {
        if self.mq(dev).timer_at.is_none() {
            let at = self.now() + BLK_MAX_TIMEOUT_NS;
            self.mq_mut(dev).timer_at = Some(at);
            self.events.schedule(at, Event::MqTimer { dev });
        }
    }

    /// `__blk_mq_run_hw_queue`: take the dispatch list, then the software queues, and hand each
    /// request to `scsi_queue_rq`. On BUSY the request is un-started and it and the rest are
    /// spliced back onto `hctx->dispatch`, a short physical time after `scsi_queue_rq` stopped
    /// the queue (`MQ_SPLICE_NS`; longer if a completion interrupt runs on this CPU meanwhile,
    /// see `mq_splice_due`).
    pub(crate) fn blk_mq_dispatch(&mut self, dev: DevId, h: u16) {
        if self.devs[dev].queue.mq_sched.is_some() {
            return self.blk_mq_sched_dispatch_requests(dev, h);
        }
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if q.stopped {
            return;
        }
        let mut list: VecDeque<ReqId> = std::mem::take(&mut q.dispatch);
        list.extend(q.queued.drain(..));
        while let Some(rq) = list.pop_front() {
            if self.devs[dev].is_nvme() {
                self.nvme_queue_rq(dev, h, rq);
                continue;
            }
            if let QueueRq::Busy = self.scsi_queue_rq(dev, h, rq) {
                list.push_front(rq);
                let cpu = CoreId(self.current.cpu);
                let q = &mut self.mq_mut(dev).hctx[h as usize];
                assert!(q.splicing.iter().all(|(c, _)| *c != cpu), "one BUSY run per CPU at a time");
                q.splicing.push((cpu, list.into_iter().collect()));
                let at = self.now() + MQ_SPLICE_NS;
                self.events.schedule(at, Event::MqSplice { dev, hctx: h, cpu });
                return;
            }
        }
    }

    /// `scsi_queue_rq` (4.0): the LUN's and the host's admission, counted over all hardware
    /// queues (`scsi_dev_queue_ready`, `scsi_host_queue_ready`). Not ready: BUSY, and the
    /// queue is stopped (`blk_mq_stop_hw_queue`), with a 3 ms delayed restart only when the
    /// LUN has nothing in flight. Ready: the command goes to the target.
    fn scsi_queue_rq(&mut self, dev: DevId, h: u16, rq: ReqId) -> QueueRq {
        let (_, host) = self.devs[dev].sd();
        let m = self.mq(dev);
        // The mempool clone over blk-mq has no tag until here.
        let need_tag = self.reqs.get(rq.0).tag.is_none();
        let no_tag = need_tag && (self.hctx_tags(dev, h).map.is_full() || !self.hctx_may_queue(dev, h));
        if no_tag || m.device_busy >= m.device_depth || self.hosts[host].is_busy() {
            self.blk_mq_stop_hw_queue(dev, h);
            if self.mq(dev).device_busy == 0 {
                self.blk_mq_delay_queue(dev, h);
            }
            return QueueRq::Busy;
        }
        if need_tag {
            let t = self.blk_mq_alloc_driver_tag(dev, h);
            assert!(t.is_some(), "checked: a tag within the share");
            self.reqs.get_mut(rq.0).tag = t;
        }
        assert!(self.hosts[host].try_get(dev), "checked not busy");
        let m = self.mq_mut(dev);
        m.device_busy += 1;
        assert!(m.device_busy <= m.device_depth, "device_busy over queue_depth");
        self.blk_add_timer(dev);
        self.start_command(dev, rq);
        QueueRq::Ok
    }

    /// `blk_mq_stop_hw_queue`: cancel the pending run and delayed work, set STOPPED.
    pub(crate) fn blk_mq_stop_hw_queue(&mut self, dev: DevId, h: u16) {
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        q.stopped = true;
        q.delay_work.cancel();
        if q.run_pending {
            q.run_pending = false;
            self.kblockd_cancel(crate::kernel::workqueue::Work::Hctx(dev, h));
        }
    }

    /// `blk_mq_delay_queue(hctx, SCSI_QUEUE_DELAY)`.
    fn blk_mq_delay_queue(&mut self, dev: DevId, h: u16) {
        let at = self.now() + SCSI_QUEUE_DELAY_NS;
        let cpu = CoreId(self.current.cpu);
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if q.delay_work.is_armed() {
            return;
        }
        if q.delay_work.arm(at, cpu) {
            self.events.schedule(at, Event::MqDelayRun { dev, hctx: h });
        }
    }

    /// `blk_mq_delay_work_fn`: a still-armed delayed work restarts the stopped queue and runs it
    /// (from kblockd).
    pub(crate) fn on_mq_delay_run(&mut self, dev: DevId, h: u16) {
        let now = self.now();
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        match q.delay_work.fire(now) {
            Fired::Lapsed => return,
            Fired::Later(at) => {
                self.events.schedule(at, Event::MqDelayRun { dev, hctx: h });
                return;
            }
            Fired::Due(_) => {}
        }
        if self.devs[dev].queue.mq_sched.is_some() {
            // 5.x: the delayed run_work runs the queue whatever its state.
            return self.blk_mq_run_hw_queue(dev, h, true);
        }
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if q.stopped {
            q.stopped = false;
            self.blk_mq_run_hw_queue(dev, h, true);
        }
    }

    /// `blk_mq_start_stopped_hw_queues(q, true)`, from every completion (`scsi_end_request`):
    /// only a STOPPED queue is restarted and its run queued on kblockd.
    pub(crate) fn blk_mq_start_stopped_hw_queues(&mut self, dev: DevId) {
        for h in 0..self.mq(dev).hctx.len() {
            let q = &mut self.mq_mut(dev).hctx[h];
            if q.stopped {
                q.stopped = false;
                self.blk_mq_run_hw_queue(dev, h as u16, true);
            }
        }
    }

    /// The splice a BUSY run ends with. If a completion interrupt is being handled on the CPU
    /// of that run, the run resumes (and splices) only after it (INFERRED: the hctx lock is not
    /// irq-safe, so interrupts run inside the window).
    pub(crate) fn mq_splice_due(&mut self, dev: DevId, h: u16, cpu: CoreId) {
        // Softirq work spinning on a lock at its end is still the interrupt's.
        if self.cores[cpu].in_irq_softirq || self.cores[cpu].spin_tail == Some(true) {
            self.cores[cpu].splice_after_irq.push((dev, h));
            return;
        }
        self.mq_splice(dev, h, cpu);
    }

    /// `list_splice(&rq_list, &hctx->dispatch)`: the leftovers go at the head of the dispatch
    /// list. v4.0 stops there: if a completion restarted and ran the queue between the stop
    /// and now, the leftovers are parked with no run to come. v4.1 (9ba52e5812e5) runs the
    /// queue again (`blk_mq.rerun_after_splice`).
    pub(crate) fn mq_splice(&mut self, dev: DevId, h: u16, cpu: CoreId) {
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        let i = q.splicing.iter().position(|(c, _)| *c == cpu).expect("a BUSY run on that CPU");
        let (_, left) = q.splicing.remove(i);
        for &rq in left.iter().rev() {
            q.dispatch.push_front(rq);
        }
        // Stamped whether the trace is on or not, as every record is (the device's clock
        // moves with it, and diskstats reads that clock).
        for &rq in &left {
            let r = self.reqs.get(rq.0);
            let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
            // blk_add_trace_rq_requeue (`__blk_mq_requeue_request`): shown as an insert back.
            self.emit(dev, Action::I, write, sector, bytes, self.context(), rq.0, 0);
        }
        if self.cfg.scenario.blk_mq.rerun_after_splice {
            let saved = self.current.cpu;
            self.current.cpu = cpu.0;
            self.blk_mq_run_hw_queue(dev, h, true);
            self.current.cpu = saved;
        }
    }

    /// `blk_mq_rq_timer` (4.0; 5.10's `blk_mq_timeout_work` alike): while commands are
    /// started, look again in `BLK_MAX_TIMEOUT` (the RAM LUN never lets one reach its 30 s
    /// deadline); with none, `blk_mq_tag_idle` on every hardware queue, which on a shared tag
    /// set makes an active one idle and wakes every waiter on its map. Parked requests were
    /// never started: the timer does not see them.
    pub(crate) fn on_mq_timer(&mut self, dev: DevId) {
        let now = self.now();
        let m = self.mq_mut(dev);
        m.timer_at = None;
        if m.device_busy > 0 {
            let at = now + BLK_MAX_TIMEOUT_NS;
            m.timer_at = Some(at);
            self.events.schedule(at, Event::MqTimer { dev });
            return;
        }
        for w in self.blk_mq_tag_idle(dev) {
            self.wake(w, crate::kernel::sched::Step::RetryTag);
        }
    }
}

impl Sim {
    /// `blk_mq_submit_bio` (5.10; `blk_mq_make_request` before 5.9) under a task's plug:
    /// whether `rq` waits on the plug. Where the full plug applies (`blk_mq_full_plug`) a plug
    /// holding `blk_plug_max_rq_count` requests, or ending with one of `BLK_PLUG_FLUSH_SIZE`,
    /// is flushed first, from here. Otherwise an elevator takes the request at once (false);
    /// without one the limited plug (to 5.16) holds one request per queue, issuing the one it
    /// held (`same_queue_rq`).
    pub(crate) fn blk_mq_plug_request(&mut self, dev: DevId, rq: ReqId, tid: ThreadId) -> bool {
        let elevator = self.mq_sched(dev).is_some_and(crate::block::blk_mq_sched::MqSched::has_elevator);
        if self.blk_mq_full_plug(dev) {
            let last = self.blk.plug.iter().rev().find(|r| self.devs[self.reqs.get(r.0).dev].queue.mq_sched.is_some());
            let big = last.is_some_and(|r| self.reqs.get(r.0).bytes >= crate::block::blk_core::BLK_PLUG_FLUSH_SIZE);
            if self.blk.mq_rq_count >= self.blk_plug_max_rq_count() || big {
                self.blk_flush_plug_list(tid, false);
            }
        } else if elevator {
            return false;
        } else if let Some(i) = self.blk.plug.iter().position(|r| self.reqs.get(r.0).dev == dev) {
            let held = self.blk.plug.remove(i);
            self.blk.mq_rq_count -= 1;
            let r = self.reqs.get(held.0);
            let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
            self.emit(dev, Action::U, false, 0, 0, tid, 0, 1);
            self.emit(dev, Action::I, write, sector, bytes, tid, held.0, 0);
            self.blk_mq_sched_insert_request(dev, held);
        }
        self.blk_add_rq_to_plug(dev, rq, tid);
        true
    }

    /// The full plug's condition in `blk_mq_submit_bio`, by `blk_mq.plug`: 5.0, one hardware
    /// queue or a driver with `commit_rqs` (NVMe's `nvme_commit_rqs`; the model's SCSI hosts
    /// have none, `scsi_mq_ops_no_commit`); 5.5, or a rotational disk (`!blk_queue_nonrot`),
    /// or a host_tagset host (`blk_mq_is_sbitmap_shared`, 5.10's stable releases); 5.17, every
    /// queue.
    fn blk_mq_full_plug(&self, dev: DevId) -> bool {
        use crate::scenario::MqPlug;
        let s = &self.cfg.scenario;
        let nvme = self.devs[dev].is_nvme();
        let one_queue = self.mq(dev).hctx.len() == 1;
        let rotational = s.disk.kind.rotational();
        let shared_sbitmap = s.host.host_tagset && !nvme;
        match s.blk_mq.plug {
            MqPlug::Off => false,
            MqPlug::V5_0 => one_queue || nvme,
            MqPlug::V5_5 | MqPlug::V5_16 => one_queue || nvme || rotational || shared_sbitmap,
            MqPlug::V5_17 => true,
        }
    }

    /// `blk_plug_max_rq_count`: `BLK_MAX_REQUEST_COUNT` (32 from 5.16), twice that once the
    /// plug holds requests of several queues.
    fn blk_plug_max_rq_count(&self) -> u32 {
        let max =
            crate::block::blk_core::BLK_MAX_REQUEST_COUNT[usize::from(self.cfg.scenario.blk_mq.plug >= crate::scenario::MqPlug::V5_16)];
        if self.blk.multiple_queues {
            2 * max
        } else {
            max
        }
    }

    /// `blk_add_rq_to_plug`: `rq` joins the plug (P in the trace when it is the plug's first),
    /// which then holds requests of several queues if another queue's is on it.
    fn blk_add_rq_to_plug(&mut self, dev: DevId, rq: ReqId, tid: ThreadId) {
        let r = self.reqs.get(rq.0);
        let (write, sector) = (r.write, r.sector);
        if self.blk.mq_rq_count == 0 {
            self.emit(dev, Action::P, write, sector, 0, tid, rq.0, 0);
        }
        let other = self.blk.plug.iter().any(|r| {
            let d = self.reqs.get(r.0).dev;
            d != dev && self.devs[d].queue.mq_sched.is_some()
        });
        self.blk.multiple_queues |= other;
        self.blk.plug.push(rq);
        self.blk.mq_rq_count += 1;
        // The full plug flushes at its count; the limited plug holds one request per queue.
        let bound = 2 * crate::block::blk_core::BLK_MAX_REQUEST_COUNT[1] + self.devs.len() as u32;
        assert!(self.blk.mq_rq_count <= bound, "a task's plug over its limit");
    }

    /// `blk_mq_flush_plug_list`: the plug's blk-mq requests, sorted by software queue, hardware
    /// queue and sector when there are more than 2 of several queues (`plug_rq_cmp`; by device
    /// and CPU for the software queue, INFERRED: the kernel compares their addresses), go to
    /// `blk_mq_sched_insert_requests` a run of one software queue at a time (U in the trace
    /// with how many), which runs the queue asynchronously only `from_schedule`.
    pub(crate) fn blk_mq_flush_plug_list(&mut self, tid: ThreadId, from_schedule: bool) {
        let mut list = std::mem::take(&mut self.blk.mq_list);
        let mut plug = std::mem::take(&mut self.blk.plug);
        plug.retain(|&r| {
            let mq = self.devs[self.reqs.get(r.0).dev].queue.mq_sched.is_some();
            if mq {
                list.push(r);
            }
            !mq
        });
        self.blk.plug = plug;
        let ctx = |sim: &Sim, r: ReqId| {
            let q = sim.reqs.get(r.0);
            (q.dev, q.cpu, q.hctx)
        };
        if self.blk.mq_rq_count > 2 && self.blk.multiple_queues {
            list.sort_by_key(|&r| (ctx(self, r), self.reqs.get(r.0).sector));
        }
        self.blk.mq_rq_count = 0;
        let mut i = 0;
        while i < list.len() {
            let key = ctx(self, list[i]);
            let n = list[i..].iter().take_while(|&&r| ctx(self, r) == key).count();
            let (dev, _, h) = key;
            self.emit(dev, Action::U, false, 0, 0, tid, 0, n as u32);
            self.blk_mq_sched_insert_requests(dev, h, &list[i..i + n], from_schedule, tid);
            i += n;
        }
        list.clear();
        self.blk.mq_list = list;
    }

    /// `blk_mq_alloc_tag_set` and `blk_mq_init_queue` → `blk_mq_add_queue_tag_set`: one tag
    /// set per SCSI host (`shost->tag_set`, shared by every LUN's queue on it) and one per NVMe
    /// controller; a set used by two queues or more is shared
    /// (`blk_mq_update_tag_set_shared`), and the host's `host_busy` is bounded by the set's tags.
    pub(crate) fn blk_mq_share_tag_sets(&mut self) {
        let host_tagset = self.cfg.scenario.host.host_tagset;
        let mut host_set: Vec<Option<u16>> = vec![None; self.hosts.len()];
        for i in 0..self.devs.len() {
            let host = match self.devs[i].kind {
                crate::block::DevKind::Sd { host, .. } => Some(host),
                _ => None,
            };
            let Some(m) = self.devs[i].queue.mq.as_mut() else { continue };
            let existing = host.and_then(|h| host_set[h.0 as usize]);
            let set = existing.unwrap_or_else(|| {
                let shared_map = host_tagset && host.is_some();
                self.tag_sets.push(crate::block::blk_mq_tag::BlkMqTagSet::new(m.hctx.len() as u32, m.tag_depth, shared_map));
                (self.tag_sets.len() - 1) as u16
            });
            if let Some(h) = host {
                host_set[h.0 as usize] = Some(set);
            }
            m.set = set;
            self.tag_sets[set as usize].nr_queues += 1;
        }
        for d in self.devs.iter_mut() {
            if let Some(m) = d.queue.mq.as_mut() {
                m.shared_tags = self.tag_sets[m.set as usize].nr_queues > 1;
            }
        }
        for (h, set) in host_set.iter().enumerate() {
            if let Some(set) = set {
                let depth = self.tag_sets[*set as usize].depth();
                self.hosts[crate::engine::ids::HostId(h as u16)].bound_busy_by_tags(depth);
            }
        }
    }
}

/// The events a device's blk-mq queues can have queued at once: per hardware queue a splice
/// per CPU and a delayed run; per queue a timer, a path check and kyber's timer.
pub(crate) fn blk_mq_events_max(s: &crate::scenario::Scenario) -> usize {
    crate::drivers::nvme::pci::nr_hw_queues(s) as usize * (s.cpu.cores as usize + 1) + 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::Request;
    use crate::scenario::{set_knob, Scenario};

    /// One LUN on the RAM target, blk-mq with 2 hardware queues over 4 CPUs, `depth` tags each
    /// and a LUN queue_depth of `admit`.
    fn sim(depth: &str, admit: &str, rerun: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [
            ("disk.kind", "ramlun"),
            ("queue.scheduler", "none"),
            ("cpu.cores", "4"),
            ("host.nr_hw_queues", "2"),
            ("host.can_queue", depth),
            ("queue.depth", admit),
            ("blk_mq.rerun_after_splice", rerun),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    fn add(sim: &mut Sim, h: u16) -> ReqId {
        let dev = DevId(0);
        let tag = sim.blk_mq_alloc_driver_tag(dev, h);
        let rq = ReqId(sim.reqs.insert(Request { write: true, tag, hctx: h, cpu: None, ..Request::for_test(dev, ThreadId(0), sim.now()) }));
        sim.blk_mq_insert(dev, rq);
        rq
    }

    #[test]
    fn mempool_clones_park_without_tags_and_may_outnumber_the_map() {
        // Untagged requests (dm's mempool clones take a tag only in scsi_queue_rq): a BUSY
        // parks more of them than the map has tags, and the view names each, untagged.
        let mut sim = sim("2", "1", "false");
        let dev = DevId(0);
        for _ in 0..5 {
            let rq = add(&mut sim, 0);
            let tag = sim.reqs.get_mut(rq.0).tag.take();
            if let Some(tag) = tag {
                sim.blk_mq_put_driver_tag(dev, 0, tag);
            }
        }
        sim.current.cpu = 0;
        sim.blk_mq_dispatch(dev, 0);
        sim.mq_splice(dev, 0, CoreId(0));
        let (devs, _) = sim.occupancy();
        let parked = &devs[0].hctx[0].parked;
        assert!(parked.len() > devs[0].hctx[0].depth as usize, "{} parked on a map of {}", parked.len(), devs[0].hctx[0].depth);
        assert!(parked.iter().all(|p| !p.tagged));
    }

    /// A BUSY run on CPU 0 of queue 0: 2 admitted, 1 left over, queue stopped.
    fn busy_run(rerun: &str) -> Sim {
        let mut sim = sim("8", "2", rerun);
        for _ in 0..3 {
            add(&mut sim, 0);
        }
        sim.current.cpu = 0;
        sim.blk_mq_dispatch(DevId(0), 0);
        sim
    }

    #[test]
    fn a_busy_lun_stops_the_queue_and_parks_the_leftovers_on_its_dispatch_list() {
        let mut sim = busy_run("false");
        let m = sim.mq(DevId(0));
        assert_eq!(m.device_busy, 2);
        assert!(m.hctx[0].stopped);
        assert_eq!(m.hctx[0].splicing.len(), 1, "the leftover waits for the splice");
        assert!(m.hctx[0].dispatch.is_empty());
        sim.mq_splice(DevId(0), 0, CoreId(0));
        let q = &sim.mq(DevId(0)).hctx[0];
        assert_eq!(q.dispatch.len(), 1);
        assert!(q.stopped, "a completion will restart it");
    }

    /// A completion restarts the stopped queue and its kblockd run happens before the splice.
    fn race_lost(rerun: &str) -> Sim {
        let mut sim = busy_run(rerun);
        let dev = DevId(0);
        sim.mq_mut(dev).device_busy -= 1;
        sim.blk_mq_start_stopped_hw_queues(dev);
        assert!(sim.mq(dev).hctx[0].run_pending, "the restart queues a run on kblockd");
        sim.mq_mut(dev).hctx[0].run_pending = false;
        sim.kblockd_cancel(crate::kernel::workqueue::Work::Hctx(dev, 0));
        sim.current.cpu = 1;
        sim.blk_mq_dispatch(dev, 0);
        sim.mq_splice(dev, 0, CoreId(0));
        sim
    }

    #[test]
    fn v4_0_leaves_the_leftovers_parked_when_the_restart_ran_before_the_splice() {
        let sim = race_lost("false");
        let q = &sim.mq(DevId(0)).hctx[0];
        assert_eq!(q.dispatch.len(), 1);
        assert!(!q.stopped && !q.run_pending, "parked: not stopped, so no completion restarts it, and no run is coming");
        // The view snapshot names the parked request (the diagram's tip lists it).
        let parked_id = q.dispatch[0].0;
        let (devs, _) = sim.occupancy();
        let parked = &devs[0].hctx[0].parked;
        assert_eq!(parked.len(), 1);
        assert_eq!((parked[0].id, parked[0].write, parked[0].sector, parked[0].bytes, parked[0].tagged), (parked_id, true, 0, 4096, true));
        assert!(devs[0].hctx[1].parked.is_empty());
    }

    #[test]
    fn v4_1_runs_the_queue_again_after_the_splice() {
        let sim = race_lost("true");
        let q = &sim.mq(DevId(0)).hctx[0];
        assert_eq!(q.dispatch.len(), 1);
        assert!(q.run_pending, "9ba52e5812e5: the rerun is queued");
    }

    #[test]
    fn parked_requests_go_when_something_runs_their_queue_from_one_of_its_cpus() {
        let mut sim = race_lost("false");
        let dev = DevId(0);
        // The timer finds nothing started and an unshared tag set: it wakes nobody.
        sim.mq_mut(dev).device_busy = 0;
        sim.hctx_tags_mut(dev, 0).wait.sleep(ThreadId(5));
        sim.on_mq_timer(dev);
        assert_eq!(sim.hctx_tags(dev, 0).wait.sleepers().count(), 1, "the timer does not end the stall");
        // A submitter on CPU 2 runs queue 1: queue 0 stays parked.
        sim.current.cpu = 2;
        sim.blk_mq_run_hw_queue(dev, 1, false);
        assert_eq!(sim.mq(dev).hctx[0].dispatch.len(), 1);
        // One on CPU 1 (queue 0's) runs it: the parked request is started.
        sim.current.cpu = 1;
        sim.blk_mq_run_hw_queue(dev, 0, false);
        assert!(sim.mq(dev).hctx[0].dispatch.is_empty());
        assert_eq!(sim.mq(dev).device_busy, 1);
    }

    #[test]
    fn an_interrupt_on_the_cpu_of_a_busy_run_delays_its_splice() {
        let mut sim = busy_run("false");
        sim.cores[0].in_irq_softirq = true;
        sim.mq_splice_due(DevId(0), 0, CoreId(0));
        assert_eq!(sim.mq(DevId(0)).hctx[0].splicing.len(), 1, "not spliced inside the interrupt");
        assert_eq!(sim.cores[0].splice_after_irq, vec![(DevId(0), 0)]);
    }

    #[test]
    fn a_sleeper_on_one_tag_map_is_not_woken_by_frees_on_another() {
        let mut set = crate::block::blk_mq_tag::BlkMqTagSet::new(2, 62, false);
        set.tags[0].wait.sleep(ThreadId(9));
        for _ in 0..100 {
            assert!(set.tags[1].wait.tag_freed().is_empty());
        }
        assert_eq!(set.tags.iter().flat_map(|t| t.wait.sleepers()).collect::<Vec<_>>(), vec![ThreadId(9)]);
        // 62 tags: a wake batch of 7. Six frees wake nobody; the seventh wakes it.
        for _ in 0..6 {
            assert!(set.tags[0].wait.tag_freed().is_empty());
        }
        assert_eq!(set.tags[0].wait.tag_freed(), vec![ThreadId(9)]);
    }

    #[test]
    fn with_a_vector_per_hardware_queue_each_queues_completions_interrupt_its_first_cpu() {
        let mut sim = sim("8", "8", "false");
        let (q0, q1) = (add(&mut sim, 0), add(&mut sim, 1));
        let host = HostId(0);
        // One vector for the HBA: every completion interrupts its CPU.
        assert_eq!(sim.irq_cpu_of(host, q0), sim.irq_cpu_of(host, q1));
        sim.cfg.scenario.host.irq_per_hw_queue = true;
        // ib_srp: queue i's channel has its own completion vector; 4 CPUs, 2 queues.
        assert_eq!(sim.irq_cpu_of(host, q0), CoreId(0));
        assert_eq!(sim.irq_cpu_of(host, q1), CoreId(2));
    }

    #[test]
    fn cpu_pairs_share_a_hardware_queue_and_async_runs_alternate_every_8() {
        let mut m = BlkMq::new(4, 62, 62, 8);
        let map: Vec<u16> = (0..8).map(|c| m.hctx_of(CoreId(c))).collect();
        assert_eq!(map, [0, 0, 1, 1, 2, 2, 3, 3]);
        let cpus: Vec<u16> = (0..16).map(|_| m.hctx[1].next_cpu(false).unwrap().0).collect();
        assert_eq!(&cpus[..7], &[2; 7]);
        assert_eq!(&cpus[8..15], &[3; 7]);
    }
}
