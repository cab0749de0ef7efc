//! What the tools see: blkparse's text and blktrace's binary
//! formats (`blkparse`, `blktrace_api`), /proc/diskstats and /proc/stat turned into
//! iostat, vmstat and top (`stats`), the per-second snapshots (`snapshot`), the CLI's JSON
//! report (`report`) and the UI's view of topology, threads and pools (`view`).
//!
//! The entry points the trace page calls on a real trace (`blkparse_input::read_any`, `finish`,
//! `btt::btt`, `offsets`, `d2c_columns`, `iostat::iostat`, `blktrace_api::encode_dump`) are
//! `#[inline]`, as the course's readers are: the page's crate compiles them, with the
//! collections and sorts they instantiate, at its size level rather than this crate's speed level.

pub mod blkparse;
pub mod blkparse_input;
pub mod blktrace_api;
pub mod btt;
pub mod fio_report;
pub mod iostat;
pub mod report;
pub mod snapshot;
pub mod stats;
pub mod view;
