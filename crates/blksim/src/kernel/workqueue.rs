//! `kernel/workqueue.c`: kblockd, the per-CPU worker that runs queue runs punted to it
//! (`kblockd_schedule_work`, `worker_thread`, `process_one_work`), and `mod_delayed_work_on`
//! for a blk-mq hardware queue's `run_work` (`kblockd_mod_delayed_work_on`).

use crate::engine::ids::*;
use crate::engine::time::SimTime;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, ThreadKind};

/// A work item on kblockd: a legacy queue's `delay_work`, or a blk-mq hardware queue's
/// `run_work`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    Queue(DevId),
    Hctx(DevId, u16),
}

/// kblockd: per CPU, the work punted to its worker, and the item its worker has taken, with
/// when the worker is switched in and starts it (`process_one_work` clears its PENDING bit
/// there: from then on `mod_delayed_work_on` cannot take it back).
#[derive(Clone, Debug, Default)]
pub(crate) struct Kblockd {
    pub lists: IdVec<CoreId, std::collections::VecDeque<Work>>,
    pub started: IdVec<CoreId, Option<(Work, SimTime)>>,
}

impl Kblockd {
    pub(crate) fn new(cores: u32) -> Kblockd {
        Kblockd { lists: vec![Default::default(); cores as usize].into(), started: vec![None; cores as usize].into() }
    }
}

impl Sim {
    /// The work goes on this CPU's kblockd list, and the worker wakes.
    pub(crate) fn kblockd_queue_work(&mut self, work: Work, cpu: CoreId) {
        assert!(self.kblockd.lists[cpu].len() < 4096, "kblockd list over its limit");
        self.kblockd.lists[cpu].push_back(work);
        // kblockd/N are the threads right after the ksoftirqds.
        let worker = ThreadId(self.cores.len() as u32 + cpu.0 as u32);
        debug_assert!(matches!(self.threads[worker].kind, ThreadKind::Kblockd(c) if c == cpu));
        if self.threads[worker].is_idle_kthread() {
            self.wake(worker, Step::KblockdWork);
        }
    }

    /// `kblockd_mod_delayed_work_on(cpu, &hctx->run_work, jiffies)` (v5.10 block/blk-core.c:
    /// `mod_delayed_work_on` on kblockd, kernel/workqueue.c), with `blk_mq.run_work` other than
    /// `queue`: `try_to_grab_pending` takes the hardware queue's run off its timer, or off
    /// kblockd's list while no worker has taken it yet, and the run is queued again: now (0
    /// jiffies; a run already on a list stays there) or on its timer, which fires at the
    /// `jiffies`-th tick from now. A run stays grabbable until its worker is switched in
    /// (`kblockd_start_work`): the worker's wakeup and context switch are the window in which
    /// a re-arm takes it back. Returns whether a queued run was taken back.
    pub(crate) fn kblockd_mod_delayed_work_on(&mut self, dev: DevId, h: u16, cpu: CoreId, jiffies: u64) -> bool {
        let now = self.now();
        let tick = crate::calib::RUN_WORK_JIFFY_NS;
        let at = crate::engine::time::SimTime((now.0 / tick + jiffies) * tick);
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        // Every arm is on the tick grid, so a timer re-armed is never earlier than the event
        // it already has queued.
        debug_assert!(jiffies == 0 || q.delay_work.due().is_none_or(|d| d <= at), "run_work re-armed earlier");
        q.delay_work.cancel();
        if jiffies == 0 {
            // A run on a list, or taken and not yet done, stays as it is.
            if !q.run_pending {
                q.run_pending = true;
                self.kblockd_queue_work(Work::Hctx(dev, h), cpu);
            }
            return false;
        }
        let stolen = q.run_pending && self.kblockd_grab_pending(Work::Hctx(dev, h));
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        if stolen {
            q.run_pending = false;
        }
        if q.delay_work.arm(at, cpu) {
            self.events.schedule(at, crate::engine::event::Event::MqDelayRun { dev, hctx: h });
        }
        stolen
    }

    /// `cancel_delayed_work` of a work item already on a kblockd list, or taken by its worker
    /// and not yet done: it is taken off.
    pub(crate) fn kblockd_cancel(&mut self, work: Work) {
        for q in &mut self.kblockd.lists {
            q.retain(|w| *w != work);
        }
        for s in &mut self.kblockd.started {
            if s.is_some_and(|(w, _)| w == work) {
                *s = None;
            }
        }
    }

    /// `try_to_grab_pending` on a work item queued on kblockd: taken off its list, or off its
    /// worker before the worker is switched in to start it. Whether it was pending so.
    fn kblockd_grab_pending(&mut self, work: Work) -> bool {
        let now = self.now();
        let mut grabbed = false;
        for q in &mut self.kblockd.lists {
            let before = q.len();
            q.retain(|w| *w != work);
            grabbed |= q.len() != before;
        }
        for s in &mut self.kblockd.started {
            if s.is_some_and(|(w, at)| w == work && now < at) {
                *s = None;
                grabbed = true;
            }
        }
        grabbed
    }

    /// Whether a worker takes its item as it is switched in (with `blk_mq.run_work` other than
    /// `queue`, where `mod_delayed_work_on` can grab a queued run back, and when it is taken
    /// decides whether it can), or when its step ends (the model's rule for the eras before:
    /// nothing grabs a queued run back there, and 4.0's `cancel_delayed_work` on a stopped
    /// queue takes it until the run is done, INFERRED as the model's measured 4.0 rows have it).
    fn kblockd_takes_at_start(&self) -> bool {
        self.cfg.scenario.blk_mq.run_work != crate::scenario::RunWork::Queue
    }

    /// The worker of `tid`'s CPU is picked to run at `at` (after its switch in): it takes the
    /// head of its list (`worker_thread` → `process_one_work`).
    pub(crate) fn kblockd_start_work(&mut self, tid: ThreadId, at: SimTime) {
        if !self.kblockd_takes_at_start() {
            return;
        }
        let ThreadKind::Kblockd(cpu) = self.threads[tid].kind else { unreachable!("not kblockd") };
        if self.kblockd.started[cpu].is_none() {
            self.kblockd.started[cpu] = self.kblockd.lists[cpu].pop_front().map(|w| (w, at));
        }
    }

    pub(crate) fn kblockd_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Kblockd(cpu) = self.threads[tid].kind else { unreachable!("not kblockd") };
        let work = match self.kblockd.started[cpu].take() {
            Some((w, _)) => Some(w),
            None if !self.kblockd_takes_at_start() => self.kblockd.lists[cpu].pop_front(),
            None => None,
        };
        match work {
            Some(Work::Queue(dev)) => {
                self.devs[dev].queue.run_queued = false;
                // A queue run from kblockd unplugs the queue first (blk_unplug_work, cfq_kick_queue).
                if self.remove_plug(dev) {
                    let waiting = self.devs[dev].queue.elevator.len() as u32;
                    self.emit(dev, crate::kernel::trace::blktrace::Action::U, false, 0, 0, tid, 0, waiting);
                }
                self.run_queue(dev);
            }
            Some(Work::Hctx(dev, h)) => {
                self.mq_mut(dev).hctx[h as usize].run_pending = false;
                self.blk_mq_dispatch(dev, h);
            }
            None => {}
        }
        if self.kblockd.lists[cpu].is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::KblockdWork)
        }
    }
}
