//! blksim: a deterministic discrete-event simulation of the Linux block I/O stack.
//!
//! One seed gives one run on every platform: integer nanoseconds, events ordered by
//! (time, sequence), seeded PCG streams per component, no clock and no hash-order iteration.
//! The UI reads the trace (`kernel::trace::blktrace`), the counters (`tools::report`) and the view
//! snapshots (`tools::view`), and nothing else.
//!
//! The tree is laid out like the kernel's: a kernel function lives in the file named after the
//! kernel source file that holds it (`dm_request_fn` in `drivers/md/dm.rs`,
//! `balance_dirty_pages` in `mm/page_writeback.rs`). ARCHITECTURE.md is the codemap.

pub mod block;
pub mod calib;
#[cfg(feature = "cli")]
pub mod cli;
pub mod course;
pub mod drivers;
pub mod engine;
pub mod fio;
pub mod float_parse;
pub mod fs;
pub mod hw;
pub mod kernel;
pub mod mm;
pub mod scenario;
pub mod tools;

pub use engine::ids;
pub use engine::time::SimTime;
pub use engine::Sim;
pub use kernel::trace::blktrace::{Action, TraceRecord};
pub use scenario::{Config, Scenario, ScenarioError};
pub use tools::report::{IntervalReport, RunReport};
pub use tools::snapshot::Interval;
