//! The knobs of blk-mq's rules for which hardware queues a queue-wide run runs
//! (`blk_mq_run_hw_queues` and `blk_mq_delay_run_hw_queues` in block/blk-mq.c; the rule itself
//! is `Sim::blk_mq_run_hctx_of_all` in `block/blk_mq.rs`), and for how an arm of a hardware
//! queue's `run_work` meets a pending one (`Sim::kblockd_mod_delayed_work_on` in
//! `kernel/workqueue.rs`).

use super::*;
use serde::{Deserialize, Serialize};

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

pub const BLK_MQ_PLUG: KnobSpec = KnobSpec {
    key: "blk_mq.plug",
    kind: KnobKind::Enum(&["off", "5.0", "5.5", "5.16", "5.17"]),
    help: "whether a task's plug (blk_start_plug .. blk_finish_plug: O_DIRECT through __blkdev_direct_IO, readahead, writeback) holds blk-mq requests until blk_finish_plug, which inserts them and runs the hardware queue from the submitting task (from kblockd when the task sleeps with the plug held, or after 16 requests or one of 128 KiB from its own context). off: each request is inserted at once and, under an elevator, the queue runs from kblockd. 5.0 (blk_mq_make_request): a queue with one hardware queue, or a driver with commit_rqs (NVMe). 5.5: also a rotational disk (and, 5.10's stable releases on, a host_tagset host). 5.16: as 5.5, but an async O_DIRECT I/O of one bio (libaio, io_uring in batches of 2 or fewer) takes __blkdev_direct_IO_async, which does not plug. 5.17: every blk-mq queue (blk_mq_submit_bio's conditions removed)",
    live: Live::Restart,
    access: named!(blk_mq.plug),
    applies: validate::mq_dispatch_5,
    values: &[],
};

/// `blk_mq.plug`: `off`, or `blk_mq_submit_bio`'s and `blkdev_direct_IO`'s rules from the
/// version named on (`Sim::blk_mq_full_plug`, `Sim::blkdev_direct_io_plugs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MqPlug {
    #[serde(rename = "off")]
    Off,
    #[serde(rename = "5.0")]
    V5_0,
    #[serde(rename = "5.5")]
    V5_5,
    #[serde(rename = "5.16")]
    V5_16,
    #[serde(rename = "5.17")]
    V5_17,
}
