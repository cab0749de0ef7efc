//! `kernel/sched_fair.c` (2.6.32): where a woken task runs (`select_task_rq_fair`).

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
