//! A lesson (or the sandbox): header controls, the stack diagram (or two, in the A/B view), the
//! numbers, charts, and the tabs (lesson text, event log, knobs). One `SessionView` runs the
//! simulations and keeps the page's view of them; an animation-frame hook drives it. Presenter mode hides the prose.
//!
//! This file holds the page's layout, and wires the parts beside it together: `state` (the
//! page's own state, one reducer that every part dispatches its actions to, the session's
//! changes among them), `controls` (run controls, keyboard), `steps` (steps, predict-then-reveal), `presenter`,
//! `prefs` (themes), `link` (the URL), `nav`, `variants`, `stack`, `charts`, `frame` (the
//! animation-frame loop), `tabs` and `sandbox`.

mod charts;
mod controls;
mod frame;
mod link;
mod nav;
mod prefs;
mod presenter;
mod sandbox;
mod shortcuts;
mod stack;
mod state;
mod step_panel;
mod steps;
mod sweep;
mod tabs;
mod timeline;
mod variants;

use crate::components::counters::Counters;
use crate::components::diagram::Diagram;
use crate::components::knobs::KnobPanel;
use crate::components::legend::Legend;
use crate::markdown;
use crate::view::SessionView;
use blksim::course::link::LinkState;
pub use controls::{slider_to_speed, speed_to_slider};
use frame::FrameTargets;
use link::{current_hash, state_fragment};
use state::{Page, PageAction, PageDispatch, PageState};
use std::cell::RefCell;
use std::rc::Rc;
use tabs::Tab;
use yew::prelude::*;

/// Wall-clock milliseconds (`performance.now()`), for the frame loop and the run controls.
fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// Shared with the frame loop and the event handlers.
pub type SharedSession = Rc<RefCell<SessionView>>;

#[derive(Properties, PartialEq)]
pub struct LessonPageProps {
    /// The lesson id, or "sandbox".
    pub id: String,
}

/// A new stop opens at its top: in presenter mode the numbers column scrolls on its own, and a
/// revealed answer leaves it scrolled down, with the next step's title out of view.
#[hook]
fn use_stop_opens_at_top(step: Option<usize>) {
    use_effect_with(step, |_| {
        if let Some(el) = gloo::utils::document().query_selector(".numbers").ok().flatten() {
            el.set_scroll_top(0);
        }
    });
}

/// The stop shown goes into the address (a reload or a bookmark returns to it).
#[hook]
fn use_stop_in_address(session: SharedSession, step: Option<usize>) {
    use_effect_with(step, move |stop| link::note_stop(&mut session.borrow_mut(), *stop));
}

/// With reduced motion a run does not start by itself: the viewer presses Play.
#[hook]
fn use_paused_for_reduced_motion(session: SharedSession, page: PageDispatch, reduced: bool) {
    use_effect_with((), move |_| {
        if reduced {
            session.borrow_mut().act(crate::protocol::Command::Pause);
            page.dispatch(PageAction::SessionChanged);
        }
    });
}

/// A link with parts the page could not use: the address shows the link as applied.
#[hook]
fn use_clean_address(session: SharedSession) {
    use_effect_with((), move |_| link::replace_address_with_clean_link(&mut session.borrow_mut()));
}

/// A link that names a step but no run of its own (no variant or B: written by hand, or a
/// lesson plan's "open step 2", perhaps at a t) sets that step up, as PageDown would; a copied
/// link carries its run's exact state, which stands.
#[hook]
fn use_linked_step(session: SharedSession, page: PageDispatch, view: Rc<Option<LinkState>>) {
    use_effect_with((), move |_| {
        if let Some(st) = view.as_ref().as_ref() {
            steps::apply_linked_step(&mut session.borrow_mut(), st);
            page.dispatch(PageAction::SessionChanged);
        }
    });
}

/// A sweep started elsewhere (the prediction's, of as many seeds as its answer's rows) puts its
/// count in the box: "Run 50 seeds" under a table of 200 would read as the table's button.
#[hook]
fn use_sweep_count_follows(session: &SharedSession, page: &Page) {
    let sweep_n = session.borrow().sweep.as_ref().map(|sw| sw.seeds);
    let (held, page) = (page.sweep_seeds.1, page.dispatcher());
    use_effect_with(sweep_n, move |n| {
        if let Some(n) = *n {
            if held != Some(n) {
                page.dispatch(PageAction::SetSweepSeeds { text: n.to_string(), count: Some(n), msg: None });
            }
        }
    });
}

/// Presenter mode switched on from the page closes the legend: it would lie over the diagrams
/// (in a primer's A/B step, over the whole of B).
#[hook]
fn use_legend_closes_for_presenter(page: &Page) {
    let (legend_open, page_dispatch) = (page.legend_open, page.dispatcher());
    use_effect_with(page.presenter, move |on| {
        if *on && legend_open {
            page_dispatch.dispatch(PageAction::SetLegendOpen(false));
        }
    });
}

/// Opened by its toggle, the legend is brought into view: at 1280 x 720 it opens under the
/// fold, where the toggle would seem to do nothing. (Not when it shows by itself on arrival.)
#[hook]
fn use_legend_into_view(legend_open: bool) {
    let arrived = use_mut_ref(|| true);
    use_effect_with(legend_open, move |open| {
        if std::mem::replace(&mut *arrived.borrow_mut(), false) || !*open {
            return;
        }
        if let Some(el) = gloo::utils::document().query_selector("[data-testid=legend]").ok().flatten() {
            let below =
                el.get_bounding_client_rect().bottom() > gloo::utils::window().inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
            if below {
                el.scroll_into_view_with_bool(false);
            }
        }
    });
}

#[component]
pub fn LessonPage(props: &LessonPageProps) -> Html {
    let session: SharedSession = use_mut_ref(|| {
        let hash = current_hash();
        let mut s = SessionView::from_fragment(&hash, &props.id);
        link::take_carried_notice(&mut s, &hash);
        s
    });
    let targets = frame::use_frame_targets();
    let view = use_memo((), |_| LinkState::decode_lenient(&current_hash()).ok().map(|(st, _)| st));
    let ui: Page = {
        let (id, view) = (props.id.clone(), view.clone());
        use_reducer(move || PageState::new(&id, &view))
    };
    let page = ui.dispatcher();
    use_stop_opens_at_top(ui.step);
    use_stop_in_address(session.clone(), ui.step);
    use_paused_for_reduced_motion(session.clone(), page.clone(), ui.motion.reduced());
    prefs::use_stored_prefs(ui.presenter, ui.large, ui.theme);
    use_clean_address(session.clone());
    use_linked_step(session.clone(), page.clone(), view.clone());
    use_sweep_count_follows(&session, &ui);
    frame::use_frame_loop(session.clone(), page.clone(), ui.tab == Tab::Log, targets.clone());
    controls::use_blur_after_mouse_click();
    shortcuts::use_sheet_focus(ui.shortcuts_open);
    use_legend_closes_for_presenter(&ui);
    use_legend_into_view(ui.legend_open);
    controls::use_keyboard_shortcuts(session.clone(), &ui);
    link::use_back_forward(session.clone(), page.clone(), props.id.clone());
    let on_seed = controls::use_seed_handler(session.clone(), page.clone());
    let knobs_to_b = ui.knobs_of_b && session.borrow().b.is_some();
    let on_knob = tabs::use_knob_handler(session.clone(), page.clone(), knobs_to_b);
    presenter::use_notes_reply(props.id.clone(), ui.step);
    {
        let s = session.borrow();
        let (a, b) = (s.a.variant.clone(), s.b.as_ref().map(|b| b.variant.clone()));
        drop(s);
        variants::use_b_picker_shows_b(a, b);
    }
    let s = session.borrow();
    let parts = Parts { id: &props.id, session: &session, page: &page, ui: &ui, targets: &targets, s: &s };
    page_html(&parts, on_seed, on_knob)
}

/// What the page's parts render from.
struct Parts<'a> {
    id: &'a str,
    session: &'a SharedSession,
    page: &'a PageDispatch,
    ui: &'a Page,
    targets: &'a FrameTargets,
    s: &'a SessionView,
}

impl Parts<'_> {
    fn is_sandbox(&self) -> bool {
        self.s.a.lesson.id == blksim::course::lessons::SANDBOX
    }

    /// Whether the stop shown is the lesson's prediction.
    fn at_predict(&self) -> bool {
        let lesson = &self.s.a.lesson;
        self.ui.step.is_some_and(|i| lesson.stop(i) == Some(blksim::course::lessons::Stop::Predict))
    }

    /// The step shown, if the stop is a step.
    fn cur_step(&self) -> Option<&blksim::course::lessons::Step> {
        let lesson = &self.s.a.lesson;
        self.ui.step.and_then(|i| match lesson.stop(i) {
            Some(blksim::course::lessons::Stop::Step(k)) => Some(&lesson.steps[k]),
            _ => None,
        })
    }

    /// The iostat -x columns presenter mode shows: the ones the stop names, or a compact set.
    fn iostat_cols(&self) -> Vec<String> {
        use blksim::course::lessons::IOSTAT_COLS_PRESENTER;
        let named = match (self.cur_step(), &self.s.a.lesson.predict) {
            (Some(st), _) => st.iostat_cols.clone(),
            (None, Some(pr)) if self.at_predict() => pr.iostat_cols.clone(),
            _ => Vec::new(),
        };
        if named.is_empty() {
            IOSTAT_COLS_PRESENTER.iter().map(|c| c.to_string()).collect()
        } else {
            named
        }
    }

    /// The tables the stop names (presenter mode keeps them in view and folds the others
    /// away). Before the first step (the lesson's opening view), the throughput, vmstat and
    /// iostat -x: what every lesson is about, on one 1280 x 720 screen in presenter mode.
    /// Once the prediction is revealed, the tables its answer names too (the anatomy primer's
    /// answer points at iostat and vmstat, its question at the throughput only).
    fn step_tables(&self) -> Option<String> {
        let named = match (self.cur_step(), &self.s.a.lesson.predict) {
            (Some(st), _) => Some(st.tables.clone()),
            (None, Some(pr)) if self.at_predict() => {
                let mut tables = pr.tables.clone();
                if self.ui.prediction.revealed {
                    for t in ["vmstat", "iostat"] {
                        if pr.explanation.contains(t) && !tables.iter().any(|n| n.starts_with(t)) {
                            tables.push(t.to_string());
                        }
                    }
                }
                Some(tables)
            }
            _ => None,
        };
        named
            .filter(|tables| !tables.is_empty())
            .map(|tables| tables.iter().map(|t| t.split_whitespace().next().unwrap_or("")).collect::<Vec<_>>().join(" "))
            .or_else(|| self.ui.step.is_none().then(|| "numbers vmstat iostat".to_string()))
    }
}

fn page_html(p: &Parts, on_seed: Callback<String>, on_knob: Callback<(String, String)>) -> Html {
    let (s, ui) = (p.s, p.ui);
    let d = &s.a;
    let lesson = &d.lesson;
    let ab = s.b.is_some();
    html! {
        <div class="app" data-presenter={ui.presenter.to_string()} data-lesson={lesson.id.clone()} data-variant={d.variant.clone()} data-playing={d.playing.to_string()} data-theme={ui.theme.name()} data-ab={ab.to_string()} data-expanded={s.expanded.map_or("none".to_string(), |g| g.to_string())} data-large={ui.large.to_string()} data-motion={ui.motion.name()}>
            { header_bar(p, on_seed) }
            { shortcuts::shortcuts_dialog(ui.shortcuts_open, p.page) }
            { notice(p) }
            if let Some((url, _)) = ui.copied.as_ref().filter(|(_, state)| *state == state_fragment(s)) {
                <p class="copied">{ "Link: " }<input class="copied-url" readonly=true value={url.clone()} aria-label="Link to this run" size="80" /></p>
            }
            <div class="question-row">
                <p class="question">{ &lesson.question }</p>
                { kernel_line(d) }
            </div>
            if let Some(board) = crate::content::board_summary(&lesson.id).filter(|b| !b.reproduced) {
                <p class="uncal-note" data-testid="uncal-note">{ format!("The question quotes the report. blkviz {}: \"Status in blkviz\" in the lesson text shows each figure beside the report's, and why a miss misses.", board.status()) }</p>
            }
            <main class="zones">
                { stack_zone(p) }
                { numbers(p, &on_knob) }
            </main>
            { tabs::tab_buttons(ui, p.is_sandbox()) }
            { tab_body(p, on_knob) }
            if !d.shown.model_gaps.is_empty() {
                <footer class="gaps">
                    <strong>{ "Not modelled yet" }</strong>{ " (the numbers do not show these):" }
                    <ul>{ for d.shown.model_gaps.iter().map(|g| html! { <li>{ g }</li> }) }</ul>
                </footer>
            }
        </div>
    }
}

/// The scenario's kernel, and on demand the era rules it runs (what the worker sent).
fn kernel_line(d: &crate::view::RunView) -> Html {
    let label = d.shown.scenario.kernel.as_ref().map_or_else(|| "kernel: not set".to_string(), |k| format!("kernel {k}"));
    html! {
        <details class="era" data-testid="era">
            <summary>{ label }</summary>
            <p class="dim">{ "The era rules this run follows: the kernel's, or a knob's own where it is set (docs: Kernel eras)." }</p>
            <ul>{ for d.shown.era.iter().map(|(k, v)| html! { <li><code>{ format!("{k} = {v}") }</code></li> }) }</ul>
        </details>
    }
}

/// The header: lesson picker, variants, run controls and the display toggles.
fn header_bar(p: &Parts, on_seed: Callback<String>) -> Html {
    let (session, page, s, ui) = (p.session, p.page, p.s, p.ui);
    let d = &s.a;
    let all_done = d.is_done() && s.b.as_ref().is_none_or(|b| b.is_done());
    let on_copy = link::on_copy(session, page, (ui.step, ui.presenter, ui.large));
    html! {
        <header class="bar">
            <h1><a href="#/" class="home-link" title="All lessons">{ "blkviz" }</a></h1>
            { nav::lesson_picker(&d.lesson.id) }
            { variants::variant_controls(session, page, s) }
            { controls::run_controls(session, page, d, all_done, on_seed) }
            <button class="toggle" aria-pressed={ui.large.to_string()} title="Large type, for a projector" onclick={{ let (page, large) = (page.clone(), ui.large); Callback::from(move |_| page.dispatch(PageAction::SetLarge(!large))) }}>{ "Large type" }</button>
            { presenter::presenter_buttons(ui.presenter, page, p.id, ui.step) }
            { prefs::motion_button(ui.motion, page) }
            { shortcuts::shortcuts_button(ui.shortcuts_open, page) }
            <button class="toggle legend-toggle" aria-pressed={ui.legend_open.to_string()} title="What the diagram's marks and colours mean" onclick={{ let (page, open) = (page.clone(), ui.legend_open); Callback::from(move |_| page.dispatch(PageAction::SetLegendOpen(!open))) }}>{ "Legend" }</button>
            <button class="copy-link" onclick={on_copy} aria-label="Copy link" title="Copy a link to exactly this run, at this simulated time"><span class="long">{ "Copy link" }</span><span class="short">{ "Link" }</span></button>
            { nav::prev_next_links(&d.lesson.id) }
            { prefs::theme_buttons(ui.theme, page, session) }
        </header>
    }
}

/// A notice of several parts (a link wrong in several places): its first line, then one item
/// per part. Read, it can be closed: on a 720 px projector it takes rows the diagram needs.
fn notice(p: &Parts) -> Html {
    let Some(n) = &p.s.a.notice else { return html! {} };
    let on_close = {
        let (session, page) = (p.session.clone(), p.page.clone());
        Callback::from(move |_: MouseEvent| {
            session.borrow_mut().set_notice(None);
            page.dispatch(PageAction::SessionChanged);
        })
    };
    html! {
        <div class="notice" role="alert">
            <button class="notice-close" title="Close this message" aria-label="Close this message" onclick={on_close}>{ "×" }</button>
            if let Some((head, parts)) = n.split_once('\n') {
                <p>{ head }</p><ul>{ for parts.lines().map(|p| html! { <li>{ p }</li> }) }</ul>
            } else {
                <p>{ n }</p>
            }
        </div>
    }
}

/// The stack: A's diagram (and B's in the A/B view), their live lines, the group buttons and
/// the legend.
fn stack_zone(p: &Parts) -> Html {
    let (session, s, t) = (p.session, p.s, p.targets);
    let d = &s.a;
    let ab = s.b.is_some();
    let on_diagram_click = stack::on_diagram_click(session, p.page, &t.canvas_a);
    html! {
        <section class={classes!("stack", ab.then_some("split"))} aria-label="The block stack">
            <Diagram canvas={t.canvas_a.clone()} summary={stack::summary(d)} label={if ab { format!("A · {}", d.variant) } else { String::new() }} onclick_x={on_diagram_click.clone()} onpointer={stack::on_diagram_pointer(session, false)} />
            if let Some(b) = &s.b {
                // B's diagram right under A's, and both runs' lines under B's (each says whose
                // it is): a line between the two would push B down by its height.
                <Diagram canvas={t.canvas_b.clone()} summary={stack::summary(b)} label={format!("B · {}", b.variant)} onclick_x={on_diagram_click.clone()} onpointer={stack::on_diagram_pointer(session, true)} />
                <p class="live" ref={t.live_a.clone()} data-testid="live" data-run="A" aria-live="off"></p>
                <p class="live" ref={t.live_b.clone()} data-testid="live-b" data-run="B" aria-live="off"></p>
            } else {
                <p class="live" ref={t.live_a.clone()} data-testid="live" aria-live="off"></p>
            }
            // The groups' buttons expand a group in both runs: under B, not between A and B,
            // where they would push B down.
            { stack::group_buttons(session, p.page, s) }
            // Under both runs: between them it would push B below the fold.
            if p.ui.legend_open { <Legend /> }
        </section>
    }
}

/// The numbers column: the step panel (or the sandbox's knobs), the counters and the charts.
fn numbers(p: &Parts, on_knob: &Callback<(String, String)>) -> Html {
    let (session, s, ui) = (p.session, p.s, p.ui);
    let d = &s.a;
    let at_predict = p.at_predict();
    let predict_box = if at_predict { steps::predict_box(session, p.page, d, p.ui.prediction) } else { None };
    html! {
        <div class="numbers" data-tables={p.step_tables()} data-predict={at_predict.to_string()} data-opening={ui.step.is_none().to_string()}>
            if p.is_sandbox() {
                // The sandbox's knobs sit beside the diagram, grouped by layer.
                <div class="sandbox-knobs">
                    { sandbox::knobs_of(p.page, s, ui.knobs_of_b) }
                    { sandbox::knob_panel(s, ui, on_knob.clone()) }
                </div>
            } else {
                { step_panel::step_panel(&d.lesson, ui.step, steps::go_callback(session, p.page), predict_box) }
            }
            { counters(p) }
            { charts_section(p) }
        </div>
    }
}

/// The counters: throughput, vmstat, iostat -x and top, for A and B.
fn counters(p: &Parts) -> Html {
    let (session, page, s) = (p.session, p.page, p.s);
    let d = &s.a;
    let lesson = &d.lesson;
    html! {
        <Counters interval={d.shown.interval.clone()} partial={d.shown.interval_partial} whole={d.shown.interval_whole} top={d.shown.top.clone()}
            b={s.b.as_ref().and_then(|b| b.shown.interval.clone())} b_top={s.b.as_ref().map(|b| b.shown.top.clone()).unwrap_or_default()}
            b_partial={s.b.as_ref().is_some_and(|b| b.shown.interval_partial)} b_whole={s.b.as_ref().is_some_and(|b| b.shown.interval_whole)}
            warmup_s={lesson.warmup_s}
            done_s={d.shown.finished_at.map(|t| t.as_secs_f64())}
            b_done_s={s.b.as_ref().and_then(|b| b.shown.finished_at).map(|t| t.as_secs_f64())}
            jobs={d.shown.jobs.clone()} b_jobs={s.b.as_ref().map(|b| b.shown.jobs.clone())}
            jumping_to_s={d.catch_up_to.map(|t| t.as_secs_f64())}
            on_skip_warmup={lesson.warmup_s.map(|w| controls::act_on(session, page, move |s| {
                s.act(crate::protocol::Command::JumpTo(blksim::SimTime::from_secs_f64(w)));
                // The button goes with the banner: the keyboard's focus goes to the
                // header's Play, which says "Stop · to" while the jump runs (one
                // element, relabelled) and is Pause again after it.
                shortcuts::focus_first("button.play");
            }))}
            iostat_rows={p.cur_step().map(|st| st.iostat_rows).unwrap_or_default()}
            iostat_cols={p.ui.presenter.then(|| p.iostat_cols())}
            max_devices={if p.ui.presenter { 4 } else { 12 }}
            page_cache={!d.shown.scenario.workload.direct || s.b.as_ref().is_some_and(|b| !b.shown.scenario.workload.direct)}
            buffered_writes={writes_buffered(&d.shown.scenario) || s.b.as_ref().is_some_and(|b| writes_buffered(&b.shown.scenario))} />
    }
}

/// The charts: throughput, latency, the timeline, the sweep and the exports.
fn charts_section(p: &Parts) -> Html {
    let (session, page, s, t) = (p.session, p.page, p.s, p.targets);
    html! {
        <section class="charts" aria-label="Charts">
            <canvas ref={t.chart.clone()} class="chart" data-testid="chart" role="img" aria-label="Throughput, context switches and CPU over simulated time"></canvas>
            { charts::latency_view_buttons(session, page, s.latency_over_time) }
            <canvas ref={t.latency.clone()} class="latency" role="img" data-view={if s.latency_over_time { "over-time" } else { "histogram" }}
                aria-label={if s.latency_over_time { "Latency heat map of the jobs' I/Os: each simulated second across, latency up in powers of two, pale yellow for few I/Os to deep red for many" } else { "Latency histogram of the jobs' I/Os (fio clat: each read, write or io, not each request)" }}></canvas>
            if !s.latency_over_time && s.b.is_none() { { crate::components::job_rows::job_legend(&s.a.shown.jobs) } }
            { timeline::timeline_bar(session, page) }
            { sweep::sweep_panel(session, page, p.ui) }
            <div class="chart-actions">
                <button onclick={charts::on_png(session, &t.chart)}>{ "Export PNG" }</button>
                <button onclick={charts::on_csv(session)}>{ "Export CSV" }</button>
            </div>
        </section>
    }
}

/// The tab shown: the lesson text (held back by the prediction), the event log or the knobs.
fn tab_body(p: &Parts, on_knob: Callback<(String, String)>) -> Html {
    let (session, page, s, ui) = (p.session, p.page, p.s, p.ui);
    let d = &s.a;
    let lesson = &d.lesson;
    html! {
        <div class="tab-body" role="tabpanel">
            if ui.tab == Tab::Lesson {
                <div class="lesson-tab">
                    if p.is_sandbox() {
                        { sandbox::job_file_box(session, page, d, ui) }
                        <article class="lesson-text">{ markdown::lesson_body(&lesson.id) }</article>
                    } else {
                        <div class="lesson-side">
                            { steps::steps_list(session, page, ui.step, d) }
                        </div>
                        <article class="lesson-text">
                            if lesson.predict.is_some() && !ui.prediction.revealed && !ui.text_shown {
                                { markdown::lesson_heading(&lesson.id) }
                                { tabs::text_gate(lesson, page, steps::go_callback(session, page)) }
                            } else {
                                { markdown::lesson_body(&lesson.id) }
                            }
                        </article>
                    }
                </div>
            } else if ui.tab == Tab::Log {
                { tabs::event_log(session, page, d, s.b.is_some()) }
            } else {
                <KnobPanel scenario={d.shown.scenario.clone()} also={s.b.as_ref().map(|b| b.shown.scenario.clone())} on_apply={on_knob} message={tabs::KnobMessage::for_run(&ui.knob_msg, d)} rejected={ui.knob_rejected.clone()} live_writes={tabs::live_write_lines(d)} />
            }
        </div>
    }
}

/// A job writes through the page cache: the jobs' MB/s is then the page cache's, and what the
/// disks take is the figure that shows the stack.
fn writes_buffered(s: &blksim::scenario::Scenario) -> bool {
    s.all_jobs().any(|w| !w.direct && (w.rw.is_write() || w.rw.is_mixed()))
}
