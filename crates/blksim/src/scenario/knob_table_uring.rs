//! io_uring's kernel rule (its entry in `KNOBS` is in `knob_table.rs`): `io_uring.cq_wake`,
//! when a task waiting in `io_uring_enter` for completions is woken. fio's side of the engine
//! is `fio::io_uring`.

use super::*;

/// The kernel's io_uring rules that changed between releases.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IoUringKnobs {
    pub cq_wake: CqWake,
}

/// `io_uring.cq_wake`: `each` (5.1-5.3: `io_cqring_wait` sleeps in `wait_event_interruptible`,
/// and each posted CQE's `wake_up` wakes the task to check its count and sleep again),
/// `min_complete` (5.4+, dd671c79e40b: `io_wake_function` wakes it only once `io_should_wake`
/// finds `min_complete` CQEs in the ring).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CqWake {
    Each,
    #[default]
    MinComplete,
}

pub const IO_URING_CQ_WAKE: KnobSpec = KnobSpec {
    key: "io_uring.cq_wake",
    kind: KnobKind::Enum(&["each", "min_complete"]),
    help: "when a task waiting in io_uring_enter for min_complete completions wakes: each (5.1-5.3, wait_event_interruptible: at every completion, to check the count and sleep again) or min_complete (5.4+, io_wake_function: once that many are in the CQ ring). Acts on workload.ioengine=io_uring with workload.iodepth_batch_complete_min above 1",
    live: Live::Restart,
    access: named!(io_uring.cq_wake),
    applies: validate::anywhere,
    values: &[],
};
