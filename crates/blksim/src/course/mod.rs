//! The course: the lessons (Markdown with TOML front matter, compiled in by build.rs), the app's
//! links, the fidelity scoreboard that measures each lesson's rows against its report, and the
//! steps' cues. Course content reads the model; the model never reads course content.

pub mod cues;
pub mod fidelity;
pub mod lessons;
pub mod link;
