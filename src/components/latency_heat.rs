//! Brendan Gregg's latency heat map: simulated time across, latency up (powers of two), each
//! cell's colour the number of the jobs' I/Os (fio's clat) that completed in that second with
//! that latency. Where the histogram says how long I/Os took, this says when: a stall shows
//! as a column of nothing followed by a cell far up; a starved disk as a band that splits.

use super::charts::{prepare, tidy};
use blksim::Interval;
use plotters::prelude::*;

/// A run's latency per second: (the second's end in s, its I/Os per power of two of ns).
pub type HeatColumns = Vec<(f64, Vec<u64>)>;

/// Each second's latencies, from consecutive one-second snapshots (their cumulative counts),
/// and the second under way so far: `now` is the run's time and its counts (`Sim::latency_log2`).
/// The first snapshot counts from time 0; one whose run did not start at 0 (the history is
/// capped) has no second before it to subtract, so it is left out.
pub fn latency_columns<'a>(history: impl Iterator<Item = &'a Interval>, now: Option<(f64, &[u64])>) -> HeatColumns {
    let mut out = Vec::new();
    let mut prev: Option<(f64, &[u64])> = None;
    let since = |cur: &[u64], p: &[u64]| cur.iter().zip(p).map(|(c, p)| c.saturating_sub(*p)).collect::<Vec<u64>>();
    for cur in history {
        let t = cur.end.as_secs_f64();
        match prev {
            Some((_, p)) => out.push((t, since(&cur.latency_log2, p))),
            None if t <= 1.0 => out.push((t, cur.latency_log2.clone())),
            None => {}
        }
        prev = Some((t, &cur.latency_log2));
    }
    if let Some((t, counts)) = now {
        match prev {
            Some((end, p)) if t > end => out.push((t, since(counts, p))),
            None if t > 0.0 && t <= 1.0 => out.push((t, counts.to_vec())),
            _ => {}
        }
    }
    out
}

/// 2^e ns as people write a latency: 1ns … 512ns, 1µs, 2µs, 4.1µs … 1ms, 2.1ms … 1.1s.
pub fn pow2_ns_label(e: u32) -> String {
    latency_label((1u64 << e.min(62)) as f64)
}

/// A latency of `v` ns as people write it: two figures at most below 10 of its unit.
pub fn latency_label(v: f64) -> String {
    let (x, unit) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    let n = if x >= 10.0 { format!("{x:.0}") } else { tidy((x * 10.0).round() / 10.0) };
    format!("{n}{unit}")
}

/// The cell colour for `count` of at most `max` (log scale, so a few slow I/Os beside many
/// fast ones still show): pale yellow to deep red (ColorBrewer's YlOrRd).
fn heat(count: u64, max: u64) -> RGBColor {
    let f = ((1 + count) as f64).ln() / ((1 + max.max(1)) as f64).ln();
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f.clamp(0.0, 1.0)).round() as u8;
    RGBColor(lerp(0xff, 0xbd), lerp(0xe8, 0x00), lerp(0x8c, 0x26))
}

/// Draws one heat map per run (A above B), on one time axis and one latency axis; `what` names
/// the latency ("the jobs' I/O latency (fio clat)", "D2C"), `per` a column's span ("second").
pub fn draw_latency_heat(
    canvas: &web_sys::HtmlCanvasElement,
    runs: &[(&str, &HeatColumns)],
    what: &str,
    per: &str,
    dark: bool,
) -> Result<(), String> {
    let (root, _, fg) = prepare(canvas, dark, 100)?;
    let cells = || runs.iter().flat_map(|(_, cols)| cols.iter().flat_map(|(_, c)| c.iter().enumerate()));
    let lo = cells().filter(|(_, &n)| n > 0).map(|(e, _)| e).min().unwrap_or(10);
    let hi = cells().filter(|(_, &n)| n > 0).map(|(e, _)| e).max().unwrap_or(20).max(lo + 1);
    let max = cells().map(|(_, &n)| n).max().unwrap_or(1);
    // The runs' length (a run of 44 ms spans the axis, not a second of it).
    let t_max = runs.iter().filter_map(|(_, cols)| cols.last().map(|c| c.0)).fold(0.0, f64::max);
    let t_max = if t_max > 0.0 { t_max } else { 1.0 };
    let panels = root.split_evenly((runs.len().max(1), 1));
    for (panel, (name, cols)) in panels.iter().zip(runs) {
        let caption = if cols.len() > 1 {
            format!("{name}: {what} per {per}; redder = more I/Os")
        } else {
            format!("{name}: {what}, one column (a {per} or less so far)")
        };
        let mut chart = ChartBuilder::on(panel)
            .margin(6)
            .margin_right(18)
            .caption(
                super::charts::fitted_caption(panel, &caption, &format!("{name}: {what}")),
                (FontFamily::SansSerif, 13).into_font().color(&fg),
            )
            .x_label_area_size(20)
            .y_label_area_size(52)
            .build_cartesian_2d(0.0..t_max, lo as f64..(hi + 1) as f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_labels(8)
            .x_label_formatter(&|x| if t_max < 1.0 { format!("{} ms", tidy(*x * 1e3)) } else { format!("{} s", tidy(*x)) })
            .y_labels((hi + 2 - lo).min(6))
            .y_label_formatter(&|y| pow2_ns_label(y.round().max(0.0) as u32))
            .label_style((FontFamily::SansSerif, 11).into_font().color(&fg))
            .axis_style(fg.mix(0.5))
            .light_line_style(fg.mix(0.08))
            .draw()
            .map_err(|e| e.to_string())?;
        let mut start = 0.0;
        let mut rects = Vec::new();
        for (end, counts) in cols.iter() {
            for (e, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
                rects.push(Rectangle::new([(start, e as f64), (*end, e as f64 + 1.0)], heat(n, max).filled()));
            }
            start = *end;
        }
        chart.draw_series(rects).map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_as_people_write_them() {
        assert_eq!(pow2_ns_label(0), "1ns");
        assert_eq!(pow2_ns_label(9), "512ns");
        assert_eq!(pow2_ns_label(10), "1µs");
        assert_eq!(pow2_ns_label(12), "4.1µs");
        assert_eq!(pow2_ns_label(20), "1ms");
        assert_eq!(pow2_ns_label(24), "17ms");
        assert_eq!(pow2_ns_label(30), "1.1s");
    }

    #[test]
    fn each_second_counts_the_ios_that_completed_in_it() {
        let lesson = blksim::course::lessons::find("nr-requests").unwrap();
        let mut sim = blksim::Sim::new(&lesson.config(&lesson.first_variant().name, &[]).unwrap(), 1);
        sim.run_until(blksim::SimTime::from_secs_f64(3.5));
        let cols = latency_columns(sim.history(), None);
        assert_eq!(cols.iter().map(|c| c.0).collect::<Vec<_>>(), [1.0, 2.0, 3.0]);
        // The seconds add up to the run's counts at its last tick, bucket by bucket.
        let last = sim.history().last().unwrap().latency_log2.clone();
        let summed: Vec<u64> = (0..last.len()).map(|e| cols.iter().map(|c| c.1[e]).sum()).collect();
        assert_eq!(summed, last);
        assert!(last.iter().sum::<u64>() > 1000, "a steady writer completes thousands of writes in 3 s");
        // A history that does not start at 0 (capped) has no baseline for its first second.
        assert_eq!(latency_columns(sim.history().skip(1), None).len(), 1);
        // The second under way: from the last tick to now, so the counts add up to the run's.
        let now = sim.latency_log2();
        let cols = latency_columns(sim.history(), Some((3.5, &now)));
        assert_eq!(cols.last().unwrap().0, 3.5);
        let summed: Vec<u64> = (0..now.len()).map(|e| cols.iter().map(|c| c.1[e]).sum()).collect();
        assert_eq!(summed, now);
        // Before the first tick, the run so far is the one column.
        let mut fresh = blksim::Sim::new(&lesson.config(&lesson.first_variant().name, &[]).unwrap(), 1);
        fresh.run_until(blksim::SimTime::from_secs_f64(0.5));
        let so_far = fresh.latency_log2();
        assert_eq!(latency_columns(fresh.history(), Some((0.5, &so_far))), vec![(0.5, so_far.clone())]);
    }

    #[test]
    fn the_colour_darkens_with_the_count() {
        let (a, b, c) = (heat(0, 1000), heat(30, 1000), heat(1000, 1000));
        assert_eq!(a, RGBColor(0xff, 0xe8, 0x8c));
        assert_eq!(c, RGBColor(0xbd, 0x00, 0x26));
        assert!(b.1 < a.1 && b.1 > c.1);
    }
}
