//! The stack diagram: a canvas drawn each frame from the driver's tokens (the trace) and pool
//! occupancy (the counters). Nothing here knows the model; it draws what the trace says.

use super::diagram_pools::{bar_hit, hw_queues, hw_queues_of, row_label_full, slot_bar, slot_label, slot_label_y, split};
use super::diagram_text::{cpu_strip_text, draw_column_names, fit_first, fit_text, group_names, plated_text, ColumnName};
use super::diagram_tokens::{draw_tokens, draw_waiting_without_tokens};
use crate::layout::{columns, zoom, Rect, StackLayout, Stage, LARGE_TYPE};
use crate::palette::{process_colour, thread_colour};
use crate::view::{Hit, HitKind, RunView};
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

/// What the pointer or the keyboard did on a diagram: the page moves that run's tip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pointer {
    /// The pointer is at (x, y) CSS pixels on the canvas.
    At(f64, f64),
    /// The pointer left, Escape, or the diagram lost focus: no tip.
    Leave,
    /// Arrow keys on the focused diagram: the next (1) or previous (-1) bar or request.
    Step(i32),
}

#[derive(Properties, PartialEq)]
pub struct DiagramProps {
    pub canvas: NodeRef,
    /// A text description for screen readers (the numbers are in the tables).
    pub summary: AttrValue,
    /// Which run this is (A or B), shown in A/B mode.
    #[prop_or_default]
    pub label: AttrValue,
    /// A click at canvas x (CSS pixels): the page expands or collapses a device group there.
    #[prop_or_default]
    pub onclick_x: Callback<f64>,
    /// Pointer moves and arrow keys: the tip for the pool slot, tag or request under them.
    #[prop_or_default]
    pub onpointer: Callback<Pointer>,
}

#[component]
pub fn Diagram(p: &DiagramProps) -> Html {
    let onclick = {
        let cb = p.onclick_x.clone();
        Callback::from(move |e: MouseEvent| cb.emit(to_drawing(&e).0))
    };
    let onmousemove = {
        let cb = p.onpointer.clone();
        Callback::from(move |e: MouseEvent| {
            let (x, y) = to_drawing(&e);
            cb.emit(Pointer::At(x, y))
        })
    };
    let onmouseleave = {
        let cb = p.onpointer.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Pointer::Leave))
    };
    let onblur = {
        let cb = p.onpointer.clone();
        Callback::from(move |_: FocusEvent| cb.emit(Pointer::Leave))
    };
    // Up and down (left and right step the run and the steps): through the bars and requests.
    let onkeydown = {
        let cb = p.onpointer.clone();
        Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
            "ArrowDown" => {
                e.prevent_default();
                cb.emit(Pointer::Step(1));
            }
            "ArrowUp" => {
                e.prevent_default();
                cb.emit(Pointer::Step(-1));
            }
            "Escape" => cb.emit(Pointer::Leave),
            _ => {}
        })
    };
    html! {
        <div class="diagram-wrap">
            if !p.label.is_empty() { <span class="run-label">{ p.label.clone() }</span> }
            <canvas ref={p.canvas.clone()} class="diagram" role="img" aria-label={p.summary.clone()} data-testid="diagram" tabindex="0"
                title="Point at a pool, a tag map or a request for what is there (or focus it and press ↓ / ↑)"
                {onclick} {onmousemove} {onmouseleave} {onblur} {onkeydown}></canvas>
            <p class="diagram-tip sr-only" aria-live="polite" data-testid="diagram-tip"></p>
        </div>
    }
}

/// The canvas's drawing size (its CSS size over the zoom) and the zoom.
pub(super) fn logical_size(canvas: &HtmlCanvasElement) -> (f64, f64, f64) {
    let (cw, ch) = (canvas.client_width().max(320) as f64, canvas.client_height().max(240) as f64);
    let large = canvas.closest("[data-large=true]").ok().flatten().is_some();
    let z = zoom(cw, ch, large);
    (cw / z, ch / z, z)
}

/// A point on the canvas in CSS pixels, in the drawing's coordinates.
fn to_drawing(e: &MouseEvent) -> (f64, f64) {
    let z = e.target().and_then(|t| t.dyn_into::<HtmlCanvasElement>().ok()).map_or(1.0, |c| logical_size(&c).2);
    (e.offset_x() as f64 / z, e.offset_y() as f64 / z)
}

/// The layout a canvas of this size has for the driver's devices (also used for clicks).
pub fn layout_for(canvas: &HtmlCanvasElement, d: &RunView, expanded: Option<usize>) -> StackLayout {
    let (cw, ch, _) = logical_size(canvas);
    StackLayout::new(cw, ch, columns(d.shown.topology.devices.len(), expanded), !d.shown.topology.upper.is_empty())
}

pub(super) struct Theme {
    pub(super) bg: &'static str,
    pub(super) fg: &'static str,
    pub(super) dim: &'static str,
    lane: &'static str,
    pub(super) slot: &'static str,
    pub(super) full: &'static str,
}

const LIGHT: Theme = Theme { bg: "#fbfbf8", fg: "#1d232b", dim: "#6b7480", lane: "#eceee9", slot: "#c9cfd6", full: "#c62828" };
const DARK: Theme = Theme { bg: "#14181d", fg: "#e9edf1", dim: "#9aa4ae", lane: "#20262d", slot: "#3b4550", full: "#ff5252" };

fn prefers(query: &str) -> bool {
    web_sys::window().and_then(|w| w.match_media(query).ok().flatten()).is_some_and(|m| m.matches())
}

/// Draws one frame, and the tip for what the pointer (or the keyboard) is on. Sizes the canvas
/// to its box and the device pixel ratio.
pub fn draw(canvas: &HtmlCanvasElement, d: &RunView, now_ms: f64, expanded: Option<usize>) {
    let mut hits = Vec::new();
    paint(canvas, d, now_ms, expanded, &mut hits);
    {
        let mut hover = d.hover.borrow_mut();
        hover.hits = hits;
        // The keyboard's choice follows what it chose while the frame moves it.
        if let Some(i) = hover.focus {
            match hover.hits.get(i).map(Hit::centre) {
                Some(c) => hover.at = Some(c),
                None => hover.focus = None,
            }
        }
    }
    super::diagram_tip::draw_tip(canvas, d);
}

fn paint(canvas: &HtmlCanvasElement, d: &RunView, now_ms: f64, expanded: Option<usize>, hits: &mut Vec<Hit>) {
    let Some(ctx) = canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok()) else { return };
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    // Drawn at the logical size, zoomed to the box (see `zoom`).
    let (cw, ch, z) = logical_size(canvas);
    let (pw, ph) = ((cw * z * dpr).round() as u32, (ch * z * dpr).round() as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let _ = ctx.set_transform(dpr * z, 0.0, 0.0, dpr * z, 0.0, 0.0);
    let dark = canvas.closest("[data-theme=dark]").ok().flatten().is_some()
        || (canvas.closest("[data-theme=light]").ok().flatten().is_none() && prefers("(prefers-color-scheme: dark)"));
    let theme = if dark { &DARK } else { &LIGHT };
    // Reduced motion (the system's setting, or the page's Motion toggle, which wins): tokens
    // are drawn where the trace put them, without moving between stages.
    let reduced_motion = canvas.closest("[data-motion=reduced]").ok().flatten().is_some()
        || (canvas.closest("[data-motion=full]").ok().flatten().is_none() && prefers("(prefers-reduced-motion: reduce)"));
    // Large type for a projector: the diagram's text grows with the page's.
    let large = canvas.closest("[data-large=true]").ok().flatten().is_some();
    let font = |px: f64, weight: &str, family: &str| format!("{weight} {:.0}px {family}", if large { px * LARGE_TYPE } else { px });
    let ndev = d.shown.topology.devices.len();
    let mut l = StackLayout::new(cw, ch, columns(ndev, expanded), !d.shown.topology.upper.is_empty());
    // The dots keep clear of the A/B run badge (top right) and of the counts-only note.
    let badge_w =
        canvas.previous_element_sibling().filter(|e| e.class_name() == "run-label").map_or(0.0, |e| (e.client_width() as f64 + 12.0) / z);
    // The note needs a row with room for a line of dots above it (not A/B in presenter mode).
    let counts_note = d.trace.density && l.row(Stage::Processes).h >= if large { 48.0 } else { 32.0 };
    l.process_inset = (
        badge_w,
        if !counts_note {
            0.0
        } else if large {
            20.0
        } else {
            15.0
        },
    );
    let ncols = l.cols.len();
    ctx.set_fill_style_str(theme.bg);
    ctx.fill_rect(0.0, 0.0, cw, ch);
    ctx.set_text_baseline("middle");

    // Stage labels and lanes.
    for (i, s) in l.stages.iter().enumerate() {
        let r = l.rows[i];
        if i % 2 == 0 {
            ctx.set_fill_style_str(theme.lane);
            ctx.fill_rect(0.0, r.y, cw, r.h);
        }
        ctx.set_fill_style_str(theme.fg);
        ctx.set_font(&font(13.0, "600", "system-ui, sans-serif"));
        let max_w = crate::layout::LABEL_W - 14.0;
        let label = s.label();
        let fits = ctx.measure_text(label).map_or(true, |m| m.width() <= max_w);
        let two_lines_fit = r.h >= if large { 48.0 } else { 34.0 };
        match label.split_once(' ') {
            // Large type: a two-word label goes on two lines rather than losing its end, if
            // the row is tall enough; else it shrinks like a one-word label.
            Some((a, b)) if !fits && two_lines_fit => {
                let dy = if large { 11.0 } else { 8.0 };
                fit_text(&ctx, a, 10.0, r.y + r.h / 2.0 - dy, max_w);
                fit_text(&ctx, b, 10.0, r.y + r.h / 2.0 + dy, max_w);
            }
            // Too wide for large type: a smaller font rather than a cut word.
            _ if !fits => {
                let w = ctx.measure_text(label).map_or(max_w, |m| m.width());
                let px = if large { 13.0 * LARGE_TYPE } else { 13.0 } * max_w / w;
                ctx.set_font(&format!("600 {px:.1}px system-ui, sans-serif"));
                fit_text(&ctx, label, 10.0, r.y + r.h / 2.0, max_w);
            }
            _ => fit_text(&ctx, label, 10.0, r.y + r.h / 2.0, max_w),
        }
    }
    let (occ, hosts) = &d.shown.occupancy;
    ctx.set_font(&font(11.0, "", "ui-monospace, monospace"));

    // Processes.
    let n = d.shown.topology.processes.len();
    // Asleep: on a pool or the stripe cache (drawn there too), or in D waiting for its I/O.
    let sleepers: Vec<u32> = occ
        .iter()
        .flat_map(|o| o.sleepers.iter().chain(o.stripe_sleepers.iter()).copied())
        .chain(d.shown.pids_in_d.iter().copied())
        .collect();
    let dot = l.process_radius(n);
    for (i, (_, pid)) in d.shown.topology.processes.iter().enumerate() {
        let (x, y) = l.process_slot(i, n);
        let asleep = sleepers.contains(pid);
        ctx.set_global_alpha(if asleep { 0.45 } else { 1.0 });
        ctx.set_fill_style_str(process_colour(*pid));
        ctx.begin_path();
        let _ = ctx.arc(x, y, dot, 0.0, std::f64::consts::TAU);
        if d.is_done() {
            // Every job is done, or stopped at the run's end (as fio stops its jobs at
            // runtime), and its process has exited: a ring where it was.
            ctx.set_stroke_style_str(process_colour(*pid));
            ctx.set_line_width(1.5);
            ctx.stroke();
            ctx.set_line_width(1.0);
        } else {
            ctx.fill();
        }
        ctx.set_global_alpha(1.0);
        if asleep && n <= 32 {
            ctx.set_fill_style_str(theme.dim);
            let _ = ctx.fill_text("zz", x + 8.0, y - 7.0);
        }
    }
    if let Some((name, _)) = d.shown.topology.processes.first() {
        // Under the stage's label, where the row is tall enough for both.
        let r = l.row(Stage::Processes);
        let px = if large { 11.0 * LARGE_TYPE } else { 11.0 };
        let y = r.y + r.h / 2.0 + px + 4.0;
        if y + px / 2.0 <= r.y + r.h {
            ctx.set_fill_style_str(theme.dim);
            fit_text(&ctx, &format!("{name} ×{n}"), 10.0, y, crate::layout::LABEL_W - 14.0);
        }
    }

    // Per-column pools: elevator count, request pool, tags, drive. A group column sums its
    // devices (limits too), so a full bar still means every device in it is full.
    let heads = &d.shown.head_positions;
    // A row too short for a line of text beside its bars (A/B in presenter mode with Large
    // type) gets no per-column text: bars alone read better than text written over them.
    let roomy = |stage: Stage| l.row(stage).h >= if large { 44.0 } else { 30.0 };
    let mut disk_names = Vec::new();
    let any_group = l.cols.iter().any(|c| c.count > 1);
    // The widest of the groups' shortest names ("by–cb" of sdby–sdcb; the count form aside):
    // in a row too short for a name above the platter, the platter makes room for it beside,
    // so that each column keeps its own name instead of one caption over the row's platters.
    let group_name_w = l
        .cols
        .iter()
        .filter(|c| c.count > 1)
        .filter_map(|c| {
            let names =
                group_names(&d.shown.topology.devices[c.first].name, &d.shown.topology.devices[c.first + c.count - 1].name, c.count);
            let shortest = names.len().checked_sub(2).map(|i| names[i].clone())?;
            ctx.measure_text(&shortest).ok().map(|m| m.width())
        })
        .fold(0.0_f64, f64::max);
    // Each column's request-pool and tag-map limits (a group's summed), and from them and the
    // bars' widths one label form per row (`row_label_full`).
    let limits: Vec<(u32, u32)> = l
        .cols
        .iter()
        .map(|col| {
            let devs = &d.shown.topology.devices[col.first..col.first + col.count];
            (devs.iter().map(|t| t.nr_requests).sum(), devs.iter().map(|t| t.queue_depth).sum())
        })
        .collect();
    let pool_full = row_label_full(&ctx, limits.iter().enumerate().map(|(ci, lim)| (l.cell(Stage::RequestPool, ci).w, lim.0)));
    let tag_full = row_label_full(&ctx, limits.iter().enumerate().map(|(ci, lim)| (l.cell(Stage::TagMap, ci).w, lim.1)));
    for (ci, col) in l.cols.iter().enumerate() {
        let devs = col.first..col.first + col.count;
        let sum = |f: &dyn Fn(usize) -> u32| devs.clone().map(f).sum::<u32>();
        let used = sum(&|i| occ[i].pool[0].max(occ[i].pool[1]));
        let (limit, depth) = limits[ci];
        // A column too narrow for device names (Large type on a projector) still shows its
        // counts: `slot_bar` falls back from "used/limit" to "used" where the pair does not fit.
        let counts_fit = |stage: Stage| (l.dev_labels || l.cell(stage, ci).w >= 24.0) && roomy(stage);
        let pool_labels = counts_fit(Stage::RequestPool);
        slot_bar(&ctx, theme, l.cell(Stage::RequestPool, ci), used, limit, pool_labels.then_some(pool_full));
        hits.push(bar_hit(l.cell(Stage::RequestPool, ci), HitKind::Pool { first: col.first, count: col.count, limit }));
        // On the line of the bar's used/limit label, after it: who sleeps for a request, and
        // why the count can pass nr_requests (get_request lets a batcher go up to the queue's
        // pool_max: 3/2 of it from 2.6.13, BLK_BATCH_REQ more per batcher before). Nothing is
        // drawn over the bar or into the next row.
        let c = l.cell(Stage::RequestPool, ci);
        let label_y = slot_label_y(c);
        let mut x = c.x
            + if pool_labels {
                2.0 + ctx.measure_text(&slot_label(used, limit, pool_full)).map_or(40.0, |m| m.width()) + 10.0
            } else {
                2.0
            };
        let sleepers = sum(&|i| occ[i].sleepers.len() as u32);
        ctx.set_fill_style_str(theme.full);
        // A row with no line for text (A/B in presenter mode) shows the full bar alone.
        if sleepers > 0 && roomy(Stage::RequestPool) {
            let text = format!("zz {sleepers}");
            fit_text(&ctx, &text, x, label_y, c.x + c.w - x);
            x += ctx.measure_text(&text).map_or(30.0, |m| m.width()) + 10.0;
        }
        if used > limit && roomy(Stage::RequestPool) && c.x + c.w - x >= 120.0 {
            // 2.6.13+ caps the pool at 3/2 of nr_requests; before it only each batcher's
            // BLK_BATCH_REQ bounds it (pool_max's sum over every thread is a bound, not a
            // batcher's share).
            let pool_max = sum(&|i| occ[i].pool_max);
            let capped = devs.clone().all(|i| occ[i].pool_max == 3 * d.shown.topology.devices[i].nr_requests / 2);
            let text = if capped {
                format!("over nr_requests: batchers may take up to {pool_max} (3/2 of it)")
            } else {
                format!("over nr_requests: each batcher may take {} more", blksim::calib::BLK_BATCH_REQ)
            };
            fit_text(&ctx, &text, x, label_y, c.x + c.w - x);
        }
        let tag_labels = counts_fit(Stage::TagMap);
        let e = l.cell(Stage::Elevator, ci);
        // A blk-mq device with several hardware queues: each its own tag map and dispatch list.
        let hctx = hw_queues_of(col, occ);
        if hctx.len() > 1 {
            hw_queues(&ctx, theme, hctx, l.cell(Stage::TagMap, ci), e, tag_labels, roomy(Stage::Elevator));
            for (h, r) in split(l.cell(Stage::TagMap, ci), hctx.len()).into_iter().enumerate() {
                hits.push(bar_hit(r, HitKind::Hctx { dev: col.first, hctx: h }));
            }
        } else {
            slot_bar(&ctx, theme, l.cell(Stage::TagMap, ci), sum(&|i| occ[i].tags), depth, tag_labels.then_some(tag_full));
            hits.push(bar_hit(l.cell(Stage::TagMap, ci), HitKind::Tags { first: col.first, count: col.count, limit: depth }));
        }
        let waiting = sum(&|i| occ[i].elevator);
        if hctx.len() <= 1 && (d.trace.density || l.dev_labels || col.group.is_some()) && roomy(Stage::Elevator) {
            ctx.set_fill_style_str(theme.dim);
            let text = if e.w >= 90.0 { format!("{waiting} waiting") } else { waiting.to_string() };
            fit_text(&ctx, &text, e.x + 2.0, e.y + 8.0, e.w - 4.0);
        }
        // The disk: a platter with the head's position as an arc, and what the drive holds.
        // A group draws stacked platters.
        let c = l.cell(Stage::Disks, ci);
        // Beside groups (one expanded), single devices are named too, in their short form.
        let labelled = (l.dev_labels || col.count > 1 || any_group) && roomy(Stage::Disks);
        // The platter sits between the name (top line) and the queue (bottom line); in a row
        // too short for that, at the cell's right, with the text beside it.
        // A group's platters are stacked 3 px up and right each, 6 px in all: keep them clear
        // of the text lines too (14 px each, 17 in Large type).
        let stack = if col.count > 1 { 6.0 } else { 0.0 };
        let text_h = if large { 17.0 } else { 14.0 };
        let (mut cx, mut cy) = c.centre();
        cx -= stack / 2.0;
        cy += stack / 2.0;
        let mut rad = if labelled {
            (c.w / 2.0 - 6.0 - stack / 2.0).min((c.h - 2.0 * text_h - stack) / 2.0)
        } else {
            c.w.min(c.h) / 2.0 - 6.0 - stack / 2.0
        };
        let mut text_w = c.w - 4.0;
        // A row too short for the name above the platter (A/B in presenter mode with Large
        // type): the name beside it, on the platter's line, abbreviated but never dropped, so
        // the host's starved list can still be matched to a column.
        // Columns too narrow for the full labels get the name alone, in its shortest form.
        let squeezed = !labelled && ncols > 1;
        if squeezed {
            rad = (c.h / 2.0 - 3.0).min(c.w * 0.2);
            cx = c.x + c.w - rad - 4.0;
            cy = c.y + c.h / 2.0;
            text_w = c.w - 2.0 * rad - 10.0;
        }
        if labelled && rad < 6.0 {
            rad = (c.h / 2.0 - 3.0).min(c.w * 0.2);
            // Smaller, down to 4 px, where that lets the groups' names fit beside it.
            if col.count > 1 || any_group {
                rad = rad.min(((c.w - 10.0 - group_name_w) / 2.0).max(4.0));
            }
            cx = c.x + c.w - rad - 5.0;
            text_w = c.w - 2.0 * rad - 10.0;
        }
        let rad = rad.max(3.0);
        let in_drive = sum(&|i| occ[i].in_drive);
        ctx.set_stroke_style_str(theme.slot);
        ctx.set_line_width(1.0);
        if d.shown.topology.disk_kind == "ssd" || d.shown.topology.disk_kind == "ramlun" {
            // An SSD (or a RAM LUN): its channels as slots, filled by the commands it holds.
            let per_dev = if d.shown.topology.disk_kind == "ssd" { blksim::calib::SSD_CHANNELS } else { blksim::calib::RAMLUN_SLOTS };
            let channels = per_dev * col.count as u32;
            slot_bar(&ctx, theme, Rect { x: c.x, y: c.y + c.h * 0.3, w: c.w, h: c.h * 0.4 }, in_drive.min(channels), channels, None);
            if l.dev_labels || col.count > 1 {
                ctx.set_fill_style_str(theme.fg);
                fit_text(&ctx, &d.shown.topology.devices[col.first].name, c.x + 2.0, c.y + 8.0, c.w - 4.0);
                ctx.set_fill_style_str(theme.dim);
                fit_text(&ctx, &format!("channels {in_drive}/{channels}"), c.x + 2.0, c.y + c.h - 8.0, c.w - 4.0);
            }
            continue;
        }
        let layers = if col.count > 1 { 3 } else { 1 };
        for k in (0..layers).rev() {
            ctx.begin_path();
            let _ = ctx.arc(cx + 3.0 * k as f64, cy - 3.0 * k as f64, rad, 0.0, std::f64::consts::TAU);
            ctx.stroke();
        }
        let head = heads.get(col.first).copied().unwrap_or(0.0);
        let hr = rad * (1.0 - 0.8 * head);
        ctx.set_stroke_style_str(if in_drive > 0 { theme.fg } else { theme.dim });
        ctx.set_line_width(2.5);
        ctx.begin_path();
        let _ = ctx.arc(cx, cy, hr.max(1.5), -2.2, -0.9);
        ctx.stroke();
        ctx.set_line_width(1.0);
        if labelled {
            let names = group_names(
                &d.shown.topology.devices[col.first].name,
                &d.shown.topology.devices[col.first + col.count - 1].name,
                col.count,
            );
            disk_names.push(ColumnName { names, count: col.count, x: c.x + 2.0, y: c.y + 8.0, w: text_w });
            ctx.set_fill_style_str(theme.dim);
            let hint = if col.count > 1 { format!("q {in_drive} · click") } else { format!("q {in_drive}") };
            fit_first(&ctx, &[&hint, &format!("q {in_drive}"), &in_drive.to_string()], c.x + 2.0, c.y + c.h - 8.0, text_w);
        } else if squeezed {
            let names = group_names(
                &d.shown.topology.devices[col.first].name,
                &d.shown.topology.devices[col.first + col.count - 1].name,
                col.count,
            );
            disk_names.push(ColumnName { names, count: col.count, x: c.x + 2.0, y: c.y + c.h / 2.0, w: text_w });
        }
    }
    draw_column_names(&ctx, theme, &disk_names);

    // The stacking layer: a dm device sits over its path's column (a group column sums its
    // dm devices); an md array spans its members, with its stripe cache as the pool.
    let upper = &d.shown.topology.upper;
    let mut dm_cols: Vec<(u32, u32, u32, Vec<usize>)> = vec![(0, 0, 0, Vec::new()); ncols];
    let mut kdm_cols = vec![0u32; ncols];
    for (k, up) in upper.iter().enumerate() {
        let o = &occ[ndev + k];
        let cols: Vec<usize> = up.lower.iter().map(|&x| l.column_of(x as usize)).collect();
        let (Some(&c0), Some(&c1)) = (cols.iter().min(), cols.iter().max()) else { continue };
        if o.stripes_max == 0 {
            // A dm device is drawn over its first path's column.
            let e = &mut dm_cols[c0];
            e.0 += o.pool[0].max(o.pool[1]);
            e.1 += up.nr_requests;
            e.2 += o.elevator;
            e.3.push(k);
            kdm_cols[c0] += o.kdm_queued;
            continue;
        }
        let r = l.row(Stage::Layer);
        let x0 = l.dev_cols[c0].0;
        let x1 = l.dev_cols[c1].0 + l.dev_cols[c1].1;
        let cell = Rect { x: x0, y: r.y + 3.0, w: x1 - x0, h: r.h - 6.0 };
        ctx.set_stroke_style_str(theme.slot);
        ctx.stroke_rect(cell.x, cell.y, cell.w, cell.h);
        ctx.set_fill_style_str(theme.fg);
        let title = format!("{} · stripe cache", up.name);
        // The title's line, then the bar below it with its active/stripe_cache_size on its
        // right, on the bar's own line: inside the box however short the row is (A/B in
        // presenter mode with Large type left no room for a line under the bar).
        let px = if large { 11.0 * LARGE_TYPE } else { 11.0 };
        let title_y = cell.y + 3.0 + px / 2.0;
        let _ = ctx.fill_text(&title, cell.x + 4.0, title_y);
        let bar = Rect {
            x: cell.x + 4.0,
            y: title_y + px / 2.0 + 2.0,
            w: (cell.w * 0.5).max(40.0),
            h: (cell.y + cell.h - 3.0 - (title_y + px / 2.0 + 2.0)).max(4.0),
        };
        slot_bar(&ctx, theme, bar, o.stripes_active, o.stripes_max, None);
        ctx.set_fill_style_str(theme.dim);
        let count = format!("{}/{}", o.stripes_active, o.stripes_max);
        // Beside the bar; where the bar is too thin for the text to stay inside the box (A/B
        // with Large type: "217/256" sat on the box's bottom line), at the right of the
        // title's line instead.
        let on_title_line = bar.y + bar.h / 2.0 + px / 2.0 > cell.y + cell.h - 1.0;
        let mut line_end = cell.x + cell.w - 4.0;
        if on_title_line {
            let w = ctx.measure_text(&count).map_or(60.0, |m| m.width());
            line_end -= w + 8.0;
            let _ = ctx.fill_text(&count, line_end + 8.0, title_y);
        } else {
            let count_x = bar.x + bar.w + 8.0;
            fit_first(&ctx, &[&count, &o.stripes_active.to_string()], count_x, bar.y + bar.h / 2.0, line_end - count_x);
        }
        hits.push(bar_hit(bar, HitKind::Stripes(k)));
        if !o.stripe_sleepers.is_empty() {
            // On the title's line: the bios in flight cross the row at the bar's height, and
            // drawn over them the count could not be read.
            let x = cell.x + 4.0 + ctx.measure_text(&title).map_or(0.0, |m| m.width()) + 12.0;
            ctx.set_fill_style_str(theme.full);
            let zz = o.stripe_sleepers.len();
            fit_first(&ctx, &[&format!("zz {zz} on wait_for_stripe"), &format!("zz {zz}")], x, title_y, line_end - x);
        }
    }
    let mut dm_names = Vec::new();
    let dm_any_group = dm_cols.iter().any(|c| c.3.len() > 1);
    for (ci, (used, limit, waiting, ks)) in dm_cols.iter().enumerate() {
        if ks.is_empty() {
            continue;
        }
        let cell = l.cell(Stage::Layer, ci);
        if (l.dev_labels || ks.len() > 1 || dm_any_group) && roomy(Stage::Layer) {
            let names = group_names(&upper[ks[0]].name, &upper[ks[ks.len() - 1]].name, ks.len());
            dm_names.push(ColumnName { names, count: ks.len(), x: cell.x + 2.0, y: cell.y + 8.0, w: cell.w - 4.0 });
            ctx.set_fill_style_str(theme.dim);
            let kdm = kdm_cols[ci];
            let text = if kdm > 0 { format!("{waiting} waiting · kdmwork {kdm}") } else { format!("{waiting} waiting") };
            fit_first(
                &ctx,
                &[&text, &format!("{waiting} waiting"), &waiting.to_string()],
                cell.x + 2.0,
                cell.y + cell.h - 8.0,
                cell.w - 4.0,
            );
        }
        slot_bar(&ctx, theme, Rect { y: cell.y + cell.h * 0.3, h: cell.h * 0.4, ..cell }, *used, *limit, None);
    }
    draw_column_names(&ctx, theme, &dm_names);

    // Hosts: can_queue and the starved list.
    let mut starved_notes: Vec<(String, f64, f64, f64)> = Vec::new();
    let notes_font = ctx.font();
    let draw_notes = |notes: &[(String, f64, f64, f64)]| {
        let font_before = ctx.font();
        ctx.set_font(&notes_font);
        for (text, x, y, max_w) in notes {
            plated_text(&ctx, theme.bg, theme.full, text, *x, *y, *max_w);
        }
        ctx.set_font(&font_before);
    };
    for (hi, h) in d.shown.topology.hosts.iter().enumerate() {
        let cols: Vec<usize> =
            d.shown.topology.devices.iter().enumerate().filter(|(_, dv)| dv.host as usize == hi).map(|(i, _)| l.column_of(i)).collect();
        let (Some(&first), Some(&last)) = (cols.iter().min(), cols.iter().max()) else { continue };
        let r = l.row(Stage::Host);
        let x0 = l.dev_cols[first].0;
        let x1 = l.dev_cols[last].0 + l.dev_cols[last].1;
        let cell = Rect { x: x0, y: r.y + 3.0, w: x1 - x0, h: r.h - 6.0 };
        let busy = hosts.get(hi).map_or(0, |o| o.busy);
        let host_full = row_label_full(&ctx, std::iter::once((cell.w, h.can_queue)));
        let bar = Rect { h: cell.h * 0.55, ..cell };
        if roomy(Stage::Host) {
            slot_bar(&ctx, theme, bar, busy, h.can_queue, Some(host_full));
        } else {
            // A row with no line under the bar (A/B in presenter mode): the host's busy/can_queue
            // on the bar's own line, at its right, as the stripe cache's count is. An HBA spans
            // its disks' columns, so it has the width that a column's pool does not.
            let text = slot_label(busy, h.can_queue, true);
            let text_w = ctx.measure_text(&text).map_or(60.0, |m| m.width());
            let bar_w = cell.w - text_w - 8.0;
            if bar_w >= 40.0 {
                slot_bar(&ctx, theme, Rect { w: bar_w, ..bar }, busy, h.can_queue, None);
                ctx.set_fill_style_str(theme.dim);
                let _ = ctx.fill_text(&text, cell.x + bar_w + 6.0, bar.y + bar.h / 2.0);
            } else {
                slot_bar(&ctx, theme, bar, busy, h.can_queue, None);
            }
        }
        hits.push(bar_hit(bar, HitKind::Host(hi)));
        if let Some(o) = hosts.get(hi) {
            if !o.starved.is_empty() {
                ctx.set_fill_style_str(theme.full);
                let shown: Vec<&str> = o.starved.iter().take(8).map(String::as_str).collect();
                let more = if o.starved.len() > 8 { format!(" +{}", o.starved.len() - 8) } else { String::new() };
                // Beside the slot bar's used/limit label, not on it (rows are short in A/B).
                let y = cell.y
                    + (cell.h * 0.55 - (cell.h * 0.55 * 0.45).clamp(4.0, 16.0)) / 2.0
                    + (cell.h * 0.55 * 0.45).clamp(4.0, 16.0)
                    + 8.0;
                // Drawn after the tokens, on a plate of the background: the requests crossing
                // from the tag map to the disks passed over it and hid the list.
                starved_notes.push((format!("starved: {}{more}", shown.join(" ")), cell.x + 80.0, y, cell.w - 84.0));
            }
        }
    }

    // CPUs: one strip per core, coloured by the thread running now.
    ctx.set_font(&font(11.0, "", "ui-monospace, monospace"));
    let r = l.row(Stage::Cpus);
    let cores = d.shown.topology.cores.max(1) as f64;
    let w = (r.w - 8.0) / cores;
    let running = &d.shown.core_threads;
    for (c, tid) in running.iter().enumerate() {
        let x = r.x + 4.0 + c as f64 * w;
        let cell = Rect { x, y: r.y + 4.0, w: w - 4.0, h: r.h - 8.0 };
        ctx.set_fill_style_str(theme.slot);
        ctx.fill_rect(cell.x, cell.y, cell.w, cell.h);
        // How busy the core was over the last second, as a fill from the bottom.
        let busy = d.shown.core_busy_pct.get(c).copied().unwrap_or(0.0).clamp(0.0, 100.0);
        ctx.set_fill_style_str(theme.dim);
        let bh = cell.h * busy / 100.0;
        ctx.fill_rect(cell.x, cell.y + cell.h - bh, cell.w, bh);
        let (label, short) = match tid {
            Some(tid) => {
                // Names and pids never change: the driver's copy serves, no per-frame list.
                let (pid, name) = d.thread_of(*tid);
                ctx.set_fill_style_str(thread_colour(name, pid));
                ctx.fill_rect(cell.x, cell.y, cell.w, cell.h);
                (format!("cpu{c} {name}"), name.to_string())
            }
            None => (format!("cpu{c} {busy:.0}%"), format!("{busy:.0}%")),
        };
        // A narrow strip shows what runs there ("ksoftirq…") rather than its number, and
        // never nothing: the strips are in CPU order.
        ctx.set_fill_style_str(theme.fg);
        if cell.w - 4.0 >= 10.0 {
            let width = |t: &str| ctx.measure_text(t).map_or(f64::MAX, |m| m.width());
            let max_w = cell.w - 4.0;
            // The thread's name in a smaller type (down to 70%) rather than cut: "ksoftirqd/4"
            // is what the strip is there to show (else its stem: "flush", not "flus…").
            let text = cpu_strip_text(&label, &short, max_w, width);
            let w = width(text);
            if w > max_w && w * 0.7 <= max_w {
                ctx.set_font(&font(11.0 * max_w / w, "", "ui-monospace, monospace"));
                let _ = ctx.fill_text(text, cell.x + 2.0, cell.y + cell.h / 2.0);
                ctx.set_font(&font(11.0, "", "ui-monospace, monospace"));
            } else {
                fit_text(&ctx, text, cell.x + 2.0, cell.y + cell.h / 2.0, max_w);
            }
        }
    }

    // Tokens: bios (chips) and requests (bars), tweened between the stages the trace named.
    if d.trace.density {
        draw_notes(&starved_notes);
        if !counts_note {
            return;
        }
        ctx.set_fill_style_str(theme.dim);
        let pr = l.row(Stage::Processes);
        let why = "counts only: the trace is faster than the eye (slow down to see each request)";
        let px = if large { 11.0 * LARGE_TYPE } else { 11.0 };
        fit_text(&ctx, why, pr.x + 4.0, pr.y + pr.h - px / 2.0 - 1.0, pr.w - 8.0);
        return;
    }
    let per_col_elev = draw_tokens(&ctx, d, &l, theme, now_ms, reduced_motion, hits);
    draw_notes(&starved_notes);
    draw_waiting_without_tokens(&ctx, d, &l, theme, &per_col_elev);
}
