//! `drivers/scsi`: the midlayer's queue runs and completions (`scsi_lib`), the host and its
//! starved list (`hosts`), and the disk driver's naming (`sd`).

pub mod hosts;
pub mod scsi_lib;
pub mod sd;
