//! The diagram's moving parts: the bio and request tokens, tweened between the stages the trace
//! named, and grey bars for requests that wait in an elevator without a token (from before a
//! jump or a fresh start of the animation). `diagram.rs` draws the rest of the frame.

use super::diagram::Frame;
use super::diagram_pools::{hw_queues_of, lane_fits, lane_per_row, split};
use crate::layout::{Rect, StackLayout, Stage};
use crate::palette::pid_colour;
use crate::view::{Hit, HitKind, RunView, Token, TokenStage};

/// Where a token is drawn at each stage: the columns of the devices (a stacking device's over
/// the column of its first lower device) and the layout.
struct Places<'a> {
    d: &'a RunView,
    l: &'a StackLayout,
    col_of: Vec<usize>,
}

impl Places<'_> {
    fn new<'a>(d: &'a RunView, l: &'a StackLayout) -> Places<'a> {
        let ndev = d.shown.topology.devices.len();
        let col_of = (0..ndev)
            .map(|i| l.column_of(i))
            .chain(d.shown.topology.upper.iter().map(|u| l.column_of(u.lower.first().copied().unwrap_or(0) as usize)))
            .collect();
        Places { d, l, col_of }
    }

    fn column(&self, t: &Token) -> usize {
        self.col_of.get(t.dev as usize).copied().unwrap_or(0)
    }

    /// Where token `t` is at `stage`, the `slot`th in its lane.
    fn at(&self, t: &Token, stage: TokenStage, slot: usize) -> (f64, f64) {
        let (l, di) = (self.l, self.column(t));
        if t.dev as usize >= self.d.shown.topology.devices.len() && stage != TokenStage::Queued {
            return self.in_layer(di, stage, slot);
        }
        match stage {
            TokenStage::Done => {
                // A completion fades out at the disk that served it.
                let c = l.cell(Stage::Disks, di);
                (c.x + c.w / 2.0, c.y + 10.0)
            }
            TokenStage::Queued => {
                let processes = &self.d.shown.topology.processes;
                let i = processes.iter().position(|(_, p)| *p == t.pid).unwrap_or(0);
                l.process_slot(i, processes.len())
            }
            TokenStage::Sleeping => {
                let c = l.cell(Stage::RequestPool, di);
                (c.x + c.w - 6.0, c.y + c.h / 2.0)
            }
            TokenStage::Merging | TokenStage::Elevator => {
                // Waiting requests queue left to right in dispatch order, wrapping upwards.
                let c = l.cell(Stage::Elevator, di);
                let per_row = lane_per_row(c);
                let (row, col) = (slot / per_row, slot % per_row);
                (c.x + 4.0 + col as f64 * 28.0, c.y + c.h - 18.0 - row as f64 * 9.0)
            }
            TokenStage::Device => {
                // Issued requests sit on the tag map, one place per tag in use.
                let c = l.cell(Stage::TagMap, di);
                let per_row = lane_per_row(c);
                (c.x + 4.0 + (slot % per_row) as f64 * 28.0, c.y + 6.0)
            }
        }
    }

    /// In the stacking layer: waiting requests left to right; issued ones (cloned or mapped
    /// onto the lower devices) at the bottom edge.
    fn in_layer(&self, di: usize, stage: TokenStage, slot: usize) -> (f64, f64) {
        let c = self.l.cell(Stage::Layer, di);
        let per_row = lane_per_row(c);
        // Above the cell's bottom line ("N waiting"), which tokens must not hide.
        let issued = stage == TokenStage::Device || stage == TokenStage::Done;
        let issued_y = (c.y + c.h * 0.72).min(c.y + c.h - 16.0);
        let y = if issued { issued_y } else { (c.y + c.h * 0.45).min(issued_y - 6.0) };
        // A row too short for three lines (A/B in presenter mode): on the pool's bar, not
        // over the columns' names on the top line, waiting ones a little above its middle
        // and issued ones a little below.
        let y = if y < c.y + 16.0 { c.y + c.h / 2.0 + if issued { 3.0 } else { -3.0 } } else { y };
        (c.x + 4.0 + (slot % per_row) as f64 * 28.0, y)
    }
}

/// Draws the tokens (at `now_ms` of their tweens, or where they are going with reduced motion),
/// adds a hit for each, and returns how many request tokens each column's elevator lane holds.
pub(super) fn draw_tokens(f: &Frame, now_ms: f64, reduced_motion: bool, hits: &mut Vec<Hit>) -> Vec<usize> {
    let places = Places::new(f.d, &f.l);
    let ease = |t: f64| 1.0 - (1.0 - t) * (1.0 - t);
    let tween = f.d.tween_ms();
    // With reduced motion every token is already where it is going (and a finished one gone).
    let progress = |t: &Token| if reduced_motion { 1.0 } else { ease(((now_ms - t.moved_ms) / tween).clamp(0.0, 1.0)) };
    let per_col_elev = draw_requests(f, &places, &progress, hits);
    let ctx = &f.ctx;
    for (&id, t) in f.d.trace.bios.iter() {
        let k = progress(t);
        let (x0, y0) = places.at(t, t.prev, 0);
        let (x1, y1) = places.at(t, t.stage, 0);
        let (x, y) = (x0 + (x1 - x0) * k, y0 + (y1 - y0) * k);
        ctx.set_global_alpha(if t.stage == TokenStage::Merging { 1.0 - k } else { 1.0 });
        ctx.set_fill_style_str(pid_colour(&f.d.shown.topology, t.pid));
        ctx.fill_rect(x - 2.5, y - 2.5, 5.0, 5.0);
        hits.push(Hit { x: x - 2.5, y: y - 2.5, w: 5.0, h: 5.0, kind: HitKind::Bio(id) });
    }
    ctx.set_global_alpha(1.0);
    per_col_elev
}

/// The request tokens: a bar whose length grows with log2 of its bytes. Returns how many each
/// column's elevator lane holds.
fn draw_requests(f: &Frame, places: &Places, progress: &dyn Fn(&Token) -> f64, hits: &mut Vec<Hit>) -> Vec<usize> {
    let (ctx, ndev, ncols) = (&f.ctx, f.d.shown.topology.devices.len(), f.l.cols.len());
    let mut per_col_elev = vec![0usize; ncols];
    let mut per_col_tags = vec![0usize; ncols];
    let mut per_col_layer = vec![0usize; ncols];
    for (&id, t) in f.d.trace.requests.iter() {
        let counter = match t.stage {
            _ if t.dev as usize >= ndev => Some(&mut per_col_layer),
            TokenStage::Elevator => Some(&mut per_col_elev),
            TokenStage::Device => Some(&mut per_col_tags),
            _ => None,
        };
        let ci = places.column(t);
        let slot = counter.map_or(0, |c| {
            let s = c[ci];
            c[ci] += 1;
            s
        });
        // A lane holds as many bars as fit; the rest are in its "N waiting" count.
        if t.stage == TokenStage::Elevator && (t.dev as usize) < ndev && slot >= lane_fits(f.l.cell(Stage::Elevator, ci)) {
            continue;
        }
        let k = progress(t);
        let (x0, y0) = places.at(t, t.prev, slot);
        let (x1, y1) = places.at(t, t.stage, slot);
        let (x, y) = (x0 + (x1 - x0) * k, y0 + (y1 - y0) * k);
        // A sleeper woken by a freed request: an arc from the pool back up to its process.
        if t.prev == TokenStage::Sleeping && k < 1.0 {
            let (px, py) = places.at(t, TokenStage::Queued, 0);
            ctx.set_stroke_style_str(f.theme.full);
            ctx.set_global_alpha(1.0 - k);
            ctx.begin_path();
            ctx.move_to(x0, y0);
            ctx.quadratic_curve_to(x0 + 40.0, (y0 + py) / 2.0, px, py + 8.0);
            ctx.stroke();
            ctx.set_global_alpha(1.0);
        }
        let len = (4.0 + 2.2 * ((t.bytes.max(512) as f64).log2() - 9.0)).clamp(4.0, 24.0);
        ctx.set_global_alpha(if t.stage == TokenStage::Done { 1.0 - k } else { 1.0 });
        ctx.set_fill_style_str(pid_colour(&f.d.shown.topology, t.pid));
        ctx.fill_rect(x - 1.0, y - 2.5, len, 5.0);
        if t.stage != TokenStage::Done {
            hits.push(Hit { x: x - 1.0, y: y - 2.5, w: len, h: 5.0, kind: HitKind::Request(id) });
        }
    }
    per_col_elev
}

/// Requests waiting in an elevator with no token on show: grey bars after the lane's
/// `per_col_elev` tokens (red where parked on a hardware queue nobody will run).
pub(super) fn draw_waiting_without_tokens(f: &Frame, per_col_elev: &[usize]) {
    let (ctx, d, l, theme) = (&f.ctx, f.d, &f.l, f.theme);
    let occ = &d.shown.occupancy.0;
    // Requests waiting in an elevator that have no token (they were inserted before a skip,
    // a link's catch-up or a restart of the animation): grey bars, so the lane agrees with its
    // "N waiting" count as far as bars fit.
    ctx.set_fill_style_str(theme.dim);
    for (ci, col) in l.cols.iter().enumerate() {
        let waiting: usize = (col.first..col.first + col.count).map(|i| occ[i].elevator as usize).sum();
        let c = l.cell(Stage::Elevator, ci);
        // Several hardware queues: each one's waiting requests under its own name, when no
        // token is drawn in the lane (a jump's: parked requests stay put).
        let hctx = hw_queues_of(col, occ);
        // (place, requests, how many of them are parked on a queue nobody will run: red, as its
        // "N parked" label is, the rest grey).
        let places: Vec<(Rect, usize, usize)> = if hctx.len() > 1 {
            if per_col_elev[ci] > 0 {
                continue;
            }
            split(c, hctx.len())
                .into_iter()
                .zip(hctx)
                .map(|(r, o)| (r, o.parked.len() + o.queued as usize, if o.stopped { 0 } else { o.parked.len() }))
                .collect()
        } else {
            vec![(c, waiting, 0)]
        };
        for (c, n, red) in places {
            let per_row = lane_per_row(c);
            let from = if hctx.len() > 1 { 0 } else { per_col_elev[ci] };
            for slot in from..n.min(lane_fits(c)) {
                let (row, colx) = (slot / per_row, slot % per_row);
                ctx.set_fill_style_str(if slot < red { theme.full } else { theme.dim });
                ctx.fill_rect(c.x + 3.0 + colx as f64 * 28.0, c.y + c.h - 20.5 - row as f64 * 9.0, 10.0, 5.0);
            }
        }
    }
}
