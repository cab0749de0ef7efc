//! The soak (`scripts/soak`): what the unit suite runs a few dozen of, run by the
//! hundred thousand, each case from a seed that replays it.
//!
//!   soak fuzz    links, `--set` knob sets and fio job files: each works or gets one clear error
//!   soak props   random bounded scenarios with `check_invariants` after every event
//!   soak long    every lesson's heaviest variant for an hour of simulated time, trace on
//!   soak hashes  every lesson and variant for 5 simulated seconds: hashes of trace and report
//!
//! `SOAK_SCALE` (default 1) scales every part's size. `--seed N` replays one case of fuzz or
//! props and prints what it was. Each part prints one summary line and exits 1 on a failure,
//! naming the seed. Built with the `soak` profile (release with unwinding panics and overflow
//! checks), so a panic is caught per case and reported with its seed.

mod alloc;
mod fuzz;
mod gen;
mod hashes;
mod long;
mod props;

use std::time::Instant;

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// A failure: the case's seed and what went wrong.
pub struct Failure {
    pub seed: u64,
    pub what: String,
}

fn scale() -> f64 {
    match std::env::var("SOAK_SCALE") {
        Err(_) => 1.0,
        Ok(s) => match s.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 && x <= 10.0 => x,
            _ => {
                eprintln!("soak: SOAK_SCALE='{s}' is not allowed; expected a number greater than 0 and at most 10");
                std::process::exit(2);
            }
        },
    }
}

/// `n` scaled, at least 1.
pub fn scaled(n: u64) -> u64 {
    ((n as f64 * scale()).round() as u64).max(1)
}

/// The message of the last panic on this thread, kept by the hook so a case can report it.
pub fn last_panic() -> String {
    PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panic without a message".into())
}

thread_local! {
    static PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, turning a panic into its message (with where it happened).
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| last_panic())
}

/// `soak hashes --out FILE`: the lines the browser test must reproduce, written to FILE.
fn hashes_part(args: &[String]) -> Result<String, Vec<Failure>> {
    let out = args.iter().position(|a| a == "--out").and_then(|i| args.get(i + 1));
    let lines = match guarded(|| hashes::all_lines(hashes::SECONDS)) {
        Ok(lines) => lines,
        Err(e) => return Err(vec![Failure { seed: 1, what: e }]),
    };
    let text = lines.join("\n") + "\n";
    match out {
        Some(path) => std::fs::write(path, &text).map_err(|e| vec![Failure { seed: 1, what: format!("cannot write {path}: {e}") }])?,
        None => print!("{text}"),
    }
    let records: u64 = lines.iter().filter_map(|l| l.split(" records=").nth(1)?.split(' ').next()?.parse::<u64>().ok()).sum();
    Ok(format!("{} lessons' variants hashed natively, {} simulated s each, {records} trace records", lines.len(), hashes::SECONDS))
}

/// `--shard I/N` (default 0/1).
fn shard(args: &[String]) -> (usize, usize) {
    let Some(i) = args.iter().position(|a| a == "--shard") else { return (0, 1) };
    let parsed = args.get(i + 1).and_then(|s| s.split_once('/')).and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    match parsed {
        Some((i, n)) if i < n => (i, n),
        _ => {
            eprintln!("soak: --shard takes I/N with I < N, e.g. 0/2");
            std::process::exit(2);
        }
    }
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        let msg = match (info.payload().downcast_ref::<&str>(), info.payload().downcast_ref::<String>()) {
            (Some(s), _) => s.to_string(),
            (_, Some(s)) => s.clone(),
            _ => "panic".into(),
        };
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        PANIC.with(|p| *p.borrow_mut() = Some(format!("panicked: {msg}{at}")));
    }));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let part = args.first().map(String::as_str).unwrap_or("");
    let seed = match args.iter().position(|a| a == "--seed") {
        Some(i) => match args.get(i + 1).and_then(|s| s.parse::<u64>().ok()) {
            Some(s) => Some(s),
            None => {
                eprintln!("soak: --seed takes a whole number");
                std::process::exit(2);
            }
        },
        None => None,
    };
    let started = Instant::now();
    let result = match (part, seed) {
        ("fuzz", Some(s)) => fuzz::replay(s),
        ("fuzz", None) => fuzz::run(),
        ("props", Some(s)) => props::replay(s),
        ("props", None) => props::run(),
        ("long", None) => long::run(shard(&args)),
        ("hashes", None) => hashes_part(&args),
        _ => {
            eprintln!(
                "usage: soak fuzz|props [--seed N] | soak long [--shard I/N] | soak hashes [--out FILE]   (SOAK_SCALE=0.1 for a tenth)"
            );
            std::process::exit(2);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let peak_mb = alloc::peak_ever() as f64 / (1 << 20) as f64;
    let hwm = long::vm_kb("VmHWM").map_or("?".into(), |kb| format!("{:.0}", kb as f64 / 1024.0));
    match result {
        Ok(summary) => {
            println!("soak {part}: ok, {summary}; {wall:.0} s, peak heap {peak_mb:.0} MiB, VmHWM {hwm} MiB");
        }
        Err(failures) => {
            for f in failures.iter().take(20) {
                eprintln!("soak {part}: FAILED seed {}: {}", f.seed, f.what);
            }
            let first = &failures[0];
            println!(
                "soak {part}: FAILED, {} failing case(s); replay the first with `soak {part} --seed {}`; {wall:.0} s",
                failures.len(),
                first.seed
            );
            std::process::exit(1);
        }
    }
}
