//! The timeline under the charts: the run so far, to scrub both ways (`RunView::seek`).
//! Drag or click anywhere on it; Home and End go to the start and to the furthest point
//! reached, the arrow keys move by one simulated second (with Shift, one millisecond). The
//! link's `t` is the same time.

use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::format;
use crate::protocol::Command;
use blksim::SimTime;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// The timeline's slider and where it stands.
pub(super) fn timeline_bar(session: &SharedSession, page: &PageDispatch) -> Html {
    let s = session.borrow();
    let now = s.clock();
    let end = s.reached();
    let catching_up = s.jump_target();
    let at = s.timeline_at();
    drop(s);
    let seek = {
        let (session, page) = (session.clone(), page.clone());
        move |t: SimTime| {
            session.borrow_mut().act(Command::Seek(t));
            page.dispatch(PageAction::SessionChanged);
        }
    };
    let oninput = {
        let seek = seek.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            if let Some(ms) = blksim::float_parse::parse_f64(&input.value()) {
                seek(SimTime::from_secs_f64(ms.max(0.0) / 1e3));
            }
        })
    };
    // The arrows move by one simulated second (the slider's own step would be a pixel's worth).
    let onkeydown = {
        let (seek, session) = (seek.clone(), session.clone());
        Callback::from(move |e: KeyboardEvent| {
            // Where the timeline stands now (the frame loop moves the slider between renders),
            // counting the presses before this one that the runs have not reached yet.
            let (now, end) = {
                let s = session.borrow();
                (s.timeline_at(), s.reached())
            };
            // With Shift, by one simulated millisecond, as Shift+→ steps the run.
            let by: i64 = if e.shift_key() { 1_000_000 } else { 1_000_000_000 };
            let delta: i64 = match e.key().as_str() {
                "ArrowRight" | "ArrowUp" => by,
                "ArrowLeft" | "ArrowDown" => -by,
                _ => return,
            };
            e.prevent_default();
            seek(SimTime((now.ns() as i64 + delta).clamp(0, end.ns() as i64) as u64));
        })
    };
    let stop = {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |_: MouseEvent| {
            super::link::stop_jump(&mut session.borrow_mut());
            page.dispatch(PageAction::SessionChanged);
        })
    };
    let status = match catching_up {
        Some(to) if to < now => format!("rewinding to {}", format::sim_time(to.ns())),
        Some(to) => format!("running to {} …", format::sim_time(to.ns())),
        None => reached_text(now, end),
    };
    html! {
        <div class="timeline" data-testid="timeline">
            <label for="timeline-range">{ "Timeline" }</label>
            <input id="timeline-range" type="range" aria-label="Timeline" min="0" max={format!("{:.3}", end.ns() as f64 / 1e6)} step="any"
                value={format!("{:.3}", at.ns() as f64 / 1e6)}
                aria-valuetext={format::sim_time(at.ns())}
                title="Drag or click to go to any time of the run so far, backwards too (Home, End; ← → by one simulated second, with Shift by 1 ms)"
                {oninput} {onkeydown} />
            <progress class="jump-progress" aria-label="Progress of the jump" max="1" value="0" data-active="false"></progress>
            if catching_up.is_some() {
                <button class="jump-stop" onclick={stop} data-testid="jump-stop" title="Stop the jump here: the run stays where it has got to, paused">{ "Stop" }</button>
            }
            <span class="timeline-status" aria-live="polite" data-catching-up={catching_up.is_some().to_string()}>{ status }</span>
        </div>
    }
}

/// The timeline's words when no jump is under way.
fn reached_text(now: SimTime, end: SimTime) -> String {
    format!("{} of {} reached", format::sim_time(now.ns()), format::sim_time(end.ns()))
}

/// Moves the slider and its words to where the run is, every frame: the page re-renders only
/// when a whole simulated second lands, which at an animated speed is many wall seconds. Left
/// alone while a jump runs (its words and progress bar say where it is going) and while the
/// slider is being dragged.
pub(super) fn follow_clock(now: SimTime, end: SimTime) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    let Some(input) = doc.get_element_by_id("timeline-range") else { return };
    if input.matches(":active").unwrap_or(false) {
        return;
    }
    let Some(status) = doc.query_selector(".timeline-status[data-catching-up=false]").ok().flatten() else { return };
    let _ = input.set_attribute("max", &format!("{:.3}", end.ns() as f64 / 1e6));
    if let Some(range) = input.dyn_ref::<HtmlInputElement>() {
        range.set_value(&format!("{:.3}", now.ns() as f64 / 1e6));
    }
    let _ = input.set_attribute("aria-valuetext", &format::sim_time(now.ns()));
    status.set_text_content(Some(&reached_text(now, end)));
}
