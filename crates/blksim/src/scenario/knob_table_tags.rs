//! blk-mq tag sets' knob (its entry in `KNOBS` is in `knob_table.rs`): `host.host_tagset`,
//! one driver tag map for all of a SCSI host's hardware queues (5.10+).
//!
//! No era row sets it: in the kernel it is the driver's choice (`shost->host_tagset` from the
//! host template), and of 5.10's drivers megaraid_sas and hisi_sas v3 turn it on; the model's
//! host is a generic SCSI HBA (an SRP or SAS initiator), whose driver leaves it off in every
//! kernel.

use super::*;

pub const HOST_HOST_TAGSET: KnobSpec = KnobSpec {
    key: "host.host_tagset",
    kind: KnobKind::Bool,
    help: "one map of can_queue driver tags for all the host's blk-mq hardware queues (shost->host_tagset, BLK_MQ_F_TAG_HCTX_SHARED, 5.10+; megaraid_sas and hisi_sas v3 set it); false: can_queue tags per hardware queue. blk-mq's 5.x dispatch with host.nr_hw_queues 2 or more only",
    live: Live::Restart,
    access: flag!(host.host_tagset),
    applies: host_tagset_applies,
    values: &[],
};

/// A SCSI host's blk-mq queues run as 5.x runs them, with several hardware queues to share a
/// map, on a kernel that has it.
fn host_tagset_applies(s: &Scenario) -> Result<(), String> {
    validate::scsi_blk_mq_queues(s)?;
    if s.blk_mq.dispatch != MqDispatch::V5_0 {
        return Err("a 5.10+ blk-mq setting, and blk_mq.dispatch=4.0 runs 4.0's blk-mq; expected blk_mq.dispatch=5.0".into());
    }
    if s.host.nr_hw_queues < 2 {
        return Err(format!(
            "a setting of a host with several hardware queues, and host.nr_hw_queues is {}: one hardware queue has one map already",
            s.host.nr_hw_queues
        ));
    }
    if let Some(v) = era::kernel_of(s).filter(|v| *v < era::KernelVersion::parse("5.10").expect("a version")) {
        return Err(format!("kernel {v} has no host_tagset, which came in 5.10"));
    }
    Ok(())
}

/// `host.host_tagset=true` where it acts on nothing is refused, naming what it needs.
pub(super) fn check_host_tagset(s: &Scenario) -> Result<(), ScenarioError> {
    if !s.host.host_tagset {
        return Ok(());
    }
    host_tagset_applies(s).map_err(|why| ScenarioError::new(HOST_HOST_TAGSET.key, format!("true is {why}")))
}
