//! The diagram's tip: what the pointer (or the keyboard, on the focused diagram) is on, drawn
//! beside it on the canvas each frame (so it follows the run) and written to a text element a
//! screen reader announces. The words come from `RunView::hover_tip`.

use crate::view::RunView;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Widest tip line, in CSS pixels (before Large type).
const TIP_W: f64 = 380.0;

/// Breaks `text` into lines no wider than `max_w`.
fn wrap(ctx: &CanvasRenderingContext2d, text: &str, max_w: f64) -> Vec<String> {
    let width = |t: &str| ctx.measure_text(t).map_or(0.0, |m| m.width());
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let next = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if width(&next) > max_w && !line.is_empty() {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = next;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draws the tip at the pointer, inside the canvas, and updates the announced text.
pub fn draw_tip(canvas: &HtmlCanvasElement, d: &RunView) {
    let tip = d.hover_tip();
    // The screen reader's copy, written only when it changes (it is aria-live).
    if let Some(el) = canvas.parent_element().and_then(|p| p.query_selector(".diagram-tip").ok().flatten()) {
        let text = tip.clone().unwrap_or_default();
        if el.text_content().unwrap_or_default() != text {
            el.set_text_content(Some(&text));
        }
    }
    let (Some(text), Some((px, py))) = (tip, d.hover.borrow().at) else { return };
    let Some(ctx) = canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok()) else { return };
    let dark = canvas.closest("[data-theme=dark]").ok().flatten().is_some();
    let scale = super::diagram::scale_of(canvas);
    // In the drawing's coordinates, as the pointer is (the canvas keeps the frame's zoom).
    let (cw, ch, _) = super::diagram::logical_size(canvas);
    ctx.set_font(&format!("{:.0}px system-ui, sans-serif", 12.0 * scale));
    let lines = wrap(&ctx, &text, (TIP_W * scale).min(cw - 24.0));
    let line_h = 16.0 * scale;
    let w = lines.iter().map(|l| ctx.measure_text(l).map_or(0.0, |m| m.width())).fold(0.0, f64::max) + 16.0;
    let h = lines.len() as f64 * line_h + 10.0;
    // Below and right of the pointer, flipped to stay inside the canvas.
    let x = if px + 14.0 + w <= cw { px + 14.0 } else { (px - 14.0 - w).max(2.0) };
    let y = if py + 14.0 + h <= ch { py + 14.0 } else { (py - 14.0 - h).max(2.0) };
    ctx.set_fill_style_str(if dark { "#2a3139" } else { "#ffffff" });
    ctx.set_stroke_style_str(if dark { "#9aa4ae" } else { "#1d232b" });
    ctx.set_line_width(1.0);
    ctx.fill_rect(x, y, w, h);
    ctx.stroke_rect(x + 0.5, y + 0.5, w - 1.0, h - 1.0);
    ctx.set_fill_style_str(if dark { "#e9edf1" } else { "#1d232b" });
    ctx.set_text_baseline("middle");
    for (i, l) in lines.iter().enumerate() {
        let _ = ctx.fill_text(l, x + 8.0, y + 5.0 + line_h * (i as f64 + 0.5));
    }
}
