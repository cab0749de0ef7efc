//! The step panel, beside the diagram: the current step's title and text, what to watch (with
//! the model's own figure for it, measured by `blksim fidelity --cues` into lessons/cues.json)
//! and the step controls; at its place among them (before the step that shows its answer), the
//! prediction (poll the room, then Reveal).
//! It is a landmark region named "Step", so a screen reader and the tests find it.

use crate::format;
use crate::markdown;
use blksim::course::fidelity::RowResult;
use blksim::course::lessons::{Lesson, Stop};
use yew::prelude::*;

/// One measured cue: "name: value unit".
/// How many seeds a figure was measured over, when a sweep (its `how` ends "over seeds 1..=N").
fn sweep_seeds(r: &RowResult) -> Option<u32> {
    r.how.rsplit_once("over seeds 1..=").and_then(|(_, n)| n.trim().parse().ok())
}

fn cue_figure(r: &RowResult, mixed: bool) -> Html {
    // Where a step's figures come from runs of different kinds, a sweep's says so itself.
    let over = match sweep_seeds(r) {
        Some(n) if mixed => format!(" (seeds 1-{n})"),
        _ => String::new(),
    };
    html! {
        <li class={classes!("cue-figure", (!r.holds).then_some("misses"))} title={r.how.clone()}>
            { format!("{}: {} {}{over}", r.name, format::sig(r.measured), r.unit) }
        </li>
    }
}

/// The summary over a step's figures: which runs they were measured on (seed 1's whole run,
/// or a sweep's seeds), as the figures' own `how` says.
fn figures_summary(figures: &[RowResult]) -> (String, bool) {
    let sweeps: Vec<u32> = figures.iter().filter_map(sweep_seeds).collect();
    if sweeps.is_empty() {
        ("What the model measures for this (seed 1, the whole run)".into(), false)
    } else if sweeps.len() == figures.len() && sweeps.iter().all(|&n| n == sweeps[0]) {
        (format!("What the model measures for this (seeds 1-{}, their whole runs)", sweeps[0]), false)
    } else {
        ("What the model measures for this (seed 1, the whole run, unless a figure names its seeds)".into(), true)
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
            let figures = crate::content::cues_for(&lesson.id).and_then(|c| c.steps.get(k).cloned()).unwrap_or_default();
            let (summary, mixed) = figures_summary(&figures);
            html! {
                <>
                    { bar(i, &st.title) }
                    <div class="step-text">{ markdown::step_text(&lesson.id, k) }</div>
                    if !st.watch.is_empty() {
                        <p class="step-watch" data-testid="step-watch"><strong>{ "Watch: " }</strong>{ &st.watch }</p>
                    }
                    if !figures.is_empty() {
                        <details class="step-figures">
                            <summary>{ summary }</summary>
                            <ul>{ for figures.iter().map(|r| cue_figure(r, mixed)) }</ul>
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

#[cfg(test)]
mod tests {
    use super::*;

    /// mq-clone-stall's second step shows a figure over 200 seeds: its summary says so, where
    /// it once said "seed 1" over a 200-seed ratio; its first step's figure is seed 1's.
    #[test]
    fn a_steps_figures_say_which_runs_they_come_from() {
        let cues = blksim::course::cues::committed_for("mq-clone-stall").expect("committed cues");
        assert_eq!(figures_summary(&cues.steps[0]), ("What the model measures for this (seed 1, the whole run)".to_string(), false));
        assert_eq!(
            figures_summary(&cues.steps[1]),
            ("What the model measures for this (seeds 1-200, their whole runs)".to_string(), false)
        );
        let mut mixed = cues.steps[0].clone();
        mixed.extend(cues.steps[1].iter().cloned());
        assert!(figures_summary(&mixed).1, "a sweep's figure beside seed 1's names its seeds");
    }
}
