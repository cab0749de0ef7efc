//! What the tools see: blkparse's text and blktrace's binary
//! formats (`blkparse`, `blktrace_api`), /proc/diskstats and /proc/stat turned into
//! iostat, vmstat and top (`stats`), the per-second snapshots (`snapshot`), the CLI's JSON
//! report (`report`) and the UI's view of topology, threads and pools (`view`).
//!
//! A real trace read back (`blkparse_input`) is measured by `btt` and `iostat`; `trace_figures`
//! gathers what the trace page shows of it, which the page's trace reader (a worker of its own)
//! computes. The page itself only writes a run's trace out (`blktrace_api::encode_dump`, which is
//! `#[inline]`, as the course's readers are: the page's crate compiles it at its size level
//! rather than this crate's speed level).

pub mod blkparse;
pub mod blkparse_input;
pub mod blktrace_api;
pub mod btt;
pub mod fio_report;
pub mod iostat;
pub mod report;
pub mod snapshot;
pub mod stats;
pub mod trace_figures;
pub mod view;
