mod use_animation_frame;

pub use use_animation_frame::use_animation_frame;
