pub mod charts;
pub mod counters;
pub mod diagram;
pub mod event_log;
pub mod fidelity;
pub mod knobs;
pub mod legend;
