//! The knob of blk-mq's rule for which hardware queues a queue-wide run runs
//! (`blk_mq_run_hw_queues` and `blk_mq_delay_run_hw_queues` in block/blk-mq.c; the rule itself
//! is `Sim::blk_mq_run_hctx_of_all` in `block/blk_mq.rs`).

use super::*;

pub const BLK_MQ_RUN_HW_QUEUES: KnobSpec = KnobSpec {
    key: "blk_mq.run_hw_queues",
    kind: KnobKind::Enum(&["all", "sq_hctx"]),
    help: "which hardware queues blk_mq_run_hw_queues and blk_mq_delay_run_hw_queues run (a completion's bfq_schedule_dispatch, the 3 ms re-run after the elevator had work and gave nothing). all (to 5.11): every one not stopped. sq_hctx (5.12+, b6e68ee82585, blk_mq_get_sq_hctx): for an elevator that is not multiqueue-aware (bfq, mq-deadline) only the current CPU's, and any with requests on hctx->dispatch; kyber and none: every one",
    live: Live::Restart,
    access: named!(blk_mq.run_hw_queues),
    applies: validate::blk_mq_queues,
    values: &[],
};
