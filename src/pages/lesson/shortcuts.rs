//! The keyboard shortcuts sheet: "?" (or its button) opens a dialog listing every key the page
//! takes; Escape or its Close button closes it.

use super::state::{PageAction, PageDispatch};
use yew::prelude::*;

/// Every shortcut, as (keys, what it does), in the order a lecture uses them.
pub(super) const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "play or pause; during a jump, stop it where it has got to"),
    ("→", "one event"),
    ("Shift+→", "one simulated millisecond"),
    ("R", "reset the run"),
    ("PageDown / PageUp", "next / previous step (what presentation clickers send)"),
    ("↓ → / ↑ ← in presenter mode", "next / previous step"),
    ("↓ / ↑ on the focused diagram", "the tip: next / previous pool, tag map or request"),
    ("Home / End, ← / → on the timeline", "start / furthest point reached; one simulated second (Shift: 1 ms)"),
    ("P", "presenter mode on or off"),
    ("Escape", "leave presenter mode, or close this sheet"),
    ("?", "this sheet"),
];

/// The "?" button beside the display toggles.
pub(super) fn shortcuts_button(open: bool, page: &PageDispatch) -> Html {
    let onclick = {
        let page = page.clone();
        Callback::from(move |_: MouseEvent| page.dispatch(PageAction::SetShortcutsOpen(!open)))
    };
    html! {
        <button class="toggle shortcuts-button" aria-haspopup="dialog" aria-expanded={open.to_string()} title="Keyboard shortcuts (?)" {onclick}>{ "?" }</button>
    }
}

/// The sheet itself, when open.
pub(super) fn shortcuts_dialog(open: bool, page: &PageDispatch) -> Html {
    if !open {
        return Html::default();
    }
    let close = {
        let page = page.clone();
        Callback::from(move |_: MouseEvent| page.dispatch(PageAction::SetShortcutsOpen(false)))
    };
    html! {
        <div class="shortcuts" role="dialog" aria-modal="false" aria-label="Keyboard shortcuts" data-testid="shortcuts">
            <h2>{ "Keyboard shortcuts" }</h2>
            <dl>
                { for SHORTCUTS.iter().map(|(k, what)| html! { <><dt><kbd>{ *k }</kbd></dt><dd>{ *what }</dd></> }) }
            </dl>
            <button class="shortcuts-close" onclick={close}>{ "Close" }</button>
        </div>
    }
}

/// Keyboard focus follows the sheet: into it (its Close button) when it opens, so that Tab and
/// Enter act in it, and back to the "?" button when it closes, where the reader was.
#[hook]
pub(super) fn use_sheet_focus(open: bool) {
    let was_open = use_mut_ref(|| false);
    use_effect_with(open, move |&open| {
        let target = match (open, *was_open.borrow()) {
            (true, false) => Some(".shortcuts-close"),
            (false, true) => Some(".shortcuts-button"),
            _ => None,
        };
        *was_open.borrow_mut() = open;
        if let Some(sel) = target {
            focus_first(sel);
        }
    });
}

/// Moves the keyboard focus to the first element `sel` finds, if any.
pub(super) fn focus_first(sel: &str) {
    use wasm_bindgen::JsCast;
    let el = web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector(sel).ok().flatten());
    if let Some(el) = el.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}
