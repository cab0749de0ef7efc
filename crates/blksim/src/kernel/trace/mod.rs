//! `kernel/trace/`: blktrace, the kernel's side of block tracing (the records and their ring).

pub mod blktrace;
