//! The block layer, as the kernel's `block/` directory holds it (2.6.2's `ll_rw_blk.c` became
//! `blk-core.c`, `blk-merge.c`, `blk-softirq.c`, `blk-tag.c` and `blk-sysfs.c` in 2.6.24-2.6.28;
//! each file here is named after the later split). The data types are re-exported here, the
//! way `include/linux/blkdev.h` gathers them.

pub mod bfq;
pub mod bio;
pub mod blk_core;
pub mod blk_flush;
pub mod blk_merge;
pub mod blk_mq;
pub mod blk_mq_sched;
pub mod blk_mq_tag;
pub mod blk_softirq;
pub mod blk_sysfs;
pub mod blk_tag;
pub mod blkdev;
pub mod elevator;
pub mod genhd;
pub mod kyber_iosched;

pub use bio::Bio;
pub use blk_tag::TagMap;
pub use blkdev::{is_mq, tag_depth, Request, RequestQueue};
pub use elevator::{elevator_kind, Elevator, ElevatorKind, Owner};
pub use genhd::{BlockDev, DevKind, DM_MAJOR, LVM_PE_START_SECTORS, MD_MAJOR};
