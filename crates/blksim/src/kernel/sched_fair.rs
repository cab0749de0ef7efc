//! `kernel/sched_fair.c`: where a woken task runs (`select_task_rq_fair`, 2.6.32) and, with
//! `cpu.scheduler = fair`, CFS's vruntime pick and wakeup preemption (2.6.39).

use crate::calib::{SCHED_LATENCY_NORMALIZED_NS, SCHED_WAKEUP_GRAN_NORMALIZED_NS};
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::sched::ThreadKind;

impl Sim {
    /// Where a woken thread runs (`select_task_rq_fair` → `select_idle_sibling`): on its last
    /// CPU if that is idle, else on the next idle CPU (all cores share one package here). Per-CPU
    /// kernel threads (`ksoftirqd/N`, `kblockd/N`) stay bound to theirs.
    pub(crate) fn select_task_rq(&self, tid: ThreadId, prev: CoreId) -> CoreId {
        if matches!(self.threads[tid.idx()].kind, ThreadKind::Ksoftirqd | ThreadKind::Kblockd(_)) {
            return prev;
        }
        let idle = |c: usize| {
            let core = &self.cores[c];
            !core.busy && core.runq.is_empty() && core.softirq.is_empty()
        };
        let n = self.cores.len();
        if idle(prev.idx()) {
            return prev;
        }
        (1..n).map(|k| (prev.idx() + k) % n).find(|&c| idle(c)).map_or(prev, |c| CoreId(c as u16))
    }
}

/// `cpu.scheduler = fair`: CFS's pick and wakeup preemption as 2.6.39 has them. All threads
/// here are SCHED_NORMAL at nice 0, so every weight is NICE_0_LOAD and vruntime is CPU time.
impl Sim {
    /// The CPU scheduler is CFS (`cpu.scheduler = fair`).
    pub(crate) fn fair(&self) -> bool {
        self.cfg.scenario.cpu.scheduler == crate::scenario::CpuScheduler::Fair
    }

    /// `1 + ilog2(min(ncpus, 8))`: the boot-time factor of the latency tunables
    /// (`get_update_sysctl_factor`, SCHED_TUNABLESCALING_LOG).
    fn sysctl_factor(&self) -> u64 {
        let cpus = (self.cores.len() as u64).clamp(1, 8);
        1 + u64::from(cpus.ilog2())
    }

    /// `sysctl_sched_latency` for this many CPUs.
    pub(crate) fn sched_latency_ns(&self) -> u64 {
        SCHED_LATENCY_NORMALIZED_NS * self.sysctl_factor()
    }

    /// `sysctl_sched_wakeup_granularity` for this many CPUs.
    pub(crate) fn sched_wakeup_gran_ns(&self) -> u64 {
        SCHED_WAKEUP_GRAN_NORMALIZED_NS * self.sysctl_factor()
    }

    /// A sleeper is enqueued on `to` (`task_waking_fair` takes `from`'s `min_vruntime` off its
    /// vruntime, `enqueue_entity` adds `to`'s), then `place_entity`: it comes back no further
    /// behind `min_vruntime` than half the latency (GENTLE_FAIR_SLEEPERS), so a long sleeper
    /// gets that much credit and a short one keeps what it had.
    pub(crate) fn place_entity(&mut self, tid: ThreadId, from: CoreId, to: CoreId) {
        let from_min = self.cores[from.idx()].min_vruntime;
        let to_min = self.cores[to.idx()].min_vruntime;
        let credit = self.sched_latency_ns() / 2;
        let t = &mut self.threads[tid.idx()];
        let v = (t.vruntime + to_min).saturating_sub(from_min);
        t.vruntime = v.max(to_min.saturating_sub(credit));
    }

    /// The runnable thread of core `c` with the least vruntime (the leftmost of the tree; the
    /// first in wake order among equals), as its index in the run queue.
    pub(crate) fn pick_next_entity(&self, c: usize) -> Option<usize> {
        let runq = &self.cores[c].runq;
        (0..runq.len()).min_by_key(|&i| self.threads[runq[i].idx()].vruntime)
    }

    /// `check_preempt_wakeup` → `wakeup_preempt_entity`: the leftmost runnable thread preempts
    /// the running `cur` when `cur`'s vruntime is ahead of it by more than the wakeup
    /// granularity.
    pub(crate) fn check_preempt_wakeup(&self, c: usize, cur: ThreadId) -> bool {
        let Some(i) = self.pick_next_entity(c) else { return false };
        let left = self.threads[self.cores[c].runq[i].idx()].vruntime;
        self.threads[cur.idx()].vruntime > left + self.sched_wakeup_gran_ns()
    }

    /// `update_curr` → `update_min_vruntime`: the running thread's vruntime grows by the CPU
    /// time of its step; the core's `min_vruntime` follows the least of the running and the
    /// runnable, never backwards.
    pub(crate) fn update_curr(&mut self, c: usize, tid: ThreadId, cost_ns: u64) {
        let v = self.threads[tid.idx()].vruntime + cost_ns;
        self.threads[tid.idx()].vruntime = v;
        let least = self.pick_next_entity(c).map_or(v, |i| v.min(self.threads[self.cores[c].runq[i].idx()].vruntime));
        let core = &mut self.cores[c];
        core.min_vruntime = core.min_vruntime.max(least);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::ids::{CoreId, ThreadId};
    use crate::engine::time::NS_PER_MS;
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    fn sim(cores: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", cores), ("cpu.scheduler", "fair")] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn the_latency_and_wakeup_granularity_scale_with_the_log_of_the_cpus_up_to_8() {
        let (two, eight) = (sim("2"), sim("8"));
        assert_eq!((two.sched_latency_ns(), two.sched_wakeup_gran_ns()), (12 * NS_PER_MS, 2 * NS_PER_MS));
        assert_eq!((eight.sched_latency_ns(), eight.sched_wakeup_gran_ns()), (24 * NS_PER_MS, 4 * NS_PER_MS));
        assert_eq!(sim("16").sched_latency_ns(), 24 * NS_PER_MS);
    }

    #[test]
    fn a_long_sleeper_comes_back_half_a_latency_behind_and_a_short_one_keeps_its_vruntime() {
        let mut s = sim("8");
        let (long, short) = (ThreadId(0), ThreadId(1));
        s.cores[0].min_vruntime = 100 * NS_PER_MS;
        s.threads[long.idx()].vruntime = 10 * NS_PER_MS;
        s.threads[short.idx()].vruntime = 95 * NS_PER_MS;
        s.place_entity(long, CoreId(0), CoreId(0));
        s.place_entity(short, CoreId(0), CoreId(0));
        assert_eq!(s.threads[long.idx()].vruntime, 88 * NS_PER_MS);
        assert_eq!(s.threads[short.idx()].vruntime, 95 * NS_PER_MS);
        // Moving to a CPU whose min_vruntime is 50 ms further on keeps its place relative to it.
        s.cores[1].min_vruntime = 150 * NS_PER_MS;
        s.place_entity(short, CoreId(0), CoreId(1));
        assert_eq!(s.threads[short.idx()].vruntime, 145 * NS_PER_MS);
    }

    #[test]
    fn a_woken_thread_preempts_only_one_more_than_the_wakeup_granularity_ahead() {
        let mut s = sim("8");
        let (cur, woken) = (ThreadId(0), ThreadId(1));
        s.cores[0].runq.clear();
        s.cores[0].runq.push_back(woken);
        s.threads[woken.idx()].vruntime = 88 * NS_PER_MS;
        s.threads[cur.idx()].vruntime = 92 * NS_PER_MS;
        assert!(!s.check_preempt_wakeup(0, cur), "4 ms ahead is the granularity, not more");
        s.threads[cur.idx()].vruntime = 92 * NS_PER_MS + 1;
        assert!(s.check_preempt_wakeup(0, cur));
        assert_eq!(s.pick_next_entity(0), Some(0));
    }
}
