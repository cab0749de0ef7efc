//! The CPU side of a scenario: cores, sockets, where interrupts go, and which scheduler rules
//! (wakeup placement, load balancing, kblockd's priority) the CPUs follow.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuKnobs {
    pub cores: u32,
    /// The CPU that takes each HBA's interrupt (`/proc/irq/N/smp_affinity`), one per HBA.
    /// Empty: HBA i interrupts CPU i mod cores.
    pub irq_cpus: Vec<u32>,
    /// CPU sockets (cache groups): the cores split evenly, numbered consecutively. With
    /// `queue.rq_affinity` a request completes on the first core of its submitter's socket.
    pub sockets: u32,
    /// kblockd is a `WQ_HIGHPRI` workqueue (4.0 `blk_dev_init`; its workers run at nice -20):
    /// a woken kblockd worker preempts the normal-priority thread running on its CPU at that
    /// thread's next step boundary (CFS `check_preempt_wakeup`). Off: it waits for the running
    /// thread's slice, as every woken thread does in the model.
    pub kblockd_highpri: bool,
    /// How a CPU picks what runs next.
    pub scheduler: CpuScheduler,
    /// CFS's load balancer over the sched domains (periodic `rebalance_domains`, newidle
    /// `idle_balance`), by the kernel whose rules it follows.
    pub load_balance: LoadBalance,
    /// Which CPU counts as idle when a woken thread is placed (`select_idle_sibling`).
    pub wake_idle: WakeIdle,
}

/// The idle test of wakeup placement (`cpu.wake_idle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WakeIdle {
    /// blkviz's first rule, which no kernel has: idle only when running nothing at all,
    /// interrupt and softirq work included. The lessons keep it for now; the caveats on their
    /// scoreboard rows say what rests on it.
    #[default]
    #[serde(rename = "no-work")]
    NoWork,
    /// The kernel's `idle_cpu()` (2.6.32: the current task is the idle task; 3.x-4.0: and
    /// none is queued): a CPU handling an interrupt or softirq on its idle task is idle, so a
    /// thread woken there stays and runs when the interrupt work is done.
    #[serde(rename = "idle_cpu")]
    IdleCpu,
}

/// The load balancer (`cpu.load_balance`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoadBalance {
    /// No balancing: a thread changes CPU only when it wakes (`select_task_rq`).
    #[default]
    #[serde(rename = "off")]
    Off,
    /// 2.6.32's (`kernel/sched.c`, 2.6.32.69): sched domains MC (a socket) and NODE (all
    /// sockets, one NUMA node each), `rebalance_domains` from the tick, `load_balance` with
    /// `find_busiest_group`'s weighted loads, `task_hot`, and `idle_balance` on newidle.
    #[serde(rename = "2.6.32")]
    V2_6_32,
}

/// The CPU scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuScheduler {
    /// Run queues in wake order; a thread keeps its CPU for its slice while others wait.
    #[default]
    Fifo,
    /// CFS with 2.6.39's rules and defaults (`kernel/sched_fair.c`): least vruntime first, a
    /// woken sleeper placed at most half a latency period behind, and preempting a thread
    /// that has run a wakeup granularity longer (`check_preempt_wakeup`). Not for the O(1)
    /// scheduler's eras (2.6.2, 2.6.20): its interactivity bonus is not modelled.
    Fair,
}

impl Default for CpuKnobs {
    fn default() -> Self {
        CpuKnobs {
            cores: 2,
            irq_cpus: Vec::new(),
            sockets: 1,
            kblockd_highpri: false,
            scheduler: CpuScheduler::Fifo,
            load_balance: LoadBalance::Off,
            wake_idle: WakeIdle::NoWork,
        }
    }
}
