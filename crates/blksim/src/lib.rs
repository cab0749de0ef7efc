//! blksim: a deterministic discrete-event simulation of the Linux block I/O stack.
//!
//! One seed gives one run on every platform: integer nanoseconds, events ordered by
//! (time, sequence), seeded PCG streams per component, no clock and no hash-order iteration.
//! The UI reads the trace (`trace`) and the counters (`report`) and nothing else.

pub mod blk_mq;
pub mod block;
pub mod calib;
pub mod cli;
pub mod cpu;
pub mod disk;
pub mod event;
pub mod fio;
pub mod hwraid5;
pub mod ids;
pub mod lessons;
pub mod link;
pub mod raid5;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod scsi;
pub mod sim;
pub mod stats;
pub mod time;
pub mod trace;
pub mod view;
pub mod workload;

pub use report::{IntervalReport, RunReport};
pub use scenario::{Config, Scenario, ScenarioError};
pub use sim::Sim;
pub use time::SimTime;
pub use trace::{Action, TraceRecord};
