//! The step panel, beside the diagram: the current step's title and text, what to watch (with
//! the model's own figure for it, measured by `blksim fidelity --cues` into lessons/cues.json)
//! and the step controls; at its place among them (before the step that shows its answer), the
//! prediction (poll the room, then Reveal).
//! It is a landmark region named "Step", so a screen reader and the tests find it.

use crate::format;
use crate::markdown;
use blksim::fidelity::RowResult;
use blksim::lessons::{Lesson, Stop};
use yew::prelude::*;

/// One measured cue: "name: value unit".
fn cue_figure(r: &RowResult) -> Html {
    html! {
        <li class={classes!("cue-figure", (!r.holds).then_some("misses"))} title={r.how.clone()}>
            { format!("{}: {} {}", r.name, format::sig(r.measured), r.unit) }
        </li>
    }
}

/// The panel. `step` is the page's stop (None before the first; `Lesson::stop` says whether it
/// is a step or the prediction); `go` moves to a stop; `predict` is the prediction box.
pub(super) fn step_panel(lesson: &Lesson, step: Option<usize>, go: Callback<usize>, predict: Option<Html>) -> Html {
    let n = lesson.steps.len();
    let total = lesson.stops();
    if total == 0 {
        return html! {};
    }
    let button = |label: String, to: usize, class: &'static str, title: String| {
        let go = go.clone();
        html! { <button class={class} {title} onclick={Callback::from(move |_: MouseEvent| go.emit(to))}>{ label }</button> }
    };
    let title_of = |i: usize| lesson.stop_title(i).unwrap_or_default().to_string();
    let nav = |i: usize| {
        html! {
            <div class="step-nav">
                if i > 0 { { button("← Previous".into(), i - 1, "step-prev", title_of(i - 1)) } }
                if i + 1 < total {
                    { button(if lesson.stop(i + 1) == Some(Stop::Predict) { "Next: predict →".into() } else { "Next →".into() }, i + 1, "step-next", title_of(i + 1)) }
                }
                <span class="dim step-keys">{ "PageDown / PageUp" }</span>
            </div>
        }
    };
    let bar = |i: usize, title: &str| {
        html! {
            <div class="step-bar" data-testid="step-bar">
                <span class="step-n">{ format!("{}/{total}", i + 1) }</span>
                <span class="step-title">{ title }</span>
            </div>
        }
    };
    let body = match step.map(|i| (i, lesson.stop(i))) {
        None | Some((_, None)) => html! {
            <>
                <p class="step-intro">{ format!("{n} steps{}.", if lesson.predict.is_some() { " and a prediction" } else { "" }) }</p>
                <div class="step-nav">
                    { button(format!("Start: {} →", title_of(0)), 0, "step-next", title_of(0)) }
                    <span class="dim step-keys">{ "PageDown" }</span>
                </div>
            </>
        },
        Some((i, Some(Stop::Step(k)))) => {
            let st = &lesson.steps[k];
            let figures = blksim::cues::committed_for(&lesson.id).and_then(|c| c.steps.get(k).cloned()).unwrap_or_default();
            html! {
                <>
                    { bar(i, &st.title) }
                    <div class="step-text">{ markdown::step_text(&lesson.id, k) }</div>
                    if !st.watch.is_empty() {
                        <p class="step-watch" data-testid="step-watch"><strong>{ "Watch: " }</strong>{ &st.watch }</p>
                    }
                    if !figures.is_empty() {
                        <details class="step-figures">
                            <summary>{ "What the model measures for this (seed 1, the whole run)" }</summary>
                            <ul>{ for figures.iter().map(cue_figure) }</ul>
                        </details>
                    }
                    { nav(i) }
                </>
            }
        }
        Some((i, Some(Stop::Predict))) => html! {
            <>
                { bar(i, "Predict") }
                { for predict }
                { nav(i) }
            </>
        },
    };
    html! {
        <section class="step-panel" role="region" aria-label="Step" data-testid="step-panel">{ body }</section>
    }
}
