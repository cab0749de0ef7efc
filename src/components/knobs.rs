//! The knob panel: every knob under its sysfs or fio name, with its allowed values. A change
//! applies live where the kernel applies it live, or restarts the run; the panel says which.

use blksim::scenario::{get_knob, Scenario, KNOBS};
use yew::prelude::*;

/// Its props only change when the scenario or the message does (the page passes a memoized
/// callback), so the page's once-a-second refresh does not re-render it and wipe what the user
/// is typing.
#[derive(Properties, PartialEq)]
pub struct KnobPanelProps {
    pub scenario: Scenario,
    /// (key, value) typed by the user.
    pub on_apply: Callback<(String, String)>,
    /// The knob last changed, and what the change did or why it was refused.
    pub message: Option<(String, String)>,
    /// A refused value (key, text): its field keeps what the user typed, to correct it.
    #[prop_or_default]
    pub rejected: Option<(String, String)>,
}

#[component]
pub fn KnobPanel(p: &KnobPanelProps) -> Html {
    html! {
        <section class="knobs" aria-label="Knobs">
            if let Some((_, m)) = &p.message { <p class="knob-msg" role="status">{ m }</p> }
            <table>
                <thead><tr><th class="l">{"knob"}</th><th class="l">{"value"}</th><th class="l">{"allowed"}</th><th class="l">{"applies"}</th></tr></thead>
                <tbody>
                { for KNOBS.iter().map(|k| {
                    let refused = p.rejected.as_ref().filter(|(key, _)| key == k.key).map(|(_, v)| v.clone());
                    let invalid = refused.is_some();
                    let value = refused.unwrap_or_else(|| get_knob(&p.scenario, k.key).unwrap_or_default());
                    let onchange = {
                        let (cb, key) = (p.on_apply.clone(), k.key.to_string());
                        Callback::from(move |e: Event| {
                            if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                                cb.emit((key.clone(), i.value()));
                            }
                        })
                    };
                    html! {
                        <>
                        <tr>
                            <td class="l"><label for={format!("knob-{}", k.key)} title={k.help}>{ k.key }</label></td>
                            <td class="l"><input id={format!("knob-{}", k.key)} type="text" size="9" value={value} {onchange} aria-invalid={invalid.to_string()} aria-describedby={format!("knob-{}-allowed", k.key)} /></td>
                            <td class="l dim" id={format!("knob-{}-allowed", k.key)}>{ k.kind.allowed() }</td>
                            <td class="l dim">{ if k.live { "live" } else { "restart" } }</td>
                        </tr>
                        // The answer again beside the field, where the user is looking.
                        if let Some((_, m)) = p.message.as_ref().filter(|(key, _)| key == k.key) {
                            <tr class="knob-row-msg"><td></td><td class="l" colspan="3" data-testid="knob-row-msg">{ m }</td></tr>
                        }
                        </>
                    }
                }) }
                </tbody>
            </table>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct SeedInputProps {
    pub seed: u64,
    /// The text the user entered (checked by the page).
    pub on_change: Callback<String>,
}

/// The seed box, a component of its own so that the page's refresh does not wipe typing.
#[component]
pub fn SeedInput(p: &SeedInputProps) -> Html {
    let onchange = {
        let cb = p.on_change.clone();
        Callback::from(move |e: Event| {
            if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                cb.emit(i.value());
            }
        })
    };
    html! { <input type="text" inputmode="numeric" aria-label="Seed" value={p.seed.to_string()} {onchange} size="6" /> }
}
