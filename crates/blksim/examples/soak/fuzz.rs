//! Fuzzed inputs: links, `--set` knob sets and fio job files, a third of the cases each
//! (case `seed % 3`). Each must either work or get one clear error: a field naming what is
//! wrong, a message, one line of at most `MESSAGE_LEN_MAX` bytes. What is accepted must run:
//! it is built and run for at most `CASE_EVENTS_MAX` events or `CASE_SIM_NS` of simulated
//! time (the per-case cap; the model has no clock), with `check_invariants` at the end and
//! its report written; its peak heap must stay under `CASE_HEAP_MAX`. A watchdog thread ends
//! the process, naming the seed, if one case takes `CASE_WALL_MAX_S` of wall time (a hang).

use crate::gen::Gen;
use crate::{alloc, guarded, scaled, Failure};
use blksim::course::lessons::Lesson;
use blksim::course::link::LinkState;
use blksim::scenario::{get_knob, knob_spec, set_knob, Config, KnobKind, KnobSpec, KNOBS};
use blksim::tools::report::RunReport;
use blksim::{Sim, SimTime};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Cases at scale 1 (a third each of links, knob sets and job files).
const CASES: u64 = 120_000;
/// What an accepted case runs, at most.
const CASE_EVENTS_MAX: u64 = 2_000;
const CASE_SIM_NS: u64 = 20_000_000;
/// The heap one case may hold at its peak: the largest machine the knobs allow (256 disks,
/// 1024 jobs, 256 cores, 16384 requests per queue) built and run for its first events.
pub const CASE_HEAP_MAX: usize = 256 << 20;
/// An error longer than this is no longer "one clear line".
const MESSAGE_LEN_MAX: usize = 4096;
/// Wall time after which a case is a hang.
const CASE_WALL_MAX_S: u64 = 60;

static CURRENT_SEED: AtomicU64 = AtomicU64::new(0);
/// Milliseconds since `EPOCH` when the current case started; `u64::MAX` between cases.
static CASE_STARTED_MS: AtomicU64 = AtomicU64::new(u64::MAX);
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn now_ms() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

fn watchdog() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_secs(1));
        let started = CASE_STARTED_MS.load(Relaxed);
        if started != u64::MAX && now_ms().saturating_sub(started) > CASE_WALL_MAX_S * 1000 {
            let seed = CURRENT_SEED.load(Relaxed);
            eprintln!("soak fuzz: FAILED seed {seed}: still running after {CASE_WALL_MAX_S} s (a hang)");
            println!("soak fuzz: FAILED, a hang; replay it with `soak fuzz --seed {seed}`");
            std::process::exit(1);
        }
    });
}

fn lessons() -> &'static [Lesson] {
    static ALL: OnceLock<Vec<Lesson>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v = blksim::course::lessons::all();
        v.push(blksim::course::lessons::sandbox());
        v
    })
}

/// What a case was and how it ended.
#[derive(Default)]
struct Outcome {
    kind: usize,
    accepted: bool,
    ran: bool,
}

const KINDS: [&str; 3] = ["links", "knob sets", "fio job files"];

thread_local! {
    /// What the running case is, for the report when it panics.
    static WHAT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

fn note(what: &str) {
    WHAT.with(|w| *w.borrow_mut() = what.to_string());
}

/// With `--seed`, the case's whole input is printed (a failure's line is clipped).
static REPLAYING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn show(input: &str) {
    if REPLAYING.load(Relaxed) {
        eprintln!("soak fuzz: the input, whole:\n{input}\n----");
    }
}

fn clear(field: &str, message: &str, what: &str) -> Result<(), String> {
    let whole = format!("{field}: {message}");
    if field.trim().is_empty() || message.trim().is_empty() {
        return Err(format!("{what}: an error without a field or a message: {whole:?}"));
    }
    if whole.contains('\n') || whole.contains('\r') {
        return Err(format!("{what}: an error of more than one line: {:?}", clip(&whole)));
    }
    if whole.len() > MESSAGE_LEN_MAX {
        return Err(format!("{what}: an error of {} bytes (at most {MESSAGE_LEN_MAX}): {:?}", whole.len(), clip(&whole)));
    }
    Ok(())
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// Builds and runs an accepted configuration within the per-case caps.
fn run_bounded(cfg: &Config, seed: u64, trace: bool, what: &str) -> Result<(), String> {
    let base = alloc::live();
    alloc::reset_peak();
    {
        let mut sim = Sim::new(cfg, seed);
        sim.set_trace(trace);
        sim.run_until_bounded(SimTime(CASE_SIM_NS), CASE_EVENTS_MAX);
        sim.check_invariants();
        let report = RunReport::from_sim(&mut sim, "fuzz", "");
        serde_json::to_string(&report).map_err(|e| format!("{what}: the report does not serialize: {e}"))?;
    }
    let heap = alloc::peak().saturating_sub(base);
    if heap > CASE_HEAP_MAX {
        return Err(format!("{what}: {} MiB of heap at the peak (the limit is {} MiB)", heap >> 20, CASE_HEAP_MAX >> 20));
    }
    Ok(())
}

// ---- knob values ----------------------------------------------------------------------------

fn size_text(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 && bytes > 0 {
        format!("{}m", bytes >> 20)
    } else if bytes % 1024 == 0 && bytes > 0 {
        format!("{}k", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

const GARBAGE: &[&str] = &[
    "",
    " ",
    "-1",
    "1.5",
    "0x10",
    "abc",
    "NaN",
    "inf",
    "-0",
    "1e309",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "true",
    "42",
    "4k",
    "%",
    "=",
    "&",
    "é",
    "日本",
    "\u{0}",
    "<script>",
    "sda:",
    ":",
    ",",
    "1,,2",
];

/// A value for a knob: one it allows, or (with `valid` false) most likely one it does not.
fn knob_value(g: &mut Gen, spec: &KnobSpec, valid: bool) -> String {
    if !valid {
        return match g.range(0, 5) {
            0 => g.junk(24),
            1 => "9".repeat(g.range(1, 6000) as usize),
            2 => match spec.kind {
                KnobKind::Int { min, max, .. } => {
                    (if g.chance(50) || min == 0 { max.saturating_add(g.range(1, 1000)) } else { min - 1 }).to_string()
                }
                KnobKind::Size { max, .. } => size_text(max + 512 * g.range(1, 8)),
                KnobKind::Seconds { max, .. } => format!("{}", max + 1.0),
                _ => g.pick(GARBAGE).to_string(),
            },
            _ => g.pick(GARBAGE).to_string(),
        };
    }
    let v = match spec.kind {
        KnobKind::Int { min, max, .. } => g.edgy(min, max).to_string(),
        KnobKind::Size { min, max } => size_text(512 * g.edgy(min.div_ceil(512), max / 512)),
        KnobKind::Bool => g.pick(&["true", "false", "1", "0", "on", "off", "yes", "no"]).to_string(),
        KnobKind::Enum(names) => g.pick(names).to_string(),
        KnobKind::Seconds { max, .. } => format!("{}", g.range(1, (max * 1000.0) as u64) as f64 / 1000.0),
        KnobKind::Name { max_len } => (0..g.range(1, max_len as u64)).map(|_| (g.range(0x21, 0x7e) as u8) as char).collect(),
        KnobKind::Devices => {
            let n = g.range(0, 3);
            (0..n).map(|_| g.pick(&["sda", "sdb", "sdc", "sdd", "dm-0", "dm-1", "md0", "sdq"]).to_string()).collect::<Vec<_>>().join(":")
        }
        KnobKind::Cpus => {
            let n = g.range(0, 3);
            (0..n).map(|_| g.range(0, 9).to_string()).collect::<Vec<_>>().join(",")
        }
        KnobKind::JobName => g.pick(&["", "dd", "fio", "reader", "writer", "job2"]).to_string(),
        KnobKind::Kernel => g.pick(&["none", "2.6.2", "2.6.10", "2.6.20", "2.6.32", "2.6.39-rc4", "3.10", "4.0"]).to_string(),
    };
    if g.chance(5) {
        format!(" {v} ")
    } else {
        v
    }
}

fn knob_key(g: &mut Gen) -> (String, bool) {
    let known = g.pick(KNOBS).key;
    if g.chance(88) {
        return (known.to_string(), true);
    }
    let key = match g.range(0, 4) {
        0 => known[..known.len() - 1].to_string(),
        1 => known.to_uppercase(),
        2 => g.junk(20),
        3 => "k".repeat(g.range(100, 5000) as usize),
        _ => format!("{known}.x"),
    };
    let is_known = knob_spec(&key).is_some();
    (key, is_known)
}

/// Knob pairs: mostly allowed, some not, some extreme (every size knob at its largest).
fn knob_pairs(g: &mut Gen, n: u64, valid_pct: u64) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if g.chance(8) {
        for key in ["disks", "workload.numjobs", "cpu.cores", "workload.iodepth", "queue.nr_requests", "host.can_queue", "queue.depth"] {
            let spec = knob_spec(key).expect("a knob");
            if let KnobKind::Int { max, .. } = spec.kind {
                pairs.push((key.to_string(), max.to_string()));
            }
        }
    }
    for _ in 0..n {
        let (key, known) = knob_key(g);
        let value = match knob_spec(&key) {
            Some(spec) if known => {
                let ok = g.chance(valid_pct);
                knob_value(g, spec, ok)
            }
            _ => g.pick(GARBAGE).to_string(),
        };
        pairs.push((key, value));
    }
    pairs
}

// ---- knob sets ------------------------------------------------------------------------------

fn knob_case(g: &mut Gen, seed: u64, out: &mut Outcome) -> Result<(), String> {
    let l = g.pick(lessons());
    let variant = g.pick(&l.variants).name.clone();
    let n = g.range(1, 8);
    let pairs = knob_pairs(g, n, 75);
    let what = format!("{} {variant:?} with {:?}", l.id, pairs.iter().map(|(k, v)| format!("{}={}", clip(k), clip(v))).collect::<Vec<_>>());
    note(&what);
    show(&format!("{} {variant:?} {pairs:?}", l.id));
    // The first pair that is wrong on its own is the one the error must name.
    let mut scratch = l.config(&variant, &[]).map_err(|e| format!("{what}: the variant itself fails: {e}"))?.scenario;
    let first_bad = pairs.iter().find_map(|(k, v)| set_knob(&mut scratch, k, v).err().map(|_| k.clone()));
    match l.config(&variant, &pairs) {
        Err(e) => {
            clear(&e.field, &e.message, &what)?;
            // The error names the first bad pair's key (clipped and escaped as quoted input is).
            if let Some(k) = first_bad {
                if !e.field.contains(&blksim::scenario::clip(&k)) {
                    return Err(format!("{what}: the error names {:?}, not the bad knob {:?}: {e}", clip(&e.field), clip(&k)));
                }
            }
        }
        Ok(cfg) => {
            out.accepted = true;
            if let Some(k) = first_bad {
                return Err(format!("{what}: accepted, though {:?} alone is refused", clip(&k)));
            }
            // What get_knob says, set_knob takes back unchanged.
            for (k, _) in &pairs {
                let text = get_knob(&cfg.scenario, k).ok_or_else(|| format!("{what}: get_knob does not know {k}"))?;
                let mut again = cfg.scenario.clone();
                set_knob(&mut again, k, &text).map_err(|e| format!("{what}: get_knob's {k}={text:?} is refused: {e}"))?;
                if get_knob(&again, k).as_deref() != Some(text.as_str()) {
                    return Err(format!("{what}: {k}={text:?} does not read back the same"));
                }
            }
            run_bounded(&cfg, seed, g.chance(50), &what)?;
            out.ran = true;
        }
    }
    Ok(())
}

// ---- links ----------------------------------------------------------------------------------

fn link_text(g: &mut Gen) -> (String, bool) {
    let l = g.pick(lessons());
    let mut st = LinkState { lesson: l.id.clone(), seed: g.u64() >> g.range(0, 63), ..LinkState::default() };
    if g.chance(60) {
        st.variant = Some(g.pick(&l.variants).name.clone());
    }
    // B is another variant than A's (a link with B = A is refused, naming the others): a
    // state the page and `blksim link` can write.
    let a = st.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
    let others: Vec<String> = l.variants.iter().map(|v| v.name.clone()).filter(|v| *v != a).collect();
    if !others.is_empty() && g.chance(20) {
        st.b = Some(g.pick(&others).clone());
    }
    let n = g.range(0, 4);
    st.overrides = knob_pairs(g, n, 97);
    if g.chance(40) {
        st.t = Some(g.range(1, 3_600_000) as f64 / 1000.0);
    }
    if g.chance(20) {
        st.speed = Some(g.range(1, 1000) as f64 / 1000.0);
    }
    let f = st.encode();
    let mutate = |g: &mut Gen, f: &str| -> String {
        let mut chars: Vec<char> = f.chars().collect();
        for _ in 0..g.range(1, 8) {
            let at = g.range(0, chars.len() as u64) as usize;
            let c = *g.pick(&['%', '&', '=', '?', '#', '/', '.', '0', '9', 'z', '-', '+', 'é', '\u{0}', ' ']);
            match g.range(0, 2) {
                0 if at < chars.len() => chars[at] = c,
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                _ => chars.insert(at.min(chars.len()), c),
            }
        }
        chars.into_iter().collect()
    };
    let text = match g.range(0, 5) {
        0 => {
            // Valid when every override is allowed on its own and given once.
            let mut seen: Vec<&str> = Vec::new();
            let ok = st.overrides.iter().all(|(k, v)| {
                let fresh = !seen.contains(&k.as_str());
                seen.push(k);
                fresh && set_knob(&mut l.scenario.clone(), k, v).is_ok()
            });
            // ... and together they make a scenario for A's variant, and for B's if any (knobs
            // allowed one by one may still contradict each other: 141 cores in 90 sockets).
            let runs = |v: &str| l.config(v, &st.overrides).is_ok();
            let b_ok = st.b.as_ref().is_none_or(|b| runs(b));
            return (f, ok && runs(&a) && b_ok);
        }
        1 => mutate(g, &f),
        2 => f.chars().take(g.range(0, f.chars().count() as u64) as usize).collect(),
        3 => {
            let junk = g.junk(300);
            if g.chance(50) {
                format!("#/lesson/{}?v=1&{junk}", l.id)
            } else {
                junk
            }
        }
        4 => {
            let pad = g.range(blksim::course::link::FRAGMENT_LEN_MAX as u64 - f.len().min(2000) as u64, 1 << 20) as usize;
            let extra = if g.chance(50) { "&queue.depth=1".repeat(pad / 14 + 1) } else { "x".repeat(pad) };
            format!("{f}{extra}")
        }
        _ => {
            let version: &&str = g.pick(&["v=0", "v=2", "v=99999999999", "v=-1", "v=", "v", "x=1", "v=1.0"]);
            f.replacen("v=1", version, 1)
        }
    };
    (text, false)
}

fn link_case(g: &mut Gen, _seed: u64, out: &mut Outcome) -> Result<(), String> {
    let (text, valid) = link_text(g);
    let what = format!("link {:?}", clip(&text));
    note(&what);
    show(&text);
    match LinkState::decode_lenient(&text) {
        Err(e) => clear(&e.field, &e.message, &what)?,
        Ok((st, partly)) => {
            out.accepted = true;
            if let Some(e) = &partly {
                clear(&e.field, &e.message, &what)?;
            }
            if let (true, Some(e)) = (valid, &partly) {
                return Err(format!("{what}: a link encode() wrote is refused in part: {e}"));
            }
            // An accepted link always runs (link.rs), and reads back as itself.
            let l = blksim::course::lessons::find(&st.lesson).map_err(|e| format!("{what}: accepted an unknown lesson: {e}"))?;
            let variant = st.variant.clone().unwrap_or_else(|| l.first_variant().name.clone());
            let cfg = l.config(&variant, &st.overrides).map_err(|e| format!("{what}: accepted, but does not run: {e}"))?;
            if let Some(b) = &st.b {
                l.config(b, &st.overrides).map_err(|e| format!("{what}: accepted, but its B does not run: {e}"))?;
            }
            let again = st.encode();
            match LinkState::decode(&again) {
                Ok(st2) if st2 == st => {}
                other => return Err(format!("{what}: encode() of what it read, {again:?}, reads back as {other:?}")),
            }
            run_bounded(&cfg, st.seed, g.chance(50), &what)?;
            out.ran = true;
        }
    }
    Ok(())
}

// ---- fio job files --------------------------------------------------------------------------

const FIO_KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "numjobs",
    "ioengine",
    "iodepth",
    "direct",
    "size",
    "end_fsync",
    "fsync_on_close",
    "filename",
    "name",
    "buffered",
    "runtime",
    "time_based",
    "group_reporting",
    "verify",
    "rate",
    "cpus_allowed",
    "bsrange",
    "rwmixread",
    "rwmixwrite",
    "offset",
    "rate_iops",
    "thinktime",
    "startdelay",
    "ramp_time",
    "prio",
    "prioclass",
    "stonewall",
    "wait_for",
];

fn fio_value(g: &mut Gen, key: &str) -> String {
    if g.chance(20) {
        return g.pick(GARBAGE).to_string();
    }
    let knob = match key {
        "rw" | "readwrite" => "workload.rw",
        "bs" | "blocksize" => "workload.bs",
        "numjobs" => "workload.numjobs",
        "iodepth" => "workload.iodepth",
        "size" => "workload.size",
        "name" => "workload.name",
        "filename" => "workload.filename",
        "ioengine" => return g.pick(&["psync", "sync", "pvsync", "libaio", "io_uring", "mmap", "null"]).to_string(),
        "direct" | "end_fsync" | "fsync_on_close" | "buffered" | "time_based" | "group_reporting" | "stonewall" => {
            return g.pick(&["0", "1", "true", "2"]).to_string()
        }
        "rwmixread" | "rwmixwrite" => "workload.rwmixread",
        "rate_iops" => "workload.rate_iops",
        "thinktime" => "workload.thinktime",
        "startdelay" => "workload.startdelay",
        "ramp_time" => "workload.ramp_time",
        "prio" => "workload.prio",
        "prioclass" => return g.pick(&["0", "1", "2", "3", "4", "rt"]).to_string(),
        "offset" => return g.pick(&["0", "4k", "1g", "50%", "100%", "150%", "x"]).to_string(),
        // Another section's name (as the fuzzer names them), or none.
        "wait_for" => return g.pick(&["job0", "job1", "job2", "job3", "nobody", ""]).to_string(),
        _ => return g.pick(&["60", "md5", "1m", "0-3", "4k-64k", "/dev/sdb"]).to_string(),
    };
    let spec = knob_spec(knob).expect("a knob");
    let ok = g.chance(85);
    let v = knob_value(g, spec, ok);
    if knob == "workload.filename" && g.chance(50) {
        v.split(':').map(|d| format!("/dev/{d}")).collect::<Vec<_>>().join(":")
    } else {
        v
    }
}

fn fio_text(g: &mut Gen) -> String {
    if g.chance(3) {
        return g.junk(2000);
    }
    let mut out = String::new();
    let eol = if g.chance(10) { "\r\n" } else { "\n" };
    let most = if g.chance(5) { 70 } else { 3 };
    let sections = g.range(0, most);
    if g.chance(60) {
        out += &format!("[global]{eol}");
    }
    for s in 0..=sections {
        if s > 0 || g.chance(90) {
            let name = if g.chance(90) { format!("job{s}") } else { g.junk(30).replace(['\n', '\r'], "") };
            out += &format!("[{name}]{eol}");
        }
        for _ in 0..g.range(0, 10) {
            let line = match g.range(0, 19) {
                0 => format!("; a comment {}", g.range(0, 9)),
                1 => "# another".into(),
                2 => String::new(),
                3 => g.junk(40).replace(['\n', '\r'], ""),
                4 => g.pick(FIO_KEYS).to_string(),
                5 => "[unclosed".into(),
                _ => {
                    let k = *g.pick(FIO_KEYS);
                    format!("{k}{}{}", g.pick(&["=", " = ", "= ", "=="]), fio_value(g, k))
                }
            };
            out += &line;
            out += eol;
        }
    }
    if g.chance(2) {
        out += &"; padding\n".repeat(blksim::fio::JOB_FILE_MAX / 10 + 1);
    }
    out
}

fn fio_case(g: &mut Gen, seed: u64, out: &mut Outcome) -> Result<(), String> {
    let text = fio_text(g);
    let what = format!("job file {:?}", clip(&text));
    note(&what);
    show(&text);
    let mut job = match blksim::fio::parse(&text) {
        Err(e) => return clear(&e.field, &e.message, &what),
        Ok(job) => job,
    };
    out.accepted = true;
    if let Some(n) = job.notes() {
        clear("notes", &n, &what)?;
    }
    let l = if g.chance(75) { blksim::course::lessons::sandbox() } else { g.pick(lessons()).clone() };
    let variant = g.pick(&l.variants).name.clone();
    let base = l.config(&variant, &[]).map_err(|e| format!("{what}: the variant itself fails: {e}"))?;
    job.fit_devices(&base.scenario);
    show(&format!("on {} {variant:?}: {:?}", l.id, job.knobs));
    match l.config(&variant, &job.knobs) {
        Err(e) => clear(&e.field, &e.message, &what)?,
        Ok(cfg) => {
            // The scenario's workload written as a job file reads back the same (fio::job_file).
            let mut again = cfg.scenario.clone();
            let back = blksim::fio::parse(&blksim::fio::job_file(&cfg.scenario))
                .map_err(|e| format!("{what}: job_file's text is refused: {e}"))?;
            for (k, v) in &back.knobs {
                set_knob(&mut again, k, v).map_err(|e| format!("{what}: job_file's {k}={v} is refused: {e}"))?;
            }
            if again.workload != cfg.scenario.workload || again.jobs != cfg.scenario.jobs {
                return Err(format!("{what}: job_file() reads back as other jobs: {:?}", blksim::fio::job_file(&cfg.scenario)));
            }
            run_bounded(&cfg, seed, g.chance(50), &what)?;
            out.ran = true;
        }
    }
    Ok(())
}

// ---- the part -------------------------------------------------------------------------------

fn case(seed: u64) -> (Outcome, Result<(), String>) {
    let mut out = Outcome { kind: (seed % 3) as usize, ..Outcome::default() };
    let mut g = Gen::new(seed);
    let r = guarded(|| {
        let mut o = Outcome { kind: out.kind, ..Outcome::default() };
        let r = match o.kind {
            0 => link_case(&mut g, seed, &mut o),
            1 => knob_case(&mut g, seed, &mut o),
            _ => fio_case(&mut g, seed, &mut o),
        };
        (o, r)
    });
    match r {
        Ok((o, r)) => (o, r),
        Err(panic) => {
            out.accepted = false;
            (out, Err(format!("{}: {panic}", WHAT.with(|w| w.borrow().clone()))))
        }
    }
}

pub fn run() -> Result<String, Vec<Failure>> {
    watchdog();
    let cases = scaled(CASES);
    let mut failures = Vec::new();
    let mut count = [[0u64; 3]; 3];
    for seed in 0..cases {
        if seed % 10_000 == 0 && seed > 0 {
            eprintln!("soak fuzz: {seed} of {cases}");
        }
        CURRENT_SEED.store(seed, Relaxed);
        CASE_STARTED_MS.store(now_ms(), Relaxed);
        let (o, r) = case(seed);
        CASE_STARTED_MS.store(u64::MAX, Relaxed);
        count[o.kind][0] += 1;
        count[o.kind][1] += o.accepted as u64;
        count[o.kind][2] += o.ran as u64;
        if let Err(what) = r {
            failures.push(Failure { seed, what });
        }
    }
    if failures.is_empty() {
        let kinds: Vec<String> =
            (0..3).map(|k| format!("{} {} ({} accepted, {} ran)", count[k][0], KINDS[k], count[k][1], count[k][2])).collect();
        Ok(format!(
            "{cases} cases: {}; no panic, no hang, every error one clear line, heap under {} MiB a case",
            kinds.join(", "),
            CASE_HEAP_MAX >> 20
        ))
    } else {
        Err(failures)
    }
}

pub fn replay(seed: u64) -> Result<String, Vec<Failure>> {
    REPLAYING.store(true, Relaxed);
    watchdog();
    CASE_STARTED_MS.store(now_ms(), Relaxed);
    CURRENT_SEED.store(seed, Relaxed);
    let (o, r) = case(seed);
    match r {
        Ok(()) => Ok(format!("case {seed} ({}) holds: accepted {}, ran {}", KINDS[o.kind], o.accepted, o.ran)),
        Err(what) => Err(vec![Failure { seed, what }]),
    }
}
