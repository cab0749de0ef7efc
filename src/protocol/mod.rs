//! What crosses the boundary between the page and the workers that run simulations, and the one
//! way it crosses: serde types framed in bincode (exact floats, a fraction of JSON's bytes and
//! parse time, and less code in the bundle than JSON's decoders of the same types).
//!
//! The runs' worker (`crate::runs::worker`) takes `ToRuns` and answers each with `FromRuns`:
//! both runs' `RunUpdate`s (what each shows, `Shown`, and its trace view's inputs,
//! `TraceInput`), a frame's "the counters changed", a command's `Reply`. A seed sweep's workers
//! (`crate::sweep`) take a `SweepBatch` and answer a `SweepReply`. The page speaks to each
//! worker through a `WorkerChannel`. The trace page's reader (`reader::TraceReader`, a wasm of
//! its own) takes a trace's files and answers their figures, also in bincode. Nothing here runs
//! a simulation or touches the page.

pub mod channel;
pub mod command;
pub mod fio;
pub mod module_worker;
pub mod reader;
pub mod shown;
pub mod sweep;
pub mod trace;
pub mod update;

pub use channel::WorkerChannel;
pub use command::{Command, LinkedStep, Reply};
pub use shown::Shown;
pub use sweep::{SeedRun, SweepBatch, SweepReply};
pub use trace::{Animation, TraceInput};
pub use update::{LiveWrite, RunState, RunUpdate};

use serde::{Deserialize, Serialize};

/// What the page asks of the worker's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToRuns {
    /// The runs a link opens (`Session::from_fragment`): the first message.
    Open { fragment: String, default_lesson: String },
    /// One animation frame of `dt_ms` wall ms (`Session::frame`).
    Frame { dt_ms: f64, now_ms: f64 },
    /// A control's command; `id` comes back with its reply.
    Act { id: u32, cmd: Command },
}

/// What the worker posts after each message: the runs' updates (B's while it is open), a
/// frame's "the counters changed", a command's reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FromRuns {
    pub a: RunUpdate,
    pub b: Option<RunUpdate>,
    pub frame: Option<bool>,
    pub reply: Option<(u32, Reply)>,
}

/// Trace records a worker's message carries at most, per run: about 1 MB in bincode, which the
/// page decodes and takes in within a frame or two; a jump's longer traced tail follows over the
/// next frames.
pub const MESSAGE_RECORDS_MAX: usize = 20_000;

/// A message in bincode: the bytes of `bincode::serialize`, written into a growing buffer
/// without its first pass that counts them, so the wasm holds one serializer of each message
/// type, not two.
pub fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    bincode::serialize_into(&mut out, v).map_err(|e| e.to_string())?;
    Ok(out)
}

/// A message from bincode.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bincode::deserialize(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_writes_the_bytes_bincode_serialize_writes() {
        let shown = Shown { model_gaps: vec!["a gap".into()], era: vec![("k".into(), "v".into())], ..Shown::default() };
        let state = RunState { lesson: "anatomy-of-a-request".into(), speed: 0.25, ..RunState::default() };
        let open = ToRuns::Open { fragment: "#/lesson/x?v=1".into(), default_lesson: "x".into() };
        assert_eq!(encode(&shown).unwrap(), bincode::serialize(&shown).unwrap());
        assert_eq!(encode(&state).unwrap(), bincode::serialize(&state).unwrap());
        assert_eq!(encode(&open).unwrap(), bincode::serialize(&open).unwrap());
        assert_eq!(decode::<RunState>(&encode(&state).unwrap()).unwrap(), state);
    }
}
