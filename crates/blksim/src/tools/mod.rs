//! What the tools see: blkparse's text and blktrace's binary
//! formats (`blkparse`, `blktrace_api`), /proc/diskstats and /proc/stat turned into
//! iostat, vmstat and top (`stats`), the per-second snapshots (`snapshot`), the CLI's JSON
//! report (`report`) and the UI's view of topology, threads and pools (`view`).

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
