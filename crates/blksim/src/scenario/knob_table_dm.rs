//! dm-multipath's path knobs (their entries in `KNOBS` are in `knob_table.rs`): how many paths,
//! how they are grouped, where a path is chosen (per bio up to 2.6.30, per request from 2.6.31)
//! and bio-based round-robin's repeat count.

use super::*;

pub const DM_PATHS: KnobSpec = KnobSpec {
    key: "dm.paths",
    kind: KnobKind::Int { min: 1, max: 4, unit: "paths per dm device" },
    help: "paths to each disk (one sd device per path, on successive HBAs); stack=dm only",
    live: Live::Restart,
    access: int!(dm.paths),
    applies: validate::multipath,
    values: &[],
};

pub const DM_PATH_GROUPING: KnobSpec = KnobSpec {
    key: "dm.path_grouping",
    kind: KnobKind::Enum(&["failover", "multibus"]),
    help: "failover: all I/O on one path; multibus: round-robin over all paths",
    live: Live::Restart,
    access: named!(dm.path_grouping),
    applies: validate::path_choice,
    values: &[],
};

pub const DM_MPATH: KnobSpec = KnobSpec {
    key: "dm.mpath",
    kind: KnobKind::Enum(&["bio", "request"]),
    help: "where dm-multipath chooses a path. bio (up to 2.6.30): multipath_map takes each bio from the top, its clone goes to the chosen path's own queue (dm.rr_min_io bios a path under multibus), so only that path's queue merges; request (2.6.31+): bios merge into requests in dm's own queue first, and each request is cloned onto a path",
    live: Live::Restart,
    access: named!(dm.mpath),
    applies: validate::multipath,
    values: &[],
};

pub const DM_RR_MIN_IO: KnobSpec = KnobSpec {
    key: "dm.rr_min_io",
    kind: KnobKind::Int { min: 1, max: 1_000_000, unit: "bios per path" },
    help: "bio-based dm-multipath's round-robin repeat count (multipath.conf rr_min_io, the table's per-path selector argument): bios sent down a path before the next is taken (multipath-tools' default 1000; request-based dm uses rr_min_io_rq, 1 request)",
    live: Live::Restart,
    access: int!(dm.rr_min_io),
    applies: bio_based_choice,
    values: &[],
};

/// The repeat count is bio-based round-robin's, and needs paths to go round.
fn bio_based_choice(s: &Scenario) -> Result<(), String> {
    validate::path_choice(s)?;
    if s.dm.mpath == MpathMode::Bio {
        return Ok(());
    }
    Err("request-based dm-multipath (dm.mpath=request) takes rr_min_io_rq, 1 request a path; dm.rr_min_io acts with dm.mpath=bio (kernel 2.6.30 or older)".into())
}
