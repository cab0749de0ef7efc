//! The course: the lessons (Markdown with TOML front matter, compiled in by build.rs), the app's
//! links, the fidelity scoreboard that measures each lesson's rows against its report, and the
//! steps' cues. Course content reads the model; the model never reads course content.
//!
//! The lessons are read from the JSON build.rs compiles in (feature `lessons-json`), or installed
//! by the program (`lessons::install`: the app's entry points, from its own bincode form).
//! The readers of the compiled-in JSON (`lessons::all`, `find`, `LinkState::decode`, the
//! committed scoreboard and cues) are `#[inline]`: each is then compiled in the crate that calls
//! it, with the serde_json code it instantiates, at that crate's opt-level. The browser build
//! makes this crate fast (the simulation runs every frame) and the app small, and reading the
//! course once at start needs no speed: so the page carries these readers optimised for size.

pub mod cues;
pub mod fidelity;
pub mod lessons;
pub mod link;
