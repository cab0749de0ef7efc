//! The `blksim` command line (docs/cli.md is its contract), behind the `cli` feature so the
//! library the browser loads carries neither clap nor the subcommands. Only the binary and the
//! tests of the command line use this module.

mod args;
mod commands;
mod replay;
mod sweep;
pub use args::command;
pub use commands::{main, CliError, FIDELITY_MISSES, TRACE_RECORDS_MAX};
