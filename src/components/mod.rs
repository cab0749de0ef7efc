pub mod counters;
pub mod diagram;
