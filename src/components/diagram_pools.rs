//! The diagram's pools as bars: a pool's slots with `used/limit` (request pool, tag map, host,
//! stripe cache), blk-mq's hardware queues side by side, and the places the pointer finds them.

use super::diagram::{Frame, Theme};
use super::diagram_text::{fit_first, fit_text};
use crate::layout::{Column, Rect};
use crate::view::{Hit, HitKind};
use blksim::tools::view::{DevOccupancy, HctxOccupancy};
use web_sys::CanvasRenderingContext2d;

/// A slot bar's place (as `slot_bar` draws it) for the pointer.
pub(super) fn bar_hit(c: Rect, line: f64, kind: HitKind) -> Hit {
    let (y, h, _) = bar_geom(c, line);
    Hit { x: c.x, y: y - 2.0, w: c.w, h: h + 4.0, kind }
}

/// A pool bar's top and height in its cell, and the middle of the line under it for its count
/// in type `line` px tall. The 11 px type keeps the bar in the cell's middle. Larger type (a
/// projector) moves the bar up and thins it, down to 3 px, so that the count keeps its line in
/// the row: a count is never dropped for a thicker bar.
pub(super) fn bar_geom(c: Rect, line: f64) -> (f64, f64, f64) {
    let h = (c.h * 0.45).clamp(4.0, 16.0);
    if line <= 11.0 {
        let y = c.y + (c.h - h) / 2.0;
        return (y, h, y + h + 8.0);
    }
    let below = line + 2.0;
    let h = h.min(c.h - below - 3.0).max(3.0);
    let y = c.y + ((c.h - h - below) / 2.0).max(1.0);
    (y, h, y + h + 2.0 + line / 2.0)
}

/// Token places per row in a lane cell: one every 28 px.
pub(super) fn lane_per_row(c: Rect) -> usize {
    ((c.w - 8.0) / 28.0).max(1.0) as usize
}

/// Token places in an elevator lane: rows of 9 px above its bottom edge.
pub(super) fn lane_fits(c: Rect) -> usize {
    lane_per_row(c) * ((c.h - 24.0) / 9.0).max(1.0) as usize
}

/// `bar_geom`'s line for a bar without a count under it: the bar keeps its cell's middle.
pub(super) const NO_COUNT: f64 = 11.0;

/// How far from a cell's top (or bottom) edge the middle of a line of text in `line` px type
/// goes.
pub(super) fn edge_inset(line: f64) -> f64 {
    if line <= 11.0 {
        8.0
    } else {
        line * 0.6
    }
}

/// Where `slot_bar` writes its `used/limit` label (the line below the bar).
pub(super) fn slot_label_y(c: Rect, line: f64) -> f64 {
    bar_geom(c, line).2
}

/// The hardware queues of a column's one blk-mq device (none for a group or a legacy queue).
pub(super) fn hw_queues_of<'a>(col: &Column, occ: &'a [DevOccupancy]) -> &'a [HctxOccupancy] {
    if col.count == 1 {
        occ[col.first].hctx.as_slice()
    } else {
        &[]
    }
}

/// `r` cut into `n` side by side, 6 px apart.
pub(super) fn split(r: Rect, n: usize) -> Vec<Rect> {
    let gap = 6.0;
    let w = ((r.w - gap * (n as f64 - 1.0)) / n as f64).max(1.0);
    (0..n).map(|i| Rect { x: r.x + i as f64 * (w + gap), y: r.y, w, h: r.h }).collect()
}

/// blk-mq's hardware queues of one device (`blk_mq_hw_ctx`), side by side: in the tag-map row
/// each queue's own tag map, with `zz` for who sleeps on it (`bt_get`); in the elevator row
/// what waits in each: its dispatch list (a BUSY run's leftovers, parked until the queue runs
/// again) and its software queue, and STOPPED while `scsi_queue_rq` has it stopped.
pub(super) fn hw_queues(f: &Frame, hctx: &[HctxOccupancy], tags: Rect, elv: Rect, labels: bool, text: bool) {
    let (ctx, theme) = (&f.ctx, f.theme);
    let line = if labels { f.line_px() } else { NO_COUNT };
    for ((h, o), (t, e)) in hctx.iter().enumerate().zip(split(tags, hctx.len()).into_iter().zip(split(elv, hctx.len()))) {
        slot_bar(ctx, theme, t, line, o.tags, o.depth, None);
        if labels {
            ctx.set_fill_style_str(theme.dim);
            let zz = if o.sleepers.is_empty() { String::new() } else { format!(" zz {}", o.sleepers.len()) };
            fit_first(
                ctx,
                &[&format!("hctx{h} {}/{}{zz}", o.tags, o.depth), &format!("{h}: {}{zz}", o.tags)],
                t.x + 2.0,
                slot_label_y(t, line),
                t.w - 2.0,
            );
        }
        if !text {
            continue;
        }
        let what = match (o.parked.len(), o.queued) {
            (0, 0) => "idle".to_string(),
            (0, q) => format!("{q} queued"),
            (p, 0) => format!("{p} parked"),
            (p, q) => format!("{p} parked, {q} queued"),
        };
        let head = if o.stopped { format!("hctx{h} STOPPED") } else { format!("hctx{h}") };
        ctx.set_fill_style_str(if o.stopped { theme.full } else { theme.dim });
        fit_first(ctx, &[&head, &h.to_string()], e.x + 2.0, e.y + edge_inset(line), e.w - 4.0);
        ctx.set_fill_style_str(if !o.parked.is_empty() && !o.stopped { theme.full } else { theme.dim });
        fit_text(ctx, &what, e.x + 2.0, e.y + e.h - edge_inset(line), e.w - 4.0);
    }
}

/// A pool bar's count: "used/limit", or "used" alone where a row is too narrow for the pair.
pub(super) fn slot_label(used: u32, limit: u32, full: bool) -> String {
    if full {
        format!("{used}/{limit}")
    } else {
        used.to_string()
    }
}

/// One form for a whole row of pool bars, given each bar's width and limit: "used/limit" when
/// the widest such label the row can show ("256/256") fits its narrowest bar, else "used".
/// Chosen per row, not per bar or per count: a row mixing "16" with "2/32" (a group of 8 disks
/// beside single ones) reads as two kinds of figure, and a label must not change form as its
/// count gains a digit.
pub(super) fn row_label_full(ctx: &CanvasRenderingContext2d, bars: impl Iterator<Item = (f64, u32)>) -> bool {
    let (w_min, limit_max) = bars.fold((f64::INFINITY, 0u32), |(w, l), (bw, bl)| (w.min(bw), l.max(bl)));
    w_min.is_finite() && ctx.measure_text(&format!("{limit_max}/{limit_max}")).is_ok_and(|m| m.width() <= w_min - 2.0)
}

/// A pool's bar, its slots, a red edge when full, and its count in the row's form (`label`:
/// `Some(full)`), or none.
pub(super) fn slot_bar(ctx: &CanvasRenderingContext2d, theme: &Theme, c: Rect, line: f64, used: u32, limit: u32, label: Option<bool>) {
    let (y, h, label_y) = bar_geom(c, line);
    ctx.set_fill_style_str(theme.slot);
    ctx.fill_rect(c.x, y, c.w, h);
    let frac = if limit > 0 { (used as f64 / limit as f64).min(1.0) } else { 0.0 };
    ctx.set_fill_style_str(theme.fg);
    ctx.fill_rect(c.x, y, c.w * frac, h);
    if limit <= 64 && c.w / limit.max(1) as f64 >= 3.0 {
        // Slot dividers, so a pool reads as slots.
        ctx.set_fill_style_str(theme.bg);
        for i in 1..limit {
            ctx.fill_rect(c.x + c.w * i as f64 / limit as f64, y, 1.0, h);
        }
    }
    if used >= limit {
        ctx.set_stroke_style_str(theme.full);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(c.x, y, c.w, h);
        ctx.set_line_width(1.0);
    }
    if let Some(full) = label {
        ctx.set_fill_style_str(theme.dim);
        fit_first(ctx, &[&slot_label(used, limit, full)], c.x + 2.0, label_y, c.w - 2.0);
    }
}

#[cfg(test)]
mod tests {
    use super::{bar_geom, NO_COUNT};
    use crate::layout::{type_scale, Rect};

    #[test]
    fn a_count_in_larger_type_keeps_its_line_inside_the_row_and_the_bar_thins_for_it() {
        // The rows of an A/B pair in presenter mode at 1280 x 720: about 27 to 50 px.
        for h in [26.8, 33.5, 47.0, 50.0, 80.0] {
            let c = Rect { x: 0.0, y: 100.0, w: 46.0, h };
            for scale in [type_scale(true, false), type_scale(true, true), type_scale(false, true)] {
                let line = 11.0 * scale;
                let (y, bh, label_y) = bar_geom(c, line);
                assert!(y >= c.y && bh >= 3.0, "h {h}, line {line}: bar at {y}, {bh} tall");
                assert!(label_y - line / 2.0 >= y + bh, "h {h}, line {line}: the count's line is under the bar");
                assert!(label_y + line / 2.0 <= c.y + c.h + 1e-9, "h {h}, line {line}: the count's line ends in the row");
            }
        }
        // 11 px type: the bar in the cell's middle, its count 8 px under it, as always.
        let c = Rect { x: 0.0, y: 0.0, w: 46.0, h: 40.0 };
        assert_eq!(bar_geom(c, NO_COUNT), (12.0, 16.0, 36.0));
    }
}
