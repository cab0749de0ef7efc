//! `kernel/workqueue.c`: kblockd, the per-CPU worker that runs queue runs punted to it
//! (`kblockd_schedule_work`, `worker_thread`).

use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, ThreadKind};

impl Sim {
    /// The pending `delay_work` goes on this CPU's kblockd list, and the worker wakes.
    pub(crate) fn kblockd_queue_work(&mut self, dev: DevId, cpu: CoreId) {
        self.kblockd_queue[cpu.idx()].push_back(dev);
        // kblockd/N are the threads right after the ksoftirqds.
        let worker = ThreadId(self.cores.len() as u32 + cpu.0 as u32);
        debug_assert!(matches!(self.threads[worker.idx()].kind, ThreadKind::Kblockd(c) if c == cpu));
        if self.threads[worker.idx()].is_idle_kthread() {
            self.wake(worker, Step::KblockdWork);
        }
    }

    pub(crate) fn kblockd_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Kblockd(cpu) = self.threads[tid.idx()].kind else { unreachable!("not kblockd") };
        if let Some(dev) = self.kblockd_queue[cpu.idx()].pop_front() {
            self.run_queued[dev.idx()] = false;
            self.run_queue(dev);
        }
        if self.kblockd_queue[cpu.idx()].is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::KblockdWork)
        }
    }
}
