//! The diagram's rows that span columns: the stacking layer (dm devices over their paths'
//! columns, md arrays over their members with the stripe cache) and the hosts (can_queue and
//! the starved list).

use super::diagram::Frame;
use super::diagram_pools::{bar_hit, edge_inset, row_label_full, slot_bar, slot_label, slot_label_y, NO_COUNT};
use super::diagram_text::{draw_column_names, fit_first, group_names, ColumnName};
use crate::layout::{Rect, Stage};
use crate::view::{Hit, HitKind};
use blksim::tools::view::{DevOccupancy, DevView};

/// A host's starved list, to draw after the tokens: (text, x, y, max width).
pub(super) type StarvedNote = (String, f64, f64, f64);

/// The dm devices over one column: (requests in use, nr_requests, waiting, their indexes in
/// `upper`), summed as a group column sums its devices.
type DmColumn = (u32, u32, u32, Vec<usize>);

/// The box spanning columns `first..=last` in `stage`'s row.
fn span(f: &Frame, stage: Stage, first: usize, last: usize) -> Rect {
    let r = f.l.row(stage);
    let x0 = f.l.dev_cols[first].0;
    let x1 = f.l.dev_cols[last].0 + f.l.dev_cols[last].1;
    Rect { x: x0, y: r.y + 3.0, w: x1 - x0, h: r.h - 6.0 }
}

/// The stacking layer: a dm device sits over its path's column (a group column sums its
/// dm devices); an md array spans its members, with its stripe cache as the pool.
pub(super) fn draw_layer(f: &Frame, hits: &mut Vec<Hit>) {
    let (d, l) = (f.d, &f.l);
    let (ndev, ncols) = (d.shown.topology.devices.len(), l.cols.len());
    let occ = &d.shown.occupancy.0;
    let mut dm_cols: Vec<DmColumn> = vec![(0, 0, 0, Vec::new()); ncols];
    let mut kdm_cols = vec![0u32; ncols];
    for (k, up) in d.shown.topology.upper.iter().enumerate() {
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
        draw_md_array(f, k, up, o, span(f, Stage::Layer, c0, c1), hits);
    }
    draw_dm_columns(f, &dm_cols, &kdm_cols);
}

/// An md array: its name over its stripe cache's bar, and who waits for a stripe.
fn draw_md_array(f: &Frame, k: usize, up: &DevView, o: &DevOccupancy, cell: Rect, hits: &mut Vec<Hit>) {
    let (ctx, theme) = (&f.ctx, f.theme);
    ctx.set_stroke_style_str(theme.slot);
    ctx.stroke_rect(cell.x, cell.y, cell.w, cell.h);
    ctx.set_fill_style_str(theme.fg);
    let title = format!("{} · stripe cache", up.name);
    // The title's line, then the bar below it with its active/stripe_cache_size on its
    // right, on the bar's own line: inside the box however short the row is (A/B in
    // presenter mode with Large type leaves no room for a line under the bar).
    let px = f.line_px();
    let title_y = cell.y + 3.0 + px / 2.0;
    let _ = ctx.fill_text(&title, cell.x + 4.0, title_y);
    let bar = Rect {
        x: cell.x + 4.0,
        y: title_y + px / 2.0 + 2.0,
        w: (cell.w * 0.5).max(40.0),
        h: (cell.y + cell.h - 3.0 - (title_y + px / 2.0 + 2.0)).max(4.0),
    };
    slot_bar(ctx, theme, bar, NO_COUNT, o.stripes_active, o.stripes_max, None);
    ctx.set_fill_style_str(theme.dim);
    let count = format!("{}/{}", o.stripes_active, o.stripes_max);
    // Beside the bar; where the bar is too thin for the text to stay inside the box (A/B
    // with Large type), at the right of the title's line instead.
    let on_title_line = bar.y + bar.h / 2.0 + px / 2.0 > cell.y + cell.h - 1.0;
    let mut line_end = cell.x + cell.w - 4.0;
    if on_title_line {
        let w = ctx.measure_text(&count).map_or(60.0, |m| m.width());
        line_end -= w + 8.0;
        let _ = ctx.fill_text(&count, line_end + 8.0, title_y);
    } else {
        let count_x = bar.x + bar.w + 8.0;
        fit_first(ctx, &[&count, &o.stripes_active.to_string()], count_x, bar.y + bar.h / 2.0, line_end - count_x);
    }
    hits.push(bar_hit(bar, NO_COUNT, HitKind::Stripes(k)));
    if !o.stripe_sleepers.is_empty() {
        // On the title's line: the bios in flight cross the row at the bar's height, and
        // drawn over them the count could not be read.
        let x = cell.x + 4.0 + ctx.measure_text(&title).map_or(0.0, |m| m.width()) + 12.0;
        ctx.set_fill_style_str(theme.full);
        let zz = o.stripe_sleepers.len();
        fit_first(ctx, &[&format!("zz {zz} on wait_for_stripe"), &format!("zz {zz}")], x, title_y, line_end - x);
    }
}

/// The dm devices, column by column: their names, "N waiting" (and kdmwork's queue), and the
/// request pool's bar.
fn draw_dm_columns(f: &Frame, dm_cols: &[DmColumn], kdm_cols: &[u32]) {
    let (ctx, theme, upper) = (&f.ctx, f.theme, &f.d.shown.topology.upper);
    let mut dm_names = Vec::new();
    let dm_any_group = dm_cols.iter().any(|c| c.3.len() > 1);
    for (ci, (used, limit, waiting, ks)) in dm_cols.iter().enumerate() {
        if ks.is_empty() {
            continue;
        }
        let cell = f.l.cell(Stage::Layer, ci);
        let labelled = (f.l.dev_labels || ks.len() > 1 || dm_any_group) && f.roomy(Stage::Layer);
        // Larger type in a row too short for the name's line and the count's: both on one
        // line, the bar under it.
        let px = f.line_px();
        if labelled && f.large() && cell.h < 2.0 * px + 8.0 {
            let names = group_names(&upper[ks[0]].name, &upper[ks[ks.len() - 1]].name, ks.len());
            let short = names.last().map_or("", String::as_str);
            ctx.set_fill_style_str(theme.dim);
            let options = [format!("{} · {waiting} waiting", names[0]), format!("{short} · {waiting}"), waiting.to_string()];
            fit_first(ctx, &[&options[0], &options[1], &options[2]], cell.x + 2.0, cell.y + px / 2.0 + 1.0, cell.w - 4.0);
            let bar = Rect { y: cell.y + px + 3.0, h: (cell.h - px - 5.0).max(3.0), ..cell };
            slot_bar(ctx, theme, bar, NO_COUNT, *used, *limit, None);
            continue;
        }
        if labelled {
            let names = group_names(&upper[ks[0]].name, &upper[ks[ks.len() - 1]].name, ks.len());
            let inset = edge_inset(f.line_px());
            dm_names.push(ColumnName { names, count: ks.len(), x: cell.x + 2.0, y: cell.y + inset, w: cell.w - 4.0 });
            ctx.set_fill_style_str(theme.dim);
            let kdm = kdm_cols[ci];
            let text = if kdm > 0 { format!("{waiting} waiting · kdmwork {kdm}") } else { format!("{waiting} waiting") };
            fit_first(
                ctx,
                &[&text, &format!("{waiting} waiting"), &waiting.to_string()],
                cell.x + 2.0,
                cell.y + cell.h - inset,
                cell.w - 4.0,
            );
        }
        slot_bar(ctx, theme, Rect { y: cell.y + cell.h * 0.3, h: cell.h * 0.4, ..cell }, NO_COUNT, *used, *limit, None);
    }
    draw_column_names(ctx, theme, &dm_names);
}

/// Hosts: can_queue as a bar over the host's disks' columns, and the starved list, returned to
/// be drawn after the tokens.
pub(super) fn draw_hosts(f: &Frame, hits: &mut Vec<Hit>) -> Vec<StarvedNote> {
    let (ctx, d, theme) = (&f.ctx, f.d, f.theme);
    let hosts = &d.shown.occupancy.1;
    let mut starved_notes = Vec::new();
    for (hi, h) in d.shown.topology.hosts.iter().enumerate() {
        let cols: Vec<usize> =
            d.shown.topology.devices.iter().enumerate().filter(|(_, dv)| dv.host as usize == hi).map(|(i, _)| f.l.column_of(i)).collect();
        let (Some(&first), Some(&last)) = (cols.iter().min(), cols.iter().max()) else { continue };
        let cell = span(f, Stage::Host, first, last);
        let busy = hosts.get(hi).map_or(0, |o| o.busy);
        let host_full = row_label_full(ctx, std::iter::once((cell.w, h.can_queue)));
        // The bar in the row's top half and its count under it; in larger type the count's
        // line takes what it needs of the row and the bar what is left (`bar_geom`).
        let roomy = f.roomy(Stage::Host);
        let (bar, line) = if roomy && f.large() { (cell, f.line_px()) } else { (Rect { h: cell.h * 0.55, ..cell }, NO_COUNT) };
        if roomy {
            slot_bar(ctx, theme, bar, line, busy, h.can_queue, Some(host_full));
        } else {
            // A row with no line under the bar (A/B in presenter mode): the host's busy/can_queue
            // on the bar's own line, at its right, as the stripe cache's count is. An HBA spans
            // its disks' columns, so it has the width that a column's pool does not.
            let text = slot_label(busy, h.can_queue, true);
            let text_w = ctx.measure_text(&text).map_or(60.0, |m| m.width());
            let bar_w = cell.w - text_w - 8.0;
            if bar_w >= 40.0 {
                slot_bar(ctx, theme, Rect { w: bar_w, ..bar }, line, busy, h.can_queue, None);
                ctx.set_fill_style_str(theme.dim);
                let _ = ctx.fill_text(&text, cell.x + bar_w + 6.0, bar.y + bar.h / 2.0);
            } else {
                slot_bar(ctx, theme, bar, line, busy, h.can_queue, None);
            }
        }
        hits.push(bar_hit(bar, line, HitKind::Host(hi)));
        if let Some(o) = hosts.get(hi).filter(|o| !o.starved.is_empty()) {
            ctx.set_fill_style_str(theme.full);
            // As many names as fit, then how many more: a cut list would hide its length.
            let note = |k: usize| {
                let shown: Vec<&str> = o.starved.iter().take(k).map(String::as_str).collect();
                let more = if o.starved.len() > k { format!(" +{}", o.starved.len() - k) } else { String::new() };
                format!("starved: {}{more}", shown.join(" "))
            };
            // Beside the slot bar's used/limit label, not on it (rows are short in A/B).
            let y = slot_label_y(bar, line);
            let x = if line > NO_COUNT {
                cell.x + 14.0 + ctx.measure_text(&slot_label(busy, h.can_queue, host_full)).map_or(66.0, |m| m.width())
            } else {
                cell.x + 80.0
            };
            let max_w = cell.x + cell.w - 4.0 - x;
            let fits = |t: &str| ctx.measure_text(t).is_ok_and(|m| m.width() <= max_w);
            let k = (0..=o.starved.len().min(8)).rev().find(|&k| fits(&note(k))).unwrap_or(0);
            starved_notes.push((note(k), x, y, max_w));
        }
    }
    starved_notes
}
