//! A lesson (or the sandbox): header controls, the stack diagram (or two, in the A/B view), the
//! numbers, charts, and the tabs (lesson text, event log, knobs). One `SessionView` runs the
//! simulations and keeps the page's view of them; an animation-frame hook drives it. Presenter mode hides the prose.
//!
//! This file holds the page's state and its layout, and wires the parts beside it together:
//! `controls` (run controls, keyboard), `steps` (steps, predict-then-reveal), `presenter`,
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
pub use controls::{slider_to_speed, speed_to_slider};
use frame::FrameTargets;
use link::{current_hash, state_fragment};
use prefs::Theme;
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

#[component]
pub fn LessonPage(props: &LessonPageProps) -> Html {
    let session: SharedSession = use_mut_ref(|| {
        let hash = current_hash();
        let mut s = SessionView::from_fragment(&hash, &props.id);
        link::take_carried_notice(&mut s, &hash);
        s
    });
    let refresh = use_force_update();
    let canvas_a = use_node_ref();
    let canvas_b = use_node_ref();
    let live_a = use_node_ref();
    let live_b = use_node_ref();
    let chart = use_node_ref();
    let latency = use_node_ref();
    let tab = use_state(|| Tab::Lesson);
    // Display preferences (presenter, large type, theme) last for the browser tab: an
    // instructor moving to the next lesson, or reloading, keeps them.
    // A link may carry them (and the step): it wins over the stored preference.
    // Leniently: a link wrong in one part (a typo in its seed) keeps its step, presenter mode
    // and Large type, as it keeps its variant.
    let view = use_memo((), |_| blksim::course::link::LinkState::decode_lenient(&current_hash()).ok().map(|(st, _)| st));
    let presenter =
        use_state(|| view.as_ref().as_ref().and_then(|v| v.presenter).unwrap_or_else(|| prefs::pref("presenter").as_deref() == Some("1")));
    let step = use_state(|| view.as_ref().as_ref().and_then(|v| v.step).map(|n| n as usize - 1));
    // A new stop opens at its top: in presenter mode the numbers column scrolls on its own, and
    // a revealed answer left it scrolled down, the next step's title out of view.
    use_effect_with(*step, |_| {
        if let Some(el) = gloo::utils::document().query_selector(".numbers").ok().flatten() {
            el.set_scroll_top(0);
        }
    });
    let prediction = steps::use_prediction();
    // The stop shown goes into the address (a reload or a bookmark returns to it).
    {
        let session = session.clone();
        use_effect_with(*step, move |stop| link::note_stop(&mut session.borrow_mut(), *stop));
    }
    // The lesson text answers the prediction: it is held back until the answer is revealed, or
    // the reader asks for it (remembered for the browser tab, per lesson).
    let text_shown = {
        let id = props.id.clone();
        use_state(move || prefs::pref(&tabs::text_shown_key(&id)).is_some())
    };
    // The last copied link, with the state it was copied in: it hides once the state changes.
    let copied = use_state(|| None::<(String, String)>);
    let fio_msg = use_state(|| None::<String>);
    // The sandbox's job file as the user is editing it; None shows the run's own workload.
    let fio_text = use_state(|| None::<String>);
    let theme = use_state(|| prefs::pref("theme").and_then(|p| Theme::ALL.into_iter().find(|t| t.name() == p)).unwrap_or(Theme::Auto));
    let large = use_state(|| view.as_ref().as_ref().and_then(|v| v.large).unwrap_or_else(|| prefs::pref("large").as_deref() == Some("1")));
    let motion = use_state(prefs::Motion::stored);
    // With reduced motion a run does not start by itself: the viewer presses Play.
    {
        let (session, refresh) = (session.clone(), refresh.clone());
        let reduced = motion.reduced();
        use_effect_with((), move |_| {
            if reduced {
                session.borrow_mut().act(crate::protocol::Command::Pause);
                refresh.force_update();
            }
        });
    }
    prefs::use_stored_prefs(*presenter, *large, *theme);
    // A link with parts the page could not use: the address shows the link as applied.
    {
        let session = session.clone();
        use_effect_with((), move |_| link::replace_address_with_clean_link(&mut session.borrow_mut()));
    }
    // A link that names a step but no run of its own (no variant or B: written by hand, or a
    // lesson plan's "open step 2", perhaps at a t) sets that step up, as PageDown would; a
    // copied link carries its run's exact state, which stands.
    {
        let (session, refresh, view) = (session.clone(), refresh.clone(), view.clone());
        use_effect_with((), move |_| {
            if let Some(st) = view.as_ref().as_ref() {
                steps::apply_linked_step(&mut session.borrow_mut(), st);
                refresh.force_update();
            }
        });
    }
    // The last knob change: its key, and what it did or why it was refused.
    let knob_msg = use_state(|| None::<tabs::KnobMessage>);
    let knob_rejected = use_state(|| None::<(String, String)>);
    // "Run many seeds": the box's text and the count it holds (None: not one the sweep takes),
    // and why a count was refused.
    let sweep_seeds = use_state(|| ("50".to_string(), Some(50u64)));
    let sweep_msg = use_state(|| None::<String>);
    // A sweep started elsewhere (the prediction's, of as many seeds as its answer's rows) puts
    // its count in the box: "Run 50 seeds" under a table of 200 read as the table's button.
    {
        let sweep_n = session.borrow().sweep.as_ref().map(|sw| sw.seeds);
        let (seeds, msg) = (sweep_seeds.clone(), sweep_msg.clone());
        use_effect_with(sweep_n, move |n| {
            if let Some(n) = *n {
                if seeds.1 != Some(n) {
                    seeds.set((n.to_string(), Some(n)));
                    msg.set(None);
                }
            }
        });
    }

    frame::use_frame_loop(
        session.clone(),
        refresh.clone(),
        *tab == Tab::Log,
        FrameTargets {
            canvas_a: canvas_a.clone(),
            canvas_b: canvas_b.clone(),
            live_a: live_a.clone(),
            live_b: live_b.clone(),
            chart: chart.clone(),
            latency: latency.clone(),
        },
    );
    controls::use_blur_after_mouse_click();
    let shortcuts_open = use_state(|| false);
    shortcuts::use_sheet_focus(*shortcuts_open);
    // The legend shows by itself where a reader meets the diagram first: the sandbox and the
    // primers (not in presenter mode, where it lies over the diagrams); elsewhere the Legend
    // toggle opens it.
    let legend_open = {
        let (id, presenting) = (props.id.clone(), *presenter);
        use_state(move || {
            !presenting && (id == blksim::course::lessons::SANDBOX || blksim::course::lessons::find(&id).is_ok_and(|l| l.kind == "primer"))
        })
    };
    // Presenter mode switched on from the page closes the legend too: it would lie over the
    // diagrams (in a primer's A/B step, over the whole of B).
    {
        let legend_open = legend_open.clone();
        use_effect_with(*presenter, move |on| {
            if *on && *legend_open {
                legend_open.set(false);
            }
        });
    }
    // Opened by its toggle, the legend is brought into view: at 1280 x 720 it opens under the
    // fold, and the toggle seemed to do nothing. (Not when it shows by itself on arrival.)
    {
        let arrived = use_mut_ref(|| true);
        use_effect_with(*legend_open, move |open| {
            if std::mem::replace(&mut *arrived.borrow_mut(), false) || !*open {
                return;
            }
            if let Some(el) = gloo::utils::document().query_selector("[data-testid=legend]").ok().flatten() {
                let below = el.get_bounding_client_rect().bottom()
                    > gloo::utils::window().inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
                if below {
                    el.scroll_into_view_with_bool(false);
                }
            }
        });
    }
    controls::use_keyboard_shortcuts(session.clone(), refresh.clone(), presenter.clone(), step.clone(), shortcuts_open.clone());
    link::use_back_forward(session.clone(), refresh.clone(), props.id.clone(), (presenter.clone(), large.clone(), step.clone()));
    let on_seed = controls::use_seed_handler(session.clone(), refresh.clone());
    let on_knob = tabs::use_knob_handler(session.clone(), refresh.clone(), knob_msg.clone(), knob_rejected.clone());
    let on_diagram_click = stack::on_diagram_click(&session, &refresh, &canvas_a);
    let on_png = charts::on_png(&session, &chart);
    let on_csv = charts::on_csv(&session);
    presenter::use_notes_reply(props.id.clone(), *step);
    let on_copy = link::on_copy(&session, &copied, (*step, *presenter, *large));

    {
        let s = session.borrow();
        let (a, b) = (s.a.variant.clone(), s.b.as_ref().map(|b| b.variant.clone()));
        drop(s);
        variants::use_b_picker_shows_b(a, b);
    }
    let s = session.borrow();
    let d = &s.a;
    let lesson = d.lesson.clone();
    let group_buttons = stack::group_buttons(&session, &refresh, &s);
    let gaps = d.shown.model_gaps.clone();
    let theme_attr = theme.name();
    let ab = s.b.is_some();
    let all_done = d.is_done() && s.b.as_ref().is_none_or(|b| b.is_done());
    let is_sandbox = lesson.id == blksim::course::lessons::SANDBOX;
    let cur_step = step.and_then(|i| match lesson.stop(i) {
        Some(blksim::course::lessons::Stop::Step(k)) => Some((k, lesson.steps[k].clone())),
        _ => None,
    });
    let at_predict = step.is_some_and(|i| lesson.stop(i) == Some(blksim::course::lessons::Stop::Predict));
    let predict_box = if at_predict { steps::predict_box(&session, &refresh, d, &prediction) } else { None };
    let steps_list = steps::steps_list(&session, &step, d);
    let step_panel = step_panel::step_panel(&lesson, *step, steps::go_callback(&session, &step), predict_box);
    // The tables the step names: presenter mode keeps them in view and folds the others away.
    let named = match (&cur_step, &lesson.predict) {
        (Some((_, st)), _) => Some(&st.tables),
        (None, Some(pr)) if at_predict => Some(&pr.tables),
        _ => None,
    };
    // Before the first step (the lesson's opening view), the throughput, vmstat and iostat -x: what
    // every lesson is about, on one 1280 x 720 screen in presenter mode (all the tables did not
    // fit, and iostat, the README's promise, fell below the fold).
    let opening = step.is_none();
    let step_tables = named
        .filter(|tables| !tables.is_empty())
        .map(|tables| tables.iter().map(|t| t.split_whitespace().next().unwrap_or("")).collect::<Vec<_>>().join(" "))
        .or_else(|| opening.then(|| "numbers vmstat iostat".to_string()));
    html! {
        <div class="app" data-presenter={presenter.to_string()} data-lesson={lesson.id.clone()} data-variant={d.variant.clone()} data-playing={d.playing.to_string()} data-theme={theme_attr} data-ab={ab.to_string()} data-expanded={s.expanded.map_or("none".to_string(), |g| g.to_string())} data-large={large.to_string()} data-motion={motion.name()}>
            <header class="bar">
                <h1><a href="#/" class="home-link" title="All lessons">{ "blkviz" }</a></h1>
                { nav::lesson_picker(&lesson.id) }
                { variants::variant_controls(&session, &refresh, &s) }
                { controls::run_controls(&session, &refresh, d, all_done, on_seed) }
                <button class="toggle" aria-pressed={large.to_string()} title="Large type, for a projector" onclick={{ let large = large.clone(); Callback::from(move |_| large.set(!*large)) }}>{ "Large type" }</button>
                { presenter::presenter_buttons(&presenter, &props.id, *step) }
                { prefs::motion_button(&motion) }
                { shortcuts::shortcuts_button(&shortcuts_open) }
                <button class="toggle legend-toggle" aria-pressed={legend_open.to_string()} title="What the diagram's marks and colours mean" onclick={{ let l = legend_open.clone(); Callback::from(move |_| l.set(!*l)) }}>{ "Legend" }</button>
                <button class="copy-link" onclick={on_copy} title="A link to exactly this run, at this simulated time">{ "Copy link" }</button>
                { nav::prev_next_links(&lesson.id) }
                { prefs::theme_buttons(&theme, &session) }
            </header>
            { shortcuts::shortcuts_dialog(&shortcuts_open) }
            if let Some(n) = &d.notice {
                // A notice of several parts (a link wrong in several places): its first line,
                // then one item per part. Read, it can be closed: on a 720 px projector it
                // takes rows the diagram needs.
                <div class="notice" role="alert">
                    <button class="notice-close" title="Close this message" aria-label="Close this message" onclick={{
                        let (session, refresh) = (session.clone(), refresh.clone());
                        Callback::from(move |_: MouseEvent| {
                            session.borrow_mut().set_notice(None);
                            refresh.force_update();
                        })
                    }}>{ "×" }</button>
                    if let Some((head, parts)) = n.split_once('\n') {
                        <p>{ head }</p><ul>{ for parts.lines().map(|p| html! { <li>{ p }</li> }) }</ul>
                    } else {
                        <p>{ n }</p>
                    }
                </div>
            }
            if let Some((url, _)) = (*copied).as_ref().filter(|(_, state)| *state == state_fragment(&s)) {
                <p class="copied">{ "Link: " }<input class="copied-url" readonly=true value={url.clone()} aria-label="Link to this run" size="80" /></p>
            }
            <p class="question">{ &lesson.question }</p>
            if let Some(board) = blksim::course::fidelity::committed_for(&lesson.id).filter(|b| !b.reproduced) {
                <p class="uncal-note" data-testid="uncal-note">{ format!("The question quotes the report. blkviz {}: \"Status in blkviz\" in the lesson text shows each figure beside the report's, and why a miss misses.", board.status()) }</p>
            }
            <main class="zones">
                <section class={classes!("stack", ab.then_some("split"))} aria-label="The block stack">
                    <Diagram canvas={canvas_a.clone()} summary={stack::summary(d)} label={if ab { format!("A · {}", d.variant) } else { String::new() }} onclick_x={on_diagram_click.clone()} onpointer={stack::on_diagram_pointer(&session, false)} />
                    <p class="live" ref={live_a.clone()} data-testid="live" aria-live="off"></p>
                    { group_buttons }
                    if *legend_open { <Legend /> }
                    if let Some(b) = &s.b {
                        <Diagram canvas={canvas_b.clone()} summary={stack::summary(b)} label={format!("B · {}", b.variant)} onclick_x={on_diagram_click.clone()} onpointer={stack::on_diagram_pointer(&session, true)} />
                        <p class="live" ref={live_b.clone()} data-testid="live-b" aria-live="off"></p>
                    }
                </section>
                <div class="numbers" data-tables={step_tables} data-predict={at_predict.to_string()} data-opening={opening.to_string()}>
                    if is_sandbox {
                        // The sandbox's knobs sit beside the diagram, grouped by layer.
                        <div class="sandbox-knobs">
                            <KnobPanel scenario={d.shown.scenario.clone()} on_apply={on_knob.clone()} message={tabs::KnobMessage::for_run(&knob_msg, d)} rejected={(*knob_rejected).clone()} live_writes={tabs::live_write_lines(d)} />
                        </div>
                    } else {
                        { step_panel }
                    }
                    <Counters interval={d.shown.interval.clone()} partial={d.shown.interval_partial} whole={d.shown.interval_whole} top={d.shown.top.clone()}
                        b={s.b.as_ref().and_then(|b| b.shown.interval.clone())} b_top={s.b.as_ref().map(|b| b.shown.top.clone()).unwrap_or_default()}
                        b_partial={s.b.as_ref().is_some_and(|b| b.shown.interval_partial)} b_whole={s.b.as_ref().is_some_and(|b| b.shown.interval_whole)}
                        warmup_s={lesson.warmup_s}
                        done_s={d.shown.finished_at.map(|t| t.as_secs_f64())}
                        b_done_s={s.b.as_ref().and_then(|b| b.shown.finished_at).map(|t| t.as_secs_f64())}
                        jumping_to_s={d.catch_up_to.map(|t| t.as_secs_f64())}
                        on_skip_warmup={lesson.warmup_s.map(|w| controls::act_on(&session, &refresh, move |s| {
                            s.act(crate::protocol::Command::JumpTo(blksim::SimTime::from_secs_f64(w)));
                            // The button goes with the banner: the keyboard's focus goes to the
                            // header's Play, which says "Stop · to" while the jump runs (one
                            // element, relabelled) and is Pause again after it.
                            shortcuts::focus_first("button.play");
                        }))}
                        iostat_rows={cur_step.as_ref().map(|(_, st)| st.iostat_rows).unwrap_or_default()}
                        max_devices={if *presenter { 4 } else { 12 }}
                        page_cache={!d.shown.scenario.workload.direct || s.b.as_ref().is_some_and(|b| !b.shown.scenario.workload.direct)} />
                    <section class="charts" aria-label="Charts">
                        <canvas ref={chart.clone()} class="chart" data-testid="chart" role="img" aria-label="Throughput, context switches and CPU over simulated time"></canvas>
                        { charts::latency_view_buttons(&session, &refresh, s.latency_over_time) }
                        <canvas ref={latency.clone()} class="latency" role="img" data-view={if s.latency_over_time { "over-time" } else { "histogram" }}
                            aria-label={if s.latency_over_time { "Latency heat map of the jobs' I/Os: each simulated second across, latency up in powers of two, pale yellow for few I/Os to deep red for many" } else { "Latency histogram of the jobs' I/Os (fio clat: each read, write or io, not each request)" }}></canvas>
                        { timeline::timeline_bar(&session, &refresh) }
                        { sweep::sweep_panel(&session, &refresh, &sweep_seeds, &sweep_msg) }
                        <div class="chart-actions">
                            <button onclick={on_png}>{ "Export PNG" }</button>
                            <button onclick={on_csv}>{ "Export CSV" }</button>
                        </div>
                    </section>
                </div>
            </main>
            { tabs::tab_buttons(&tab, is_sandbox) }
            <div class="tab-body" role="tabpanel">
                if *tab == Tab::Lesson {
                    <div class="lesson-tab">
                        if is_sandbox {
                            { sandbox::job_file_box(&session, &refresh, d, &fio_text, &fio_msg) }
                            <article class="lesson-text">{ markdown::lesson_body(&lesson.id) }</article>
                        } else {
                            <div class="lesson-side">
                                { steps_list }
                            </div>
                            <article class="lesson-text">
                                if lesson.predict.is_some() && !prediction.is_revealed() && !*text_shown {
                                    { markdown::lesson_heading(&lesson.id) }
                                    { tabs::text_gate(&lesson, &text_shown, steps::go_callback(&session, &step)) }
                                } else {
                                    { markdown::lesson_body(&lesson.id) }
                                }
                            </article>
                        }
                    </div>
                } else if *tab == Tab::Log {
                    { tabs::event_log(&session, &refresh, d, ab) }
                } else {
                    <KnobPanel scenario={d.shown.scenario.clone()} also={s.b.as_ref().map(|b| b.shown.scenario.clone())} on_apply={on_knob} message={tabs::KnobMessage::for_run(&knob_msg, d)} rejected={(*knob_rejected).clone()} live_writes={tabs::live_write_lines(d)} />
                }
            </div>
            if !gaps.is_empty() {
                <footer class="gaps">
                    <strong>{ "Not modelled yet" }</strong>{ " (the numbers do not show these):" }
                    <ul>{ for gaps.iter().map(|g| html! { <li>{ g }</li> }) }</ul>
                </footer>
            }
        </div>
    }
}
