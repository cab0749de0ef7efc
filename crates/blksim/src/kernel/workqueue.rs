//! `kernel/workqueue.c`: kblockd, the per-CPU worker that runs queue runs punted to it
//! (`kblockd_schedule_work`, `worker_thread`).

use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, ThreadKind};

/// A work item on kblockd: a legacy queue's `delay_work`, or a blk-mq hardware queue's
/// `run_work`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    Queue(DevId),
    Hctx(DevId, u16),
}

/// kblockd: per CPU, the work punted to its worker.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kblockd {
    pub lists: IdVec<CoreId, std::collections::VecDeque<Work>>,
}

impl Kblockd {
    pub(crate) fn new(cores: u32) -> Kblockd {
        Kblockd { lists: vec![Default::default(); cores as usize].into() }
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

    /// `cancel_delayed_work` of a work item already on a kblockd list: it is taken off.
    pub(crate) fn kblockd_cancel(&mut self, work: Work) {
        for q in &mut self.kblockd.lists {
            q.retain(|w| *w != work);
        }
    }

    pub(crate) fn kblockd_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Kblockd(cpu) = self.threads[tid].kind else { unreachable!("not kblockd") };
        match self.kblockd.lists[cpu].pop_front() {
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
