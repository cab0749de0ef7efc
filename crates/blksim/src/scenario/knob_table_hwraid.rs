//! The hardware RAID controller's member drives (`disk.member_drive`): which drive the setup
//! modelled put behind it.

use super::*;

pub const DISK_MEMBER_DRIVE: KnobSpec = KnobSpec {
    key: "disk.member_drive",
    kind: KnobKind::Enum(&["hdd", "wd360gd"]),
    help: "hwraid5: the drive model of the controller's members. hdd (default): the 7200 rpm SATA drive of 2010 that disk.kind=hdd models (Hitachi 7K1000.C and Seagate 7200.12 spec sheets); wd360gd: Western Digital's Raptor WD360GD, 10,000 rpm, 5.2 ms average seek, 54 MB/s at the outer edge, SATA 150 (WD's figures as The Tech Report's WD740GD review tabulates them; the media rate from xbitlabs' SiI 3114 review, 2004), the drive of xbitlabs' 3ware 8500-8 and 8506-8 reviews",
    live: Live::Restart,
    access: named!(disk.member_drive),
    applies: validate::member_drive,
    values: &[],
};
