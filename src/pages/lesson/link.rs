//! The run's state in the URL: a history entry per state, Back and Forward, and Copy link.

use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::protocol::Command;
use crate::view::SessionView;
use gloo::events::EventListener;
use yew::prelude::*;

/// Records a new state (variant, seed, knobs, the lesson's stop) as a history entry, so that
/// back and forward walk through the states and the stops. The time point is left out: it changes every frame.
/// Once the views show the commands sent before it (with the worker, when it has answered).
pub(super) fn sync_fragment(s: &mut SessionView) {
    s.when_settled(|s| push_address(&state_fragment(s)));
}

fn push_address(f: &str) {
    if let Some(w) = web_sys::window() {
        if w.location().hash().ok().as_deref() == Some(f) {
            return;
        }
        if let Ok(h) = w.history() {
            let _ = h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(f));
        }
    }
}

/// Replaces the address (no new history entry): with the link the run came from without the
/// parts the page could not use, once, after it opened (once the views show the runs it opened).
pub(super) fn replace_address_with_clean_link(s: &mut SessionView) {
    s.when_settled(use_clean_link);
}

fn use_clean_link(s: &mut SessionView) {
    if let Some(f) = s.a.link_clean.clone() {
        s.act(crate::protocol::Command::LinkCleanUsed);
        // A link to a lesson that does not exist opens another one: the router then mounts
        // that lesson's page afresh from the new address, and its notice must come along.
        if f.split('?').next() != current_hash().split('?').next() {
            CARRIED_NOTICE.with(|c| *c.borrow_mut() = s.a.notice.clone().map(|n| (f.clone(), n)));
        }
        replace_address(&f);
    }
}

thread_local! {
    /// A notice for the page that the address names next (its fragment, the notice).
    static CARRIED_NOTICE: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
}

/// A page opened at `fragment` takes the notice left for it (once), if any.
pub(super) fn take_carried_notice(s: &mut SessionView, fragment: &str) {
    if let Some((f, n)) = CARRIED_NOTICE.with(|c| c.borrow_mut().take()) {
        if f == fragment && s.a.notice.is_none() {
            s.set_notice(Some(n));
        }
    }
}

/// Stop during a jump (the header's or the timeline's): the runs stay where they got to,
/// paused, and the address loses the time point they did not reach (Copy link writes the
/// time reached).
pub(super) fn stop_jump(s: &mut SessionView) {
    s.act(Command::StopJump);
    s.when_settled(|s| replace_address(&state_fragment(s)));
}

/// Reset (R, the button): both runs again from t = 0, and the address loses a link's time
/// point, which the runs no longer stand at (a reload would jump back to it).
pub(super) fn reset(s: &mut SessionView) {
    s.act(crate::protocol::Command::Reset);
    s.when_settled(|_| {
        let hash = current_hash();
        if let Ok(mut st) = blksim::course::link::LinkState::decode(&hash) {
            if st.t.take().is_some() {
                replace_address(&st.encode());
            }
        }
    });
}

fn replace_address(f: &str) {
    if let Some(w) = web_sys::window() {
        if w.location().hash().ok().as_deref() == Some(f) {
            return;
        }
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(f));
        }
    }
}

/// The address of what shows: the lesson, A's variant, knobs and seed, B if the A/B view is
/// open, and the lesson's stop (without t and speed, which Copy link adds).
pub(super) fn state_fragment(s: &SessionView) -> String {
    let own = s.b_own();
    with_stop(&s.a.state_fragment(s.b_link(&own)), s.stop)
}

/// A fragment with its `step` set to `stop` (1-based in the link), or without one.
fn with_stop(fragment: &str, stop: Option<usize>) -> String {
    match blksim::course::link::LinkState::decode(fragment) {
        Ok(mut st) => {
            st.step = stop.map(|i| i as u32 + 1);
            st.encode()
        }
        Err(_) => fragment.to_string(),
    }
}

/// The page's stop changed: the session and the address take it. A stop set up by
/// `steps::apply_step` has already pushed its history entry with the stop in it; this covers
/// the rest (a copied link's stop), replacing the address, which keeps everything else it
/// holds (a pasted link's time point too).
pub(super) fn note_stop(s: &mut SessionView, stop: Option<usize>) {
    s.stop = stop;
    // After the step's own history entry, if it makes one (with the worker, when it answers).
    s.when_settled(move |_| {
        let hash = current_hash();
        if blksim::course::link::LinkState::decode(&hash).is_ok_and(|st| st.step != stop.map(|i| i as u32 + 1)) {
            replace_address(&with_stop(&hash, stop));
        }
    });
}

pub(super) fn current_hash() -> String {
    web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// The view a link carries, applied as on a fresh load (a link pasted into this tab): the step
/// (set up, if the link has no run state of its own), presenter mode and Large type.
fn apply_view(st: &blksim::course::link::LinkState, s: &mut SessionView, page: &PageDispatch) {
    if let Some(p) = st.presenter {
        page.dispatch(PageAction::SetPresenter(p));
    }
    if let Some(l) = st.large {
        page.dispatch(PageAction::SetLarge(l));
    }
    match st.step {
        Some(n) => {
            super::steps::apply_linked_step(s, st);
            page.dispatch(PageAction::SetStep(Some(n as usize - 1)));
        }
        // An entry from before the steps began (Back past the first step).
        None => {
            s.stop = None;
            page.dispatch(PageAction::SetStep(None));
        }
    }
}

/// Back and forward: when the URL's state differs from the run's, rebuild the run from it.
#[hook]
pub(super) fn use_back_forward(session: SharedSession, page: PageDispatch, id: String) {
    use_effect_with((), move |_| {
        let window = web_sys::window().expect("window");
        let listener = EventListener::new(&window, "popstate", move |_| {
            // Once the views show the commands sent before it: the address is compared with
            // what they show.
            let (hash, page, id) = (current_hash(), page.clone(), id.clone());
            session.borrow_mut().when_settled(move |s| on_popstate(s, &hash, &page, &id));
        });
        move || drop(listener)
    });
}

/// Back or Forward to `hash`: the same run with another B or time point, or another run.
fn on_popstate(s: &mut SessionView, hash: &str, page: &PageDispatch, id: &str) {
    let cur = state_fragment(s);
    if hash.split('?').next() != cur.split('?').next() || hash == cur {
        return;
    }
    // Only B differs (Back after opening A/B): open or close B and keep A where it is,
    // rather than start run A again from t = 0.
    if let Ok(st) = blksim::course::link::LinkState::decode(hash) {
        let variant = st.variant.clone().unwrap_or_else(|| s.a.lesson.first_variant().name.clone());
        if st.lesson == s.a.lesson.id && variant == s.a.variant && st.overrides == s.a.overrides && st.seed == s.a.seed {
            // Only the time point differs (a link pasted with another t): both runs go
            // there, backwards from a snapshot or forwards by running on, and pause, as
            // a fresh load of the link does. A link that names its pace (the sweep's
            // slowest-seed links ask 1 s/s) plays at it, as a fresh load of the link does.
            s.act(Command::SameRunLink { b: st.b.clone(), b_own: st.b_overrides.clone(), t: st.t, speed: st.speed });
            apply_view(&st, s, page);
            page.dispatch(PageAction::SessionChanged);
            return;
        }
    }
    // A new run keeps the pace the reader chose, unless the link names its own.
    let linked = blksim::course::link::LinkState::decode_lenient(hash).ok().map(|(st, _)| st);
    let speed = linked.as_ref().is_none_or(|st| st.speed.is_none()).then_some(s.a.speed);
    s.act(Command::OpenLink { fragment: hash.to_string(), default_lesson: id.to_string(), speed });
    replace_address_with_clean_link(s);
    if let Some(st) = &linked {
        apply_view(st, s, page);
    }
    page.dispatch(PageAction::SessionChanged);
}

/// The whole address of a link fragment on this page (what a bug thread gets pasted).
pub(super) fn address_of(fragment: &str) -> String {
    let base = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    format!("{}{fragment}", base.split('#').next().unwrap_or(""))
}

/// Copy link: this run's address at this simulated time, to the clipboard and into a bar under
/// the header (until the state changes).
/// `view`: the step shown, presenter mode and Large type, which the link keeps too.
pub(super) fn on_copy(session: &SharedSession, page: &PageDispatch, view: (Option<usize>, bool, bool)) -> Callback<MouseEvent> {
    let (session, page) = (session.clone(), page.clone());
    Callback::from(move |_: MouseEvent| {
        let frag = session.borrow().fragment();
        let (step, presenter, large) = view;
        let frag = match blksim::course::link::LinkState::decode(&frag) {
            Ok(mut st) => {
                st.step = step.map(|i| i as u32 + 1);
                st.presenter = presenter.then_some(true);
                st.large = large.then_some(true);
                st.encode()
            }
            Err(_) => frag,
        };
        // A link sets a knob written live from t = 0 (it carries no write times): the run it
        // opens is not this one, and only the sender can be told.
        let written: Vec<String> = session
            .borrow()
            .a
            .live_writes
            .iter()
            .filter_map(|w| w.writes.first().map(|(k, v)| format!("{k}={v} at t = {}", crate::format::sim_time(w.at.ns()))))
            .collect();
        let past = session.borrow().clock().as_secs_f64() > blksim::course::link::T_MAX_S;
        if !written.is_empty() {
            session.borrow_mut().set_notice(Some(format!(
                "This run took knobs live ({}); the link sets each from t = 0, so the run it opens differs from this one.",
                written.join(", ")
            )));
        } else if past {
            session.borrow_mut().set_notice(Some(format!(
                "This run is past the {} s a link may replay: the link opens at t = {} s, not where the run is now.",
                blksim::course::link::T_MAX_S,
                blksim::course::link::T_MAX_S
            )));
        }
        let Some(w) = web_sys::window() else { return };
        let url = address_of(&frag);
        let _ = w.navigator().clipboard().write_text(&url);
        page.dispatch(PageAction::SetCopied(Some((url, state_fragment(&session.borrow())))));
    })
}
