//! `kernel/`: the scheduler (cores, threads, wakeups, context switches), softirq and
//! ksoftirqd, and the workqueue that runs kblockd.

pub mod sched;
pub mod sched_fair;
pub mod softirq;
pub mod topology;
pub mod workqueue;
