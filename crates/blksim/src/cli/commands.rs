//! The `blksim` subcommands (docs/cli.md is their contract). Bad input returns a
//! `CliError`: one line naming the offending word and what is allowed; the binary exits 2.

use super::args;
use crate::course::lessons::{self, Lesson};
use crate::course::link::LinkState;
use crate::engine::run_one;
use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::TraceRecord;
use crate::scenario::{check_user_knobs, counted, Config, KNOBS};
use crate::tools::report::fmt_num;
use crate::tools::report::RunReport;
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write;

#[derive(Debug, PartialEq, Eq)]
pub struct CliError(pub String);

/// What `fidelity --check` says when a row misses (the binary exits 1 for it, not 2).
pub const FIDELITY_MISSES: &str = "fidelity: some rows miss their bands (see above)";

impl CliError {
    fn misses() -> CliError {
        CliError(FIDELITY_MISSES.into())
    }

    /// The exit status: 1 for `fidelity --check` with a missed row, 2 for bad input.
    pub fn exit_code(&self) -> i32 {
        if self.0 == FIDELITY_MISSES {
            1
        } else {
            2
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(super) const USAGE: &str = "usage: blksim <lessons|knobs|run|compare|sweep|link|fidelity|trace|replay> [LESSON] [OPTIONS]; 'blksim --help' and 'blksim SUBCOMMAND --help' say more";

#[derive(Clone, Default)]
pub struct Args {
    pub(super) lesson: Option<String>,
    pub(super) variant: Option<String>,
    /// `link --b NAME`: the A/B view's second variant.
    pub(super) b: Option<String>,
    pub(super) sets: Vec<(String, String)>,
    /// A pasted link's run B's own knobs (`b.<knob>=…`): `link` writes them again.
    pub(super) b_sets: Vec<(String, String)>,
    pub(super) seed: Option<u64>,
    pub(super) duration: Option<f64>,
    pub(super) seeds: Option<u64>,
    pub(super) json: bool,
    /// `fidelity --check`: exit 1 if any row misses.
    pub(super) check: bool,
    /// `trace --out DIR`: where the blktrace files go.
    pub(super) out: Option<String>,
    /// `run --job-file FILE`: an fio job file for the workload.
    pub(super) job_file: Option<String>,
    /// `run --job-file FILE --strict`: refuse a job file that asks for what the model does not do.
    pub(super) strict: bool,
    /// `replay FILE...`: trace files or directories.
    pub(super) files: Vec<String>,
    /// `replay --log`: print the records.
    pub(super) log: bool,
    /// `fidelity --cues`: the steps' and predictions' check rows instead of the scoreboard.
    pub(super) cues: bool,
    /// The time of a link given as LESSON (`link` keeps it: the moment a bug thread points at).
    pub(super) link_t: Option<f64>,
    /// `link --base` (or a whole link's own address): printed before the fragment.
    pub(super) base: Option<String>,
}

pub(super) fn bad(msg: impl Into<String>) -> CliError {
    CliError(msg.into())
}

pub(super) fn lesson_of(a: &Args, cmd: &str) -> Result<Lesson, CliError> {
    let id = a.lesson.as_deref().ok_or_else(|| {
        bad(format!(
            "{cmd}: missing LESSON; expected one of {}, {} (knobs only), or a link the app copied, in quotes",
            lessons::ids().join(", "),
            crate::course::lessons::SANDBOX
        ))
    })?;
    lessons::find(id).map_err(|e| bad(e.message))
}

pub(super) fn config_of(l: &Lesson, variant: &str, a: &Args) -> Result<Config, CliError> {
    Ok(configs_of(l, &[variant], a)?.remove(0))
}

/// Each variant with the `--set`s, validated; a `--set` must act in at least one of them (a
/// dm knob is fine in a comparison beside a variant on the disk).
fn configs_of(l: &Lesson, variants: &[&str], a: &Args) -> Result<Vec<Config>, CliError> {
    let cfgs = variants.iter().map(|v| l.config(v, &a.sets).map_err(|e| bad(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
    check_user_knobs(&cfgs.iter().map(|c| &c.scenario).collect::<Vec<_>>(), &a.sets).map_err(|e| bad(e.to_string()))?;
    Ok(cfgs)
}

/// Entry point: `args` without the program name. Output goes to `out`.
pub fn main(args: &[String], out: &mut dyn Write) -> Result<(), CliError> {
    let (cmd, a) = match args::parse(args)? {
        args::Parsed::Print(text) => return write_out(out, &text),
        args::Parsed::Command(cmd, a) => (cmd, a),
    };
    let text = match cmd {
        "lessons" => cmd_lessons(&a),
        "knobs" => cmd_knobs(&a),
        "run" => cmd_run(&a)?,
        "compare" => cmd_compare(&a)?,
        "sweep" => super::sweep::cmd_sweep(&a)?,
        "link" => cmd_link(&a)?,
        "trace" => cmd_trace(&a)?,
        "replay" => super::replay::cmd_replay(&a)?,
        "fidelity" => {
            let (text, all_hold) = cmd_fidelity(&a)?;
            write_out(out, &text)?;
            return if all_hold { Ok(()) } else { Err(CliError::misses()) };
        }
        other => return Err(bad(format!("unknown subcommand '{other}'"))),
    };
    write_out(out, &text)
}

/// Writes the output; a reader that closed the pipe (`| head`) has all it wanted, so that ends
/// quietly, as `cat` ends.
fn write_out(out: &mut dyn Write, text: &str) -> Result<(), CliError> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| bad(format!("cannot write output: {e}"))),
    }
}

fn cmd_lessons(a: &Args) -> String {
    let all = lessons::all();
    if a.json {
        let v: Vec<_> = all
            .iter()
            .map(|l| {
                let gaps: Vec<String> = match l.config(&l.first_variant().name, &[]) {
                    Ok(cfg) => crate::engine::model_gaps(&cfg),
                    Err(e) => vec![e.to_string()],
                };
                let board = crate::course::fidelity::committed_for(&l.id);
                json!({"id": l.id, "title": l.title, "kind": l.kind, "question": l.question, "seed_report": l.seed_report,
                       "variants": l.variants.iter().map(|v| &v.name).collect::<Vec<_>>(),
                       "calibrated": board.as_ref().is_none_or(|b| b.reproduced),
                       "fidelity": board.as_ref().map(|b| b.status()), "model_gaps": gaps})
            })
            .collect();
        return serde_json::to_string_pretty(&v).expect("json") + "\n";
    }
    let mut s = String::new();
    // The id column as wide as the longest id, so every title starts in the same place.
    let w = all.iter().map(|l| l.id.chars().count()).max().unwrap_or(0);
    for l in &all {
        let vars: Vec<String> = l.variants.iter().map(crate::course::lessons::Variant::quoted_name).collect();
        let status = match crate::course::fidelity::committed_for(&l.id) {
            None => "primer".to_string(),
            Some(b) if b.reproduced => b.status(),
            Some(b) => format!("{}: `blksim fidelity {}` shows which miss and why", b.status(), l.id),
        };
        let _ = writeln!(s, "{:<w$} {}\n{:<w$} variants: {}  [{}]", l.id, l.title, "", vars.join(", "), status);
    }
    s
}

fn cmd_knobs(a: &Args) -> String {
    if a.json {
        let v: Vec<_> =
            KNOBS.iter().map(|k| json!({"key": k.key, "allowed": k.kind.allowed(), "help": k.help, "live": k.live.is_live()})).collect();
        return serde_json::to_string_pretty(&v).expect("json") + "\n";
    }
    let mut s = String::new();
    for k in KNOBS {
        let _ = writeln!(s, "{:<24} {}  ({})", k.key, k.help, k.kind.allowed());
    }
    s.push('\n');
    s.push_str(&crate::scenario::era::table_text());
    s
}

/// `--job-file FILE`: the file's workload knobs, put before the `--set`s (which win), and its
/// notes (what it asked for that the model does not do), said on stderr.
fn job_file(path: &str, l: &Lesson, variant: &str) -> Result<crate::fio::FioJob, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| bad(format!("--job-file: cannot read '{}': {e}", crate::scenario::clip_path(path))))?;
    let mut job = crate::fio::parse(&text).map_err(|e| bad(format!("--job-file {}: {}", crate::scenario::clip_path(path), e.message)))?;
    let base = l.config(variant, &[]).map_err(|e| bad(e.to_string()))?;
    job.fit_devices(&base.scenario);
    Ok(job)
}

/// The knobs set on top of the variant's (by --set, a link or a job file), for under a text
/// header: which run this is should be readable from its output alone. (A job file's runtime
/// that --duration overrode is not what ran.)
pub(super) fn knobs_line(a: &Args) -> Option<String> {
    let knobs: Vec<String> = knobs_set(a).map(|(k, v)| format!("{k}={v}")).collect();
    (!knobs.is_empty()).then(|| format!("knobs set  {}\n", knobs.join(" ")))
}

/// The knobs set on top of the lesson's variant (`--set`, a job file's, a link's), but a
/// `duration` that `--duration` overrides.
fn knobs_set(a: &Args) -> impl Iterator<Item = &(String, String)> {
    a.sets.iter().filter(|(k, _)| !(k == crate::scenario::knob_table::DURATION.key && a.duration.is_some()))
}

/// `knobs_set` for `run --json` and `compare --json`, as the text output's "knobs set" line
/// lists them: a script that reads the figures knows the settings they came from. A later
/// setting of a knob wins.
fn knobs_json(a: &Args) -> serde_json::Value {
    serde_json::Value::Object(knobs_set(a).map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect())
}

fn cmd_run(a: &Args) -> Result<String, CliError> {
    let owned;
    let a = match &a.job_file {
        Some(path) => {
            // Without a lesson, the job runs in the sandbox; the --set's come after it and win.
            let lesson = a.lesson.clone().unwrap_or_else(|| lessons::SANDBOX.to_string());
            let l = lessons::find(&lesson).map_err(|e| bad(e.message))?;
            let variant = a.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
            let job = job_file(path, &l, &variant)?;
            // A script that compares the model with a real run wants to know, not to read stderr.
            if a.strict && !job.not_modelled.is_empty() {
                return Err(bad(format!(
                    "--job-file {}: not modelled (refused with --strict): {}; without --strict these are ignored and the job runs",
                    crate::scenario::clip_path(path),
                    job.not_modelled.join(", ")
                )));
            }
            if let Some(n) = job.notes() {
                eprintln!("blksim: job file {}: {n}", crate::scenario::clip_path(path));
            }
            let sets = job.knobs.into_iter().chain(a.sets.iter().cloned()).collect();
            owned = Args { sets, lesson: Some(lesson), ..a.clone() };
            &owned
        }
        None => a,
    };
    let l = lesson_of(a, "run")?;
    let variant = a.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
    let cfg = config_of(&l, &variant, a)?;
    let seed = a.seed.unwrap_or(1);
    let mut sim = run_one(&cfg, seed, a.duration);
    let r = RunReport::from_sim(&mut sim, &l.id, &variant);
    if a.json {
        let mut v = serde_json::to_value(&r).expect("json");
        v["knobs_set"] = knobs_json(a);
        return Ok(serde_json::to_string_pretty(&v).expect("json") + "\n");
    }
    Ok(human(&r, knobs_line(a).as_deref()))
}

fn cmd_compare(a: &Args) -> Result<String, CliError> {
    let l = lesson_of(a, "compare")?;
    let seed = a.seed.unwrap_or(1);
    let mut reports = Vec::new();
    let cfgs = configs_of(&l, &l.variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), a)?;
    for (v, cfg) in l.variants.iter().zip(&cfgs) {
        let mut sim = run_one(cfg, seed, a.duration);
        reports.push(RunReport::from_sim(&mut sim, &l.id, &v.name));
    }
    if a.json {
        let mut m = serde_json::Map::new();
        for r in &reports {
            m.insert(r.variant.clone(), serde_json::to_value(r).expect("json"));
        }
        let v = json!({"lesson": l.id, "seed": seed, "knobs_set": knobs_json(a), "variants": m});
        return Ok(serde_json::to_string_pretty(&v).expect("json") + "\n");
    }
    let mut s = String::new();
    let base = &reports[0];
    let _ = writeln!(s, "{} (seed {seed}); ratios are against {}", l.id, base.variant);
    s.push_str(&knobs_line(a).unwrap_or_default());
    // The first column as wide as the longest variant name (some are phrases), so the figures align.
    let w = reports.iter().map(|r| r.variant.chars().count()).max().unwrap_or(0).max(12);
    let _ = writeln!(s, "{:<w$} {:>10} {:>8} {:>10} {:>8} {:>9} {:>7}", "variant", "MB/s", "ratio", "cs/s", "ratio", "fairness", "done_s");
    for r in &reports {
        // Against a base of zero there is no ratio: "-", as for a run that did not complete.
        let ratio = |x: f64, y: f64| if y > 0.0 { format!("{:.2}", x / y) } else { "-".into() };
        let _ = writeln!(
            s,
            "{:<w$} {:>10.1} {:>8} {:>10.0} {:>8} {:>9.3} {:>7}",
            r.variant,
            r.throughput_mb_s,
            ratio(r.throughput_mb_s, base.throughput_mb_s),
            r.cs_per_s,
            ratio(r.cs_per_s, base.cs_per_s),
            r.fairness,
            r.completion_s.map_or("-".into(), |c| format!("{c:.3}"))
        );
    }
    s.push_str(&compare_jobs_text(&reports));
    gaps_note(&mut s, &reports[0].model_gaps);
    Ok(s)
}

/// With several fio jobs, each variant's jobs side by side: fio's `bw` (KiB/s) and the 99th
/// percentile of completion latency, read and write ("-" where a job did none).
fn compare_jobs_text(reports: &[RunReport]) -> String {
    let mut s = String::new();
    if reports.iter().all(|r| r.jobs.len() < 2) {
        return s;
    }
    let w = reports.iter().map(|r| r.variant.chars().count()).max().unwrap_or(0).max(12);
    let jw = reports.iter().flat_map(|r| &r.jobs).map(|j| j.jobname.chars().count()).max().unwrap_or(0).max(3);
    let _ = writeln!(s, "\neach job (fio's jobs: bw in KiB/s, clat p99 in ms)");
    let _ = writeln!(s, "{:<w$} {:<jw$} {:>10} {:>10} {:>10} {:>10}", "variant", "job", "read bw", "read p99", "write bw", "write p99");
    let fig = |d: &crate::tools::fio_report::DdirReport| -> (String, String) {
        if d.total_ios == 0 {
            return ("-".into(), "-".into());
        }
        let p99 = d.clat_ns.percentile.get("99.000000").copied().unwrap_or(0);
        (d.bw.to_string(), format!("{:.2}", p99 as f64 / 1e6))
    };
    for r in reports {
        for j in &r.jobs {
            let ((rb, rp), (wb, wp)) = (fig(&j.read), fig(&j.write));
            let _ = writeln!(s, "{:<w$} {:<jw$} {rb:>10} {rp:>10} {wb:>10} {wp:>10}", r.variant, j.jobname);
        }
    }
    s
}

fn cmd_link(a: &Args) -> Result<String, CliError> {
    let l = lesson_of(a, "link")?;
    if let Some(v) = &a.variant {
        l.variant(v).map_err(|e| bad(e.message))?;
    }
    if let Some(b) = &a.b {
        l.variant(b).map_err(|e| bad(format!("--b: {}", e.message)))?;
    }
    let variant = a.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
    // A knob need act in A's variant or in B's, as the page takes it.
    configs_of(&l, &[Some(variant.as_str()), a.b.as_deref()].into_iter().flatten().collect::<Vec<_>>(), a)?;
    let st = LinkState {
        lesson: l.id.clone(),
        variant: a.variant.clone(),
        b: a.b.clone(),
        // Each value as this build writes it (`yes` -> `true`, `4KiB` -> `4k`), so the link
        // printed is the one the page's Copy link would give.
        overrides: a
            .sets
            .iter()
            .map(|(k, v)| {
                let mut sc = crate::scenario::Scenario::default();
                let canonical = crate::scenario::set_knob(&mut sc, k, v).ok().and_then(|_| crate::scenario::get_knob(&sc, k));
                (k.clone(), canonical.unwrap_or_else(|| v.clone()))
            })
            .collect(),
        b_overrides: a.b_sets.clone(),
        seed: a.seed.unwrap_or(1),
        // A link rewritten keeps its moment; the page's view (pace, step, presenter) it drops.
        t: a.link_t,
        speed: None,
        step: None,
        presenter: None,
        large: None,
    };
    // The page must open what this prints without a notice: a link it would refuse in part
    // (B the same as A's variant) is refused here, with the page's reason.
    let link = st.encode();
    LinkState::decode(&link).map_err(|e| match e.field.as_str() {
        "b" => bad(format!("--b: {}", e.message)),
        _ => bad(format!("link: the page would refuse this link ({e})")),
    })?;
    Ok(format!("{}{link}\n", a.base.as_deref().unwrap_or("")))
}

/// `blksim fidelity [LESSON]`: measures the lessons' fidelity rows. Returns the text and
/// whether every row holds (what `--check` exits on; plain runs exit 0).
fn cmd_fidelity(a: &Args) -> Result<(String, bool), CliError> {
    if a.cues {
        return cmd_cues(a);
    }
    // `blksim fidelity devices`: the devices-and-layers section alone.
    let (results, sections) = match &a.lesson {
        Some(id) if id == crate::course::fidelity::DEVICES => (Vec::new(), crate::course::fidelity::run_sections()),
        Some(_) => {
            let l = lesson_of(a, "fidelity")?;
            if l.fidelity.is_empty() {
                return Err(bad(format!("fidelity: '{}' has no fidelity rows (a primer); lessons with rows: {}", l.id, with_rows())));
            }
            (vec![crate::course::fidelity::run_lesson(&l)], Vec::new())
        }
        None => (crate::course::fidelity::run_all(), crate::course::fidelity::run_sections()),
    };
    let all_hold = results.iter().chain(&sections).all(|l| l.rows.iter().all(|r| r.holds));
    if a.json {
        return Ok((crate::course::fidelity::to_json(&results, &sections), all_hold || !a.check));
    }
    Ok((board_text(&results, &sections), all_hold || !a.check))
}

/// The scoreboard as `blksim fidelity` prints it: per lesson its status, then each row with its
/// verdict, and under it why it misses and any caveat.
fn board_text(results: &[crate::course::fidelity::LessonResult], sections: &[crate::course::fidelity::LessonResult]) -> String {
    let mut s = String::new();
    for l in results.iter().chain(sections) {
        if l.lesson == crate::course::fidelity::DEVICES {
            let _ = writeln!(s, "{}", l.section_heading());
        }
        let _ = writeln!(s, "{}: {}", l.lesson, l.status());
        let _ = writeln!(s, "  {:<52} {:>9} {:>19} {:>10}", "figure", "report", "band", "blkviz");
        for r in &l.rows {
            let report = r.report.map_or("—".to_string(), fmt_num);
            let band = format!("{}–{}", fmt_num(r.band.lo), fmt_num(r.band.hi));
            let verdict = match (r.holds, r.fitted, !r.caveat.is_empty()) {
                (true, true, _) => "holds (fitted)",
                (true, false, true) => "holds (caveat)",
                (true, false, false) => "holds",
                (false, true, _) => "MISSES (fitted)",
                (false, false, _) => "MISSES",
            };
            let _ = writeln!(
                s,
                "  {:<52} {:>9} {:>19} {:>10}  {verdict} [{}]",
                clip_to(&r.name, 52),
                report,
                band,
                fmt_num(r.measured),
                r.unit
            );
            if !r.holds && !r.why_missed.is_empty() {
                let _ = writeln!(s, "  {:<52} why: {}", "", r.why_missed);
            }
            if !r.caveat.is_empty() {
                let _ = writeln!(s, "  {:<52} caveat: {}", "", r.caveat_line());
            }
        }
        let _ = writeln!(s);
    }
    s
}

/// `blksim fidelity --cues [LESSON]`: each step's cue and the prediction's answer, measured.
/// "All hold" means every step's cue holds and every prediction row that misses says why.
fn cmd_cues(a: &Args) -> Result<(String, bool), CliError> {
    let results = match &a.lesson {
        Some(_) => vec![crate::course::cues::run_lesson(&lesson_of(a, "fidelity --cues")?)],
        None => crate::course::cues::run_all(),
    };
    let ok =
        results.iter().all(|l| l.steps.iter().flatten().all(|r| r.holds) && l.predict.iter().all(|r| r.holds || !r.why_missed.is_empty()));
    if a.json {
        return Ok((crate::course::cues::to_json(&results), ok || !a.check));
    }
    let mut s = String::new();
    let line = |s: &mut String, what: &str, r: &crate::course::fidelity::RowResult| {
        let verdict = match (r.holds, r.caveat.is_empty()) {
            (true, true) => "holds",
            (true, false) => "holds (caveat)",
            (false, _) => "MISSES",
        };
        let band = format!("{}–{}", fmt_num(r.band.lo), fmt_num(r.band.hi));
        let _ = writeln!(s, "  {:<10} {:<50} {:>15} {:>10}  {verdict} [{}]", what, clip_to(&r.name, 50), band, fmt_num(r.measured), r.unit);
        if !r.holds && !r.why_missed.is_empty() {
            let _ = writeln!(s, "  {:<61} why: {}", "", r.why_missed);
        }
        if !r.caveat.is_empty() {
            let _ = writeln!(s, "  {:<61} caveat: {}", "", r.caveat_line());
        }
    };
    for l in &results {
        let _ = writeln!(s, "{}:", l.lesson);
        for (i, rows) in l.steps.iter().enumerate() {
            for r in rows {
                line(&mut s, &format!("step {}", i + 1), r);
            }
        }
        for r in &l.predict {
            line(&mut s, "predict", r);
        }
        let _ = writeln!(s);
    }
    Ok((s, ok || !a.check))
}

fn with_rows() -> String {
    let mut ids: Vec<String> = lessons::all().iter().filter(|l| !l.fidelity.is_empty()).map(|l| l.id.clone()).collect();
    ids.push(crate::course::fidelity::DEVICES.into());
    ids.join(", ")
}

fn clip_to(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// The most records `blksim trace` writes (a run that makes more is cut short, and says so):
/// 4 M records are about 200 MB of blktrace files.
pub const TRACE_RECORDS_MAX: u64 = 4_000_000;

/// `blksim trace LESSON --out DIR`: runs with the trace on and writes what `blktrace` would have
/// (`DEV.blktrace.CPU` per device and CPU), and blkviz's own blkparse text (`blkparse.txt`) to
/// compare with what the real `blkparse -i DEV ...` prints for them.
fn cmd_trace(a: &Args) -> Result<String, CliError> {
    let l = lesson_of(a, "trace")?;
    let dir = a.out.as_deref().ok_or_else(|| bad("trace: missing --out DIR; expected a directory to write the blktrace files to"))?;
    if dir.trim().is_empty() {
        return Err(bad("trace: --out is empty; expected a directory to write the blktrace files to"));
    }
    let variant = a.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
    let cfg = config_of(&l, &variant, a)?;
    let mut sim = Sim::new(&cfg, a.seed.unwrap_or(1));
    let end = SimTime::from_secs_f64(a.duration.unwrap_or(cfg.scenario.duration_s));
    let (records, cut) = crate::kernel::trace::blktrace::record_trace(&mut sim, end, TRACE_RECORDS_MAX);
    let devices = sim.device_names();
    let threads = |t: u32| sim.pid_comm(t);
    let names = crate::tools::blkparse::Names { devices: &devices, threads: &threads };
    let files = crate::tools::blktrace_api::encode(&records, &names, cfg.scenario.cpu.cores as u16);
    refuse_stale_traces(dir, &files)?;
    std::fs::create_dir_all(dir).map_err(|e| bad(format!("trace: cannot create {dir}: {e}")))?;
    let mut traced: Vec<&str> = Vec::new();
    for (name, bytes) in &files {
        write_trace_file(dir, name, bytes)?;
        let dev = name.split(".blktrace.").next().unwrap_or(name);
        if !traced.contains(&dev) {
            traced.push(dev);
        }
    }
    let t0 = records.iter().map(|r| r.time.ns()).min().unwrap_or(0);
    write_trace_file(dir, "blkparse.txt", blkparse_text(&records, &names, t0).as_bytes())?;
    // The span blkparse shows: from the earliest record to the latest (records of different
    // devices are not all in time order in the ring).
    let span_s = records.iter().map(|r| r.time.ns()).max().map_or(0.0, |m| SimTime(m - t0).as_secs_f64());
    let mut s = format!(
        "{} / {variant}: {} records over {:.3} s to {dir}/ ({} for {}, and blkparse.txt)\n",
        l.id,
        records.len(),
        span_s,
        counted(files.len() as u64, "file"),
        counted(traced.len() as u64, "device"),
    );
    if cut {
        let _ = writeln!(s, "cut short at {TRACE_RECORDS_MAX} records: ask for a shorter --duration");
    }
    traced.sort_unstable();
    let inputs: Vec<String> = traced.iter().map(|d| format!("-i {d}")).collect();
    if a.json {
        let v = json!({
            "lesson": l.id, "variant": variant, "seed": a.seed.unwrap_or(1), "out": dir,
            "records": records.len(), "span_s": span_s, "cut_short": cut,
            "devices": traced, "files": files.iter().map(|(n, _)| n).chain(std::iter::once(&"blkparse.txt".to_string())).collect::<Vec<_>>(),
            "blkparse": format!("blkparse {}", inputs.join(" ")),
        });
        return Ok(serde_json::to_string_pretty(&v).expect("json") + "\n");
    }
    if traced.is_empty() {
        let _ = writeln!(s, "no block I/O in this span (nothing for blkparse to read): ask for a longer --duration");
    } else {
        let _ = writeln!(s, "read it with: cd {dir} && blkparse {}", inputs.join(" "));
    }
    Ok(s)
}

fn write_trace_file(dir: &str, name: &str, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(std::path::Path::new(dir).join(name), bytes).map_err(|e| bad(format!("trace: cannot write {dir}/{name}: {e}")))
}

/// Another run's files left beside these would be read with them (blkparse -i, replay DIR), as
/// devices this run does not have or CPUs it did not use: refuse, before writing any.
fn refuse_stale_traces(dir: &str, files: &[(String, Vec<u8>)]) -> Result<(), CliError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut stale: Vec<String> = entries
        .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
        .filter(|n| n.contains(".blktrace.") && !files.iter().any(|(name, _)| name == n))
        .collect();
    if stale.is_empty() {
        return Ok(());
    }
    stale.sort();
    let shown = stale.iter().take(4).map(String::as_str).collect::<Vec<_>>().join(", ");
    let more = if stale.len() > 4 { format!(" and {} more", stale.len() - 4) } else { String::new() };
    Err(bad(format!(
        "trace: {} already holds blktrace files this run does not write ({shown}{more}); blkparse and replay would read them with this run's; expected an empty directory, or remove them",
        crate::scenario::clip_path(dir)
    )))
}

/// blkparse's own view: times from the trace's first record (`t0`), sequence numbers per device
/// and CPU (as the kernel counts them), each file in time order as `encode` writes it, and the
/// files merged as blkparse merges them given `-i` in the order `cmd_trace` prints, so the two
/// outputs can be compared line for line; then its closing summary, as blkparse prints it after
/// the records.
fn blkparse_text(records: &[TraceRecord], names: &crate::tools::blkparse::Names, t0: u64) -> String {
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.time, r.seq));
    let mut streams: std::collections::BTreeMap<(&str, u16), Vec<TraceRecord>> = std::collections::BTreeMap::new();
    for r in sorted {
        let name = names.devices.get(r.dev.0 as usize).map_or("", |d| d.0.as_str());
        let stream = streams.entry((name, r.cpu)).or_default();
        let shown = TraceRecord { time: SimTime(r.time.ns() - t0), seq: stream.len() as u64, ..*r };
        stream.push(shown);
    }
    // Devices by name (the `-i` order, and the order `replay` reads a directory in), CPUs
    // ascending.
    let keys: Vec<(&str, u16)> = streams.keys().copied().collect();
    let streams: Vec<Vec<TraceRecord>> = streams.into_values().collect();
    let times: Vec<Vec<u64>> = streams.iter().map(|st| st.iter().map(|r| r.time.ns()).collect()).collect();
    let order = crate::tools::blkparse::file_order(&times);
    let mut text = String::new();
    for &(st, i) in &order {
        text.push_str(&crate::tools::blkparse::blkparse_line(&streams[st as usize][i as usize], names));
        text.push('\n');
    }
    text.push_str(&crate::tools::blkparse::summary(&keys, &streams, &order));
    text
}

fn gaps_note(s: &mut String, gaps: &[String]) {
    if !gaps.is_empty() {
        let _ = writeln!(s, "\nnot modelled yet (numbers above do not show these):");
        for g in gaps {
            let _ = writeln!(s, "  - {g}");
        }
    }
}

/// The human form of a run: the headline numbers (under the header, the knobs set, if any),
/// then vmstat, top and iostat -x style tables.
fn human(r: &RunReport, knobs: Option<&str>) -> String {
    let mut s = String::new();
    // To the ms, or to the µs for a run shorter than a millisecond (`--duration 0.0001`).
    let digits = if r.sim_seconds < 1e-3 { 6 } else { 3 };
    let _ = writeln!(s, "{} / {}  seed {}  {:.digits$} s simulated, {} events", r.lesson, r.variant, r.seed, r.sim_seconds, r.events);
    s.push_str(knobs.unwrap_or_default());
    let _ = writeln!(
        s,
        "throughput {:.1} MB/s (read {:.1}, write {:.1})  {:.0} IOPS  cs {:.0}/s  in {:.0}/s  fairness {:.3}",
        r.throughput_mb_s, r.read_mb_s, r.write_mb_s, r.iops, r.cs_per_s, r.intr_per_s, r.fairness
    );
    let _ = writeln!(
        s,
        "cpu: us {:.1}  sy {:.1}  si {:.1}  wa {:.1}  id {:.1}",
        r.cpu.user_pct, r.cpu.sys_pct, r.cpu.softirq_pct, r.cpu.iowait_pct, r.cpu.idle_pct
    );
    let _ = writeln!(s, "latency ms: p50 {:.3}  p99 {:.3}  max {:.3}", r.latency_ms.p50, r.latency_ms.p99, r.latency_ms.max);
    if let Some(c) = r.completion_s {
        let _ = writeln!(s, "all jobs done at {c:.3} s");
    }
    let _ =
        writeln!(s, "longest stall {:.4} s (no job's read or write completed), from {:.4} s", r.longest_stall_s, r.longest_stall_from_s);
    let _ = write!(s, "\n{}", crate::tools::fio_report::fio_text(&r.jobs));
    let _ = writeln!(
        s,
        "\n{:<8} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8} {:>8} {:>6} {:>7}",
        "Device",
        "rrqm/s",
        "wrqm/s",
        "r/s",
        "w/s",
        "rkB/s",
        "wkB/s",
        "avgrq-sz",
        "avgqu-sz",
        "await",
        "r_await",
        "w_await",
        "svctm",
        "%util"
    );
    for d in &r.devices {
        let _ = writeln!(
            s,
            "{:<8} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>10.1} {:>10.1} {:>9.1} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>6.2} {:>7.1}",
            d.name,
            d.rrqm_s,
            d.wrqm_s,
            d.r_s,
            d.w_s,
            d.rkb_s,
            d.wkb_s,
            d.avgrq_sz,
            d.avgqu_sz,
            d.await_ms,
            d.r_await_ms,
            d.w_await_ms,
            d.svctm_ms,
            d.util_pct
        );
    }
    let _ = writeln!(s, "\n{:>6} {:<16} {:>6} {:>10}", "PID", "COMMAND", "%CPU", "cs");
    for t in r.threads.iter().take(10) {
        let _ = writeln!(s, "{:>6} {:<16} {:>6.1} {:>10}", t.pid, t.name, t.cpu_pct, t.cs);
    }
    gaps_note(&mut s, &r.model_gaps);
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_board_prints_a_caveat_under_its_row_whether_it_holds_or_misses() {
        use crate::course::fidelity::committed;
        let mut board = committed();
        assert!(
            board.iter().flat_map(|l| &l.rows).any(|r| r.lesson == "mq-clone-stall" && r.holds && !r.caveat.is_empty()),
            "mq-clone-stall's tail rests on the idle test"
        );
        // A missing row with a caveat too (none on the board misses yet): its why, then its caveat.
        let r = board.iter_mut().flat_map(|l| l.rows.iter_mut()).find(|r| !r.holds && !r.why_missed.is_empty()).expect("a row that misses");
        r.caveat = "a made-up simplification".into();
        let text = super::board_text(&board, &[]);
        let lines: Vec<&str> = text.lines().collect();
        for r in board.iter().flat_map(|l| &l.rows) {
            // Names repeat across lessons: look from the row's lesson's heading on.
            let start = lines.iter().position(|l| l.starts_with(&format!("{}: ", r.lesson))).expect("the lesson is printed");
            let name = super::clip_to(&r.name, 52);
            let row = start + lines[start..].iter().position(|l| l.starts_with(&format!("  {name}"))).expect("the row is printed");
            let under = if r.holds { 1 } else { 2 };
            if r.caveat.is_empty() {
                assert!(
                    !lines.get(row + under).is_some_and(|l| l.trim_start().starts_with("caveat:")),
                    "{}: a caveat it does not have",
                    r.name
                );
                continue;
            }
            assert_eq!(lines[row + under].trim_start(), format!("caveat: {}", r.caveat_line()), "{}", r.name);
            let verdict = match (r.holds, r.fitted) {
                (true, false) => "holds (caveat)",
                (true, true) => "holds (fitted)",
                (false, _) => "MISSES",
            };
            assert!(lines[row].contains(verdict), "{}", lines[row]);
            if !r.holds {
                assert!(lines[row + 1].trim_start().starts_with("why:"), "{}", lines[row + 1]);
            }
        }
    }
}
