//! The run controls (play/pause, step, reset, skip, speed, seed) and the keyboard shortcuts.

use super::link::sync_fragment;
use super::now_ms;
use super::state::{Page, PageAction, PageDispatch};
use super::steps::apply_step;
use super::SharedSession;
use crate::components::knobs::SeedInput;
use crate::format;
use crate::protocol::{Command, Reply};
use crate::runs::{SPEED_MAX, SPEED_MIN};
use crate::view::RunView;
use crate::view::SessionView;
use gloo::events::{EventListener, EventListenerOptions};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent};
use yew::prelude::*;

/// The speed slider: 10 steps per decade from 1 µs/s (0) to 1 s/s (60).
pub fn slider_to_speed(v: f64) -> f64 {
    (10f64.powf(v / 10.0 - 6.0)).clamp(SPEED_MIN, SPEED_MAX)
}

pub fn speed_to_slider(s: f64) -> f64 {
    ((s.log10() + 6.0) * 10.0).round().clamp(0.0, 60.0)
}

/// The tag of the element a key event is aimed at.
fn target_tag(target: Option<web_sys::EventTarget>) -> String {
    target.and_then(|t| t.dyn_into::<HtmlElement>().ok()).map(|el| el.tag_name()).unwrap_or_default()
}

/// A button clicked with the mouse gives its focus back, so that Space afterwards is
/// play/pause and not that button again (Skip, Reset); a button reached with Tab keeps it,
/// and Space presses it, as keyboard users expect.
#[hook]
pub(super) fn use_blur_after_mouse_click() {
    use_effect_with((), |_| {
        let window = web_sys::window().expect("window");
        let listener = EventListener::new(&window, "click", |e| {
            let Some(m) = e.dyn_ref::<MouseEvent>() else { return };
            if m.detail() == 0 {
                return;
            }
            let button = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).and_then(|el| el.closest("button").ok().flatten());
            if let Some(b) = button.and_then(|b| b.dyn_into::<HtmlElement>().ok()) {
                let _ = b.blur();
            }
        });
        move || drop(listener)
    });
}

/// Typing in a field is typing; Space on a button is that button's own click: keys the page's
/// shortcuts leave alone.
fn not_a_shortcut(e: &KeyboardEvent) -> bool {
    let tag = target_tag(e.target());
    // A clicker's PageDown/PageUp steps the lesson even while a slider (speed, the
    // timeline) has the focus from the last drag; the slider keeps its arrows.
    let slider = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()).is_some_and(|i| i.type_() == "range");
    let clicker = matches!(e.key().as_str(), "PageDown" | "PageUp");
    (matches!(tag.as_str(), "INPUT" | "SELECT" | "TEXTAREA") && !(slider && clicker))
        || (tag == "BUTTON" && e.key() == " ")
        // ↓ / ↑ on the focused diagram move its tip, not the presenter's step.
        || (tag == "CANVAS" && matches!(e.key().as_str(), "ArrowDown" | "ArrowUp"))
        || e.ctrl_key()
        || e.meta_key()
        || e.alt_key()
}

/// What the keyboard's listener acts on: the session, and the page's state (presenter mode, the
/// stop and the shortcuts sheet, their values now in `now`, as the listener outlives each
/// render; its actions through the page's dispatcher).
struct Keys {
    session: SharedSession,
    page: PageDispatch,
    /// (presenter mode, the stop, the sheet open) as the last render saw them.
    now: Rc<RefCell<(bool, Option<usize>, bool)>>,
}

impl Keys {
    fn on_key(&self, e: &KeyboardEvent) {
        if not_a_shortcut(e) || self.page_key(e) {
            return;
        }
        let mut s = self.session.borrow_mut();
        match e.key().as_str() {
            " " => {
                e.prevent_default();
                // During a jump Play is its Stop (the header's button): Space does what it says.
                if s.jump_target().is_some() {
                    super::link::stop_jump(&mut s);
                } else {
                    s.act(Command::TogglePlay);
                }
            }
            "ArrowRight" if e.shift_key() => {
                e.prevent_default();
                s.act(Command::StepMs { now_ms: now_ms() });
            }
            "ArrowRight" => {
                e.prevent_default();
                s.act(Command::StepEvent { now_ms: now_ms() });
            }
            "r" | "R" => super::link::reset(&mut s),
            _ => return,
        }
        drop(s);
        self.page.dispatch(PageAction::SessionChanged);
    }

    /// The keys for the page rather than the run: the stops, the sheet and presenter mode.
    /// Whether `e` was one.
    fn page_key(&self, e: &KeyboardEvent) -> bool {
        let (in_presenter, _, sheet_open) = *self.now.borrow();
        let delta = match e.key().as_str() {
            "PageDown" => 1,
            "PageUp" => -1,
            "ArrowDown" | "ArrowRight" if in_presenter => 1,
            "ArrowUp" | "ArrowLeft" if in_presenter => -1,
            "?" => {
                self.page.dispatch(PageAction::SetShortcutsOpen(!sheet_open));
                return true;
            }
            "Escape" if sheet_open => {
                self.page.dispatch(PageAction::SetShortcutsOpen(false));
                return true;
            }
            "p" | "P" => {
                self.page.dispatch(PageAction::SetPresenter(!in_presenter));
                return true;
            }
            // Escape leaves presenter mode, as it leaves a slide show.
            "Escape" if in_presenter => {
                self.page.dispatch(PageAction::SetPresenter(false));
                return true;
            }
            _ => return false,
        };
        e.prevent_default();
        self.go(delta);
        true
    }

    /// To the next (`delta` 1) or previous (-1) stop: the steps, and the prediction before the
    /// step that shows its answer.
    fn go(&self, delta: i64) {
        let cur_step = self.now.borrow().1;
        let nsteps = self.session.borrow().a.lesson.stops();
        if nsteps == 0 {
            return;
        }
        let next = match cur_step {
            None if delta > 0 => 0,
            None => return,
            Some(c) => {
                let n = (c as i64 + delta).clamp(0, nsteps as i64 - 1) as usize;
                // Past the last stop (or before the first) a key does nothing: a clicker
                // pressed once too often must not set the step up again and take away the
                // run on the projector.
                if n == c {
                    return;
                }
                n
            }
        };
        let mut s = self.session.borrow_mut();
        apply_step(&mut s, next);
        drop(s);
        self.page.dispatch(PageAction::SetStep(Some(next)));
    }
}

/// Keyboard: Space play/pause, → one event, Shift+→ 1 ms, R reset; PageDown/PageUp (what
/// presentation clickers send) move through the lesson's steps, and so do the arrow keys in
/// presenter mode; P toggles presenter mode and Escape leaves it; "?" opens the shortcuts
/// sheet (`shortcuts.rs`), and Escape closes it first.
#[hook]
pub(super) fn use_keyboard_shortcuts(session: SharedSession, page: &Page) {
    let keys_state = use_mut_ref(|| (false, None::<usize>, false));
    *keys_state.borrow_mut() = (page.presenter, page.step, page.shortcuts_open);
    let page = page.dispatcher();
    use_effect_with((), move |_| {
        let window = web_sys::window().expect("window");
        let keys = Keys { session, page, now: keys_state };
        // Not passive: Space must not scroll the page.
        let listener = EventListener::new_with_options(&window, "keydown", EventListenerOptions::enable_prevent_default(), move |e| {
            if let Some(e) = e.dyn_ref::<KeyboardEvent>() {
                keys.on_key(e);
            }
        });
        move || drop(listener)
    });
}

/// Play/pause (or "done"), step, reset, skip, the speed slider and the seed field.
pub(super) fn run_controls(session: &SharedSession, page: &PageDispatch, d: &RunView, all_done: bool, on_seed: Callback<String>) -> Html {
    // Event handlers: each takes the session, changes it, and refreshes the page.
    let act = |f: fn(&mut SessionView)| act_on(session, page, f);
    let on_play = act(|s| {
        s.act(Command::TogglePlay);
    });
    let on_step = act(|s| {
        s.act(Command::StepEvent { now_ms: now_ms() });
    });
    let on_ff = act(|s| {
        s.act(Command::Skip { secs: 5.0 });
    });
    let on_reset = act(super::link::reset);
    let on_speed = {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                if let Some(v) = blksim::float_parse::parse_f64(&input.value()) {
                    session.borrow_mut().act(Command::SetSpeed(slider_to_speed(v)));
                    page.dispatch(PageAction::SessionChanged);
                }
            }
        })
    };
    // A jump under way (a link's t, the timeline, a step): the header says so where Play was,
    // with its Stop, since the timeline's own line may be below the fold.
    let jumping = session.borrow().jump_target();
    let on_stop_jump = act(super::link::stop_jump);
    html! {
        <>
            if let Some(to) = jumping {
                <button class="play jumping" data-testid="header-jump-stop" aria-label={format!("Stop the jump to t = {}", format::sim_time(to.ns()))} title="The run goes there without animating; Stop leaves it where it has got to, paused" onclick={on_stop_jump}>
                    { format!("■ Stop · to {}", format::sim_time(to.ns())) }
                </button>
            } else if all_done {
                // Every run's jobs are done, or its duration reached: nothing left to play; Reset
                // starts again.
                <button class="play" aria-label="Run done" disabled=true title="The run is over (its jobs done, or its duration reached): Reset runs it again">{ "✓ done" }</button>
            } else {
                <button class="play" aria-label={if d.playing { "Pause" } else { "Play" }} aria-pressed={d.playing.to_string()} onclick={on_play} title="Space">
                    { if d.playing { "❚❚ Pause" } else { "▶ Play" } }
                </button>
            }
            // Accessible names begin with the visible label, so that saying it finds the button.
            <button aria-label="Step one event" title="→ (Shift+→: 1 ms)" onclick={on_step} disabled={all_done}>{ "Step →" }</button>
            <button aria-label="Reset: restart from time 0" title="R" onclick={on_reset}>{ "Reset" }</button>
            <button aria-label="Skip 5 s: run 5 simulated seconds without animating, towards steady state" title="Runs 5 simulated seconds without animating" onclick={on_ff} disabled={all_done}>{ "Skip 5 s ⇥" }</button>
            <label class="speed">
                <span>{ "speed" }</span>
                <input type="range" min="0" max="60" step="1" aria-label="Speed (simulated time per second)" value={speed_to_slider(d.speed).to_string()} oninput={on_speed} />
                <output>{ format::speed(d.speed) }</output>
            </label>
            <label class="seed">
                <span>{ "seed" }</span>
                <SeedInput seed={d.seed} on_change={on_seed} />
            </label>
        </>
    }
}

/// A button's handler that acts on the session and redraws.
pub(super) fn act_on(session: &SharedSession, page: &PageDispatch, f: impl Fn(&mut SessionView) + 'static) -> Callback<MouseEvent> {
    let (session, page) = (session.clone(), page.clone());
    Callback::from(move |_: MouseEvent| {
        f(&mut session.borrow_mut());
        page.dispatch(PageAction::SessionChanged);
    })
}

/// The seed field's handler, memoized: `SeedInput`'s props then stay equal across the page's
/// refreshes, and it keeps what the user is typing.
#[hook]
pub(super) fn use_seed_handler(session: SharedSession, page: PageDispatch) -> Callback<String> {
    use_callback((), move |text: String, _| {
        let mut s = session.borrow_mut();
        match text.trim().parse::<u64>() {
            Ok(seed) => {
                s.act_then(Command::ChooseSeed(seed), |s, r| {
                    s.set_notice(match r {
                        Reply::Refused(e) => Some(e),
                        _ => None,
                    })
                });
            }
            Err(_) => {
                let kept = s.a.seed;
                s.set_notice(Some(format!(
                    "seed: '{}' is not a whole number from 0 to {}; kept seed {kept}",
                    blksim::scenario::clip(&text),
                    u64::MAX
                )));
            }
        }
        sync_fragment(&mut s);
        drop(s);
        page.dispatch(PageAction::SessionChanged);
    })
}
