//! The step panel, beside the diagram: the current step's title and text, what to watch (with
//! the model's own figure for it, measured by `blksim fidelity --cues` into lessons/cues.json)
//! and the step controls; one past the last step, the prediction (poll the room, then Reveal).
//! It is a landmark region named "Step", so a screen reader and the tests find it.

use crate::format;
use crate::markdown;
use blksim::fidelity::RowResult;
use blksim::lessons::Lesson;
use yew::prelude::*;

/// How many places PageDown walks: the steps, then the prediction if the lesson has one.
pub(super) fn stops(lesson: &Lesson) -> usize {
    lesson.steps.len() + usize::from(lesson.predict.is_some())
}

/// One measured cue: "name: value unit".
fn cue_figure(r: &RowResult) -> Html {
    html! {
        <li class={classes!("cue-figure", (!r.holds).then_some("misses"))} title={r.how.clone()}>
            { format!("{}: {} {}", r.name, format::sig(r.measured), r.unit) }
        </li>
    }
}

/// The panel. `step` is the page's step (None before the first); `go` moves to a step;
/// `predict` is the prediction box, shown one past the last step.
pub(super) fn step_panel(lesson: &Lesson, step: Option<usize>, go: Callback<usize>, predict: Option<Html>) -> Html {
    let n = lesson.steps.len();
    let total = stops(lesson);
    if total == 0 {
        return html! {};
    }
    let button = |label: String, to: usize, class: &'static str, title: String| {
        let go = go.clone();
        html! { <button class={class} {title} onclick={Callback::from(move |_: MouseEvent| go.emit(to))}>{ label }</button> }
    };
    let title_of = |i: usize| lesson.steps.get(i).map_or_else(|| "Predict, then reveal".to_string(), |s| s.title.clone());
    let nav = |i: usize| {
        html! {
            <div class="step-nav">
                if i > 0 { { button("← Previous".into(), i - 1, "step-prev", title_of(i - 1)) } }
                if i + 1 < n { { button("Next →".into(), i + 1, "step-next", title_of(i + 1)) } }
                else if i + 1 == n && lesson.predict.is_some() { { button("Next: predict →".into(), n, "step-next", title_of(n)) } }
                <span class="dim step-keys">{ "PageDown / PageUp" }</span>
            </div>
        }
    };
    let body = match step {
        None => html! {
            <>
                <p class="step-intro">{ format!("{n} steps{}.", if lesson.predict.is_some() { " and a prediction" } else { "" }) }</p>
                <div class="step-nav">
                    { button(format!("Start: {} →", title_of(0)), 0, "step-next", title_of(0)) }
                    <span class="dim step-keys">{ "PageDown" }</span>
                </div>
            </>
        },
        Some(i) if i < n => {
            let st = &lesson.steps[i];
            let figures = blksim::cues::committed_for(&lesson.id).and_then(|c| c.steps.get(i).cloned()).unwrap_or_default();
            html! {
                <>
                    <div class="step-bar" data-testid="step-bar">
                        <span class="step-n">{ format!("{}/{}", i + 1, n) }</span>
                        <span class="step-title">{ &st.title }</span>
                    </div>
                    <div class="step-text">{ markdown::step_text(&lesson.id, i) }</div>
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
        Some(_) => html! {
            <>
                <div class="step-bar" data-testid="step-bar">
                    <span class="step-n">{ format!("{total}/{total}") }</span>
                    <span class="step-title">{ "Predict" }</span>
                </div>
                { for predict }
                { nav(n) }
            </>
        },
    };
    html! {
        <section class="step-panel" role="region" aria-label="Step" data-testid="step-panel">{ body }</section>
    }
}
