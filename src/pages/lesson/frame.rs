//! The animation-frame loop: runs the session, draws the diagrams, live lines and changed charts.

use super::charts::draw_charts;
use super::state::{PageAction, PageDispatch};
use super::{now_ms, SharedSession};
use crate::components::diagram::draw;
use crate::format;
use crate::hooks::use_animation_frame;
use crate::view::RunView;
use crate::view::SessionView;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement};
use yew::prelude::*;

/// The line under a run's diagram: its time and counts, and why it runs slower than asked.
fn live_line(d: &RunView, dt: f64, other: Option<(&str, &RunView)>) -> String {
    if let Some(to) = d.catch_up_to {
        return format!("running to t = {} without animating … now at {}", format::sim_time(to.ns()), format::sim_time(d.now().ns()));
    }
    let t = &d.shown.totals;
    let status = if d.shown.finished {
        "all jobs done".to_string()
    } else if d.is_done() {
        format!("ended at its duration ({} s)", d.shown.scenario.duration_s)
    } else if let Some((name, to)) = other.and_then(|(name, o)| o.catch_up_to.map(|to| (name, to))) {
        // The A/B pair moves together: this one waits while the other runs to the time point.
        format!("waiting for {name} to reach t = {}", format::sim_time(to.ns()))
    } else if d.playing && dt > 0.0 && d.achieved_speed < d.speed * 0.9 {
        format!(
            "running at {} (asked {}): the page keeps up by running fewer events per frame",
            format::speed(d.achieved_speed.max(1e-9)),
            format::speed(d.speed)
        )
    } else {
        String::new()
    };
    let now = format::sim_time(d.now().ns());
    if d.is_done() {
        // The end first: where the line is cut (A/B in Large type), it is what stays.
        return format!("t = {now}   {status}   events {}   requests completed {}", t.events, t.requests_completed);
    }
    format!("t = {now}   events {}   requests completed {}   {status}", t.events, t.requests_completed)
}

/// The line under a run's diagram, with its event count and whether it is catching up to what
/// was asked (a jump under way, or a command on its way: `behind`).
fn set_live_line(el: &HtmlElement, d: &RunView, dt: f64, other: Option<(&str, &RunView)>, behind: bool) {
    let line = live_line(d, dt, other);
    // A narrow column cuts the line with an ellipsis: the whole of it on hover.
    let _ = el.set_attribute("title", &line);
    el.set_text_content(Some(&line));
    let _ = el.set_attribute("data-events", &d.shown.totals.events.to_string());
    let catching_up = d.catch_up_to.is_some() || behind;
    let _ = el.set_attribute("data-catching-up", if catching_up { "true" } else { "false" });
}

/// The jump's progress bar (the timeline's), moved every frame (the page re-renders only when a
/// jump ends): the run still catching up, A first.
fn move_jump_progress(s: &SessionView) {
    let Some(p) = web_sys::window().and_then(|w| w.document()).and_then(|doc| doc.query_selector("progress.jump-progress").ok().flatten())
    else {
        return;
    };
    let jumping = std::iter::once(&s.a).chain(s.b.as_ref()).find(|d| d.catch_up_to.is_some());
    let (value, max) = jumping.and_then(|d| d.catch_up_to.map(|to| (d.now().ns() as f64, to.ns().max(1) as f64))).unwrap_or((0.0, 1.0));
    let _ = p.set_attribute("max", &format!("{max}"));
    let _ = p.set_attribute("value", &format!("{}", value.min(max)));
    let _ = p.set_attribute("data-active", if jumping.is_some() { "true" } else { "false" });
}

/// The finished sweep's chart, once its canvas is on the page (the render after it ended).
fn draw_sweep_chart(s: &mut SessionView) {
    let canvas = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("canvas.sweep-chart").ok().flatten())
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok());
    if let (Some(c), Some(sw)) = (canvas, s.sweep.as_ref()) {
        let dark = c.closest("[data-theme=dark]").ok().flatten().is_some();
        let mut runs = Vec::new();
        let mut what = ("", "");
        for v in sw.variant_names() {
            let (w, u, vals) = sw.figure(&v);
            what = (w, u);
            runs.push((v, vals.into_iter().map(|x| x.0).collect::<Vec<f64>>()));
        }
        let _ = crate::components::sweep_chart::draw_sweep(&c, what.0, what.1, &runs, dark);
        s.sweep_dirty = false;
    }
}

/// Where each frame draws: the diagrams' canvases and live lines (A's, and B's in the A/B view),
/// and the two charts.
#[derive(Clone)]
pub(super) struct FrameTargets {
    pub canvas_a: NodeRef,
    pub canvas_b: NodeRef,
    pub live_a: NodeRef,
    pub live_b: NodeRef,
    pub chart: NodeRef,
    pub latency: NodeRef,
}

/// The page's places for each frame's drawing.
#[hook]
pub(super) fn use_frame_targets() -> FrameTargets {
    FrameTargets {
        canvas_a: use_node_ref(),
        canvas_b: use_node_ref(),
        live_a: use_node_ref(),
        live_b: use_node_ref(),
        chart: use_node_ref(),
        latency: use_node_ref(),
    }
}

/// Advances the session each animation frame and draws it; `log_open`: the event log's tab shows.
#[hook]
pub(super) fn use_frame_loop(session: SharedSession, page: PageDispatch, log_open: bool, targets: FrameTargets) {
    let last_ts = use_mut_ref(|| None::<f64>);
    // The counters refresh once per simulated second; an open event log also refreshes a few
    // times a wall second while records come in (at a slow speed a simulated second takes
    // long). (log open, when it last refreshed, the newest record it showed)
    let log_live = use_mut_ref(|| (false, 0.0f64, u64::MAX));
    log_live.borrow_mut().0 = log_open;
    let FrameTargets { canvas_a, canvas_b, live_a, live_b, chart, latency } = targets;
    use_animation_frame(move |ts| {
        let work_start = now_ms();
        let dt = last_ts.borrow().map_or(0.0, |last| ts - last);
        *last_ts.borrow_mut() = Some(ts);
        let mut s = session.borrow_mut();
        let changed = s.frame(dt, ts);
        let expanded = s.expanded;
        // With the worker, a command not yet answered or a trace still on its way.
        let behind = s.behind();
        if let Some(app) = canvas_a.cast::<HtmlElement>().and_then(|c| c.closest(".app").ok().flatten()) {
            let _ = app.set_attribute("data-runs-waiting", if s.unanswered() { "true" } else { "false" });
        }
        let pair =
            [(Some(&s.a), &canvas_a, &live_a, s.b.as_ref().map(|b| ("B", b))), (s.b.as_ref(), &canvas_b, &live_b, Some(("A", &s.a)))];
        for (d, canvas, live, other) in pair {
            let Some(d) = d else { continue };
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                draw(&c, d, ts, expanded);
            }
            if let Some(el) = live.cast::<HtmlElement>() {
                set_live_line(&el, d, dt, other, behind);
            }
        }
        move_jump_progress(&s);
        if s.a.catch_up_to.is_none() && s.b.as_ref().is_none_or(|b| b.catch_up_to.is_none()) {
            super::timeline::follow_clock(s.clock(), s.reached());
        }
        // A chart drawn while hidden (presenter mode) or before a resize keeps its old pixel
        // size, stretched: draw it again at its new size, paused or not.
        let resized = |r: &NodeRef| r.cast::<HtmlCanvasElement>().is_some_and(|c| crate::components::charts::drawn_at_another_width(&c));
        if resized(&chart) || resized(&latency) {
            s.charts_dirty = true;
        }
        if s.charts_dirty {
            s.charts_dirty = false;
            let dark = canvas_a.cast::<HtmlElement>().and_then(|c| c.closest("[data-theme=dark]").ok().flatten()).is_some();
            draw_charts(&s, &chart, &latency, dark);
        }
        if s.sweep_dirty && s.sweep.as_ref().is_some_and(|sw| sw.is_done()) {
            draw_sweep_chart(&mut s);
        }
        let newest = s.a.trace.log.back().map_or(u64::MAX, |r| r.seq);
        drop(s);
        let mut live = log_live.borrow_mut();
        let log_moved = live.0 && newest != live.2 && ts - live.1 >= 250.0;
        if log_moved {
            (live.1, live.2) = (ts, newest);
        }
        drop(live);
        if changed || log_moved {
            page.dispatch(PageAction::SessionChanged);
        }
        let work_ms = now_ms() - work_start;
        session.borrow_mut().tune(work_ms);
        crate::bench::record_frame_work(work_ms);
    });
}
