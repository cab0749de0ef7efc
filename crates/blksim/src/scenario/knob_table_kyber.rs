//! kyber's knobs (`queue/iosched/read_lat_nsec` and `write_lat_nsec` under kyber, v5.10
//! block/kyber-iosched.c `kyber_sched_attrs`), and the check that a scenario can run kyber:
//! blk-mq's 5.x dispatch (its `has_work`/`dispatch_request` hooks, 4.12+), on the disks' own
//! queues.

use super::knob_table as k;
use super::*;
use crate::block::kyber_iosched::{KYBER_LATENCY_TARGETS, KYBER_READ, KYBER_WRITE};

/// kyber's `queue/iosched/` tunables, in nanoseconds as sysfs shows them; the defaults are
/// `kyber_latency_targets`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KyberKnobs {
    pub read_lat_nsec: u64,
    pub write_lat_nsec: u64,
}

impl Default for KyberKnobs {
    fn default() -> Self {
        KyberKnobs { read_lat_nsec: KYBER_LATENCY_TARGETS[KYBER_READ], write_lat_nsec: KYBER_LATENCY_TARGETS[KYBER_WRITE] }
    }
}

/// The largest target taken: 10 s (the kernel takes any u64; past a request's timeout a
/// target throttles nothing).
const KYBER_LAT_NSEC_MAX: u64 = 10_000_000_000;

pub const KYBER_READ_LAT_NSEC: KnobSpec = KnobSpec {
    key: "kyber.read_lat_nsec",
    kind: KnobKind::Int { min: 0, max: KYBER_LAT_NSEC_MAX, unit: "ns" },
    help: "kyber: the reads' latency target (queue/iosched/read_lat_nsec, 2 ms by default); the writes are throttled while reads miss it",
    live: Live::Restart,
    access: int!(queue.kyber.read_lat_nsec),
    applies: kyber_tunable,
    values: &[],
};

pub const KYBER_WRITE_LAT_NSEC: KnobSpec = KnobSpec {
    key: "kyber.write_lat_nsec",
    kind: KnobKind::Int { min: 0, max: KYBER_LAT_NSEC_MAX, unit: "ns" },
    help:
        "kyber: the writes' latency target (queue/iosched/write_lat_nsec, 10 ms by default); the reads are throttled while writes miss it",
    live: Live::Restart,
    access: int!(queue.kyber.write_lat_nsec),
    applies: kyber_tunable,
    values: &[],
};

/// iosched/ holds the current elevator's files only.
pub(super) fn kyber_tunable(s: &Scenario) -> Result<(), String> {
    if s.queue.scheduler == Scheduler::Kyber {
        return Ok(());
    }
    Err(format!(
        "a kyber tunable, and queue/iosched/ holds only the elevator's own files; queue.scheduler is {}",
        enum_name(&s.queue.scheduler)
    ))
}

/// `kernel` 4.12 added kyber.
pub fn kyber_since() -> era::KernelVersion {
    era::KernelVersion::parse("4.12").expect("4.12 is in the era table")
}

impl Scenario {
    /// kyber runs on a disk's blk-mq queue under 5.x's dispatch (the elevator hooks
    /// `blk_mq_sched_dispatch_requests` calls), on a kernel that has it (4.12+; without
    /// `kernel`, any). Checked after `kernel` has written its knobs.
    pub(super) fn check_kyber(&self) -> Result<(), ScenarioError> {
        if self.queue.scheduler != Scheduler::Kyber {
            return Ok(());
        }
        if let Some(v) = era::kernel_of(self).filter(|&v| v < kyber_since()) {
            return Err(ScenarioError::new(
                k::QUEUE_SCHEDULER.key,
                format!("kyber with kernel {v}: kyber came in 4.12; set kernel=4.15 or later (5.x's dispatch), or another scheduler"),
            ));
        }
        if self.stack == StackKind::Dm {
            return Err(ScenarioError::new(
                k::QUEUE_SCHEDULER.key,
                "kyber with stack=dm: the model's request-based dm has a legacy queue of its own; kyber runs with stack direct, lvm or md",
            ));
        }
        if self.blk_mq.dispatch != MqDispatch::V5_0 {
            return Err(ScenarioError::new(
                k::QUEUE_SCHEDULER.key,
                "kyber with blk_mq.dispatch=4.0: kyber is an elevator of blk-mq's scheduler framework, which the model runs as 5.x has it; set blk_mq.dispatch=5.0 (kernel 4.15 or later sets it)",
            ));
        }
        Ok(())
    }
}
