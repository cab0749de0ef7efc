//! The knobs of blk-mq's rules for which hardware queues a queue-wide run runs
//! (`blk_mq_run_hw_queues` and `blk_mq_delay_run_hw_queues` in block/blk-mq.c; the rule itself
//! is `Sim::blk_mq_run_hctx_of_all` in `block/blk_mq.rs`), and for how an arm of a hardware
//! queue's `run_work` meets a pending one (`Sim::kblockd_mod_delayed_work_on` in
//! `kernel/workqueue.rs`).

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

pub const BLK_MQ_RUN_WORK: KnobSpec = KnobSpec {
    key: "blk_mq.run_work",
    kind: KnobKind::Enum(&["queue", "mod", "mod_unless_pending"]),
    help: "how arming a hardware queue's run_work meets a run already pending (blk-mq's 5.x dispatch). queue (to 4.17): the pending run keeps its time. mod (4.18-5.17, kblockd_mod_delayed_work_on = mod_delayed_work_on): every arm replaces it, so a 3 ms re-run (blk_mq_delay_run_hw_queues) takes a run queued on kblockd but not yet started off the list and moves it to the next jiffies tick (HZ=250), and a run asked now takes a timer's run now. mod_unless_pending (5.18+, 8f5fea65b06d): as mod, but blk_mq_delay_run_hw_queues skips a queue whose run is pending",
    live: Live::Restart,
    access: named!(blk_mq.run_work),
    applies: validate::blk_mq_queues,
    values: &[],
};
