//! bfq's knobs (its sysfs tunables under `queue/iosched/`, v5.10 `bfq_attrs`), declared apart
//! from `knob_table.rs` and listed in its `KNOBS`; and the check that bfq runs where the model
//! has it: blk-mq's 5.x dispatch, from 4.12.

use super::*;

/// A bfq tunable acts only under bfq (queue/iosched/ holds the elevator's own files).
pub(super) fn bfq_tunable(s: &Scenario) -> Result<(), String> {
    if s.queue.scheduler == Scheduler::Bfq {
        return Ok(());
    }
    Err(format!(
        "a bfq tunable, and queue/iosched/ holds only the elevator's own files; queue.scheduler is {}",
        enum_name(&s.queue.scheduler)
    ))
}

/// bfq came to blk-mq in 4.12 (v4.12:block/bfq-iosched.c); the model runs it on 5.x's
/// dispatch (`blk_mq.dispatch=5.0`, which kernel 4.15+ sets), not on the legacy queue or 4.0's
/// blk-mq. Without `kernel` only the dispatch is checked.
pub fn check_bfq(s: &Scenario) -> Result<(), String> {
    if s.queue.scheduler != Scheduler::Bfq {
        return Ok(());
    }
    let v412 = era::KernelVersion::parse("4.12").expect("4.12 is in the table");
    if let Some(v) = era::kernel_of(s).filter(|&v| v < v412) {
        return Err(format!("bfq came to blk-mq in 4.12, and kernel {v} lacks it; set kernel=4.15 or later (bfq on 5.x's dispatch), or another queue.scheduler"));
    }
    if s.stack == StackKind::Dm {
        return Err("bfq with stack=dm: the model's request-based dm runs a legacy queue of its own above the disks; bfq acts with stack direct, lvm or md".into());
    }
    if s.blk_mq.dispatch != MqDispatch::V5_0 {
        return Err(format!(
            "bfq runs on blk-mq's 5.x dispatch (blk_mq.dispatch=5.0, which kernel=4.15 or later sets), and blk_mq.dispatch is {}",
            enum_name(&s.blk_mq.dispatch)
        ));
    }
    Ok(())
}

pub const BFQ_SLICE_IDLE: KnobSpec = KnobSpec {
    key: "bfq.slice_idle",
    kind: KnobKind::Int { min: 0, max: 1000, unit: "ms" },
    help: "bfq (bfq-iosched.c, sysfs slice_idle): how long the in-service sync queue, emptied, waits for its process's next request before it expires (bfq_arm_slice_timer; 2 ms for a seeky queue); 0: never idle",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.bfq_slice_idle),
    applies: bfq_tunable,
    values: &[],
};

pub const BFQ_TIMEOUT_SYNC: KnobSpec = KnobSpec {
    key: "bfq.timeout_sync",
    kind: KnobKind::Int { min: 1, max: 10_000, unit: "ms" },
    help: "bfq: the budget timeout, the longest a queue keeps the device for one budget; a queue slow in it is charged the time as max_budget x time / timeout_sync (bfq_bfqq_charge_time)",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.bfq_timeout_sync),
    applies: bfq_tunable,
    values: &[],
};

pub const BFQ_MAX_BUDGET: KnobSpec = KnobSpec {
    key: "bfq.max_budget",
    kind: KnobKind::Int { min: 0, max: 1 << 20, unit: "sectors" },
    help: "bfq: the largest budget a queue is given (its min_budget is a 32nd of it); 0: auto, which the model keeps at bfq_default_max_budget, 16384 sectors (the peak-rate estimator that tunes it is not modelled)",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.bfq_max_budget),
    applies: bfq_tunable,
    values: &[],
};

pub const BFQ_LOW_LATENCY: KnobSpec = KnobSpec {
    key: "bfq.low_latency",
    kind: KnobKind::Bool,
    help: "bfq: weight raising, a sync queue new or idle for 2 s served at 30x its weight (interactive) for 10.5 s on a rotational disk, 3.75 s otherwise, or until it has had 120000 sectors (soft real-time raising is not modelled)",
    live: Live::Store(Store::IoschedTunable),
    access: flag!(queue.iosched.bfq_low_latency),
    applies: bfq_tunable,
    values: &[],
};
