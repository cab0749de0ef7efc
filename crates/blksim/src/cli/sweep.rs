//! `blksim sweep`: one variant over seeds 1..=N, its figures' distribution (binned as the
//! page's histogram bins it), its slowest run with a link to where its longest stall begins,
//! and each seed's figures.

use super::commands::{bad, config_of, knobs_line, lesson_of, Args, CliError};
use crate::course::link::LinkState;
use crate::engine::run_one;
use crate::tools::report::fmt_num;
use crate::tools::report::RunReport;
use crate::tools::stats::SweepBins;
use serde_json::json;
use std::cmp::Ordering::Equal;
use std::fmt::Write as _;

/// What a sweep keeps of each run.
struct SeedFigures {
    seed: u64,
    completion_s: Option<f64>,
    throughput_mb_s: f64,
    longest_stall_s: f64,
    longest_stall_from_s: f64,
    /// Each fio job's (`run --json`'s `jobs`) name, and its read and write bw (KiB/s) and iops.
    jobs: Vec<(String, [u64; 2], [f64; 2])>,
}

/// Each fio job's read and write `bw` (KiB/s) and `iops` over the seeds: p50, min and max, in
/// the jobs' order.
fn jobs_json(runs: &[SeedFigures]) -> serde_json::Value {
    let n = runs.iter().map(|r| r.jobs.len()).min().unwrap_or(0);
    let spread = |xs: Vec<f64>| {
        let (p50, min, max) = p50_min_max(xs);
        json!({"p50": p50, "min": min, "max": max})
    };
    let jobs: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let dir = |d: usize| {
                json!({
                    "bw": spread(runs.iter().map(|r| r.jobs[i].1[d] as f64).collect()),
                    "iops": spread(runs.iter().map(|r| r.jobs[i].2[d]).collect()),
                })
            };
            json!({"jobname": runs[0].jobs[i].0, "read": dir(0), "write": dir(1)})
        })
        .collect();
    json!(jobs)
}

/// With several fio jobs, each job's `bw` and `iops` over the seeds, a line per direction it
/// did I/O in (as `jobs_json`, in fio's units).
fn jobs_text(runs: &[SeedFigures]) -> String {
    let n = runs.iter().map(|r| r.jobs.len()).min().unwrap_or(0);
    let mut s = String::new();
    if n < 2 {
        return s;
    }
    let w = (0..n).map(|i| runs[0].jobs[i].0.chars().count()).max().unwrap_or(0);
    for i in 0..n {
        for (d, dir) in ["read", "write"].into_iter().enumerate() {
            let bw: Vec<f64> = runs.iter().map(|r| r.jobs[i].1[d] as f64).collect();
            if bw.iter().all(|&x| x == 0.0) {
                continue;
            }
            let (bw_p50, bw_min, bw_max) = p50_min_max(bw);
            let (iops_p50, _, _) = p50_min_max(runs.iter().map(|r| r.jobs[i].2[d]).collect());
            let _ = writeln!(
                s,
                "job {:<w$} {dir:<5}  bw p50 {bw_p50:.0} KiB/s (min {bw_min:.0}, max {bw_max:.0})  iops p50 {iops_p50:.0}",
                runs[0].jobs[i].0
            );
        }
    }
    s
}

/// The p50, min and max of one figure over the seeds.
fn p50_min_max(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (quantile(&xs, 0.5), xs[0], xs[xs.len() - 1])
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    crate::tools::stats::nearest_rank_index(sorted.len(), q).map_or(f64::NAN, |i| sorted[i])
}

pub(super) fn cmd_sweep(a: &Args) -> Result<String, CliError> {
    let l = lesson_of(a, "sweep")?;
    let n = a.seeds.ok_or_else(|| bad("sweep: missing --seeds N; expected a whole number from 1 to 10000"))?;
    let variant = a.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
    let cfg = config_of(&l, &variant, a)?;
    // Each seed's figures, in seed order: the JSON's `per_seed`, the percentiles, and the
    // slowest runs.
    let runs: Vec<SeedFigures> = (1..=n)
        .map(|seed| {
            let mut sim = run_one(&cfg, seed, a.duration);
            let r = RunReport::from_sim(&mut sim, &l.id, &variant);
            SeedFigures {
                seed,
                completion_s: r.completion_s,
                throughput_mb_s: r.throughput_mb_s,
                longest_stall_s: r.longest_stall_s,
                longest_stall_from_s: r.longest_stall_from_s,
                jobs: r.jobs.iter().map(|j| (j.jobname.clone(), [j.read.bw, j.write.bw], [j.read.iops, j.write.iops])).collect(),
            }
        })
        .collect();
    let sweep = Sweep::of(&l.id, &variant, n, &runs, &a.sets);
    if a.json {
        return Ok(serde_json::to_string_pretty(&sweep.json()).expect("json") + "\n");
    }
    Ok(sweep.text(&knobs_line(a).unwrap_or_default()))
}

/// A sweep's runs as its JSON and its text show them.
struct Sweep<'a> {
    lesson: &'a str,
    variant: &'a str,
    /// Seeds asked for (`--seeds N`).
    n: u64,
    /// Each seed's figures, in seed order.
    runs: &'a [SeedFigures],
    /// Completion times of the runs that complete, ascending.
    completions: Vec<f64>,
    /// Every run's throughput, ascending.
    tputs: Vec<f64>,
    slowest_first: Vec<&'a SeedFigures>,
    /// The page's link to the slowest run, where its longest stall begins.
    slowest_link: String,
    /// The figure the histogram shows, and its bins and their counts.
    hist_of: &'static str,
    hist: Option<(SweepBins, Vec<u32>)>,
}

impl<'a> Sweep<'a> {
    fn of(lesson: &'a str, variant: &'a str, n: u64, runs: &'a [SeedFigures], sets: &[(String, String)]) -> Sweep<'a> {
        let mut completions: Vec<f64> = runs.iter().filter_map(|r| r.completion_s).collect();
        let mut tputs: Vec<f64> = runs.iter().map(|r| r.throughput_mb_s).collect();
        // Slowest first: the latest to complete; among runs that never complete, the least
        // throughput; then the first seed. The first is where a kernel engineer looks next, with
        // where its longest stall began.
        let mut slowest_first: Vec<&SeedFigures> = runs.iter().collect();
        slowest_first.sort_by(|x, y| {
            let (sx, sy) = (x.completion_s.unwrap_or(f64::INFINITY), y.completion_s.unwrap_or(f64::INFINITY));
            let by_throughput = if sx.is_infinite() && sy.is_infinite() { x.throughput_mb_s.total_cmp(&y.throughput_mb_s) } else { Equal };
            sy.total_cmp(&sx).then(by_throughput).then(x.seed.cmp(&y.seed))
        });
        let slowest_link = stall_link(lesson, variant, sets, slowest_first[0]);
        completions.sort_by(f64::total_cmp);
        tputs.sort_by(f64::total_cmp);
        let all_done = completions.len() as u64 == n;
        // The distribution of the figure the page's sweep draws: completion time when every run
        // finished, else throughput; binned as the page bins it.
        let (hist_of, hist_values) = if all_done { ("completion_s", &completions) } else { ("throughput_mb_s", &tputs) };
        let hist = SweepBins::over(hist_values.iter().copied(), SWEEP_TEXT_BINS).map(|b| (b, b.count(hist_values)));
        Sweep { lesson, variant, n, runs, completions, tputs, slowest_first, slowest_link, hist_of, hist }
    }

    fn all_done(&self) -> bool {
        self.completions.len() as u64 == self.n
    }

    /// The values the histogram bins (ascending).
    fn hist_values(&self) -> &[f64] {
        if self.all_done() {
            &self.completions
        } else {
            &self.tputs
        }
    }

    fn json(&self) -> serde_json::Value {
        let (completions, tputs, slowest) = (&self.completions, &self.tputs, self.slowest_first[0]);
        let c = |q: f64| {
            if self.all_done() {
                json!(quantile(completions, q))
            } else {
                serde_json::Value::Null
            }
        };
        let hist_json = self.hist.as_ref().map(|(b, counts)| {
            let bins: Vec<_> = (0..b.bins).map(|k| json!({"from": b.edge(k), "to": b.edge(k + 1), "runs": counts[k as usize]})).collect();
            json!({"of": self.hist_of, "log": b.log, "bins": bins})
        });
        json!({
            "lesson": self.lesson, "variant": self.variant, "runs": self.n, "completed_runs": completions.len(),
            "histogram": hist_json,
            "completion_s": {"p50": c(0.5), "p90": c(0.9), "p99": c(0.99), "max": c(1.0)},
            "throughput_mb_s": {"p50": quantile(tputs, 0.5), "min": tputs[0], "max": tputs[tputs.len() - 1]},
            "slowest": {
                "seed": slowest.seed, "completion_s": slowest.completion_s, "throughput_mb_s": slowest.throughput_mb_s,
                "longest_stall_s": slowest.longest_stall_s, "longest_stall_from_s": slowest.longest_stall_from_s,
                "link": self.slowest_link,
            },
            "jobs": jobs_json(self.runs),
            "per_seed": self.runs.iter().map(|r| json!({
                "seed": r.seed, "completion_s": r.completion_s, "throughput_mb_s": r.throughput_mb_s, "longest_stall_s": r.longest_stall_s,
            })).collect::<Vec<_>>(),
        })
    }

    /// The text form, `knobs` (the knobs set, if any) under its header.
    fn text(&self, knobs: &str) -> String {
        let (completions, tputs, slowest) = (&self.completions, &self.tputs, self.slowest_first[0]);
        let mut s = format!("{} {}: {} runs, {} completed\n", self.lesson, self.variant, self.n, completions.len());
        s.push_str(knobs);
        if self.all_done() {
            let _ = writeln!(
                s,
                "completion_s  p50 {:.4}  p90 {:.4}  p99 {:.4}  max {:.4}",
                quantile(completions, 0.5),
                quantile(completions, 0.9),
                quantile(completions, 0.99),
                quantile(completions, 1.0)
            );
        }
        let _ = writeln!(s, "MB/s          p50 {:.1}  min {:.1}  max {:.1}", quantile(tputs, 0.5), tputs[0], tputs[tputs.len() - 1]);
        let _ = writeln!(
            s,
            "slowest       seed {}: longest stall {:.4} s from {:.4} s; opened there: {}",
            slowest.seed, slowest.longest_stall_s, slowest.longest_stall_from_s, self.slowest_link
        );
        if self.n > 1 {
            let named: Vec<String> = self
                .slowest_first
                .iter()
                .take(SWEEP_SLOWEST_NAMED as usize)
                .map(|r| match r.completion_s {
                    Some(c) => format!("{} ({c:.4} s)", r.seed),
                    None => format!("{} ({} MB/s)", r.seed, fmt_num(r.throughput_mb_s)),
                })
                .collect();
            let _ = writeln!(s, "slowest seeds {}", named.join(", "));
        }
        s.push_str(&jobs_text(self.runs));
        if let Some((b, counts)) = &self.hist {
            let values = self.hist_values();
            let (of, lo, hi) = (self.hist_of, values[0], values[values.len() - 1]);
            s.push_str(&if lo == hi { format!("{of}: every run {}\n", fmt_num(lo)) } else { histogram_text(of, b, counts) });
        }
        s
    }
}

/// How many of the slowest seeds the text names (`--json`'s `per_seed` has them all).
const SWEEP_SLOWEST_NAMED: u32 = 5;
/// Bins of `sweep`'s text histogram (the page draws 24 on a canvas).
const SWEEP_TEXT_BINS: u32 = 12;
/// The widest bar of the text histogram, in characters.
const SWEEP_TEXT_BAR_MAX: u32 = 40;

/// A sweep's distribution as text: one line per bin, empty bins included (the gap between
/// the fast runs and a stall is the point), and a bin with runs in it never under one `#`.
fn histogram_text(of: &str, b: &SweepBins, counts: &[u32]) -> String {
    let total: u32 = counts.iter().sum();
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    if most == total {
        // Every run in one bin (often one value): a line says so, not twelve mostly empty.
        let k = counts.iter().position(|&c| c == most).unwrap_or(0) as u32;
        return format!("{of}: every run from {} to {}\n", edge_text(b, b.edge(k)), edge_text(b, b.edge(k + 1)));
    }
    let mut s = format!("{of} histogram ({}):\n", if b.log { "log-spaced bins" } else { "linear bins" });
    for (k, &c) in (0..b.bins).zip(counts) {
        let bar = if c == 0 { 0 } else { (c * SWEEP_TEXT_BAR_MAX).div_ceil(most) };
        let hashes = "#".repeat(bar as usize);
        let _ = writeln!(s, "  {:>10} - {:<10} {:>6}  {hashes}", edge_text(b, b.edge(k)), edge_text(b, b.edge(k + 1)), c);
    }
    s
}

/// A bin edge: to 4 significant figures on log bins (0.04439, 13.06, 192.2), to a tenth of a
/// bin's width on linear ones (so neighbouring edges differ), never with an exponent.
fn edge_text(b: &SweepBins, x: f64) -> String {
    let digits = if b.log {
        if x == 0.0 {
            3
        } else {
            3 - x.abs().log10().floor() as i32
        }
    } else {
        (-b.width().log10()).ceil() as i32 + 1
    };
    let digits = digits.clamp(0, 9) as usize;
    format!("{x:.digits$}")
}

/// The page's link to a run, opened where its longest stall begins (the page runs there
/// without animating, tracing the last half second, and pauses), to play at 1 s/s.
fn stall_link(lesson: &str, variant: &str, sets: &[(String, String)], r: &SeedFigures) -> String {
    LinkState {
        lesson: lesson.to_string(),
        variant: Some(variant.to_string()),
        overrides: sets.to_vec(),
        seed: r.seed,
        t: Some(r.longest_stall_from_s),
        // At the page's fastest pace, as the page's own sweep links it: a stall of seconds.
        speed: Some(1.0),
        ..LinkState::default()
    }
    .encode()
}
