//! `kernel/softirq.c`: an interrupt raises the block softirq (`raise_softirq_irqoff`),
//! `irq_exit` runs it (`do_softirq`) within its budget, and `ksoftirqd/N` takes over past it.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{AcctState, Step, ThreadKind};

impl Sim {
    /// Raises an interrupt on `c` whose softirq work completes `req`.
    pub(crate) fn raise_irq(&mut self, c: CoreId, req: ReqId) {
        self.totals.interrupts += 1;
        self.cores[c.idx()].softirq.push_back(req);
        self.kick(c);
    }

    /// `irq_exit` → `do_softirq` on core `c`, if it has softirq work: the next completion runs
    /// in softirq context, for up to `SOFTIRQ_BUDGET_NS` in a row; past that, `__do_softirq`
    /// gives up and wakes `ksoftirqd/N`, a thread that takes its turn with the others on this
    /// CPU. Returns whether the core is taken (busy with softirq work, or kicked again by the
    /// wakeup).
    pub(crate) fn do_softirq(&mut self, c: CoreId) -> bool {
        let ci = c.idx();
        let now = self.now();
        if self.cores[ci].softirq.is_empty() {
            self.cores[ci].softirq_burst_ns = 0;
        } else if !self.cores[ci].softirq_deferred {
            if self.cores[ci].softirq_burst_ns >= SOFTIRQ_BUDGET_NS {
                // __do_softirq is out of budget: the rest is ksoftirqd/N's, a thread that takes
                // its turn with the others on this CPU. Waking it kicks this core again.
                self.cores[ci].softirq_deferred = true;
                let ksoftirqd = ThreadId(c.0 as u32);
                debug_assert_eq!(self.threads[ksoftirqd.idx()].kind, ThreadKind::Ksoftirqd);
                if self.threads[ksoftirqd.idx()].is_idle_kthread() {
                    self.wake(ksoftirqd, Step::Softirq);
                    return true;
                }
            }
            let req = *self.cores[ci].softirq.front().expect("checked non-empty");
            let cost = self.softirq_cost(req);
            self.scsi_device_unbusy(req);
            let core = &mut self.cores[ci];
            core.softirq_burst_ns += cost;
            core.busy = true;
            core.in_irq_softirq = true;
            core.work_start = now;
            core.state = AcctState::Softirq;
            self.events.schedule(now + cost, Event::CoreDone { core: c });
            return true;
        }
        false
    }

    /// ksoftirqd/N's step: complete the next pending request; idle once none is left.
    pub(crate) fn ksoftirqd_step(&mut self, tid: ThreadId) -> Next {
        let c = self.threads[tid.idx()].home.idx();
        if let Some(rq) = self.cores[c].softirq.pop_front() {
            self.softirq_complete(rq);
        }
        if self.cores[c].softirq.is_empty() {
            self.cores[c].softirq_deferred = false;
            Next::Idle
        } else {
            Next::Continue(Step::Softirq)
        }
    }
}
