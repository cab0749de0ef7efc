//! `drivers/md`: request-based dm and its multipath target, bio-based dm-linear (LVM2), and
//! md (its core and RAID5).

pub mod dm;
pub mod dm_linear;
pub mod dm_mpath;
// Named after the kernel's `drivers/md/md.c`, as every file here is after its source.
#[allow(clippy::module_inception)]
pub mod md;
pub mod raid5;
