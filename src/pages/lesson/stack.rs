//! The stack zone's parts: a diagram's summary in words, and expanding a device group.

use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::components::diagram::layout_for;
use crate::view::RunView;
use crate::view::SessionView;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

/// What a diagram shows, in words (its canvas's text alternative).
pub(super) fn summary(d: &RunView) -> String {
    format!(
        "Block stack of {} ({}): {} processes, {} stacking device(s), {} disk(s), {} host(s), {} CPU(s). Numbers are in the tables beside it.",
        d.lesson.id,
        d.variant,
        d.shown.topology.processes.len(),
        d.shown.topology.upper.len(),
        d.shown.topology.devices.len(),
        d.shown.topology.hosts.len(),
        d.shown.topology.cores
    )
}

/// A click on a diagram at `x`, looked up in run A's layout: expands a device group, or
/// collapses it.
pub(super) fn on_diagram_click(session: &SharedSession, page: &PageDispatch, canvas_a: &NodeRef) -> Callback<f64> {
    let (session, page, canvas_a) = (session.clone(), page.clone(), canvas_a.clone());
    Callback::from(move |x: f64| {
        let mut s = session.borrow_mut();
        let Some(c) = canvas_a.cast::<HtmlCanvasElement>() else { return };
        let l = layout_for(&c, &s.a, s.expanded);
        if let Some(col) = l.column_at(x) {
            // A group column expands; a device of the expanded group collapses it back.
            s.expanded = match l.cols[col].group {
                Some(g) => Some(g),
                None if s.expanded.is_some() => None,
                None => return,
            };
            drop(s);
            page.dispatch(PageAction::SessionChanged);
        }
    })
}

/// Pointer moves and arrow keys on run `b`'s diagram (or A's): its tip's place. The frame
/// loop draws the tip, so nothing re-renders.
pub(super) fn on_diagram_pointer(session: &SharedSession, b: bool) -> Callback<crate::components::diagram::Pointer> {
    use crate::components::diagram::Pointer;
    let session = session.clone();
    Callback::from(move |p: Pointer| {
        let s = session.borrow();
        let Some(d) = (if b { s.b.as_ref() } else { Some(&s.a) }) else { return };
        let mut hover = d.hover.borrow_mut();
        match p {
            Pointer::At(x, y) => {
                hover.at = Some((x, y));
                hover.focus = None;
            }
            Pointer::Leave => {
                hover.at = None;
                hover.focus = None;
            }
            Pointer::Step(k) => hover.step(k),
        }
    })
}

/// The same expand/collapse as clicking the diagram, for the keyboard and screen readers.
pub(super) fn group_buttons(session: &SharedSession, page: &PageDispatch, s: &SessionView) -> Html {
    let d = &s.a;
    let cols = crate::layout::columns(d.shown.topology.devices.len(), None);
    if cols.iter().any(|c| c.group.is_some()) {
        html! {
            <div class="groups" role="group" aria-label="Device groups">
                <span class="dim">{ "expand: " }</span>
                { for cols.iter().filter_map(|c| c.group.map(|g| (g, c))).map(|(g, c)| {
                    let name = format!("{}–{}", d.shown.topology.devices[c.first].name, d.shown.topology.devices[c.first + c.count - 1].name);
                    let pressed = s.expanded == Some(g);
                    let onclick = {
                        let (session, page) = (session.clone(), page.clone());
                        Callback::from(move |_| {
                            let mut s = session.borrow_mut();
                            s.expanded = if s.expanded == Some(g) { None } else { Some(g) };
                            drop(s);
                            page.dispatch(PageAction::SessionChanged);
                        })
                    };
                    html! { <button class="group" aria-pressed={pressed.to_string()} {onclick}>{ name }</button> }
                }) }
            </div>
        }
    } else {
        html! {}
    }
}
