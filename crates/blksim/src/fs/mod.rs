//! `fs/`: direct I/O's bios (`direct_io`) and background writeback (`fs_writeback`).

pub mod direct_io;
pub mod fs_writeback;
