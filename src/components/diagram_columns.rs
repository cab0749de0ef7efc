//! The diagram's device columns: each column's request pool, tag map (or blk-mq's hardware
//! queues), elevator count and disk. A group column sums its devices (limits too), so a full
//! bar still means every device in it is full.

use super::diagram::Frame;
use super::diagram_pools::{
    bar_hit, edge_inset, hw_queues, hw_queues_of, row_label_full, slot_bar, slot_label, slot_label_y, split, NO_COUNT,
};
use super::diagram_text::{draw_column_names, fit_first, fit_text, group_names, ColumnName};
use crate::layout::{Column, Rect, Stage};
use crate::view::{Hit, HitKind};

/// What the columns share: each one's request-pool and tag-map limits (a group's summed), the
/// label form of each row (`row_label_full`), and the room the groups' names need.
struct Columns {
    limits: Vec<(u32, u32)>,
    pool_full: bool,
    tag_full: bool,
    any_group: bool,
    /// The widest of the groups' shortest names ("by–cb" of sdby–sdcb; the count form aside):
    /// in a row too short for a name above the platter, the platter makes room for it beside,
    /// so that each column keeps its own name instead of one caption over the row's platters.
    group_name_w: f64,
}

/// The sum of `f` over a column's devices.
fn col_sum(col: &Column, f: impl Fn(usize) -> u32) -> u32 {
    (col.first..col.first + col.count).map(f).sum()
}

/// A column's name, in the forms `draw_column_names` picks from.
fn col_names(f: &Frame, col: &Column) -> Vec<String> {
    let devices = &f.d.shown.topology.devices;
    group_names(&devices[col.first].name, &devices[col.first + col.count - 1].name, col.count)
}

/// Per-column pools: elevator count, request pool, tags, drive.
pub(super) fn draw_columns(f: &Frame, hits: &mut Vec<Hit>) {
    let (ctx, l) = (&f.ctx, &f.l);
    let group_name_w = l
        .cols
        .iter()
        .filter(|c| c.count > 1)
        .filter_map(|c| {
            let names = col_names(f, c);
            let shortest = names.len().checked_sub(2).map(|i| names[i].clone())?;
            ctx.measure_text(&shortest).ok().map(|m| m.width())
        })
        .fold(0.0_f64, f64::max);
    let limits: Vec<(u32, u32)> = l
        .cols
        .iter()
        .map(|col| {
            let devs = &f.d.shown.topology.devices[col.first..col.first + col.count];
            (devs.iter().map(|t| t.nr_requests).sum(), devs.iter().map(|t| t.queue_depth).sum())
        })
        .collect();
    let pool_full = row_label_full(ctx, limits.iter().enumerate().map(|(ci, lim)| (l.cell(Stage::RequestPool, ci).w, lim.0)));
    let tag_full = row_label_full(ctx, limits.iter().enumerate().map(|(ci, lim)| (l.cell(Stage::TagMap, ci).w, lim.1)));
    let any_group = l.cols.iter().any(|c| c.count > 1);
    let cols = Columns { limits, pool_full, tag_full, any_group, group_name_w };
    let mut disk_names = Vec::new();
    for (ci, col) in l.cols.iter().enumerate() {
        draw_request_pool(f, &cols, ci, col, hits);
        draw_tags_and_elevator(f, &cols, ci, col, hits);
        if let Some(name) = draw_disk(f, &cols, ci, col) {
            disk_names.push(name);
        }
    }
    draw_column_names(ctx, f.theme, &disk_names);
}

/// A column too narrow for device names (Large type on a projector) still shows its counts:
/// `slot_bar` falls back from "used/limit" to "used" where the pair does not fit.
fn counts_fit(f: &Frame, stage: Stage, ci: usize) -> bool {
    (f.l.dev_labels || f.l.cell(stage, ci).w >= 24.0) && f.roomy(stage)
}

/// A column's request pool: its bar, and on the line of the bar's used/limit label, after it,
/// who sleeps for a request and why the count can pass nr_requests (get_request lets a batcher
/// go up to the queue's pool_max: 3/2 of it from 2.6.13, BLK_BATCH_REQ more per batcher
/// before). Nothing is drawn over the bar or into the next row.
fn draw_request_pool(f: &Frame, cols: &Columns, ci: usize, col: &Column, hits: &mut Vec<Hit>) {
    let (ctx, theme, occ) = (&f.ctx, f.theme, &f.d.shown.occupancy.0);
    let used = col_sum(col, |i| occ[i].pool[0].max(occ[i].pool[1]));
    let limit = cols.limits[ci].0;
    let c = f.l.cell(Stage::RequestPool, ci);
    let pool_labels = counts_fit(f, Stage::RequestPool, ci);
    let line = if pool_labels { f.line_px() } else { NO_COUNT };
    slot_bar(ctx, theme, c, line, used, limit, pool_labels.then_some(cols.pool_full));
    hits.push(bar_hit(c, line, HitKind::Pool { first: col.first, count: col.count, limit }));
    let label_y = slot_label_y(c, line);
    let mut x = c.x
        + if pool_labels {
            2.0 + ctx.measure_text(&slot_label(used, limit, cols.pool_full)).map_or(40.0, |m| m.width()) + 10.0
        } else {
            2.0
        };
    let sleepers = col_sum(col, |i| occ[i].sleepers.len() as u32);
    ctx.set_fill_style_str(theme.full);
    // A row with no line for text (A/B in presenter mode) shows the full bar alone.
    if sleepers > 0 && f.roomy(Stage::RequestPool) {
        let text = format!("zz {sleepers}");
        fit_text(ctx, &text, x, label_y, c.x + c.w - x);
        x += ctx.measure_text(&text).map_or(30.0, |m| m.width()) + 10.0;
    }
    if used > limit && f.roomy(Stage::RequestPool) && c.x + c.w - x >= 120.0 {
        // 2.6.13+ caps the pool at 3/2 of nr_requests; before it only each batcher's
        // BLK_BATCH_REQ bounds it (pool_max's sum over every thread is a bound, not a
        // batcher's share).
        let pool_max = col_sum(col, |i| occ[i].pool_max);
        let devices = &f.d.shown.topology.devices;
        let capped = (col.first..col.first + col.count).all(|i| occ[i].pool_max == 3 * devices[i].nr_requests / 2);
        let text = if capped {
            format!("over nr_requests: batchers may take up to {pool_max} (3/2 of it)")
        } else {
            format!("over nr_requests: each batcher may take {} more", blksim::calib::BLK_BATCH_REQ)
        };
        fit_text(ctx, &text, x, label_y, c.x + c.w - x);
    }
}

/// A column's tag map (a blk-mq device with several hardware queues: each its own tag map and
/// dispatch list) and its elevator's "N waiting".
fn draw_tags_and_elevator(f: &Frame, cols: &Columns, ci: usize, col: &Column, hits: &mut Vec<Hit>) {
    let (ctx, l, theme, occ) = (&f.ctx, &f.l, f.theme, &f.d.shown.occupancy.0);
    let depth = cols.limits[ci].1;
    let tag_labels = counts_fit(f, Stage::TagMap, ci);
    let e = l.cell(Stage::Elevator, ci);
    let hctx = hw_queues_of(col, occ);
    if hctx.len() > 1 {
        let line = if tag_labels { f.line_px() } else { NO_COUNT };
        hw_queues(f, hctx, l.cell(Stage::TagMap, ci), e, tag_labels, f.roomy(Stage::Elevator));
        for (h, r) in split(l.cell(Stage::TagMap, ci), hctx.len()).into_iter().enumerate() {
            hits.push(bar_hit(r, line, HitKind::Hctx { dev: col.first, hctx: h }));
        }
    } else {
        let line = if tag_labels { f.line_px() } else { NO_COUNT };
        slot_bar(ctx, theme, l.cell(Stage::TagMap, ci), line, col_sum(col, |i| occ[i].tags), depth, tag_labels.then_some(cols.tag_full));
        hits.push(bar_hit(l.cell(Stage::TagMap, ci), line, HitKind::Tags { first: col.first, count: col.count, limit: depth }));
    }
    let waiting = col_sum(col, |i| occ[i].elevator);
    // Larger type keeps the count wherever 11 px type would show it: a narrower column
    // shortens it ("12" for "12 waiting") rather than dropping it.
    if hctx.len() <= 1 && (f.d.trace.density || l.dev_labels || col.group.is_some() || f.large()) && f.roomy(Stage::Elevator) {
        ctx.set_fill_style_str(theme.dim);
        let text = if e.w >= 90.0 { format!("{waiting} waiting") } else { waiting.to_string() };
        fit_text(ctx, &text, e.x + 2.0, e.y + edge_inset(f.line_px()), e.w - 4.0);
    }
}

/// Where a column's platter goes in its disk cell, and the room left for its text.
struct Platter {
    cx: f64,
    cy: f64,
    rad: f64,
    text_w: f64,
    /// Named above the platter, the queue below it.
    labelled: bool,
    /// Named beside the platter, on its line, in the name's shortest form.
    squeezed: bool,
}

/// The platter sits between the name (top line) and the queue (bottom line); in a row too short
/// for that, at the cell's right, with the text beside it.
fn platter(f: &Frame, cols: &Columns, c: Rect, col: &Column) -> Platter {
    // Beside groups (one expanded), single devices are named too, in their short form.
    // Larger type keeps the name and the queue on their lines as 11 px type does, in their
    // shortest forms ("b", "3") where the column is narrow.
    let labelled = (f.l.dev_labels || col.count > 1 || cols.any_group || f.large()) && f.roomy(Stage::Disks);
    // A group's platters are stacked 3 px up and right each, 6 px in all: keep them clear
    // of the text lines too (14 px each, 17 in Large type).
    let stack = if col.count > 1 { 6.0 } else { 0.0 };
    let text_h = f.line_px() + 3.0;
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
    let squeezed = !labelled && f.l.cols.len() > 1;
    if squeezed {
        rad = (c.h / 2.0 - 3.0).min(c.w * 0.2);
        cx = c.x + c.w - rad - 4.0;
        cy = c.y + c.h / 2.0;
        text_w = c.w - 2.0 * rad - 10.0;
    }
    if labelled && rad < 6.0 {
        rad = (c.h / 2.0 - 3.0).min(c.w * 0.2);
        // Smaller, down to 4 px, where that lets the groups' names fit beside it.
        if col.count > 1 || cols.any_group {
            rad = rad.min(((c.w - 10.0 - cols.group_name_w) / 2.0).max(4.0));
        }
        // The queue's count keeps room for three digits (monospace: 0.6 em each) before the
        // platter does: the count is what a step names.
        let need = 3.0 * 0.6 * f.line_px();
        if c.w - 2.0 * rad - 10.0 < need {
            rad = ((c.w - 10.0 - need) / 2.0).max(3.0);
        }
        cx = c.x + c.w - rad - 5.0;
        text_w = c.w - 2.0 * rad - 10.0;
    }
    Platter { cx, cy, rad: rad.max(3.0), text_w, labelled, squeezed }
}

/// The disk: a platter with the head's position as an arc, and what the drive holds. A group
/// draws stacked platters. Returns the column's name for `draw_column_names`, if it shows one.
fn draw_disk(f: &Frame, cols: &Columns, ci: usize, col: &Column) -> Option<ColumnName> {
    let (ctx, theme) = (&f.ctx, f.theme);
    let c = f.l.cell(Stage::Disks, ci);
    let p = platter(f, cols, c, col);
    let in_drive = col_sum(col, |i| f.d.shown.occupancy.0[i].in_drive);
    ctx.set_stroke_style_str(theme.slot);
    ctx.set_line_width(1.0);
    let kind = &f.d.shown.topology.disk_kind;
    if kind == "ssd" || kind == "ssd830" || kind == "nvme" || kind == "ramlun" {
        draw_channels(f, c, col, in_drive);
        return None;
    }
    let layers = if col.count > 1 { 3 } else { 1 };
    for k in (0..layers).rev() {
        ctx.begin_path();
        let _ = ctx.arc(p.cx + 3.0 * k as f64, p.cy - 3.0 * k as f64, p.rad, 0.0, std::f64::consts::TAU);
        ctx.stroke();
    }
    let head = f.d.shown.head_positions.get(col.first).copied().unwrap_or(0.0);
    let hr = p.rad * (1.0 - 0.8 * head);
    ctx.set_stroke_style_str(if in_drive > 0 { theme.fg } else { theme.dim });
    ctx.set_line_width(2.5);
    ctx.begin_path();
    let _ = ctx.arc(p.cx, p.cy, hr.max(1.5), -2.2, -0.9);
    ctx.stroke();
    ctx.set_line_width(1.0);
    if p.labelled {
        ctx.set_fill_style_str(theme.dim);
        let hint = if col.count > 1 { format!("q {in_drive} · click") } else { format!("q {in_drive}") };
        fit_first(ctx, &[&hint, &format!("q {in_drive}"), &in_drive.to_string()], c.x + 2.0, c.y + c.h - edge_inset(f.line_px()), p.text_w);
        Some(ColumnName { names: col_names(f, col), count: col.count, x: c.x + 2.0, y: c.y + edge_inset(f.line_px()), w: p.text_w })
    } else if p.squeezed {
        Some(ColumnName { names: col_names(f, col), count: col.count, x: c.x + 2.0, y: c.y + c.h / 2.0, w: p.text_w })
    } else {
        None
    }
}

/// An SSD, SATA or NVMe (or a RAM LUN): its channels as slots, filled by the commands it holds.
fn draw_channels(f: &Frame, c: Rect, col: &Column, in_drive: u32) {
    let (ctx, theme, topology) = (&f.ctx, f.theme, &f.d.shown.topology);
    let per_dev = match topology.disk_kind.as_str() {
        "ssd" => blksim::calib::SSD_CHANNELS,
        "ssd830" => blksim::calib::SSD830_CHANNELS,
        "nvme" => blksim::calib::NVME_CHANNELS,
        _ => blksim::calib::RAMLUN_SLOTS,
    };
    let channels = per_dev * col.count as u32;
    slot_bar(ctx, theme, Rect { x: c.x, y: c.y + c.h * 0.3, w: c.w, h: c.h * 0.4 }, NO_COUNT, in_drive.min(channels), channels, None);
    if f.l.dev_labels || col.count > 1 {
        ctx.set_fill_style_str(theme.fg);
        let inset = edge_inset(f.line_px());
        fit_text(ctx, &topology.devices[col.first].name, c.x + 2.0, c.y + inset, c.w - 4.0);
        ctx.set_fill_style_str(theme.dim);
        fit_text(ctx, &format!("channels {in_drive}/{channels}"), c.x + 2.0, c.y + c.h - inset, c.w - 4.0);
    }
}
