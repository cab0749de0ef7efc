//! The page: header controls, the stack diagram, the numbers. One `SimDriver` owns the
//! simulation; an animation-frame hook drives it.

use crate::components::counters::Counters;
use crate::components::diagram::{draw, Diagram};
use crate::driver::{SimDriver, SPEED_MAX, SPEED_MIN};
use crate::format;
use crate::hooks::use_animation_frame;
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

#[component]
pub fn App() -> Html {
    let driver = use_mut_ref(|| {
        let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
        SimDriver::from_fragment(&hash, DEFAULT_LESSON)
    });
    let refresh = use_force_update();
    let canvas = use_node_ref();
    let live = use_node_ref();
    let last_ts = use_mut_ref(|| None::<f64>);

    {
        let (driver, canvas, live, refresh, last_ts) = (driver.clone(), canvas.clone(), live.clone(), refresh.clone(), last_ts.clone());
        use_animation_frame(move |ts| {
            let dt = last_ts.borrow().map_or(0.0, |last| ts - last);
            *last_ts.borrow_mut() = Some(ts);
            let mut d = driver.borrow_mut();
            let changed = d.frame(dt, ts);
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                draw(&c, &d, ts);
            }
            if let Some(el) = live.cast::<HtmlElement>() {
                let t = d.sim.totals();
                el.set_text_content(Some(&format!(
                    "t = {}   events {}   requests completed {}   {}",
                    format::sim_time(d.sim.now().ns()),
                    t.events,
                    t.requests_completed,
                    if d.sim.is_finished() {
                        "all jobs done".to_string()
                    } else if d.playing && d.achieved_speed < d.speed * 0.9 && dt > 0.0 {
                        format!("running at {} (asked {})", format::speed(d.achieved_speed.max(1e-9)), format::speed(d.speed))
                    } else {
                        String::new()
                    }
                )));
                let _ = el.set_attribute("data-events", &t.events.to_string());
            }
            drop(d);
            if changed {
                refresh.force_update();
            }
        });
    }

    // Keyboard: Space play/pause, → one event, Shift+→ 1 ms, R reset.
    {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        use_effect_with((), move |_| {
            let window = web_sys::window().expect("window");
            // Not passive: Space must not scroll the page.
            let listener = EventListener::new_with_options(&window, "keydown", EventListenerOptions::enable_prevent_default(), move |e| {
                let Some(e) = e.dyn_ref::<KeyboardEvent>() else { return };
                if is_editable(e.target()) || e.ctrl_key() || e.meta_key() || e.alt_key() {
                    return;
                }
                let mut d = driver.borrow_mut();
                match e.key().as_str() {
                    " " => {
                        e.prevent_default();
                        d.playing = !d.playing;
                    }
                    "ArrowRight" if e.shift_key() => {
                        e.prevent_default();
                        d.playing = false;
                        d.step_ms(now_ms());
                    }
                    "ArrowRight" => {
                        e.prevent_default();
                        d.playing = false;
                        d.step_event(now_ms());
                    }
                    "r" | "R" => {
                        let (v, s) = (d.variant.clone(), d.seed);
                        let _ = d.restart(&v, s);
                    }
                    _ => return,
                }
                drop(d);
                refresh.force_update();
            });
            move || drop(listener)
        });
    }

    let d = driver.borrow();
    let lesson = d.lesson.clone();
    let on_play = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |_| {
            let mut d = driver.borrow_mut();
            d.playing = !d.playing;
            drop(d);
            refresh.force_update();
        })
    };
    let on_step = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |_| {
            let mut d = driver.borrow_mut();
            d.playing = false;
            d.step_event(now_ms());
            drop(d);
            refresh.force_update();
        })
    };
    let on_ff = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |_| {
            driver.borrow_mut().fast_forward(5.0);
            refresh.force_update();
        })
    };
    let on_speed = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                if let Ok(v) = input.value().parse::<f64>() {
                    driver.borrow_mut().speed = slider_to_speed(v);
                    refresh.force_update();
                }
            }
        })
    };
    let on_seed = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                let mut d = driver.borrow_mut();
                match input.value().trim().parse::<u64>() {
                    Ok(seed) => {
                        let v = d.variant.clone();
                        d.notice = d.restart(&v, seed).err();
                    }
                    Err(_) => {
                        d.notice = Some(format!(
                            "seed: '{}' is not a whole number from 0 to {}; kept seed {}",
                            blksim::scenario::clip(&input.value()),
                            u64::MAX,
                            d.seed
                        ))
                    }
                }
                drop(d);
                refresh.force_update();
            }
        })
    };
    let on_lesson = {
        let (driver, refresh) = (driver.clone(), refresh.clone());
        Callback::from(move |e: Event| {
            if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
                let mut d = driver.borrow_mut();
                match SimDriver::new(&sel.value(), None, Vec::new(), d.seed) {
                    Ok(mut n) => {
                        n.speed = d.speed;
                        *d = n;
                    }
                    Err(e) => d.notice = Some(e),
                }
                drop(d);
                refresh.force_update();
            }
        })
    };
    let variant_buttons = lesson.variants.iter().map(|v| {
        let name = v.name.clone();
        let pressed = v.name == d.variant;
        let onclick = {
            let (driver, refresh, name) = (driver.clone(), refresh.clone(), name.clone());
            Callback::from(move |_| {
                let mut d = driver.borrow_mut();
                let seed = d.seed;
                d.notice = d.restart(&name, seed).err();
                drop(d);
                refresh.force_update();
            })
        };
        html! { <button class={classes!("variant", pressed.then_some("on"))} aria-pressed={pressed.to_string()} title={v.summary.clone()} {onclick}>{ name }</button> }
    });
    let gaps = d.sim.model_gaps();
    let summary = format!(
        "Block stack of {}: {} processes, {} device(s), {} host(s), {} CPU(s). Numbers are in the tables beside it.",
        lesson.id,
        d.topology.processes.len(),
        d.topology.devices.len(),
        d.topology.hosts.len(),
        d.topology.cores
    );
    html! {
        <div class="app" data-playing={d.playing.to_string()}>
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
                <div class="variants" role="group" aria-label="Variant">{ for variant_buttons }</div>
                <button class="play" aria-label={if d.playing { "Pause" } else { "Play" }} aria-pressed={d.playing.to_string()} onclick={on_play} title="Space">
                    { if d.playing { "❚❚ Pause" } else { "▶ Play" } }
                </button>
                <button aria-label="Step one event" title="→ (Shift+→: 1 ms)" onclick={on_step}>{ "Step →" }</button>
                <button aria-label="Fast forward 5 simulated seconds" onclick={on_ff}>{ "Skip 5 s" }</button>
                <label class="speed">
                    <span>{ "speed" }</span>
                    <input type="range" min="0" max="60" step="1" aria-label="Speed (simulated time per second)" value={speed_to_slider(d.speed).to_string()} oninput={on_speed} />
                    <output>{ format::speed(d.speed) }</output>
                </label>
                <label class="seed">
                    <span>{ "seed" }</span>
                    <input type="text" inputmode="numeric" aria-label="Seed" value={d.seed.to_string()} onchange={on_seed} size="6" />
                </label>
            </header>
            if let Some(n) = &d.notice {
                <p class="notice" role="alert">{ n }</p>
            }
            <p class="question">{ &lesson.question }</p>
            <main class="zones">
                <section class="stack" aria-label="The block stack">
                    <Diagram canvas={canvas.clone()} summary={summary} />
                    <p class="live" ref={live.clone()} data-testid="live" aria-live="off"></p>
                </section>
                <Counters interval={d.interval.clone()} partial={d.interval_partial} top={d.top.clone()} />
            </main>
            if !gaps.is_empty() {
                <footer class="gaps">
                    <strong>{ "Not modelled yet" }</strong>{ " (the numbers do not show these):" }
                    <ul>{ for gaps.iter().map(|g| html! { <li>{ g }</li> }) }</ul>
                </footer>
            }
        </div>
    }
}

/// Shared with tests: the driver behind a page.
pub type SharedDriver = Rc<RefCell<SimDriver>>;
