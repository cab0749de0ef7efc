//! A seed sweep's distribution (plotters): one histogram per variant, binned as `blksim sweep`
//! bins it (`SweepBins`: log-spaced when the values spread over more than a factor of 20, a
//! stall among fast runs, else linear).

use super::charts::{draw_series_labels, prepare, tidy, LegendAt, COLOUR_A, COLOUR_B};
use crate::format::axis_tick;
use blksim::tools::stats::SweepBins;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use web_sys::HtmlCanvasElement;

/// Bins of the histogram.
const BINS: usize = 24;
/// Most labels on the x axis.
const X_LABELS: usize = 8;
/// The least height of a bar with runs in it, in pixels (one run of 200 would be under one).
const BAR_PX_MIN: f64 = 3.0;
/// A bar shorter than this, in pixels, has its count written above it.
const COUNT_SHOWN_UNDER_PX: f64 = 12.0;

/// Draws `runs` (variant name, its sorted values) as histograms of `what` in `unit`.
pub fn draw_sweep(canvas: &HtmlCanvasElement, what: &str, unit: &str, runs: &[(String, Vec<f64>)], dark: bool) -> Result<(), String> {
    let (root, _, fg) = prepare(canvas, dark, 160)?;
    let Some(bins) = SweepBins::over(runs.iter().flat_map(|(_, v)| v.iter().copied()), BINS as u32) else {
        return root.present().map_err(|e| e.to_string());
    };
    let (log, a, b, width) = (bins.log, bins.lo, bins.hi, bins.width());
    let counts: Vec<Vec<u32>> = runs.iter().map(|(_, v)| bins.count(v)).collect();
    // Headroom above the tallest bar for the legend (upper right): a line per variant.
    let y_max = counts.iter().flat_map(|c| c.iter().copied()).max().unwrap_or(1).max(1) as f64 * (1.15 + 0.2 * runs.len() as f64);
    let caption = format!("{what} over {} seeds ({unit}{})", runs.first().map_or(0, |r| r.1.len()), if log { ", log scale" } else { "" });
    let mut chart = ChartBuilder::on(&root)
        .margin(6)
        .margin_right(18)
        .caption(caption, (FontFamily::SansSerif, 13).into_font().color(&fg))
        .x_label_area_size(22)
        .y_label_area_size(40)
        .build_cartesian_2d(a..b, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_labels(X_LABELS)
        .x_label_formatter(&|x| {
            // Plotters places at most X_LABELS ticks, so neighbours are at least this far apart
            // (in the axis's units; on a log axis, a factor that becomes a value near x).
            let spacing = (b - a) / X_LABELS as f64;
            if log {
                let v = 10f64.powf(*x);
                axis_tick(v, v * (10f64.powf(spacing) - 1.0))
            } else {
                axis_tick(*x, spacing)
            }
        })
        .y_labels(4)
        .y_label_formatter(&|y| tidy(*y))
        .y_desc("runs")
        .label_style((FontFamily::SansSerif, 11).into_font().color(&fg))
        .axis_style(fg.mix(0.5))
        .light_line_style(fg.mix(0.08))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = counts.len().max(1) as f64;
    // A tail is the point of a sweep (a few stalled seeds among 200 fast ones), so a bin with
    // runs in it never draws thinner than BAR_PX_MIN, and one too short to read against the y
    // axis carries its count above it.
    let plot_h_px = f64::from(chart.plotting_area().get_pixel_range().1.len() as u32).max(1.0);
    let runs_per_px = y_max / plot_h_px;
    for (i, c) in counts.iter().enumerate() {
        let colour = if i == 0 { COLOUR_A } else { COLOUR_B };
        let bar = move |k: usize| {
            let x0 = a + width * (k as f64 + i as f64 / n);
            let top = (c[k] as f64).max(BAR_PX_MIN * runs_per_px);
            (x0, x0 + width / n * 0.9, top)
        };
        let bars = (0..BINS).filter(|&k| c[k] > 0).map(move |k| {
            let (x0, x1, top) = bar(k);
            Rectangle::new([(x0, 0.0), (x1, top)], colour.mix(0.85).filled())
        });
        let font = (FontFamily::SansSerif, 10).into_font().color(&colour).pos(Pos::new(HPos::Center, VPos::Bottom));
        let counts_above = (0..BINS).filter(|&k| c[k] > 0 && (c[k] as f64) < COUNT_SHOWN_UNDER_PX * runs_per_px).map(move |k| {
            let (x0, x1, top) = bar(k);
            Text::new(c[k].to_string(), ((x0 + x1) / 2.0, top + runs_per_px), font.clone())
        });
        chart.draw_series(counts_above).map_err(|e| e.to_string())?;
        chart.draw_series(bars).map_err(|e| e.to_string())?;
    }
    let labels: Vec<String> = runs.iter().map(|(name, _)| name.clone()).collect();
    draw_series_labels(
        &chart.plotting_area().strip_coord_spec(),
        LegendAt::UpperRight,
        &(FontFamily::SansSerif, 11).into_font().color(&fg),
        (fg.mix(0.3).into(), fg.mix(0.0).into()),
        &labels,
        |i, (x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], if i == 0 { COLOUR_A } else { COLOUR_B }.filled()).into_dyn(),
    )?;
    root.present().map_err(|e| e.to_string())
}
