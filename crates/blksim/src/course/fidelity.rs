//! The fidelity scoreboard: every figure a seed report gives, the band around it, and what
//! blkviz measures for it, produced by running the model, never typed.
//!
//! A lesson's `[[fidelity]]` rows (its front matter) say what to measure: a metric of a run
//! report, for a variant (over another variant for a ratio), at seed 1 or as a statistic over
//! a sweep of seeds. `run` measures them; `blksim fidelity --json` writes the result to
//! `lessons/fidelity.json`, which the app and `blksim lessons` read and a test regenerates.
//! A row is `fitted` when a constant in `calib.rs` was fitted to it; a lesson reproduces its
//! report when every predicted (not fitted) row holds.

use crate::course::lessons::{self, Lesson};
use crate::engine::run_one;
use crate::scenario::ScenarioError;
use crate::tools::report::RunReport;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What a row measures in one run's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// What the jobs moved, as fio and dd report it (MB/s).
    ThroughputMbS,
    /// The jobs' I/Os per second, as fio reports them.
    Iops,
    /// What reached the disks: the leaf sd devices' wkB/s summed (MB/s).
    DiskWriteMbS,
    /// vmstat `cs`.
    CsPerS,
    /// vmstat `in`.
    IntrPerS,
    /// Jain's index over the disks' throughput.
    Fairness,
    /// The busiest thread whose name starts with `arg` (top's %CPU).
    ThreadCpuPctMax,
    /// iostat's (rrqm/s + wrqm/s) ÷ (r/s + w/s), summed over the devices whose name starts with
    /// `arg`: bios merged per request.
    MergesPerRequest,
    /// When every job had finished (s).
    CompletionS,
    /// The run's longest span without a job completing a read or a write (s).
    LongestStallS,
    /// %CPU idle (vmstat `id`).
    CpuIdlePct,
    /// vmstat `r` (runnable), mean over the run's whole seconds.
    VmstatR,
    /// vmstat `b` (asleep in `io_schedule`), mean over the run's whole seconds.
    VmstatB,
    /// How many jobs completed a read or write in a second, mean over the whole seconds.
    ProgressingJobs,
    /// iostat's avgrq-sz (sectors) over the devices whose name starts with `arg`, weighted by
    /// their requests.
    AvgrqSz,
    /// iostat's avgqu-sz, summed over the devices whose name starts with `arg`.
    AvgquSz,
    /// iostat's await (ms) over the devices whose name starts with `arg`, weighted by requests.
    AwaitMs,
    /// iostat's r_await (ms), a read's time from its arrival in the queue to its end, over the
    /// devices whose name starts with `arg`, weighted by their reads.
    RAwaitMs,
    /// iostat's r/s, summed over the devices whose name starts with `arg`.
    RPerS,
    /// Calls per second of the kernel function named by `arg` (run report's `funccount`).
    FunccountPerS,
}

/// The statistic of a sweep over seeds 1..=`seeds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepStat {
    Median,
    Max,
    MaxOverMedian,
}

/// One reported figure, as a lesson's front matter states it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FidelityRow {
    /// What it is, e.g. "workaround ÷ regressed throughput".
    pub name: String,
    /// The report's figure, when it gives one (a qualitative claim may not).
    #[serde(default)]
    pub report: Option<f64>,
    pub unit: String,
    /// The band [lo, hi] the model must land in.
    pub band: [f64; 2],
    pub metric: Metric,
    /// For `thread_cpu_pct_max` a thread-name prefix, for `merges_per_request` a device-name
    /// prefix.
    #[serde(default)]
    pub arg: Option<String>,
    /// The variant (the devices section's rows run the sandbox's one, "custom").
    #[serde(default = "custom")]
    pub variant: String,
    /// A ratio: the metric for `variant` over the same metric for this variant.
    #[serde(default)]
    pub over: Option<String>,
    /// Knob settings on top of the variant.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// A ratio's other setup: `set` with these knobs changed (the devices section's ratios).
    #[serde(default)]
    pub over_set: BTreeMap<String, String>,
    /// Where the reported figure comes from (a URL, a post, a commit), with its numbers
    /// quoted: the devices section's rows.
    #[serde(default)]
    pub source: String,
    /// The source's identity: a URL, a Message-ID or a DOI. Two rows share a source when they
    /// share this; sources are independent when their first authors and publications differ.
    #[serde(default)]
    pub source_id: String,
    /// The kernel version the source ran (`kernel=` of the row's setup).
    #[serde(default)]
    pub kernel: Option<String>,
    /// What in the setup matches the source and what does not.
    #[serde(default)]
    pub setup: String,
    /// The seed of a single run (a step's cue on the seed the step opens); default 1.
    #[serde(default)]
    pub seed: Option<u64>,
    /// A sweep over seeds 1..=seeds, summarised by `stat`; without it, seed 1.
    #[serde(default)]
    pub seeds: Option<u32>,
    #[serde(default)]
    pub stat: Option<SweepStat>,
    /// Simulated seconds (default: the lesson's).
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// A constant in `calib.rs` was fitted to this row (calib.rs names it): it shows the fit,
    /// not a prediction.
    #[serde(default)]
    pub fitted: bool,
    /// While the row misses its band: why, in one line.
    #[serde(default)]
    pub why_missed: String,
    /// A known simplification of the model the row's figure rests on, with what the row
    /// measured without it: one line, shown whether the row holds or misses. A row that holds
    /// only through a rule the kernel does not have says so here.
    #[serde(default)]
    pub caveat: String,
    /// The caveat's figures, measured rather than typed: each set of knobs is the kernel's rule
    /// in place of the simplification (on top of the row's own settings, on both sides of a
    /// ratio), and the scoreboard measures the row again under it. A caveat is needed only if
    /// that figure leaves the band, and a test checks it does.
    #[serde(default)]
    pub caveat_sets: Vec<BTreeMap<String, String>>,
}

/// A row measured again with a caveat's knobs: what the figure would be without the
/// simplification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaveatRun {
    pub set: BTreeMap<String, String>,
    pub measured: f64,
    /// Inside the row's band (a caveat whose figure stays inside is not needed).
    pub holds: bool,
}

/// A measured row: the CLI contract of `blksim fidelity --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowResult {
    pub lesson: String,
    pub name: String,
    pub unit: String,
    pub report: Option<f64>,
    pub band: Band,
    pub measured: f64,
    pub fitted: bool,
    pub holds: bool,
    /// Why it misses (empty when it holds).
    pub why_missed: String,
    /// A simplification the figure rests on, and what it measured without it (empty: none
    /// known).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caveat: String,
    /// The caveat's figures: the row measured again with each of its `caveat_sets`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveat_runs: Vec<CaveatRun>,
    /// How it was measured, in blksim's words (variants, seeds, metric).
    pub how: String,
    /// The devices section: the source, the setup, and sandbox links to the run (and to the
    /// ratio's other run).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub setup: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_over: Option<String>,
}

impl RowResult {
    /// The caveat as the board, the Fidelity page and the reveal print it: its text, then each
    /// of its measured figures ("with cpu.wake_idle=idle_cpu: 1.98 ×, outside 2–4.5").
    /// Empty when the row has none.
    pub fn caveat_line(&self) -> String {
        let mut s = self.caveat.clone();
        if !self.caveat_runs.is_empty() {
            let figures: Vec<String> = self
                .caveat_runs
                .iter()
                .map(|c| {
                    let knobs: Vec<String> = c.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let side = if c.holds { "inside" } else { "outside" };
                    format!("with {}: {} {}, {side} {}–{}", knobs.join(" "), c.measured, self.unit, self.band.lo, self.band.hi)
                })
                .collect();
            s += &format!(" (measured {})", figures.join("; "));
        }
        s
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub lo: f64,
    pub hi: f64,
}

/// One lesson's scoreboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonResult {
    pub lesson: String,
    pub title: String,
    /// Every predicted row holds (and there is at least one).
    pub reproduced: bool,
    pub predicted_rows: u32,
    pub predicted_hold: u32,
    /// The devices section: how many independent sources its rows rest on (distinct
    /// `source_id`s). Lessons have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<u32>,
    pub rows: Vec<RowResult>,
}

impl LessonResult {
    /// A section's heading as `blksim fidelity` prints it: its title, how many rows it has and
    /// how many independent sources they rest on.
    pub fn section_heading(&self) -> String {
        format!(
            "{} ({} rows from {} independent sources; each row a sandbox setup against a published figure; `--json` has its source and link)",
            self.title,
            self.rows.len(),
            self.sources.unwrap_or(0)
        )
    }

    /// "reproduces its report", or "reproduces N of M figures" (predicted rows only), and how
    /// many of the holding ones rest on a simplification (", 2 with caveats"): a badge that
    /// counts them as plain holds would say more than the model does.
    pub fn status(&self) -> String {
        let caveats = self.rows.iter().filter(|r| !r.fitted && r.holds && !r.caveat.is_empty()).count();
        let base = if self.reproduced {
            "reproduces its report".to_string()
        } else {
            format!("reproduces {} of {} figures", self.predicted_hold, self.predicted_rows)
        };
        match (caveats, self.reproduced) {
            (0, _) => base,
            (1, true) => base + ", 1 figure with a caveat",
            (n, true) => format!("{base}, {n} figures with caveats"),
            (1, false) => base + ", 1 with a caveat",
            (n, false) => format!("{base}, {n} with caveats"),
        }
    }
}

/// Checks a lesson's rows: known variants and knobs, a band that is a range, a sweep with its
/// statistic and no ratio, and an argument where the metric needs one.
pub fn check(l: &Lesson) -> Result<(), ScenarioError> {
    check_rows(l, &l.fidelity, "fidelity")
}

/// Checks rows of any list (`fidelity`, a step's or the prediction's `check`), named by `list`
/// in errors.
pub fn check_rows(l: &Lesson, rows: &[FidelityRow], list: &str) -> Result<(), ScenarioError> {
    for (i, r) in rows.iter().enumerate() {
        let at = |what: &str| format!("{}.{list}[{i}].{what}", l.id);
        // A row's settings are a user's: each must act on something in its run (knob_applies),
        // which runs under the row's kernel (`dm.rr_min_io` acts only where it implies bio-based dm).
        let with_kernel = with_row_kernel(r);
        let r = &with_kernel;
        check_setup(l, &r.variant, &r.set, at("variant"), at("set"))?;
        if is_ratio(r) {
            check_setup(l, over_variant(r), &over_sets(r), at("over"), at("over"))?;
        }
        for (j, cs) in r.caveat_sets.iter().enumerate() {
            let at = format!("{}.{list}[{i}].caveat_sets[{j}]", l.id);
            if r.caveat.is_empty() || cs.is_empty() {
                return Err(ScenarioError::new(
                    at,
                    "caveat_sets measure a caveat: the row needs its caveat text, and each set at least one knob",
                ));
            }
            let w = with_caveat_set(r, cs);
            check_setup(l, &w.variant, &w.set, at.clone(), at.clone())?;
            if is_ratio(&w) {
                check_setup(l, over_variant(&w), &over_sets(&w), at.clone(), at)?;
            }
        }
        if r.band[0].partial_cmp(&r.band[1]).is_none_or(|o| o == std::cmp::Ordering::Greater) {
            return Err(ScenarioError::new(at("band"), "expected [lo, hi] with lo ≤ hi"));
        }
        match (r.seeds, r.stat) {
            (Some(n), Some(_)) if (1..=crate::scenario::limits::SWEEP_SEEDS_MAX as u32).contains(&n) && !is_ratio(r) => {}
            (None, None) => {}
            _ => return Err(ScenarioError::new(at("seeds"), "a sweep needs seeds (1 to 10000) and stat, and no ratio")),
        }
        if r.seed.is_some() && r.seeds.is_some() {
            return Err(ScenarioError::new(at("seed"), "a row runs one seed (seed) or sweeps seeds 1..=seeds, not both"));
        }
        let needs_arg = matches!(
            r.metric,
            Metric::ThreadCpuPctMax
                | Metric::MergesPerRequest
                | Metric::AvgrqSz
                | Metric::AvgquSz
                | Metric::AwaitMs
                | Metric::RAwaitMs
                | Metric::RPerS
                | Metric::FunccountPerS
        );
        if needs_arg != r.arg.is_some() {
            return Err(ScenarioError::new(at("arg"), "thread_cpu_pct_max takes a thread-name prefix, merges_per_request, avgrq_sz, avgqu_sz, await_ms, r_await_ms and r_per_s a device-name prefix, funccount_per_s a counted function's name; others none"));
        }
        if r.metric == Metric::FunccountPerS {
            let known = crate::engine::FuncCount::default().by_name().map(|(f, _)| f);
            if !r.arg.as_deref().is_some_and(|a| known.contains(&a)) {
                return Err(ScenarioError::new(at("arg"), format!("funccount_per_s counts one of {}", known.join(", "))));
            }
        }
    }
    Ok(())
}

/// One setup of a row: the variant with its settings must make a run (errors at `at_variant`),
/// and each setting must act on something in it (`check_user_knobs`, errors at `at_set`).
fn check_setup(l: &Lesson, variant: &str, set: &BTreeMap<String, String>, at_variant: String, at_set: String) -> Result<(), ScenarioError> {
    let sets = pairs(set);
    let cfg = l.config(variant, &sets).map_err(|e| ScenarioError::new(at_variant, e.to_string()))?;
    crate::scenario::check_user_knobs(&[&cfg.scenario], &sets).map_err(|e| ScenarioError::new(at_set, e.to_string()))
}

/// The row with a caveat's kernel rule in place: its knobs on top of the row's settings, so on
/// both sides of a ratio (`over_set` still decides the other side's own knobs).
fn with_caveat_set(r: &FidelityRow, cs: &BTreeMap<String, String>) -> FidelityRow {
    let mut w = r.clone();
    w.set.extend(cs.iter().map(|(k, v)| (k.clone(), v.clone())));
    w
}

fn custom() -> String {
    "custom".into()
}

fn is_ratio(r: &FidelityRow) -> bool {
    r.over.is_some() || !r.over_set.is_empty()
}

fn over_variant(r: &FidelityRow) -> &str {
    r.over.as_deref().unwrap_or(&r.variant)
}

/// The row with its source's `kernel` among its settings: the era's rules for every knob the
/// row does not set itself (its own `set` wins, in any order: `scenario::era`).
fn with_row_kernel(r: &FidelityRow) -> FidelityRow {
    let mut r = r.clone();
    if let Some(k) = &r.kernel {
        r.set.entry(crate::scenario::knob_table::KERNEL.key.to_string()).or_insert_with(|| k.clone());
    }
    r
}

/// A ratio's other setup: `set`, then `over_set` over it.
fn over_sets(r: &FidelityRow) -> BTreeMap<String, String> {
    let mut s = r.set.clone();
    s.extend(r.over_set.iter().map(|(k, v)| (k.clone(), v.clone())));
    s
}

fn pairs(set: &BTreeMap<String, String>) -> Vec<(String, String)> {
    set.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A sandbox link (`#/sandbox?v=1&…`) to a devices-section row's setup, with its duration.
fn sandbox_link(set: &BTreeMap<String, String>, duration_s: Option<f64>) -> String {
    let mut overrides = pairs(set);
    if let Some(d) = duration_s {
        overrides.push((crate::scenario::knob_table::DURATION.key.into(), format!("{d}")));
    }
    let st = crate::course::link::LinkState { lesson: lessons::SANDBOX.into(), overrides, ..Default::default() };
    st.encode()
}

fn value(r: &RunReport, m: Metric, arg: Option<&str>) -> f64 {
    let prefix = arg.unwrap_or("");
    match m {
        Metric::ThroughputMbS => r.throughput_mb_s,
        Metric::Iops => r.iops,
        Metric::DiskWriteMbS => r.devices.iter().filter(|d| d.is_disk()).map(|d| d.wkb_s * 1024.0 / 1e6).sum(),
        Metric::CsPerS => r.cs_per_s,
        Metric::IntrPerS => r.intr_per_s,
        Metric::Fairness => r.fairness,
        Metric::ThreadCpuPctMax => r.threads.iter().filter(|t| t.name.starts_with(prefix)).map(|t| t.cpu_pct).fold(0.0, f64::max),
        Metric::MergesPerRequest => {
            let devs = r.devices.iter().filter(|d| d.name.starts_with(prefix));
            let (merges, reqs) = devs.fold((0.0, 0.0), |(m, q), d| (m + d.rrqm_s + d.wrqm_s, q + d.r_s + d.w_s));
            if reqs > 0.0 {
                merges / reqs
            } else {
                0.0
            }
        }
        Metric::CompletionS => r.completion_s.unwrap_or(f64::NAN),
        Metric::FunccountPerS => r.funccount.get(prefix).copied().unwrap_or(f64::NAN),
        Metric::CpuIdlePct => r.cpu.idle_pct,
        Metric::VmstatR => r.vmstat.r,
        Metric::VmstatB => r.vmstat.b,
        Metric::ProgressingJobs => r.progressing_jobs_mean,
        Metric::LongestStallS => r.longest_stall_s,
        Metric::RAwaitMs => {
            let devs = r.devices.iter().filter(|d| d.name.starts_with(prefix));
            let (wait, reads) = devs.fold((0.0, 0.0), |(w, n), d| (w + d.r_await_ms * d.r_s, n + d.r_s));
            if reads > 0.0 {
                wait / reads
            } else {
                0.0
            }
        }
        Metric::RPerS => r.devices.iter().filter(|d| d.name.starts_with(prefix)).map(|d| d.r_s).sum(),
        Metric::AvgrqSz | Metric::AvgquSz | Metric::AwaitMs => {
            let devs: Vec<_> = r.devices.iter().filter(|d| d.name.starts_with(prefix)).collect();
            let reqs: f64 = devs.iter().map(|d| d.r_s + d.w_s).sum();
            let weighted = |f: fn(&crate::tools::stats::Iostat) -> f64| {
                if reqs > 0.0 {
                    devs.iter().map(|d| f(d) * (d.r_s + d.w_s)).sum::<f64>() / reqs
                } else {
                    0.0
                }
            };
            match m {
                Metric::AvgrqSz => weighted(|d| d.avgrq_sz),
                Metric::AwaitMs => weighted(|d| d.await_ms),
                _ => devs.iter().map(|d| d.avgqu_sz).sum(),
            }
        }
    }
}

/// Four significant digits: what the table shows, and what the committed file keeps, so that
/// a change far below what anyone reads does not churn it.
fn round4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Runs, cached by what determines them, so rows that share a run share it.
#[derive(Default)]
pub(crate) struct Runs {
    done: BTreeMap<String, RunReport>,
}

impl Runs {
    fn get(&mut self, l: &Lesson, variant: &str, set: &BTreeMap<String, String>, seed: u64, duration_s: Option<f64>) -> &RunReport {
        let key = format!("{variant}|{set:?}|{seed}|{duration_s:?}");
        self.done.entry(key).or_insert_with(|| {
            let sets: Vec<(String, String)> = set.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let cfg = l.config(variant, &sets).expect("rows are checked with the lessons");
            let mut sim = run_one(&cfg, seed, duration_s);
            RunReport::from_sim(&mut sim, &l.id, variant)
        })
    }
}

fn describe(r: &FidelityRow) -> String {
    let mut s = format!("{:?}", r.metric).chars().fold(String::new(), |mut acc, c| {
        if c.is_uppercase() && !acc.is_empty() {
            acc.push('_');
        }
        acc.push(c.to_ascii_lowercase());
        acc
    });
    if let Some(a) = &r.arg {
        s += &format!("({a}*)");
    }
    s += &format!(" of {}", r.variant);
    if let Some(o) = &r.over {
        s += &format!(" ÷ the same of {o}");
    }
    for (k, v) in &r.set {
        s += &format!(" --set {k}={v}");
    }
    if !r.over_set.is_empty() {
        s += " ÷ the same with";
        for (k, v) in &r.over_set {
            s += &format!(" --set {k}={v}");
        }
    }
    match (r.seeds, r.stat) {
        (Some(n), Some(st)) => s += &format!(", {} over seeds 1..={n}", format!("{st:?}").to_lowercase()),
        _ => s += &format!(", seed {}", r.seed.unwrap_or(1)),
    }
    if let Some(d) = r.duration_s {
        s += &format!(", {d} s");
    }
    s
}

fn measure(runs: &mut Runs, l: &Lesson, r: &FidelityRow) -> f64 {
    let arg = r.arg.as_deref();
    if let (Some(n), Some(stat)) = (r.seeds, r.stat) {
        let mut xs: Vec<f64> =
            (1..=n as u64).map(|seed| value(runs.get(l, &r.variant, &r.set, seed, r.duration_s), r.metric, arg)).collect();
        xs.sort_by(f64::total_cmp);
        // The median as `blksim sweep` takes its p50: the ceil(n/2)-th value.
        let median = xs[(xs.len().div_ceil(2)).max(1) - 1];
        let max = xs[xs.len() - 1];
        return match stat {
            SweepStat::Median => median,
            SweepStat::Max => max,
            SweepStat::MaxOverMedian => max / median,
        };
    }
    let seed = r.seed.unwrap_or(1);
    let x = value(runs.get(l, &r.variant, &r.set, seed, r.duration_s), r.metric, arg);
    if is_ratio(r) {
        x / value(runs.get(l, over_variant(r), &over_sets(r), seed, r.duration_s), r.metric, arg)
    } else {
        x
    }
}

/// Measures one row: its value, whether it lands in its band, and how it was measured.
pub(crate) fn measure_row(runs: &mut Runs, l: &Lesson, r: &FidelityRow) -> RowResult {
    let with_kernel = with_row_kernel(r);
    let r = &with_kernel;
    let measured = round4(measure(runs, l, r));
    let in_band = |x: f64| x >= r.band[0] && x <= r.band[1];
    let holds = in_band(measured);
    let caveat_runs = r
        .caveat_sets
        .iter()
        .map(|cs| {
            let x = round4(measure(runs, l, &with_caveat_set(r, cs)));
            CaveatRun { set: cs.clone(), measured: x, holds: in_band(x) }
        })
        .collect();
    RowResult {
        lesson: l.id.clone(),
        name: r.name.clone(),
        unit: r.unit.clone(),
        report: r.report,
        band: Band { lo: r.band[0], hi: r.band[1] },
        measured,
        fitted: r.fitted,
        holds,
        why_missed: if holds { String::new() } else { r.why_missed.clone() },
        caveat: r.caveat.clone(),
        caveat_runs,
        how: describe(r),
        source: r.source.clone(),
        source_id: r.source_id.clone(),
        kernel: r.kernel.clone(),
        setup: r.setup.clone(),
        link: (l.id == DEVICES).then(|| sandbox_link(&r.set, r.duration_s)),
        link_over: (l.id == DEVICES && is_ratio(r)).then(|| sandbox_link(&over_sets(r), r.duration_s)),
    }
}

/// Measures one lesson's rows.
pub fn run_lesson(l: &Lesson) -> LessonResult {
    let mut runs = Runs::default();
    let rows: Vec<RowResult> = l.fidelity.iter().map(|r| measure_row(&mut runs, l, r)).collect();
    let predicted: Vec<&RowResult> = rows.iter().filter(|r| !r.fitted).collect();
    let predicted_hold = predicted.iter().filter(|r| r.holds).count() as u32;
    LessonResult {
        lesson: l.id.clone(),
        title: l.title.clone(),
        reproduced: !predicted.is_empty() && predicted_hold == predicted.len() as u32,
        predicted_rows: predicted.len() as u32,
        predicted_hold,
        sources: None,
        rows,
    }
}

/// Every lesson that has rows, in teaching order.
pub fn run_all() -> Vec<LessonResult> {
    lessons::all().iter().filter(|l| !l.fidelity.is_empty()).map(run_lesson).collect()
}

/// The devices-and-layers section's id: its rows (`lessons/devices.toml`) check the device
/// models and the layers users turn against published measurements, each a sandbox setup.
pub const DEVICES: &str = "devices";

/// The devices-and-layers section as a lesson of the sandbox: its scenario, its one variant
/// ("custom"), and the rows of `lessons/devices.toml` (compiled in by build.rs).
pub fn devices() -> Lesson {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Section {
        title: String,
        fidelity: Vec<FidelityRow>,
    }
    const DEVICES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/devices.json"));
    let sec: Section = serde_json::from_str(DEVICES_JSON).unwrap_or_else(|e| panic!("lessons/devices.toml: {e}"));
    Lesson { id: DEVICES.into(), title: sec.title, fidelity: sec.fidelity, ..lessons::sandbox() }
}

/// The sections beside the lessons, measured: the devices and layers, with the count of
/// independent sources its rows rest on.
pub fn run_sections() -> Vec<LessonResult> {
    let d = devices();
    let mut r = run_lesson(&d);
    r.sources = Some(independent_sources(&d.fidelity));
    vec![r]
}

/// How many independent sources rows rest on: their distinct non-empty `source_id`s (rows from
/// one publication share one).
pub fn independent_sources(rows: &[FidelityRow]) -> u32 {
    rows.iter().map(|r| r.source_id.as_str()).filter(|s| !s.is_empty()).collect::<BTreeSet<_>>().len() as u32
}

/// The scoreboard as `blksim fidelity --json` prints it and `lessons/fidelity.json` keeps it:
/// the lessons, and the sections beside them.
pub fn to_json(results: &[LessonResult], sections: &[LessonResult]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({ "lessons": results, "sections": sections })).expect("json") + "\n"
}

/// The scoreboard as last written to `lessons/fidelity.json` (compiled in).
#[inline]
pub fn committed() -> Vec<LessonResult> {
    committed_file().lessons.clone()
}

/// The sections beside the lessons (the devices and layers) as last written.
#[inline]
pub fn committed_sections() -> Vec<LessonResult> {
    committed_file().sections.clone()
}

#[derive(Deserialize)]
struct File {
    lessons: Vec<LessonResult>,
    #[serde(default)]
    sections: Vec<LessonResult>,
}

#[inline]
fn committed_file() -> &'static File {
    const FIDELITY_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/fidelity.json"));
    static PARSED: std::sync::OnceLock<File> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str::<File>(FIDELITY_JSON).unwrap_or_else(|e| panic!("lessons/fidelity.json: {e}")))
}

/// A lesson's committed scoreboard, if it has rows.
#[inline]
pub fn committed_for(id: &str) -> Option<LessonResult> {
    committed().into_iter().find(|r| r.lesson == id)
}
