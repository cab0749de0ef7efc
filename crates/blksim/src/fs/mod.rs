//! `fs/`: direct I/O's bios (`direct_io`), background writeback (`fs_writeback`) and a task's
//! I/O priority (`ioprio`).

pub mod direct_io;
pub mod fs_writeback;
pub mod ioprio;
