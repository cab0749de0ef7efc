pub mod home;
pub mod lesson;
pub mod notes;
