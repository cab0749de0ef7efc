//! The HDD firmware's knobs beyond the drive's kind: its read-ahead policy (`disk.prefetch`).

use super::*;

pub const DISK_PREFETCH: KnobSpec = KnobSpec {
    key: "disk.prefetch",
    kind: KnobKind::Enum(&["stop", "stream"]),
    help: "hdd (and a RAID controller's member disks): what the drive's read-ahead does when a command needs the head elsewhere. stop (default): it stops where it has got to (SCSI mode page 08h's minimum pre-fetch of zero; the 2010 Western Digital drives' behaviour); stream: after a read that continues a stream the drive follows, the read-ahead fills that stream's buffer segment first (the Hitachi and Samsung drives of 2010 with several streams)",
    live: Live::Restart,
    access: named!(disk.prefetch),
    applies: validate::rotating,
    values: &[],
};
