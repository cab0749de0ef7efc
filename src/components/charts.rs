//! Charts over simulated time (plotters on a canvas): throughput, context switches and CPU,
//! and a latency histogram. One run, or A and B overlaid. Export as PNG and CSV.

use super::hidpi::{bitmap_size, device_pixel_ratio, HiDpiCanvas};
use blksim::Interval;
use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

/// Per-second series of one run, computed from its one-second snapshots.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSeries {
    pub t_s: Vec<f64>,
    pub mb_s: Vec<f64>,
    /// What reached the disks (the leaf devices), which differs from the jobs' with buffered
    /// I/O: writeback after write() returned, readahead before read().
    pub disks_mb_s: Vec<f64>,
    pub cs_s: Vec<f64>,
    /// us + sy + si, in % of all cores.
    pub cpu_busy_pct: Vec<f64>,
    /// us + sy + si of the busiest core, in %: one saturated CPU (ksoftirqd) among eight is
    /// 12.5% of all of them. NaN for the partial first point (no per-core figures there).
    pub busiest_cpu_pct: Vec<f64>,
    pub iowait_pct: Vec<f64>,
    /// Its only point is the numbers so far of a run still in its first second.
    pub so_far: bool,
}

impl RunSeries {
    /// From consecutive snapshots (the first interval starts at time 0); the first `disks`
    /// devices of the diskstats are the disks (stacking devices follow them).
    pub fn from_history<'a>(history: impl Iterator<Item = &'a Interval>, disks: usize) -> RunSeries {
        let mut s = RunSeries::default();
        let mut prev: Option<&Interval> = None;
        for cur in history {
            let zero;
            let p = match prev {
                Some(p) => p,
                None => {
                    zero = Interval::zero_for(cur);
                    &zero
                }
            };
            let dt = (cur.end.ns() - p.end.ns()) as f64 / 1e9;
            if dt > 0.0 {
                let bytes = (cur.read_bytes + cur.write_bytes - p.read_bytes - p.write_bytes) as f64;
                s.t_s.push(cur.end.as_secs_f64());
                s.mb_s.push(bytes / dt / 1e6);
                let sectors = |iv: &Interval| iv.diskstats.iter().take(disks).map(|d| d.sectors[0] + d.sectors[1]).sum::<u64>();
                s.disks_mb_s.push((sectors(cur).saturating_sub(sectors(p))) as f64 * 512.0 / dt / 1e6);
                s.cs_s.push((cur.context_switches - p.context_switches) as f64 / dt);
                let pct = cur.cpu.pct_since(&p.cpu);
                s.cpu_busy_pct.push(pct.user_pct + pct.sys_pct + pct.softirq_pct);
                s.iowait_pct.push(pct.iowait_pct);
                let busiest = cur.per_core.iter().zip(&p.per_core).map(|(c, pc)| {
                    let pct = c.pct_since(pc);
                    pct.user_pct + pct.sys_pct + pct.softirq_pct
                });
                s.busiest_cpu_pct.push(busiest.fold(0.0, f64::max));
            }
            prev = Some(cur);
        }
        s
    }

    /// Before the first whole second: the numbers so far as one point, so the charts are not
    /// empty for the first wall-clock seconds at a slow speed.
    pub fn with_partial(mut self, partial: Option<&blksim::tools::report::IntervalReport>) -> RunSeries {
        if let Some(iv) = partial.filter(|_| self.t_s.is_empty()) {
            self.t_s.push(iv.end_s);
            self.mb_s.push(iv.throughput_mb_s);
            self.disks_mb_s.push(crate::components::counters::disks_mb_s(iv));
            self.cs_s.push(iv.cs_per_s);
            self.cpu_busy_pct.push(iv.cpu.user_pct + iv.cpu.sys_pct + iv.cpu.softirq_pct);
            self.iowait_pct.push(iv.cpu.iowait_pct);
            self.busiest_cpu_pct.push(f64::NAN);
            self.so_far = true;
        }
        self
    }

    /// CSV with a header, one row per simulated second (a run that ended mid-second ends on
    /// its last, shorter interval; before the first whole second, the one row is the numbers so
    /// far, as the chart draws them); `label` names the run (A or B).
    pub fn to_csv(&self, label: &str) -> String {
        let mut out = String::new();
        for i in 0..self.t_s.len() {
            out.push_str(&format!(
                "{label},{:.3},{:.3},{:.1},{:.2},{:.2},{:.3},{}\n",
                self.t_s[i],
                self.mb_s[i],
                self.cs_s[i],
                self.cpu_busy_pct[i],
                self.iowait_pct[i],
                self.disks_mb_s[i],
                if self.busiest_cpu_pct[i].is_nan() { String::new() } else { format!("{:.2}", self.busiest_cpu_pct[i]) }
            ));
        }
        out
    }
}

pub const CSV_HEADER: &str = "run,t_s,throughput_mb_s,cs_per_s,cpu_busy_pct,iowait_pct,disks_mb_s,busiest_cpu_pct\n";

pub(crate) const COLOUR_A: RGBColor = RGBColor(0x00, 0x72, 0xB2);
pub(crate) const COLOUR_B: RGBColor = RGBColor(0xD5, 0x5E, 0x00);

fn max_of(runs: &[(&str, &RunSeries)], f: impl Fn(&RunSeries) -> &Vec<f64>) -> f64 {
    runs.iter().flat_map(|(_, r)| f(r).iter().copied()).fold(0.0, f64::max)
}

/// The top of a panel's scale: its largest value, unless up to three points (or a quarter of
/// them) stand more than 3× above all the rest, as the first second of a buffered writer does
/// (410 MB/s into the page cache, then 28 MB/s to the disks). Those are drawn at the top edge
/// with their values, so the rest of the chart stays readable. Returns the top and whether
/// anything is over it.
fn scale_top(values: impl Iterator<Item = f64>) -> (f64, bool) {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    crate::sort::stable_by(&mut v, |a, b| b.total_cmp(a));
    let Some(&max) = v.first() else { return (0.0, false) };
    for k in 1..=3.min(v.len() / 4) {
        if v[k] > 0.0 && v[k - 1] > 3.0 * v[k] {
            return (v[k], true);
        }
    }
    (max, false)
}

/// An axis number as people write it: 0.6 (not 0.6000000000000001), 15000 (not 15000.0).
pub(crate) fn tidy(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A power of two of microseconds as people write it: "64µs", "16ms", "4.2s".
fn pow2_us_label(e: u32) -> String {
    super::latency_heat::latency_label((1u64 << e.min(40)) as f64 * 1e3)
}

pub(crate) type Area = DrawingArea<HiDpiCanvas, plotters::coord::Shift>;

/// The narrowest a chart is drawn, whatever its box.
const CHART_W_MIN: i32 = 200;

/// Whether a chart's bitmap is not the width `prepare` would give it now (it was drawn while
/// hidden, before a resize, or on a screen of another pixel density): the browser stretches
/// it until it is drawn again.
pub(crate) fn drawn_at_another_width(canvas: &HtmlCanvasElement) -> bool {
    canvas.client_width() > 0 && canvas.width() != bitmap_size((css_width(canvas), 1), device_pixel_ratio()).0
}

/// The width a chart is drawn at, in CSS pixels: its box's, and at least `CHART_W_MIN`.
fn css_width(canvas: &HtmlCanvasElement) -> u32 {
    canvas.client_width().max(CHART_W_MIN) as u32
}

/// Sizes the canvas to its box (at the screen's pixel density: `HiDpiCanvas`), and clears it
/// in the theme's background. The chart is laid out in CSS pixels.
pub(crate) fn prepare(canvas: &HtmlCanvasElement, dark: bool, min_h: i32) -> Result<(Area, RGBColor, RGBColor), String> {
    let css = (css_width(canvas), canvas.client_height().max(min_h) as u32);
    let root = HiDpiCanvas::new(canvas, css).ok_or("no 2d context")?.into_drawing_area();
    let (bg, fg) = if dark { (RGBColor(0x1b, 0x20, 0x26), RGBColor(0xe9, 0xed, 0xf1)) } else { (WHITE, RGBColor(0x1d, 0x23, 0x2b)) };
    root.fill(&bg).map_err(|e| e.to_string())?;
    Ok((root, bg, fg))
}

/// The figure of a run that a panel draws.
type Pick = fn(&RunSeries) -> &Vec<f64>;

/// One panel's lines and what else it draws (the disks' MB/s, the busiest CPU).
struct PanelSpec {
    title: &'static str,
    pick: Pick,
    floor: f64,
    with_disks: bool,
    with_busiest: bool,
}

/// A panel's chart, scaled to `0..y_max`.
type Panel<'a> = ChartContext<'a, HiDpiCanvas, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// Draws throughput, cs/s and CPU busy% over time: one panel each, runs overlaid. The legend
/// is a strip above the panels, so it never covers the newest points.
pub fn draw_timeseries(canvas: &HtmlCanvasElement, runs: &[(&str, &RunSeries)], dark: bool) -> Result<(), String> {
    let (root, bg, fg) = prepare(canvas, dark, 150)?;
    // The legend's rows, laid out before the strip that holds them is cut.
    let (show_disks, show_busiest) = extra_lines(runs);
    let legend = legend_layout(&root, runs, show_disks, show_busiest)?;
    let rows = legend.iter().map(|e| e.row).max().map_or(1, |r| r + 1);
    let (strip, body) = root.split_vertically(LEGEND_ROW_PX as u32 * rows as u32);
    let panels = body.split_evenly((3, 1));
    // A run that ended within its first second is charted over its own length.
    let t_last = max_of(runs, |r| &r.t_s);
    let running_first_second = runs.iter().any(|(_, r)| r.so_far);
    let t_max = if t_last > 0.0 && t_last < 1.0 && !running_first_second { t_last * 1.1 } else { t_last.max(1.0) };
    let specs: [(&str, Pick, f64); 3] =
        [("throughput MB/s", |r| &r.mb_s, 1.0), ("context switches /s", |r| &r.cs_s, 1.0), ("CPU busy %", |r| &r.cpu_busy_pct, 100.0)];
    draw_legend(&strip, runs.len(), &legend, &fg)?;
    for (pi, (panel, (title, pick, floor))) in panels.iter().zip(specs).enumerate() {
        let spec = PanelSpec { title, pick, floor, with_disks: pi == 0 && show_disks, with_busiest: pi == 2 && show_busiest };
        draw_panel(panel, runs, &spec, t_max, (bg, fg))?;
    }
    root.present().map_err(|e| e.to_string())
}

/// One panel of `draw_timeseries`: its axes, each run's lines, and the values of points over
/// its top.
fn draw_panel(
    panel: &Area,
    runs: &[(&str, &RunSeries)],
    spec: &PanelSpec,
    t_max: f64,
    (bg, fg): (RGBColor, RGBColor),
) -> Result<(), String> {
    let extra = |r: &'_ RunSeries| -> Vec<f64> {
        match (spec.with_disks, spec.with_busiest) {
            (true, _) => r.disks_mb_s.clone(),
            (_, true) => r.busiest_cpu_pct.iter().copied().filter(|v| !v.is_nan()).collect(),
            _ => Vec::new(),
        }
    };
    let values: Vec<f64> = runs.iter().flat_map(|(_, r)| (spec.pick)(r).iter().copied().chain(extra(r))).collect();
    let (top, clipped) = scale_top(values.into_iter());
    let y_max = (top * 1.15).max(spec.floor);
    let x_fmt = |x: &f64| format!("{} s", tidy(*x));
    let y_fmt = |y: &f64| tidy(*y);
    let mut chart = ChartBuilder::on(panel)
        .margin(6)
        .margin_right(18)
        .caption(spec.title, (FontFamily::SansSerif, 13).into_font().color(&fg))
        .x_label_area_size(18)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(4)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FontFamily::SansSerif, 11).into_font().color(&fg))
        .axis_style(fg.mix(0.5))
        .light_line_style(fg.mix(0.08))
        .bold_line_style(fg.mix(0.15))
        .draw()
        .map_err(|e| e.to_string())?;
    let mut over_labels: Vec<(String, (i32, i32), RGBColor)> = Vec::new();
    for (i, (_, r)) in runs.iter().enumerate() {
        draw_run_lines(&mut chart, panel, spec, (i, runs.len()), r, (y_max, clipped), &mut over_labels)?;
    }
    // After every line, so that none crosses them.
    for (text, (x, y), colour) in over_labels {
        let font = (FontFamily::SansSerif, 11).into_font().color(&colour);
        let (w, h) = panel.estimate_text_size(&text, &font).map_err(|e| e.to_string())?;
        panel.draw(&Rectangle::new([(x - 2, y - 1), (x + w as i32 + 2, y + h as i32 + 1)], bg.filled())).map_err(|e| e.to_string())?;
        panel.draw(&Text::new(text, (x, y), font)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Run `i` of `n`'s lines in a panel (points over `y_max` drawn on it, their values added to
/// `over_labels` when `clipped`).
fn draw_run_lines(
    chart: &mut Panel,
    panel: &Area,
    spec: &PanelSpec,
    (i, n): (usize, usize),
    r: &RunSeries,
    (y_max, clipped): (f64, bool),
    over_labels: &mut Vec<(String, (i32, i32), RGBColor)>,
) -> Result<(), String> {
    // Points over the top are drawn on it, with their values.
    let on_scale = |t: &f64, v: &f64| (*t, v.min(y_max));
    let colour = if i == 0 { COLOUR_A } else { COLOUR_B };
    // With two runs, A's lines are drawn wider, under B's: where both sit on the same
    // value (two CPUs at 100%), A still shows as an edge around B.
    let width = if i == 0 && n > 1 { 4 } else { 2 };
    let ys = (spec.pick)(r);
    let pts: Vec<(f64, f64)> = r.t_s.iter().zip(ys.iter()).map(|(t, v)| on_scale(t, v)).collect();
    chart.draw_series(LineSeries::new(pts, colour.stroke_width(width))).map_err(|e| e.to_string())?;
    // Few points: mark each, so a one-second (or shorter) run is not an empty chart.
    if ys.len() <= 30 {
        let dots = r.t_s.iter().zip(ys.iter()).map(|(t, v)| Circle::new(on_scale(t, v), 3, colour.filled()));
        chart.draw_series(dots).map_err(|e| e.to_string())?;
    }
    if clipped {
        // The value of a point over the top, on a background of its own, beside the
        // point and a line lower for B, so that no line crosses it.
        let base = panel.get_base_pixel();
        for (t, v) in r.t_s.iter().zip(ys.iter()).filter(|(_, v)| **v > y_max) {
            let (px, py) = chart.backend_coord(&(*t, y_max));
            over_labels.push((format!("{} ↑", tidy(v.round())), (px - base.0 + 6, py - base.1 + 2 + 14 * i as i32), colour));
        }
    }
    if spec.with_disks {
        let pts: Vec<(f64, f64)> = r.t_s.iter().zip(r.disks_mb_s.iter()).map(|(t, v)| on_scale(t, v)).collect();
        chart.draw_series(DashedLineSeries::new(pts, 6, 4, colour.stroke_width(width))).map_err(|e| e.to_string())?;
    }
    if spec.with_busiest {
        let pts: Vec<(f64, f64)> =
            r.t_s.iter().zip(r.busiest_cpu_pct.iter()).filter(|(_, v)| !v.is_nan()).map(|(t, v)| on_scale(t, v)).collect();
        chart.draw_series(DashedLineSeries::new(pts, 2, 3, colour.stroke_width(width))).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The extra lines the charts draw: the disks' MB/s (dashed) where buffered I/O makes it
/// differ from the jobs', and the busiest core (dotted) where it stands out: one CPU at 100%
/// (ksoftirqd) is only 12.5% of eight.
fn extra_lines(runs: &[(&str, &RunSeries)]) -> (bool, bool) {
    let disks_differ = |r: &RunSeries| r.mb_s.iter().zip(&r.disks_mb_s).any(|(a, b)| (a - b).abs() > 0.1 * a.max(*b).max(1.0));
    let busiest_differs = |r: &RunSeries| {
        r.busiest_cpu_pct.iter().filter(|m| !m.is_nan()).count() >= 2
            && r.busiest_cpu_pct.iter().zip(&r.cpu_busy_pct).any(|(m, a)| !m.is_nan() && m - a > 5.0)
    };
    (runs.iter().any(|(_, r)| disks_differ(r)), runs.iter().any(|(_, r)| busiest_differs(r)))
}

/// The legend's entries for run `label`: its solid line, then its disks and busiest-CPU lines
/// when drawn (named alone on a row of their own run's), with each line's (dash, gap).
fn legend_entries(label: &str, disks: bool, busiest: bool, own_row: bool) -> Vec<(String, (i32, i32))> {
    let named = |what: &str| if own_row { what.to_string() } else { format!("{label}: {what}") };
    let mut entries = vec![(label.to_string(), (14, 0))];
    if disks {
        entries.push((named("disks"), (5, 4)));
    }
    if busiest {
        entries.push((named("busiest CPU"), (2, 3)));
    }
    entries
}

/// A legend row's height, in CSS pixels.
const LEGEND_ROW_PX: i32 = 20;

/// A legend entry placed: its run, its text, its line's (dash, gap), its row and x.
struct LegendEntry {
    run: usize,
    text: String,
    dash_gap: (i32, i32),
    row: i32,
    x: i32,
}

/// Where the legend's entries go: in one row where they fit the chart's width; else a row
/// per run (A/B with the disks' and busiest CPU's lines), each line named alone after its
/// run's; and a row too wide for the chart (a phone) wraps.
fn legend_layout(root: &Area, runs: &[(&str, &RunSeries)], disks: bool, busiest: bool) -> Result<Vec<LegendEntry>, String> {
    const X0: i32 = 56;
    let font: TextStyle = (FontFamily::SansSerif, 11).into_font().into();
    let width =
        |text: &str| -> Result<i32, String> { Ok(18 + root.estimate_text_size(text, &font).map_err(|e| e.to_string())?.0 as i32 + 14) };
    let room = root.dim_in_pixel().0 as i32;
    let mut one_row = X0;
    for (label, _) in runs {
        for (text, _) in legend_entries(label, disks, busiest, false) {
            one_row += width(&text)?;
        }
    }
    let own_rows = one_row > room;
    let mut out = Vec::new();
    let (mut x, mut row) = (X0, 0);
    for (i, (label, _)) in runs.iter().enumerate() {
        if own_rows && i > 0 {
            (x, row) = (X0, row + 1);
        }
        for (text, dash_gap) in legend_entries(label, disks, busiest, own_rows) {
            let w = width(&text)?;
            if x > X0 && x + w > room {
                (x, row) = (X0, row + 1);
            }
            out.push(LegendEntry { run: i, text, dash_gap, row, x });
            x += w;
        }
    }
    Ok(out)
}

/// The legend above the panels: each run's solid line, and its disks (dashed) and
/// busiest-CPU (dotted) lines when those are drawn.
fn draw_legend(strip: &Area, runs: usize, entries: &[LegendEntry], fg: &RGBColor) -> Result<(), String> {
    let font = (FontFamily::SansSerif, 11).into_font().color(fg);
    for e in entries {
        let colour = if e.run == 0 { COLOUR_A } else { COLOUR_B };
        let width = if e.run == 0 && runs > 1 { 4 } else { 2 };
        let (x, y, (dash, gap)) = (e.x, 10 + LEGEND_ROW_PX * e.row, e.dash_gap);
        // A sample of the line: solid, dashed or dotted.
        let mut at = x;
        while at < x + 14 {
            let end = (at + dash).min(x + 14);
            strip.draw(&PathElement::new(vec![(at, y), (end, y)], colour.stroke_width(width))).map_err(|e| e.to_string())?;
            at = end + gap.max(if gap == 0 { 14 } else { 0 });
        }
        strip.draw(&Text::new(e.text.clone(), (x + 18, y - 6), font.clone())).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A chart's title: `full` where it fits the area's width, else `short` (on a phone the full
/// title, centred, ran off both edges).
pub(crate) fn fitted_caption<'a>(area: &Area, full: &'a str, short: &'a str) -> &'a str {
    let room = area.dim_in_pixel().0 as i64 - 12;
    match area.estimate_text_size(full, &(FontFamily::SansSerif, 13).into_font().into()) {
        Ok((w, _)) if (w as i64) <= room => full,
        _ => short,
    }
}

/// A latency histogram on a log2 time axis: counts per power-of-two bucket of I/O latency.
/// `colours`: each series' colour (a job's, as "#rrggbb"); where absent, A's and B's.
pub fn draw_latency(canvas: &HtmlCanvasElement, runs: &[(&str, Vec<(u64, u64)>)], colours: &[&str], dark: bool) -> Result<(), String> {
    let (root, _, fg) = prepare(canvas, dark, 100)?;
    // Fold the fine buckets into powers of two of microseconds.
    let fold = |b: &Vec<(u64, u64)>| {
        let mut out = [0u64; 32];
        for &(ns, c) in b {
            let us = (ns / 1000).max(1);
            out[(63 - us.leading_zeros()).min(31) as usize] += c;
        }
        out
    };
    let folded: Vec<[u64; 32]> = runs.iter().map(|(_, b)| fold(b)).collect();
    let lo = folded.iter().filter_map(|f| f.iter().position(|&c| c > 0)).min().unwrap_or(0);
    let hi = folded.iter().filter_map(|f| f.iter().rposition(|&c| c > 0)).max().unwrap_or(1).max(lo + 1);
    let y_max = folded.iter().flat_map(|f| f.iter().copied()).max().unwrap_or(1).max(1) as f64 * 1.1;
    const MARGIN_PX: i64 = 6;
    // Room for the last tick's label ("4.2s") centred on the right edge.
    const MARGIN_RIGHT_PX: i64 = 30;
    const Y_LABELS_PX: i64 = 52;
    let mut chart = ChartBuilder::on(&root)
        .margin(MARGIN_PX as u32)
        .margin_right(MARGIN_RIGHT_PX as u32)
        .caption(
            fitted_caption(&root, "the jobs' I/O latency, each read/write/io as fio's clat (log2 µs)", "I/O latency, fio clat (log2 µs)"),
            (FontFamily::SansSerif, 13).into_font().color(&fg),
        )
        .x_label_area_size(20)
        .y_label_area_size(Y_LABELS_PX as u32)
        .build_cartesian_2d(lo as f64..(hi + 1) as f64, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    // As many tick labels as fit side by side ("512µs" and "262ms" about 32 px at 11 px, and a
    // gap): on a phone every power of two's label ran into the next. The plot's width, less a
    // margin's slack.
    let plot_w = root.dim_in_pixel().0 as i64 - Y_LABELS_PX - MARGIN_RIGHT_PX - 2 * MARGIN_PX;
    let labels_fit = (plot_w / 38).max(2) as usize;
    chart
        .configure_mesh()
        .x_labels((hi - lo + 1).min(12).min(labels_fit))
        .x_label_formatter(&|x| pow2_us_label(*x as u32))
        .y_labels(4)
        .y_label_formatter(&|y| tidy(*y))
        .label_style((FontFamily::SansSerif, 11).into_font().color(&fg))
        .axis_style(fg.mix(0.5))
        .light_line_style(fg.mix(0.08))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = folded.len().max(1) as f64;
    for (i, f) in folded.iter().enumerate() {
        let colour = colours.get(i).and_then(|c| hex_colour(c)).unwrap_or(if i == 0 { COLOUR_A } else { COLOUR_B });
        let bars = (lo..=hi).filter(|&b| f[b] > 0).map(|b| {
            let x0 = b as f64 + i as f64 / n;
            Rectangle::new([(x0, 0.0), (x0 + 1.0 / n - 0.05, f[b] as f64)], colour.mix(0.85).filled())
        });
        chart.draw_series(bars).map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// "#rrggbb" as plotters' colour.
fn hex_colour(c: &str) -> Option<RGBColor> {
    let v = u32::from_str_radix(c.strip_prefix('#')?, 16).ok()?;
    Some(RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8))
}

/// seekwatcher's plot: the sector of each issued request over time, a colour per device (the
/// Okabe-Ito palette, in device order).
pub fn draw_offsets(canvas: &HtmlCanvasElement, devices: &blksim::tools::trace_figures::DeviceOffsets, dark: bool) -> Result<(), String> {
    const PALETTE: [RGBColor; 7] = [
        RGBColor(0x00, 0x72, 0xB2),
        RGBColor(0xD5, 0x5E, 0x00),
        RGBColor(0x00, 0x9E, 0x73),
        RGBColor(0xCC, 0x79, 0xA7),
        RGBColor(0xE6, 0x9F, 0x00),
        RGBColor(0x56, 0xB4, 0xE9),
        RGBColor(0x00, 0x00, 0x00),
    ];
    let (root, _, fg) = prepare(canvas, dark, 240)?;
    let t_max_ns = devices.iter().flat_map(|(_, v)| v).map(|&(t, _)| t).max().unwrap_or(1).max(1);
    // Milliseconds for a trace under a second, so the axis numbers stay distinct.
    let (per_ns, unit) = if t_max_ns < 1_000_000_000 { (1e6, "ms") } else { (1e9, "seconds") };
    let t_max = t_max_ns as f64 / per_ns;
    let s_max = devices.iter().flat_map(|(_, v)| v).map(|&(_, s)| s).max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(6)
        .margin_right(18)
        .caption("sector of each issued request (D) over time", (FontFamily::SansSerif, 13).into_font().color(&fg))
        .x_label_area_size(36)
        .y_label_area_size(78)
        .build_cartesian_2d(0.0..t_max * 1.02, 0.0..s_max * 1.05)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(unit)
        .x_labels(8)
        .x_label_formatter(&|x| tidy(*x))
        .y_labels(6)
        .y_label_formatter(&|y| format!("{:.0}", y))
        .label_style((FontFamily::SansSerif, 11).into_font().color(&fg))
        .axis_style(fg.mix(0.5))
        .light_line_style(fg.mix(0.08))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, (_, points)) in devices.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(points.iter().map(|&(t, s)| Circle::new((t as f64 / per_ns, s as f64), 2, colour.mix(0.8).filled())))
            .map_err(|e| e.to_string())?;
    }
    let labels: Vec<String> = devices.iter().map(|((major, minor), _)| format!("{major},{minor}")).collect();
    draw_series_labels(
        &chart.plotting_area().strip_coord_spec(),
        LegendAt::MiddleRight,
        &(FontFamily::SansSerif, 11).into_font().color(&fg),
        (fg.mix(0.3).into(), WHITE.mix(0.8).into()),
        &labels,
        |i, (x, y)| Circle::new((x + 6, y), 4, PALETTE[i % PALETTE.len()].filled()).into_dyn(),
    )?;
    root.present().map_err(|e| e.to_string())
}

/// Where a legend sits in the plot, as plotters' `SeriesLabelPosition` places it.
#[derive(Clone, Copy)]
pub(crate) enum LegendAt {
    UpperRight,
    MiddleRight,
}

/// A chart's legend, drawn as plotters' `configure_series_labels().draw()` draws it (the same
/// box, margins, text and marks) from the labels given here, each with what draws its mark at a
/// point: plotters' own reads its default font's name through `str::to_lowercase`, which keeps
/// std's case table in the page.
pub(crate) fn draw_series_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    at: LegendAt,
    font: &TextStyle,
    (border, background): (ShapeStyle, ShapeStyle),
    labels: &[String],
    mark: impl Fn(usize, (i32, i32)) -> DynElement<'static, DB, (i32, i32)>,
) -> Result<(), String> {
    // plotters' defaults: a 30 px column for the marks and a 10 px margin.
    let (mark_w, margin) = (30, 10);
    let mut text = MultiLineText::<_, &str>::new((0, 0), font);
    for l in labels {
        text.push_line(l.as_str());
    }
    let (w, h) = text.estimate_dimension().map_err(|e| e.to_string())?;
    let (w, h) = (w + mark_w + margin * 2, h + margin * 2);
    let (area_w, area_h) = area.dim_in_pixel();
    let x = area_w as i32 - w - 5;
    let y = match at {
        LegendAt::UpperRight => 5,
        LegendAt::MiddleRight => (area_h as i32 - h) / 2,
    };
    text.relocate((x + mark_w + margin, y + margin));
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], background.filled())).map_err(e)?;
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], border)).map_err(e)?;
    area.draw(&text).map_err(e)?;
    for (i, ((_, y0), (_, y1))) in text.compute_line_layout().map_err(|e| e.to_string())?.into_iter().enumerate() {
        area.draw(&mark(i, (x + margin, (y0 + y1) / 2))).map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::scale_top;

    #[test]
    fn a_burst_far_above_the_rest_does_not_set_the_scale() {
        // nr-requests: 410 MB/s into the page cache in the first second, then the disks' 28.
        let jobs = [410.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let disks = [28.0, 15.0, 15.1, 14.9, 15.0, 15.2];
        assert_eq!(scale_top(jobs.iter().chain(&disks).copied()), (28.0, true));
        // An ordinary series keeps its largest value as the top.
        assert_eq!(scale_top([90.0, 120.0, 100.0, 95.0, 110.0].into_iter()), (120.0, false));
        // Too few points to call one an outlier; and all zeros.
        assert_eq!(scale_top([400.0, 10.0, 12.0].into_iter()), (400.0, false));
        assert_eq!(scale_top([0.0; 8].into_iter()), (0.0, false));
    }

    #[test]
    fn latency_ticks_are_written_as_people_write_them() {
        assert_eq!(super::pow2_us_label(0), "1µs");
        assert_eq!(super::pow2_us_label(9), "512µs");
        assert_eq!(super::pow2_us_label(12), "4.1ms");
        assert_eq!(super::pow2_us_label(14), "16ms");
        assert_eq!(super::pow2_us_label(20), "1s");
        assert_eq!(super::pow2_us_label(22), "4.2s");
    }

    #[test]
    fn axis_numbers_are_written_as_people_write_them() {
        assert_eq!(super::tidy(0.6000000000000001), "0.6");
        assert_eq!(super::tidy(15000.0), "15000");
        assert_eq!(super::tidy(2.5), "2.5");
        assert_eq!(super::tidy(0.0), "0");
        assert_eq!(super::tidy(0.125), "0.125");
    }
}
