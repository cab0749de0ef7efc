//! `kernel/softirq.c`: an interrupt raises the block softirq (`raise_softirq_irqoff`),
//! `irq_exit` runs it (`do_softirq`) within its budget, and `ksoftirqd/N` takes over past it.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{AcctState, Step, ThreadKind, ThreadState};

impl Sim {
    /// Raises an interrupt on `c` whose softirq work completes `req`.
    pub(crate) fn raise_irq(&mut self, c: CoreId, req: ReqId) {
        self.acct.totals.interrupts += 1;
        self.cores[c].softirq.push_back(req);
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
                debug_assert_eq!(self.threads[ksoftirqd].kind, ThreadKind::Ksoftirqd);
                if self.threads[ksoftirqd].is_idle_kthread() {
                    self.wake(ksoftirqd, Step::Softirq);
                    return true;
                }
            }
            let req = *self.cores[ci].softirq.front().expect("checked non-empty");
            let cost = self.softirq_cost(req);
            self.scsi_device_unbusy(req);
            // top shows it under the task it interrupted: the tick that lands in softirq adds
            // to `current`'s stime (`account_system_time`; its index only picks /proc/stat's
            // column), and 2.6.x's `task_times` scales utime + stime to sum_exec_runtime,
            // which the irq ran inside. On an idle CPU it is no task's. (With
            // CONFIG_IRQ_TIME_ACCOUNTING, 2.6.39 on and off by default, it would not be.)
            if let Some(t) = self.cores[ci].current.filter(|t| self.threads[*t].state == ThreadState::Running) {
                self.threads[t].cpu_ns += cost;
            }
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
        let c = self.threads[tid].home.idx();
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

#[cfg(test)]
mod tests {
    use crate::engine::ids::*;
    use crate::engine::Sim;
    use crate::kernel::sched::{Step, ThreadKind, ThreadState};
    use crate::scenario::{set_knob, Scenario};

    /// One CPU with a completion's softirq pending, stopped just before `irq_exit` runs it on
    /// top of the job's thread in `state`: the CPU time top then shows for that thread.
    fn irq_exit_over(state: ThreadState) -> (u64, u64) {
        let mut s = Scenario::default();
        set_knob(&mut s, "cpu.cores", "1").unwrap();
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        while sim.cores[0].softirq.is_empty() || !sim.cores[0].busy {
            assert!(sim.step(), "the run ended with no completion pending");
        }
        let user = sim.threads.iter().position(|t| matches!(t.kind, ThreadKind::User(_))).map(|i| ThreadId(i as u32)).unwrap();
        let t = &mut sim.threads[user];
        t.state = state;
        t.next = (state == ThreadState::Running).then_some(Step::Next);
        let before = t.cpu_ns;
        sim.cores[0].current = Some(user);
        sim.cores[0].busy = false;
        sim.cores[0].softirq_deferred = false;
        sim.cores[0].softirq_burst_ns = 0;
        let cost = sim.softirq_cost(*sim.cores[0].softirq.front().unwrap());
        assert!(sim.do_softirq(CoreId(0)) && sim.cores[0].in_irq_softirq);
        (sim.threads[user].cpu_ns - before, cost)
    }

    #[test]
    fn softirq_at_irq_exit_shows_in_top_under_the_task_it_interrupted_and_under_none_on_an_idle_cpu() {
        let (charged, cost) = irq_exit_over(ThreadState::Running);
        assert!(cost > 0);
        assert_eq!(charged, cost, "the interrupted task's stime takes the softirq's time");
        // A thread that went to sleep left the CPU to the idle task: the time is no task's.
        assert_eq!(irq_exit_over(ThreadState::Sleeping).0, 0);
    }
}
