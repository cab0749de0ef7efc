//! The one integration-test binary of blksim (matklad, "Delete Cargo Integration Tests").

mod cli;
mod determinism;
mod invariants;
mod lessons;
mod mechanisms;
mod tidy;
