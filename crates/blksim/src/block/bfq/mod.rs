//! BFQ, blk-mq's budget fair queueing scheduler (4.12 on; read in v5.10), split as the kernel
//! splits it: the scheduler's decisions in `bfq_iosched.rs` (`block/bfq-iosched.c`), the
//! B-WF2Q+ fair queueing of its queues in `bfq_wf2q.rs` (`block/bfq-wf2q.c`). It runs on 5.x's
//! blk-mq dispatch (`blk_mq_sched.rs`) as the elevator's `insert_requests`, `has_work` and
//! `dispatch_request`.

pub mod bfq_iosched;
pub mod bfq_wf2q;

pub use bfq_iosched::{bfq_ioprio_to_weight, BfqData, BfqTunables};

#[cfg(test)]
mod tests;
