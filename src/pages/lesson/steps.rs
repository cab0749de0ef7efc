//! The lesson's steps and its prediction: going to a step, the steps list, predict-then-reveal.

use super::link::sync_fragment;
use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::protocol::{Command, LinkedStep, Reply};
use crate::view::RunView;
use crate::view::SessionView;
use blksim::course::fidelity::RowResult;
use blksim::course::lessons::{Predict, Stop};
use yew::prelude::*;

/// Sets the lesson's stop `i` (a step or the prediction), and the address takes it.
pub(super) fn apply_step(s: &mut SessionView, i: usize) {
    s.act_then(Command::GoToStop(i), |s, r| {
        if r == Reply::StepSetUp(true) {
            sync_fragment(s);
        }
    });
}

/// A link's step (`Command::LinkedStep`), and the address takes it.
pub(super) fn apply_linked_step(s: &mut SessionView, st: &blksim::course::link::LinkState) {
    let Some(step) = LinkedStep::of(st) else { return };
    s.act_then(Command::LinkedStep(step), |s, r| {
        if r == Reply::StepSetUp(true) {
            sync_fragment(s);
        }
    });
}

/// The reader's prediction: the option picked, whether its A/B run started, and whether the
/// answer shows.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Prediction {
    pub predicted: Option<usize>,
    pub predict_ran: bool,
    /// Whether the answer shows (Reveal was pressed on this page).
    pub revealed: bool,
}

/// Goes to stop `i` (a step or the prediction); the notes window follows the page's stop
/// (`presenter::use_notes_reply`).
pub(super) fn go_callback(session: &SharedSession, page: &PageDispatch) -> Callback<usize> {
    let (session, page) = (session.clone(), page.clone());
    Callback::from(move |i: usize| {
        let mut s = session.borrow_mut();
        apply_step(&mut s, i);
        drop(s);
        page.dispatch(PageAction::SetStep(Some(i)));
    })
}

/// The lesson's stops (its steps, and the prediction where it is asked), the current one
/// marked; each button goes to its stop.
pub(super) fn steps_list(session: &SharedSession, page: &PageDispatch, step: Option<usize>, d: &RunView) -> Html {
    let go = go_callback(session, page);
    let goto_step = move |i: usize| {
        let go = go.clone();
        Callback::from(move |_: MouseEvent| {
            go.emit(i);
            // The step panel, where the stop shows, is beside the diagram at the top of the
            // page; the list is far below it.
            if let Some(el) = gloo::utils::document().query_selector("[data-testid=step-panel]").ok().flatten() {
                el.scroll_into_view_with_bool(true);
            }
        })
    };
    let lesson = &d.lesson;
    html! {
        <ol class="steps">
            { for (0..lesson.stops()).map(|i| {
                let title = lesson.stop_title(i).unwrap_or_default().to_string();
                let class = (lesson.stop(i) == Some(Stop::Predict)).then_some("predict-stop");
                html! {
                    <li class={classes!((Some(i) == step).then_some("current"), class)}>
                        <button onclick={goto_step(i)} aria-current={if Some(i) == step { "step" } else { "false" }}>{ title }</button>
                    </li>
                }
            }) }
        </ol>
    }
}

/// The seeds a prediction's answer is measured over (its rows' largest `seeds`), when it is
/// about a distribution over seeds rather than one run.
fn sweep_seeds(lesson: &blksim::course::lessons::Lesson) -> Option<u64> {
    lesson.predict.as_ref()?.check.iter().filter_map(|r| r.seeds).max().map(u64::from).filter(|&n| n > 1)
}

/// What a prediction's sweep shows so far, in the prediction box (the charts, where the sweep
/// panel draws it, are folded away in presenter mode): each variant's median and slowest run.
fn sweep_summary(s: &SessionView) -> Html {
    let Some(sw) = &s.sweep else { return html! {} };
    if !sw.is_done() {
        return html! {
            <p class="predict-sweep" data-testid="predict-sweep">
                <progress max={sw.total().to_string()} value={sw.runs.len().to_string()}></progress>
                { format!(" {} of {} runs ({} seeds of each variant)", sw.runs.len(), sw.total(), sw.seeds) }
            </p>
        };
    }
    let num = |x: f64| blksim::tools::report::fmt_num(x);
    let lines = sw.variant_names().into_iter().map(|v| {
        let (what, unit, vals) = sw.figure(&v);
        let (_, worst) = crate::sweep::best_and_worst(unit, &vals);
        let text = match (crate::sweep::quantile(&vals, 0.5), worst) {
            (Some(m), Some((x, seed))) if unit != "MB/s" && m > 0.0 => {
                format!("{v}: {what} median {} {unit}, slowest {} {unit} (seed {seed}), {}× the median", num(m), num(x), num(x / m))
            }
            (Some(m), Some((x, seed))) => format!("{v}: {what} median {} {unit}, worst {} {unit} (seed {seed})", num(m), num(x)),
            _ => format!("{v}: no runs"),
        };
        html! { <li>{ text }</li> }
    });
    html! {
        <div class="predict-sweep" data-testid="predict-sweep">
            <p>{ format!("Over {} seeds of each variant:", sw.seeds) }</p>
            <ul>{ for lines }</ul>
        </div>
    }
}

/// Runs the prediction's comparison: the A/B pair, or a sweep of every variant over `seeds`.
fn on_predict_run(session: &SharedSession, page: &PageDispatch, seeds: Option<u64>) -> Callback<MouseEvent> {
    let (session, page) = (session.clone(), page.clone());
    Callback::from(move |_: MouseEvent| {
        let mut s = session.borrow_mut();
        let vs: Vec<String> = s.a.lesson.variants.iter().map(|v| v.name.clone()).collect();
        // One run of each says nothing about a distribution over seeds: the sweep alone.
        if seeds.is_none() {
            s.act(Command::RunComparison);
        }
        // An answer about a distribution over seeds (a tail) is not one run's: the
        // comparison is a seed sweep of every variant, as many seeds as the answer's rows.
        if let Some(n) = seeds {
            if let Err(e) = s.start_sweep_of(&vs, n) {
                s.set_notice(Some(e));
            }
        }
        sync_fragment(&mut s);
        drop(s);
        page.dispatch(PageAction::PredictRan);
        page.dispatch(PageAction::SessionChanged);
        // The comparison starts at the top of the page, above the prediction box.
        if let Some(w) = web_sys::window() {
            w.scroll_to_with_x_and_y(0.0, 0.0);
        }
    })
}

/// The reveal's figures are whole runs; the counters show one second until a run ends: runs
/// both to their end.
fn on_to_end(session: &SharedSession, page: &PageDispatch) -> Callback<MouseEvent> {
    let (session, page) = (session.clone(), page.clone());
    Callback::from(move |_: MouseEvent| {
        let mut s = session.borrow_mut();
        let end = s.b.as_ref().map_or(s.a.end(), |b| b.end().max(s.a.end()));
        s.act(Command::OpenAt(end));
        drop(s);
        page.dispatch(PageAction::SessionChanged);
        // The counters that now show the whole runs sit above the reveal (below the
        // fold on a 720 px projector): bring their label, and the numbers above it, in.
        gloo::timers::callback::Timeout::new(50, || {
            if let Some(el) = gloo::utils::document().query_selector("[data-testid=interval]").ok().flatten() {
                el.scroll_into_view_with_bool(false);
            }
        })
        .forget();
    })
}

fn on_reveal(page: &PageDispatch) -> Callback<MouseEvent> {
    let page = page.clone();
    Callback::from(move |_: MouseEvent| {
        page.dispatch(PageAction::Reveal);
        // Once drawn, the answer scrolls into view: on a 720 px projector it would run past
        // the bottom, out of a clicker's reach. Its top goes just under the question and
        // the answer picked (sticky above it), so the verdict reads first; what is
        // below it then scrolls.
        gloo::timers::callback::Timeout::new(50, || {
            let doc = gloo::utils::document();
            if let Some(el) = doc.query_selector("[data-testid=reveal]").ok().flatten() {
                let head_px = doc.query_selector(".predict-head").ok().flatten().map_or(0.0, |h| h.get_bounding_client_rect().height());
                let _ = el.set_attribute("style", &format!("scroll-margin-top: {:.0}px", head_px + 8.0));
                el.scroll_into_view_with_bool(true);
            }
        })
        .forget();
    })
}

/// What the reveal shows: the verdict on the answer picked, and the answer's claim as the model
/// measures it (lessons/cues.json).
struct Answer<'a> {
    d: &'a RunView,
    pr: &'a Predict,
    picked: Option<usize>,
    /// "Right" only when the model shows the answer too; otherwise the reveal says what the
    /// report saw and what the model shows.
    shown: bool,
    rows: &'a [RowResult],
    seeds: Option<u64>,
    /// Both runs at their end already: nothing left for "Run to the end" to run.
    at_end: bool,
}

fn reveal(a: &Answer, on_to_end: Callback<MouseEvent>) -> Html {
    let (d, pr) = (a.d, a.pr);
    html! {
        <div class="reveal" data-testid="reveal" role="status">
            <p><strong>{ match (a.picked == Some(pr.answer), a.shown) {
                (true, true) => "Right. ",
                (true, false) => "That is what the report saw. ",
                (false, _) => "Not quite. ",
            } }</strong>{ format!("{}: {}", if d.lesson.kind == "primer" { "The answer" } else { "The report's answer" }, pr.options[pr.answer]) }</p>
            // The figures measured first, under the verdict, then why: on a 720 px projector
            // the verdict and its figures show together, and the why scrolls under them.
            if !a.rows.is_empty() {
                { reveal_rows(a, on_to_end) }
            }
            <p class="reveal-why">{ &pr.explanation }</p>
            if !a.shown {
                <p class="dim" data-testid="reveal-uncal">{ "The run on screen shows the model, not the report: \"Status in blkviz\" in the lesson text says which figures differ and why." }</p>
            }
        </div>
    }
}

/// The answer's rows as the model measures them, and over what runs.
fn reveal_rows(a: &Answer, on_to_end: Callback<MouseEvent>) -> Html {
    let (seeds, at_end) = (a.seeds, a.at_end);
    html! {
        <>
            <ul class="reveal-rows" data-testid="reveal-rows">
                { for a.rows.iter().map(|r| html! {
                    <li class={classes!((!r.holds).then_some("misses"))} title={format!("measured: {}", r.how)}>
                        { format!("{}: this model shows {} {}", r.name, crate::format::sig(r.measured), r.unit) }
                        { r.report.map(|x| format!(" (the report: {} {})", crate::format::sig(x), r.unit)).unwrap_or_default() }
                        if !r.holds { { format!(", not the answer's {}–{}: {}.", crate::format::sig(r.band.lo), crate::format::sig(r.band.hi), r.why_missed) } }
                        if !r.caveat.is_empty() { { format!(" (a caveat: {})", r.caveat_line()) } }
                    </li>
                }) }
            </ul>
            // Not the counters' window: a student comparing the two should
            // know why they differ while the run plays.
            <p class="dim" data-testid="reveal-window">{
                if seeds.is_some() {
                    "Each figure is over whole runs at seeds 1 and up, as blksim sweep measures it (the fidelity page says how)."
                } else {
                    "Each figure is over a whole run at seed 1, as blksim run measures it (the fidelity page says how). The counters show one second at a time, and these figures once the run reaches its end."
                }
            }
            if seeds.is_none() && a.d.seed != 1 {
                { format!(" These runs are at seed {}: their whole runs differ from these figures (the seed box sets 1).", a.d.seed) }
            }
            if seeds.is_none() {
                { " " }
                <button class="reveal-to-end" data-testid="reveal-to-end" disabled={at_end} onclick={on_to_end}>{ if at_end { "At the end" } else { "Run to the end" } }</button>
            }
            </p>
        </>
    }
}

/// Predict, then reveal: pick an option, run the lesson's A/B comparison, then see the answer.
pub(super) fn predict_box(session: &SharedSession, page: &PageDispatch, d: &RunView, prediction: Prediction) -> Option<Html> {
    let Prediction { predicted, predict_ran, revealed } = prediction;
    let seeds = sweep_seeds(&d.lesson);
    let cues = crate::content::cues_for(&d.lesson.id);
    let shown = cues.as_ref().is_none_or(|c| c.answer_shown());
    let rows = cues.map(|c| c.predict).unwrap_or_default();
    // A prediction about seeds reveals once its sweep is done (its figures are the answer).
    let sweeping = seeds.is_some() && session.borrow().sweep.as_ref().is_some_and(|sw| !sw.is_done());
    let at_end = {
        let s = session.borrow();
        s.a.is_done() && s.b.as_ref().is_none_or(|b| b.is_done())
    };
    d.lesson.predict.as_ref().map(|pr| {
        let options = pr.options.iter().enumerate().map(|(i, o)| {
            let onchange = {
                let page = page.clone();
                Callback::from(move |_: Event| page.dispatch(PageAction::Predict(i)))
            };
            html! {
                <label class="option"><input type="radio" name="predict" value={i.to_string()} checked={predicted == Some(i)} {onchange} />{ o }</label>
            }
        });
        let answer = Answer { d, pr, picked: predicted, shown, rows: &rows, seeds, at_end };
        html! {
            <section class="predict" aria-label="Predict, then reveal">
                <h3>{ "Predict" }</h3>
                // Once revealed, the question and the answer picked stay in view above the
                // report's answer (sticky in the scrolling column): on a 720 px projector the
                // answer is taller than the screen, and the room should see what was picked.
                // The options give way to the one picked, so the two fit together.
                <div class="predict-head" data-revealed={revealed.to_string()}>
                    <p class="predict-q">{ &pr.question }</p>
                    if revealed {
                        <p class="picked" data-testid="picked">{ "Your answer: " }{ predicted.map(|i| pr.options[i].clone()).unwrap_or_default() }</p>
                    }
                </div>
                if !revealed {
                    <div class="options" role="radiogroup">{ for options }</div>
                }
                // Once run, the button says what a click does now: restart the runs still under
                // way, or run them again once they are done; once revealed, Reveal has nothing
                // more to show.
                <button class="predict-run" disabled={predicted.is_none()} onclick={on_predict_run(session, page, seeds)}>{ format!("{} {}", match (predict_ran, sweeping || (seeds.is_none() && !at_end)) {
                    (false, _) => "Run it",
                    (true, true) => "Restart",
                    (true, false) => "Run it again",
                }, seeds.map_or("(A/B)".to_string(), |n| format!("({n} seeds of each variant)"))) }</button>
                <button class="predict-reveal" disabled={!predict_ran || sweeping || revealed} onclick={on_reveal(page)}>{ if revealed { "Revealed" } else { "Reveal" } }</button>
                if !revealed {
                    <span class="hint dim" data-testid="predict-hint">{
                        if predicted.is_none() { "Pick an answer, then run it." } else if !predict_ran { "Run it, then reveal." } else if sweeping { "Reveal once the seeds have run." } else { "" }
                    }</span>
                }
                if predict_ran && seeds.is_some() { { sweep_summary(&session.borrow()) } }
                if revealed { { reveal(&answer, on_to_end(session, page)) } }
            </section>
        }
    })
}
