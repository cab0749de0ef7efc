//! The one integration-test binary of blksim (matklad, "Delete Cargo Integration Tests").

mod bfq;
mod blktrace;
mod captures;
mod cli;
mod completion;
mod determinism;
mod devices;
mod docs;
mod drivers_md;
mod drivers_nvme;
mod era;
mod fidelity;
mod fio_examples;
mod golden;
mod invariants;
mod jobs;
mod kyber;
mod lessons;
mod link;
mod mechanisms;
mod mq_sched;
mod replay;
mod soak;
mod tag_sets;
mod tidy;
mod vmstat;
