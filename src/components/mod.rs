pub mod charts;
pub mod counters;
pub mod diagram;
pub mod diagram_tip;
pub mod event_log;
pub mod fidelity;
pub mod knobs;
pub mod legend;
