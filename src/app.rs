//! The page: header controls, the stack diagram (or two, in the A/B view), the numbers, charts,
//! and the tabs (event log, knobs). One `Session` owns the simulations; an animation-frame hook
//! drives it.

use crate::components::charts::{draw_latency, draw_timeseries, RunSeries, CSV_HEADER};
use crate::components::counters::Counters;
use crate::components::diagram::{draw, layout_for, Diagram};
use crate::components::event_log::EventLog;
use crate::components::knobs::KnobPanel;
use crate::driver::{SimDriver, SPEED_MAX, SPEED_MIN};
use crate::export::{download_canvas_png, download_text};
use crate::format;
use crate::hooks::use_animation_frame;
use crate::session::Session;
use gloo::events::{EventListener, EventListenerOptions};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement, HtmlInputElement, HtmlSelectElement, KeyboardEvent};
use yew::prelude::*;

pub const DEFAULT_LESSON: &str = "anatomy-of-a-request";

/// The speed slider: 10 steps per decade from 1 µs/s (0) to 1 s/s (60).
pub fn slider_to_speed(v: f64) -> f64 {
    (10f64.powf(v / 10.0 - 6.0)).clamp(SPEED_MIN, SPEED_MAX)
}

pub fn speed_to_slider(s: f64) -> f64 {
    ((s.log10() + 6.0) * 10.0).round().clamp(0.0, 60.0)
}

fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

fn is_editable(target: Option<web_sys::EventTarget>) -> bool {
    target
        .and_then(|t| t.dyn_into::<HtmlElement>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA" | "BUTTON"))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tab {
    Log,
    Knobs,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Theme {
    Auto,
    Light,
    Dark,
}

/// Shared with the frame loop and the event handlers.
pub type SharedSession = Rc<RefCell<Session>>;

fn live_line(d: &SimDriver, dt: f64) -> String {
    let t = d.sim.totals();
    let status = if d.sim.is_finished() {
        "all jobs done".to_string()
    } else if d.playing && dt > 0.0 && d.achieved_speed < d.speed * 0.9 {
        format!(
            "running at {} (asked {}): the page keeps up by running fewer events per frame",
            format::speed(d.achieved_speed.max(1e-9)),
            format::speed(d.speed)
        )
    } else {
        String::new()
    };
    format!("t = {}   events {}   requests completed {}   {status}", format::sim_time(d.sim.now().ns()), t.events, t.requests_completed)
}

/// Keeps the URL fragment in step with run A, without adding history entries.
fn sync_fragment(d: &SimDriver) {
    if let Some(w) = web_sys::window() {
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&d.fragment()));
        }
    }
}

#[component]
pub fn App() -> Html {
    let session: SharedSession = use_mut_ref(|| {
        let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
        Session::new(SimDriver::from_fragment(&hash, DEFAULT_LESSON))
    });
    let refresh = use_force_update();
    let canvas_a = use_node_ref();
    let canvas_b = use_node_ref();
    let live_a = use_node_ref();
    let live_b = use_node_ref();
    let chart = use_node_ref();
    let latency = use_node_ref();
    let last_ts = use_mut_ref(|| None::<f64>);
    let tab = use_state(|| Tab::Log);
    let theme = use_state(|| Theme::Auto);
    let large = use_state(|| false);
    let knob_msg = use_state(|| None::<String>);

    {
        let (session, refresh, last_ts) = (session.clone(), refresh.clone(), last_ts.clone());
        let (canvas_a, canvas_b, live_a, live_b, chart, latency) =
            (canvas_a.clone(), canvas_b.clone(), live_a.clone(), live_b.clone(), chart.clone(), latency.clone());
        use_animation_frame(move |ts| {
            let work_start = now_ms();
            let dt = last_ts.borrow().map_or(0.0, |last| ts - last);
            *last_ts.borrow_mut() = Some(ts);
            let mut s = session.borrow_mut();
            let changed = s.frame(dt, ts);
            let expanded = s.expanded;
            for (d, canvas, live) in [(Some(&s.a), &canvas_a, &live_a), (s.b.as_ref(), &canvas_b, &live_b)] {
                let Some(d) = d else { continue };
                if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                    draw(&c, d, ts, expanded);
                }
                if let Some(el) = live.cast::<HtmlElement>() {
                    el.set_text_content(Some(&live_line(d, dt)));
                    let _ = el.set_attribute("data-events", &d.sim.totals().events.to_string());
                }
            }
            if s.charts_dirty {
                s.charts_dirty = false;
                let dark = canvas_a.cast::<HtmlElement>().and_then(|c| c.closest("[data-theme=dark]").ok().flatten()).is_some();
                let mut runs = vec![(format!("A {}", s.a.variant), RunSeries::from_history(s.a.sim.history()))];
                let mut lat = vec![(format!("A {}", s.a.variant), s.a.sim.latency_buckets())];
                if let Some(b) = &s.b {
                    runs.push((format!("B {}", b.variant), RunSeries::from_history(b.sim.history())));
                    lat.push((format!("B {}", b.variant), b.sim.latency_buckets()));
                }
                if let Some(c) = chart.cast::<HtmlCanvasElement>() {
                    let r: Vec<(&str, &RunSeries)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
                    let _ = draw_timeseries(&c, &r, dark);
                }
                if let Some(c) = latency.cast::<HtmlCanvasElement>() {
                    let l: Vec<(&str, Vec<(u64, u64)>)> =
                        lat.into_iter().map(|(n, b)| (if n.starts_with('A') { "A" } else { "B" }, b)).collect();
                    let _ = draw_latency(&c, &l, dark);
                }
            }
            drop(s);
            if changed {
                refresh.force_update();
            }
            crate::bench::record_frame_work(now_ms() - work_start);
        });
    }

    // Keyboard: Space play/pause, → one event, Shift+→ 1 ms, R reset.
    {
        let (session, refresh) = (session.clone(), refresh.clone());
        use_effect_with((), move |_| {
            let window = web_sys::window().expect("window");
            // Not passive: Space must not scroll the page.
            let listener = EventListener::new_with_options(&window, "keydown", EventListenerOptions::enable_prevent_default(), move |e| {
                let Some(e) = e.dyn_ref::<KeyboardEvent>() else { return };
                if is_editable(e.target()) || e.ctrl_key() || e.meta_key() || e.alt_key() {
                    return;
                }
                let mut s = session.borrow_mut();
                match e.key().as_str() {
                    " " => {
                        e.prevent_default();
                        s.a.playing = !s.a.playing;
                    }
                    "ArrowRight" if e.shift_key() => {
                        e.prevent_default();
                        s.a.playing = false;
                        s.a.step_ms(now_ms());
                        let t = s.a.sim.now();
                        if let Some(b) = &mut s.b {
                            b.playing = true;
                            b.follow(t, now_ms());
                            b.playing = false;
                        }
                    }
                    "ArrowRight" => {
                        e.prevent_default();
                        s.a.playing = false;
                        s.a.step_event(now_ms());
                    }
                    "r" | "R" => {
                        let _ = s.reset();
                    }
                    _ => return,
                }
                drop(s);
                refresh.force_update();
            });
            move || drop(listener)
        });
    }

    // Event handlers: each takes the session, changes it, and refreshes the page.
    let act = |f: fn(&mut Session)| {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |_: MouseEvent| {
            f(&mut session.borrow_mut());
            refresh.force_update();
        })
    };
    let on_play = act(|s| s.a.playing = !s.a.playing);
    let on_step = act(|s| {
        s.a.playing = false;
        s.a.step_event(now_ms());
    });
    let on_ff = act(|s| {
        s.a.fast_forward(5.0);
        let t = s.a.sim.now();
        if let Some(b) = &mut s.b {
            let secs = (t - b.sim.now()) as f64 / 1e9;
            b.fast_forward(secs);
        }
        s.charts_dirty = true;
    });
    let on_reset = act(|s| {
        let _ = s.reset();
    });
    let on_speed = {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                if let Ok(v) = input.value().parse::<f64>() {
                    session.borrow_mut().a.speed = slider_to_speed(v);
                    refresh.force_update();
                }
            }
        })
    };
    let on_seed = {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                let mut s = session.borrow_mut();
                match input.value().trim().parse::<u64>() {
                    Ok(seed) => s.a.notice = s.reseed(seed).err(),
                    Err(_) => {
                        let kept = s.a.seed;
                        s.a.notice = Some(format!(
                            "seed: '{}' is not a whole number from 0 to {}; kept seed {kept}",
                            blksim::scenario::clip(&input.value()),
                            u64::MAX
                        ));
                        input.set_value(&kept.to_string());
                    }
                }
                sync_fragment(&s.a);
                drop(s);
                refresh.force_update();
            }
        })
    };
    let on_lesson = {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |e: Event| {
            if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
                let mut s = session.borrow_mut();
                match SimDriver::new(&sel.value(), None, Vec::new(), s.a.seed) {
                    Ok(mut n) => {
                        n.speed = s.a.speed;
                        *s = Session::new(n);
                    }
                    Err(e) => s.a.notice = Some(e),
                }
                sync_fragment(&s.a);
                drop(s);
                refresh.force_update();
            }
        })
    };
    let on_ab = {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = session.borrow_mut();
            if s.b.is_some() {
                s.close_b();
            } else {
                // B is the first variant that is not A's.
                let b = s.a.lesson.variants.iter().find(|v| v.name != s.a.variant).map(|v| v.name.clone());
                if let Some(b) = b {
                    s.a.notice = s.open_b(&b).err();
                }
            }
            drop(s);
            refresh.force_update();
        })
    };
    let on_knob = {
        let (session, refresh, knob_msg) = (session.clone(), refresh.clone(), knob_msg.clone());
        Callback::from(move |(k, v): (String, String)| {
            let mut s = session.borrow_mut();
            let r = s.a.apply_knob(&k, &v);
            if let (Ok(_), Some(b)) = (&r, &mut s.b) {
                let _ = b.apply_knob(&k, &v);
            }
            knob_msg.set(Some(r.unwrap_or_else(|e| format!("not applied: {e}"))));
            s.charts_dirty = true;
            sync_fragment(&s.a);
            drop(s);
            refresh.force_update();
        })
    };
    let on_log_pause = {
        let (session, refresh) = (session.clone(), refresh.clone());
        Callback::from(move |_| {
            let mut s = session.borrow_mut();
            s.a.log_paused = !s.a.log_paused;
            drop(s);
            refresh.force_update();
        })
    };
    let on_diagram_click = {
        let (session, refresh, canvas_a) = (session.clone(), refresh.clone(), canvas_a.clone());
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
                refresh.force_update();
            }
        })
    };
    let on_png = {
        let chart = chart.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(c) = chart.cast::<HtmlCanvasElement>() {
                let _ = download_canvas_png("blkviz-chart.png", &c);
            }
        })
    };
    let on_csv = {
        let session = session.clone();
        Callback::from(move |_: MouseEvent| {
            let s = session.borrow();
            let mut csv = CSV_HEADER.to_string();
            csv += &RunSeries::from_history(s.a.sim.history()).to_csv(&format!("A:{}", s.a.variant));
            if let Some(b) = &s.b {
                csv += &RunSeries::from_history(b.sim.history()).to_csv(&format!("B:{}", b.variant));
            }
            let _ = download_text("blkviz-series.csv", "text/csv", &csv);
        })
    };
    let set_theme = |t: Theme| {
        let (theme, session) = (theme.clone(), session.clone());
        Callback::from(move |_: MouseEvent| {
            theme.set(t);
            session.borrow_mut().charts_dirty = true;
        })
    };

    let s = session.borrow();
    let d = &s.a;
    let lesson = d.lesson.clone();
    let variant_buttons = lesson.variants.iter().map(|v| {
        let pressed = v.name == d.variant;
        let onclick = {
            let (session, refresh, name) = (session.clone(), refresh.clone(), v.name.clone());
            Callback::from(move |_| {
                let mut s = session.borrow_mut();
                let seed = s.a.seed;
                s.a.notice = s.a.restart(&name, seed).err();
                if s.b.is_some() {
                    // Keep B in lockstep: both from time 0.
                    let _ = s.reset();
                }
                s.charts_dirty = true;
                sync_fragment(&s.a);
                drop(s);
                refresh.force_update();
            })
        };
        html! { <button class={classes!("variant", pressed.then_some("on"))} aria-pressed={pressed.to_string()} title={v.summary.clone()} {onclick}>{ v.name.clone() }</button> }
    });
    let b_variant_select = s.b.as_ref().map(|b| {
        let on_b = {
            let (session, refresh) = (session.clone(), refresh.clone());
            Callback::from(move |e: Event| {
                if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
                    let mut s = session.borrow_mut();
                    s.a.notice = s.open_b(&sel.value()).err();
                    drop(s);
                    refresh.force_update();
                }
            })
        };
        html! {
            <label class="b-pick">{ "B: " }
                <select aria-label="Variant of run B" onchange={on_b}>
                    { for lesson.variants.iter().map(|v| html! { <option value={v.name.clone()} selected={v.name == b.variant}>{ &v.name }</option> }) }
                </select>
            </label>
        }
    });
    // The same expand/collapse as clicking the diagram, for the keyboard and screen readers.
    let cols = crate::layout::columns(d.topology.devices.len(), None);
    let group_buttons = if cols.iter().any(|c| c.group.is_some()) {
        html! {
            <div class="groups" role="group" aria-label="Device groups">
                <span class="dim">{ "expand: " }</span>
                { for cols.iter().filter_map(|c| c.group.map(|g| (g, c))).map(|(g, c)| {
                    let name = format!("{}–{}", d.topology.devices[c.first].name, d.topology.devices[c.first + c.count - 1].name);
                    let pressed = s.expanded == Some(g);
                    let onclick = {
                        let (session, refresh) = (session.clone(), refresh.clone());
                        Callback::from(move |_| {
                            let mut s = session.borrow_mut();
                            s.expanded = if s.expanded == Some(g) { None } else { Some(g) };
                            drop(s);
                            refresh.force_update();
                        })
                    };
                    html! { <button class="group" aria-pressed={pressed.to_string()} {onclick}>{ name }</button> }
                }) }
            </div>
        }
    } else {
        html! {}
    };
    let gaps = d.sim.model_gaps();
    let summary = |d: &SimDriver| {
        format!(
            "Block stack of {} ({}): {} processes, {} device(s), {} host(s), {} CPU(s). Numbers are in the tables beside it.",
            d.lesson.id,
            d.variant,
            d.topology.processes.len(),
            d.topology.devices.len(),
            d.topology.hosts.len(),
            d.topology.cores
        )
    };
    let theme_attr = match *theme {
        Theme::Auto => "auto",
        Theme::Light => "light",
        Theme::Dark => "dark",
    };
    let log_records = Rc::new(d.log.iter().copied().collect::<Vec<_>>());
    let devices = Rc::new(d.topology.devices.iter().map(|v| (v.name.clone(), v.major, v.minor)).collect::<Vec<_>>());
    let threads = Rc::new(d.sim.threads_view().into_iter().map(|t| (t.pid, t.name)).collect::<Vec<_>>());
    let btt = Rc::new(
        d.btt.iter().map(|(dev, b)| (d.topology.devices.get(*dev as usize).map_or("?".into(), |v| v.name.clone()), *b)).collect::<Vec<_>>(),
    );
    let ab = s.b.is_some();
    html! {
        <div class="app" data-playing={d.playing.to_string()} data-theme={theme_attr} data-ab={ab.to_string()} data-expanded={s.expanded.map_or("none".to_string(), |g| g.to_string())} data-large={large.to_string()}>
            <header class="bar">
                <h1>{ "blkviz" }</h1>
                <label class="lesson-pick">
                    <span class="sr-only">{ "Lesson" }</span>
                    <select aria-label="Lesson" onchange={on_lesson}>
                        { for blksim::lessons::all().iter().map(|l| html! {
                            <option value={l.id.clone()} selected={l.id == lesson.id}>{ &l.title }</option>
                        }) }
                    </select>
                </label>
                <div class="variants" role="group" aria-label={if ab { "Variant of run A" } else { "Variant" }}>{ for variant_buttons }</div>
                <button class={classes!("ab", ab.then_some("on"))} aria-pressed={ab.to_string()} onclick={on_ab} title="Run two variants side by side, in lockstep">{ "A/B" }</button>
                { for b_variant_select }
                <button class="play" aria-label={if d.playing { "Pause" } else { "Play" }} aria-pressed={d.playing.to_string()} onclick={on_play} title="Space">
                    { if d.playing { "❚❚ Pause" } else { "▶ Play" } }
                </button>
                <button aria-label="Step one event" title="→ (Shift+→: 1 ms)" onclick={on_step}>{ "Step →" }</button>
                <button aria-label="Restart from time 0" title="R" onclick={on_reset}>{ "Reset" }</button>
                <button aria-label="Fast forward 5 simulated seconds, towards steady state" title="Runs 5 simulated seconds without animating" onclick={on_ff}>{ "Skip 5 s ⇥" }</button>
                <label class="speed">
                    <span>{ "speed" }</span>
                    <input type="range" min="0" max="60" step="1" aria-label="Speed (simulated time per second)" value={speed_to_slider(d.speed).to_string()} oninput={on_speed} />
                    <output>{ format::speed(d.speed) }</output>
                </label>
                <label class="seed">
                    <span>{ "seed" }</span>
                    <input type="text" inputmode="numeric" aria-label="Seed" value={d.seed.to_string()} onchange={on_seed} size="6" />
                </label>
                <button aria-pressed={large.to_string()} title="Large type, for a projector" onclick={{ let large = large.clone(); Callback::from(move |_| large.set(!*large)) }}>{ "Large type" }</button>
                <div class="themes" role="group" aria-label="Theme">
                    <button aria-pressed={(*theme == Theme::Auto).to_string()} onclick={set_theme(Theme::Auto)}>{ "auto" }</button>
                    <button aria-pressed={(*theme == Theme::Light).to_string()} onclick={set_theme(Theme::Light)}>{ "light" }</button>
                    <button aria-pressed={(*theme == Theme::Dark).to_string()} onclick={set_theme(Theme::Dark)}>{ "dark" }</button>
                </div>
            </header>
            if let Some(n) = &d.notice {
                <p class="notice" role="alert">{ n }</p>
            }
            <p class="question">{ &lesson.question }</p>
            <main class="zones">
                <section class={classes!("stack", ab.then_some("split"))} aria-label="The block stack">
                    <Diagram canvas={canvas_a.clone()} summary={summary(d)} label={if ab { format!("A · {}", d.variant) } else { String::new() }} onclick_x={on_diagram_click.clone()} />
                    <p class="live" ref={live_a.clone()} data-testid="live" aria-live="off"></p>
                    { group_buttons }
                    if let Some(b) = &s.b {
                        <Diagram canvas={canvas_b.clone()} summary={summary(b)} label={format!("B · {}", b.variant)} onclick_x={on_diagram_click.clone()} />
                        <p class="live" ref={live_b.clone()} data-testid="live-b" aria-live="off"></p>
                    }
                </section>
                <div class="numbers">
                    <Counters interval={d.interval.clone()} partial={d.interval_partial} top={d.top.clone()}
                        b={s.b.as_ref().and_then(|b| b.interval.clone())} b_top={s.b.as_ref().map(|b| b.top.clone()).unwrap_or_default()} />
                    <section class="charts" aria-label="Charts">
                        <canvas ref={chart.clone()} class="chart" data-testid="chart" role="img" aria-label="Throughput, context switches and CPU over simulated time"></canvas>
                        <canvas ref={latency.clone()} class="latency" role="img" aria-label="I/O latency histogram"></canvas>
                        <div class="chart-actions">
                            <button onclick={on_png}>{ "Export PNG" }</button>
                            <button onclick={on_csv}>{ "Export CSV" }</button>
                        </div>
                    </section>
                </div>
            </main>
            <nav class="tabs" role="tablist" aria-label="Details">
                <button role="tab" aria-selected={(*tab == Tab::Log).to_string()} onclick={{ let tab = tab.clone(); Callback::from(move |_| tab.set(Tab::Log)) }}>{ "Event log (blkparse) · btt" }</button>
                <button role="tab" aria-selected={(*tab == Tab::Knobs).to_string()} onclick={{ let tab = tab.clone(); Callback::from(move |_| tab.set(Tab::Knobs)) }}>{ "Knobs" }</button>
            </nav>
            <div class="tab-body" role="tabpanel">
                if *tab == Tab::Log {
                    <EventLog records={log_records} devices={devices} threads={threads} btt={btt} paused={d.log_paused} dropped={d.dropped} on_pause={on_log_pause} />
                } else {
                    <KnobPanel scenario={d.sim.config().scenario.clone()} on_apply={on_knob} message={(*knob_msg).clone()} />
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
