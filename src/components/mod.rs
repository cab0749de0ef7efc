pub mod charts;
pub mod counters;
pub mod diagram;
pub mod event_log;
pub mod knobs;
