//! The variants: run A's variant buttons, the A/B toggle and run B's variant picker.

use super::link::sync_fragment;
use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::protocol::Command;
use crate::view::SessionView;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// A's variant buttons (and the knobs set by hand beside them), the A/B toggle, and in the A/B
/// view, B's variant.
pub(super) fn variant_controls(session: &SharedSession, page: &PageDispatch, s: &SessionView) -> Html {
    let d = &s.a;
    let lesson = &d.lesson;
    let ab = s.b.is_some();
    let sandbox = lesson.id == blksim::course::lessons::SANDBOX;
    let on_ab = {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = session.borrow_mut();
            s.act(Command::ToggleAb);
            sync_fragment(&mut s);
            drop(s);
            page.dispatch(PageAction::SessionChanged);
        })
    };
    let variant_buttons = lesson.variants.iter().map(|v| {
        let pressed = v.name == d.variant;
        let onclick = {
            let (session, page, name) = (session.clone(), page.clone(), v.name.clone());
            Callback::from(move |_| {
                let mut s = session.borrow_mut();
                s.act(Command::PickVariant(name.clone()));
                sync_fragment(&mut s);
                drop(s);
                page.dispatch(PageAction::SessionChanged);
            })
        };
        html! { <button class={classes!("variant", pressed.then_some("on"))} aria-pressed={pressed.to_string()} title={v.summary.clone()} {onclick}>{ v.name.clone() }</button> }
    });
    // B's variant: the sandbox's B is A's variant with knobs of its own.
    let b_variant_select = s.b.as_ref().filter(|_| !sandbox).map(|b| {
        let on_b = {
            let (session, page) = (session.clone(), page.clone());
            Callback::from(move |e: Event| {
                if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
                    let mut s = session.borrow_mut();
                    s.act(Command::PickB(sel.value()));
                    sync_fragment(&mut s);
                    drop(s);
                    page.dispatch(PageAction::SessionChanged);
                }
            })
        };
        html! {
            <label class="b-pick">{ "B: " }
                <select aria-label="Variant of run B" onchange={on_b}>
                    // B is another variant than A's: a run beside its own copy shows nothing.
                    { for lesson.variants.iter().filter(|v| v.name != d.variant).map(|v| html! { <option value={v.name.clone()} selected={v.name == b.variant}>{ &v.name }</option> }) }
                </select>
            </label>
        }
    });
    html! {
        <>
            <div class="variants" role="group" aria-label={if ab { "Variant of run A" } else { "Variant" }}>{ for variant_buttons }</div>
            if !d.overrides.is_empty() {
                // The variant plus knobs set by hand: say so, since the buttons alone look
                // like the lesson's preset.
                <span class="modified" data-testid="modified" title={d.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("\n")}>
                    { format!("+{}", blksim::scenario::counted(d.overrides.len() as u64, "knob")) }
                </span>
            }
            // A/B compares two variants; the sandbox, which has one, compares two setups: B starts
            // as a copy of A and takes knobs of its own.
            <button class={classes!("ab", ab.then_some("on"))} aria-pressed={ab.to_string()} onclick={on_ab} disabled={lesson.variants.len() < 2 && !sandbox}
                title={if sandbox { "Run two setups side by side, in lockstep: B starts as a copy of A, and the knob panel sets both or B alone" } else if lesson.variants.len() < 2 { "A/B compares two variants; this page has one" } else { "Run two variants side by side, in lockstep" }}>{ "A/B" }</button>
            { for b_variant_select }
        </>
    }
}

/// B's picker shows B's variant. Its options' `selected` sets only the select's first choice:
/// once the reader has picked one, a B changed otherwise (Back and Forward, a step, a link)
/// left the picker on the old name while the diagram and the address had the new one. So the
/// select's value is set after each render in which A's or B's variant changed.
#[hook]
pub(super) fn use_b_picker_shows_b(a: String, b: Option<String>) {
    use_effect_with((a, b), |(_, b)| {
        let Some(b) = b else { return };
        let picker = gloo::utils::document().query_selector("select[aria-label='Variant of run B']").ok().flatten();
        if let Some(sel) = picker.and_then(|el| el.dyn_into::<HtmlSelectElement>().ok()) {
            if sel.value() != *b {
                sel.set_value(b);
            }
        }
    });
}
