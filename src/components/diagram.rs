//! The stack diagram: a canvas drawn each frame from the driver's tokens (the trace) and pool
//! occupancy (the counters). Nothing here knows the model; it draws what the trace says.

use super::diagram_columns::draw_columns;
use super::diagram_layer::{draw_hosts, draw_layer, StarvedNote};
use super::diagram_text::{cpu_strip_text, fit_text, plated_text};
use super::diagram_tokens::{draw_tokens, draw_waiting_without_tokens};
use crate::layout::{columns, type_scale, zoom, Optional, Rect, StackLayout, Stage};
use crate::palette::{pid_colour, thread_colour_in};
use crate::view::{Hit, RunView};
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
                title="Point at a row's name for what the row is, or at a pool, a tag map or a request for what is there (or focus it and press ↓ / ↑)"
                {onclick} {onmousemove} {onmouseleave} {onblur} {onkeydown}></canvas>
            <p class="diagram-tip sr-only" aria-live="polite" data-testid="diagram-tip"></p>
        </div>
    }
}

/// The canvas's drawing size (its CSS size over the zoom) and the zoom.
pub(super) fn logical_size(canvas: &HtmlCanvasElement) -> (f64, f64, f64) {
    let (cw, ch) = (canvas.client_width().max(320) as f64, canvas.client_height().max(240) as f64);
    let z = zoom(cw, ch, scale_of(canvas));
    (cw / z, ch / z, z)
}

/// The diagram's type scale on this canvas's page (presenter mode, Large type).
pub(super) fn scale_of(canvas: &HtmlCanvasElement) -> f64 {
    let on = |sel: &str| canvas.closest(sel).ok().flatten().is_some();
    type_scale(on("[data-presenter=true]"), on("[data-large=true]"))
}

/// The type scale the same page has without Large type: what Large type's labels never go under.
fn plain_scale_of(canvas: &HtmlCanvasElement) -> f64 {
    type_scale(canvas.closest("[data-presenter=true]").ok().flatten().is_some(), false)
}

/// A point on the canvas in CSS pixels, in the drawing's coordinates.
fn to_drawing(e: &MouseEvent) -> (f64, f64) {
    let z = e.target().and_then(|t| t.dyn_into::<HtmlCanvasElement>().ok()).map_or(1.0, |c| logical_size(&c).2);
    (e.offset_x() as f64 / z, e.offset_y() as f64 / z)
}

/// The layout a canvas of this size has for the driver's devices (also used for clicks).
pub fn layout_for(canvas: &HtmlCanvasElement, d: &RunView, expanded: Option<usize>) -> StackLayout {
    let (cw, ch, _) = logical_size(canvas);
    StackLayout::new(cw, ch, columns(d.shown.topology.devices.len(), expanded), Optional::of(&d.shown.topology))
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
/// What every zone of a frame draws with: the canvas, the run, the layout and the theme.
pub(super) struct Frame<'a> {
    pub(super) ctx: CanvasRenderingContext2d,
    pub(super) d: &'a RunView,
    pub(super) l: StackLayout,
    pub(super) theme: &'static Theme,
    /// The diagram's type scale (`type_scale`): above 1 in Large type or presenter mode, for a
    /// projector, as the page's text grows.
    pub(super) scale: f64,
    /// The scale without Large type (`scale` itself when Large type is off).
    pub(super) plain_scale: f64,
}

/// The diagram's type for counts and names.
pub(super) const MONO: &str = "ui-monospace, monospace";

impl Frame<'_> {
    /// A CSS font of `px` pixels (grown for Large type).
    pub(super) fn font(&self, px: f64, weight: &str, family: &str) -> String {
        format!("{weight} {:.0}px {family}", px * self.scale)
    }

    /// Whether the type is larger than 11 px (Large type or presenter mode).
    pub(super) fn large(&self) -> bool {
        self.scale > 1.0
    }

    /// The height of a line of the 11 px type.
    pub(super) fn line_px(&self) -> f64 {
        11.0 * self.scale
    }

    /// A row tall enough for a line of text beside its bars (in larger type the bars thin to
    /// leave the line its height: `bar_geom`): one too short gets no per-column text, as bars
    /// alone read better than text written over them.
    pub(super) fn roomy(&self, stage: Stage) -> bool {
        self.l.row(stage).h >= if self.large() { self.line_px() + 10.0 } else { 30.0 }
    }
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

/// Sizes the canvas's pixels to its box, the zoom and the device pixel ratio, and returns its
/// logical size and the zoom: the frame is drawn at that size, zoomed to the box (see `zoom`).
fn size_canvas(canvas: &HtmlCanvasElement, ctx: &CanvasRenderingContext2d) -> (f64, f64, f64) {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let (cw, ch, z) = logical_size(canvas);
    let (pw, ph) = ((cw * z * dpr).round() as u32, (ch * z * dpr).round() as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let _ = ctx.set_transform(dpr * z, 0.0, 0.0, dpr * z, 0.0, 0.0);
    (cw, ch, z)
}

/// Whether the page (its `attr` on an ancestor: `on` or `off`) or else the system's media
/// `query` asks for a setting.
fn asks(canvas: &HtmlCanvasElement, on: &str, off: &str, query: &str) -> bool {
    canvas.closest(on).ok().flatten().is_some() || (canvas.closest(off).ok().flatten().is_none() && prefers(query))
}

fn paint(canvas: &HtmlCanvasElement, d: &RunView, now_ms: f64, expanded: Option<usize>, hits: &mut Vec<Hit>) {
    let Some(ctx) = canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok()) else { return };
    let (cw, ch, z) = size_canvas(canvas, &ctx);
    let dark = asks(canvas, "[data-theme=dark]", "[data-theme=light]", "(prefers-color-scheme: dark)");
    let theme = if dark { &DARK } else { &LIGHT };
    // Reduced motion (the system's setting, or the page's Motion toggle, which wins): tokens
    // are drawn where the trace put them, without moving between stages.
    let reduced_motion = asks(canvas, "[data-motion=reduced]", "[data-motion=full]", "(prefers-reduced-motion: reduce)");
    let scale = scale_of(canvas);
    let large = scale > 1.0;
    let ndev = d.shown.topology.devices.len();
    let mut l = StackLayout::new(cw, ch, columns(ndev, expanded), Optional::of(&d.shown.topology));
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
    ctx.set_fill_style_str(theme.bg);
    ctx.fill_rect(0.0, 0.0, cw, ch);
    ctx.set_text_baseline("middle");
    let f = Frame { ctx, d, l, theme, scale, plain_scale: plain_scale_of(canvas) };
    draw_stage_labels(&f, cw);
    f.ctx.set_font(&f.font(11.0, "", MONO));
    draw_processes(&f);
    draw_columns(&f, hits);
    draw_layer(&f, hits);
    let notes_font = f.ctx.font();
    let starved_notes = draw_hosts(&f, hits);
    draw_cpus(&f);
    row_hits(&f, hits);

    // Tokens: bios (chips) and requests (bars), tweened between the stages the trace named.
    if d.trace.density {
        draw_starved_notes(&f, &notes_font, &starved_notes);
        if counts_note {
            draw_counts_note(&f);
        }
        return;
    }
    let per_col_elev = draw_tokens(&f, now_ms, reduced_motion, hits);
    draw_starved_notes(&f, &notes_font, &starved_notes);
    draw_waiting_without_tokens(&f, &per_col_elev);
}

/// Each row's name has a tip saying what the row is (after the bars, so ↓ starts on a pool).
fn row_hits(f: &Frame, hits: &mut Vec<Hit>) {
    for (i, &s) in f.l.stages.iter().enumerate() {
        let r = f.l.rows[i];
        hits.push(Hit { x: 0.0, y: r.y, w: crate::layout::LABEL_W, h: r.h, kind: crate::view::HitKind::Row(s) });
    }
}

/// Stage labels and lanes.
fn draw_stage_labels(f: &Frame, cw: f64) {
    let (ctx, l, theme, large) = (&f.ctx, &f.l, f.theme, f.large());
    for (i, s) in l.stages.iter().enumerate() {
        let r = l.rows[i];
        if i % 2 == 0 {
            ctx.set_fill_style_str(theme.lane);
            ctx.fill_rect(0.0, r.y, cw, r.h);
        }
        ctx.set_fill_style_str(theme.fg);
        ctx.set_font(&f.font(13.0, "600", "system-ui, sans-serif"));
        let max_w = crate::layout::LABEL_W - 14.0;
        let label = s.label();
        let fits = ctx.measure_text(label).map_or(true, |m| m.width() <= max_w);
        let two_lines_fit = r.h >= if large { 48.0 } else { 34.0 };
        match label.split_once(' ') {
            // Large type: a two-word label goes on two lines rather than losing its end, if
            // the row is tall enough; else it shrinks like a one-word label.
            Some((a, b)) if !fits && two_lines_fit => {
                let dy = if large { 7.5 * f.scale } else { 8.0 };
                fit_text(ctx, a, 10.0, r.y + r.h / 2.0 - dy, max_w);
                fit_text(ctx, b, 10.0, r.y + r.h / 2.0 + dy, max_w);
            }
            // Too wide for large type: a smaller font rather than a cut word.
            _ if !fits => {
                let w = ctx.measure_text(label).map_or(max_w, |m| m.width());
                // A hair under the exact fit: the font's size is rounded when it is set.
                let px = 13.0 * f.scale * max_w / w * 0.98;
                ctx.set_font(&format!("600 {px:.1}px system-ui, sans-serif"));
                fit_text(ctx, label, 10.0, r.y + r.h / 2.0, max_w);
            }
            _ => fit_text(ctx, label, 10.0, r.y + r.h / 2.0, max_w),
        }
    }
}

/// Processes: a dot each, faded with `zz` while asleep, a ring once exited.
fn draw_processes(f: &Frame) {
    let (ctx, d, l, theme) = (&f.ctx, f.d, &f.l, f.theme);
    let occ = &d.shown.occupancy.0;
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
        ctx.set_fill_style_str(pid_colour(&d.shown.topology, *pid));
        ctx.begin_path();
        let _ = ctx.arc(x, y, dot, 0.0, std::f64::consts::TAU);
        if d.is_done() {
            // Every job is done, or stopped at the run's end (as fio stops its jobs at
            // runtime), and its process has exited: a ring where it was.
            ctx.set_stroke_style_str(pid_colour(&d.shown.topology, *pid));
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
        let px = f.line_px();
        let y = r.y + r.h / 2.0 + px + 4.0;
        if y + px / 2.0 <= r.y + r.h {
            ctx.set_fill_style_str(theme.dim);
            // Each job's name and its count, in the job file's order ("reader ×1, writer ×1").
            let procs = &d.shown.topology.processes;
            let mut names: Vec<(&str, usize)> = Vec::new();
            for (p, _) in procs {
                match names.iter_mut().find(|(q, _)| *q == p.as_str()) {
                    Some(e) => e.1 += 1,
                    None => names.push((p.as_str(), 1)),
                }
            }
            let label = if names.len() > 1 {
                names.iter().map(|(q, k)| format!("{q} ×{k}")).collect::<Vec<_>>().join(", ")
            } else {
                format!("{name} ×{n}")
            };
            fit_text(ctx, &label, 10.0, y, crate::layout::LABEL_W - 14.0);
        }
    }
}

/// The hosts' starved lists, drawn after the tokens on a plate of the background: the requests
/// crossing from the tag map to the disks pass over them and would hide them.
fn draw_starved_notes(f: &Frame, notes_font: &str, notes: &[StarvedNote]) {
    let font_before = f.ctx.font();
    f.ctx.set_font(notes_font);
    for (text, x, y, max_w) in notes {
        plated_text(&f.ctx, f.theme.bg, f.theme.full, text, *x, *y, *max_w);
    }
    f.ctx.set_font(&font_before);
}

/// CPUs: one strip per core, coloured by the thread running now.
fn draw_cpus(f: &Frame) {
    let (ctx, d, theme) = (&f.ctx, f.d, f.theme);
    ctx.set_font(&f.font(11.0, "", MONO));
    let r = f.l.row(Stage::Cpus);
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
                ctx.set_fill_style_str(thread_colour_in(&d.shown.topology, name, pid));
                ctx.fill_rect(cell.x, cell.y, cell.w, cell.h);
                (format!("cpu{c} {name}"), name.to_string())
            }
            None => (format!("cpu{c} {busy:.0}%"), format!("{busy:.0}%")),
        };
        // A narrow strip shows what runs there ("ksoftirq…") rather than its number, and
        // never nothing: the strips are in CPU order.
        ctx.set_fill_style_str(theme.fg);
        if cell.w - 4.0 >= 10.0 {
            draw_cpu_strip_text(f, cell, &label, &short);
        }
    }
}

/// A CPU strip's text: the thread's name in a smaller type rather than cut, as "ksoftirqd/4" is
/// what the strip is there to show (else its stem: "flush", not "flus…"). The type goes down to
/// 70% of the diagram's 11 px without Large type: Large type's larger type gives way before
/// a word does (it never cuts a name the plain type shows whole in the same strip).
fn draw_cpu_strip_text(f: &Frame, cell: Rect, label: &str, short: &str) {
    let ctx = &f.ctx;
    let width = |t: &str| ctx.measure_text(t).map_or(f64::MAX, |m| m.width());
    let max_w = cell.w - 4.0;
    let floor = 0.7 * f.plain_scale / f.scale;
    let text = cpu_strip_text(label, short, max_w, floor, width);
    let w = width(text);
    if w > max_w && w * floor <= max_w {
        ctx.set_font(&f.font(11.0 * max_w / w, "", MONO));
        let _ = ctx.fill_text(text, cell.x + 2.0, cell.y + cell.h / 2.0);
        ctx.set_font(&f.font(11.0, "", MONO));
    } else {
        fit_text(ctx, text, cell.x + 2.0, cell.y + cell.h / 2.0, max_w);
    }
}

/// Where the trace is too dense to follow: why there are counts and no tokens.
fn draw_counts_note(f: &Frame) {
    f.ctx.set_fill_style_str(f.theme.dim);
    let pr = f.l.row(Stage::Processes);
    let why = "counts only: the trace is faster than the eye (slow down to see each request)";
    fit_text(&f.ctx, why, pr.x + 4.0, pr.y + pr.h - f.line_px() / 2.0 - 1.0, pr.w - 8.0);
}
