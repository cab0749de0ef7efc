pub mod fidelity;
pub mod home;
pub mod lesson;
pub mod notes;
pub mod trace;
