//! Runs a callback on every animation frame while the component is mounted. The pending frame
//! is cancelled when the component unmounts (dropping a gloo `AnimationFrame` cancels it).

use gloo::render::{request_animation_frame, AnimationFrame};
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

type FrameFn = Rc<dyn Fn(f64)>;

fn schedule(pending: Rc<RefCell<Option<AnimationFrame>>>, callback: Rc<RefCell<Option<FrameFn>>>) {
    let again = pending.clone();
    let handle = request_animation_frame(move |ts| {
        let cb = callback.borrow().clone();
        if let Some(cb) = cb {
            cb(ts);
        }
        schedule(again, callback);
    });
    *pending.borrow_mut() = Some(handle);
}

/// Calls `f(timestamp_ms)` once per frame. The latest `f` is used (it may capture new state).
#[hook]
pub fn use_animation_frame<F: Fn(f64) + 'static>(f: F) {
    let callback = use_mut_ref(|| None::<FrameFn>);
    *callback.borrow_mut() = Some(Rc::new(f));
    use_effect_with((), move |_| {
        let pending: Rc<RefCell<Option<AnimationFrame>>> = Rc::new(RefCell::new(None));
        schedule(pending.clone(), callback);
        move || {
            // Dropping the handle cancels the frame and breaks the closure's reference cycle.
            pending.borrow_mut().take();
        }
    });
}
