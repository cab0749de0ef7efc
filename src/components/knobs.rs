//! The knob panel: every knob under its sysfs or fio name, grouped by layer (top of the stack
//! first), with a one-line description and its allowed values; choices are selects, true/false
//! a switch. A change applies live where the kernel applies it live, or restarts the run; the
//! panel says which.

use blksim::scenario::knob_table as kt;
use blksim::scenario::{get_knob, knob_applies, KnobKind, KnobSpec, Scenario, KNOBS};
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Its props only change when the scenario or the message does (the page passes a memoized
/// callback), so the page's once-a-second refresh does not re-render it and wipe what the user
/// is typing.
#[derive(Properties, PartialEq)]
pub struct KnobPanelProps {
    pub scenario: Scenario,
    /// The A/B view's other run: a knob that acts there is not greyed out, and a value that
    /// differs there is shown beside the field, under `also_label`'s name.
    #[prop_or_default]
    pub also: Option<Scenario>,
    #[prop_or("B")]
    pub also_label: &'static str,
    /// (key, value) typed by the user.
    pub on_apply: Callback<(String, String)>,
    /// The knob last changed, and what the change did or why it was refused.
    pub message: Option<(String, String)>,
    /// A refused value (key, text): its field keeps what the user typed, to correct it.
    #[prop_or_default]
    pub rejected: Option<(String, String)>,
    /// The knobs this run took live, one line each (its sysfs writes, when, and whether the
    /// timeline now stands before it).
    #[prop_or_default]
    pub live_writes: Vec<String>,
}

/// The layers, top of the stack first, and which knobs (by key prefix, or whole keys) belong to
/// each.
const GROUPS: [(&str, &[&str]); 9] = [
    ("Workload (fio job) and io_uring", &["workload.", "job.", "io_uring."]),
    ("Page cache and writeback (/proc/sys/vm)", &["vm."]),
    ("Device-mapper (dm)", &["dm."]),
    ("md RAID5", &["md."]),
    ("Request queue (/sys/block/*/queue), its elevator (iosched/) and blk-mq", &["queue.", "iosched.", "blk_mq.", "kyber.", "bfq."]),
    ("SCSI host (HBA)", &["host.", "scsi."]),
    ("Disks", &["disk."]),
    ("CPUs and scheduler", &["cpu."]),
    ("Machine and run", &[kt::KERNEL.key, kt::STACK.key, kt::DISKS.key, kt::HBAS.key, kt::DURATION.key]),
];

fn in_group(key: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| if p.ends_with('.') { key.starts_with(p) } else { key == *p })
}

/// A knob's control: a select for a choice, a checkbox for true/false, a text field otherwise.
fn control(k: &KnobSpec, value: String, invalid: bool, disabled: bool, on_apply: &Callback<(String, String)>) -> Html {
    let id = format!("knob-{}", k.key);
    let described = format!("knob-{}-help", k.key);
    let key = k.key.to_string();
    match k.kind {
        KnobKind::Enum(names) => {
            let onchange = {
                let (cb, key) = (on_apply.clone(), key.clone());
                Callback::from(move |e: Event| {
                    if let Some(sel) = e.target_dyn_into::<web_sys::HtmlSelectElement>() {
                        cb.emit((key.clone(), sel.value()));
                    }
                })
            };
            html! {
                <select {id} {onchange} {disabled} aria-describedby={described}>
                    { for names.iter().map(|n| html! { <option value={n.to_string()} selected={*n == value}>{ *n }</option> }) }
                </select>
            }
        }
        KnobKind::Bool => {
            let onchange = {
                let (cb, key) = (on_apply.clone(), key.clone());
                Callback::from(move |e: Event| {
                    if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                        cb.emit((key.clone(), i.checked().to_string()));
                    }
                })
            };
            html! { <input {id} type="checkbox" role="switch" checked={value == "true"} {onchange} {disabled} aria-describedby={described} /> }
        }
        _ => {
            let onchange = {
                let (cb, key) = (on_apply.clone(), key.clone());
                Callback::from(move |e: Event| {
                    if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                        cb.emit((key.clone(), i.value()));
                    }
                })
            };
            html! { <input {id} type="text" size="9" {value} {onchange} {disabled} aria-invalid={invalid.to_string()} aria-describedby={described} /> }
        }
    }
}

#[component]
pub fn KnobPanel(p: &KnobPanelProps) -> Html {
    // The choices and switches show the scenario's value whenever it changes. An option's
    // `selected` sets only a select's first choice: once the reader had chosen in it, a value
    // changed otherwise (a rewind before a live write, the replay past it, Reset) left the
    // select on another option than the scenario's (the elevator read "noop" under
    // "queue.scheduler=cfq applied live").
    let section = use_node_ref();
    {
        let section = section.clone();
        use_effect_with(p.scenario.clone(), move |scenario| {
            let Some(root) = section.cast::<web_sys::Element>() else { return };
            let Ok(controls) = root.query_selector_all("select[id^='knob-'], input[type=checkbox][id^='knob-']") else { return };
            for i in 0..controls.length() {
                let Some(el) = controls.item(i) else { continue };
                let id = el.dyn_ref::<web_sys::Element>().map(|e| e.id()).unwrap_or_default();
                let Some(value) = id.strip_prefix("knob-").and_then(|key| get_knob(scenario, key)) else { continue };
                if let Some(sel) = el.dyn_ref::<web_sys::HtmlSelectElement>() {
                    if sel.value() != value {
                        sel.set_value(&value);
                    }
                } else if let Some(input) = el.dyn_ref::<web_sys::HtmlInputElement>() {
                    input.set_checked(value == "true");
                }
            }
        });
    }
    let row = |k: &KnobSpec| {
        let refused = p.rejected.as_ref().filter(|(key, _)| key == k.key).map(|(_, v)| v.clone());
        let invalid = refused.is_some();
        let value = refused.unwrap_or_else(|| get_knob(&p.scenario, k.key).unwrap_or_default());
        // A knob of a layer this stack lacks acts on nothing: shown, greyed, with why.
        let idle = knob_applies(&p.scenario, k.key).err().filter(|_| p.also.as_ref().is_none_or(|b| knob_applies(b, k.key).is_err()));
        let other = p.also.as_ref().and_then(|o| get_knob(o, k.key)).filter(|v| *v != value);
        html! {
            <>
            <tr data-knob={k.key} class={classes!(idle.is_some().then_some("knob-idle"))}>
                <td class="l"><label for={format!("knob-{}", k.key)}><code>{ key_breaks(k.key) }</code></label></td>
                <td class="l">{ control(k, value, invalid, idle.is_some(), &p.on_apply) }</td>
                <td class="l knob-help" id={format!("knob-{}-help", k.key)}>
                    if let Some(why) = &idle {
                        <span class="knob-idle-why">{ format!("Acts on nothing here: {why}. ") }</span>
                    }
                    if let Some(v) = &other {
                        <span class="knob-other" data-testid="knob-other">{ format!("{}: {v}. ", p.also_label) }</span>
                    }
                    { k.help }
                    <span class="dim">{ format!(" · {}", k.kind.allowed()) }{ if k.live.is_live() { " · applies live" } else { " · restarts the run" } }</span>
                </td>
            </tr>
            // The answer again beside the field, where the user is looking.
            if let Some((_, m)) = p.message.as_ref().filter(|(key, _)| key == k.key) {
                <tr class="knob-row-msg"><td></td><td class="l" colspan="2" data-testid="knob-row-msg">{ m }</td></tr>
            }
            </>
        }
    };
    html! {
        <section class="knobs" aria-label="Knobs" ref={section}>
            if let Some((_, m)) = &p.message { <p class="knob-msg" role="status">{ m }</p> }
            if !p.live_writes.is_empty() {
                <div class="live-writes" data-testid="live-writes">
                    <p class="dim">{ "Written live in this run (the timeline replays each where it was made; a link sets them from t = 0):" }</p>
                    <ul>{ for p.live_writes.iter().map(|w| html! { <li>{ w }</li> }) }</ul>
                </div>
            }
            { for GROUPS.iter().map(|(title, prefixes)| html! {
                <details class="knob-group" open=true>
                    <summary>{ *title }</summary>
                    <table>
                        <tbody>{ for KNOBS.iter().filter(|k| in_group(k.key, prefixes)).map(&row) }</tbody>
                    </table>
                </details>
            }) }
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

/// A knob's key with a break opportunity after each dot, so a long key
/// (`queue.async_run_cancels_delay`) wraps between its parts rather than widening its column.
fn key_breaks(key: &str) -> Html {
    let parts: Vec<&str> = key.split_inclusive('.').collect();
    html! { <>{ for parts.into_iter().map(|p| html! { <>{ p }<wbr /></> }) }</> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_is_in_exactly_one_group() {
        for k in KNOBS {
            let n = GROUPS.iter().filter(|(_, prefixes)| in_group(k.key, prefixes)).count();
            assert_eq!(n, 1, "{} is in {n} knob groups", k.key);
        }
    }
}
