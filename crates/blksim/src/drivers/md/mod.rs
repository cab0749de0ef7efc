//! `drivers/md`: request-based dm and its multipath target, bio-based dm-linear (LVM2), and
//! md (its core and RAID5).

pub mod dm;
pub mod dm_linear;
pub mod dm_mpath;
pub mod md;
pub mod raid5;
