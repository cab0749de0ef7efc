//! `kernel/`: the scheduler (cores, threads, wakeups, context switches), softirq and
//! ksoftirqd, spinlocks, the workqueue that runs kblockd, and blktrace (`trace/`).

pub mod sched;
pub mod sched_fair;
pub mod softirq;
pub mod spinlock;
pub mod topology;
pub mod trace;
pub mod workqueue;
