//! The long soak: every lesson's heaviest variant (the one with the most events in its first
//! simulated second) for an hour of simulated time with the trace on, `check_invariants` at
//! every simulated second, and the heap sampled at 5, 15, 30 and 60 simulated minutes.
//!
//! The limit checked: after the 5-minute mark, the heap grows by no more than what the
//! per-second history (`Sim::history`, bounded at `HISTORY_MAX` = 3600 snapshots: one hour)
//! adds, plus `GROWTH_SLACK_BYTES`. Everything else (trace ring, slabs, queues) must be flat.

use crate::{alloc, guarded, scaled, Failure};
use blksim::{Sim, SimTime};

const NS_PER_S: u64 = 1_000_000_000;
/// Simulated seconds of the soak at scale 1.
const SOAK_S: u64 = 3600;
/// Sampling points, in simulated minutes at scale 1.
const MARKS_MIN: [u64; 4] = [5, 15, 30, 60];
/// Heap growth allowed beyond the history's, from the first mark to the last.
pub const GROWTH_SLACK_BYTES: usize = 1 << 20;

/// A field of /proc/self/status in kB (Linux only).
pub fn vm_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Soaked besides each lesson's heaviest: dm-sg-lists' workaround, the slowest variant to
/// simulate per wall second (BENCHMARKS.md).
const ALSO: &[(&str, &str)] = &[("dm-sg-lists", "workaround")];

fn heaviest_variant(l: &blksim::course::lessons::Lesson) -> String {
    let mut best = (0, l.first_variant().name.clone());
    for v in &l.variants {
        let cfg = l.config(&v.name, &[]).expect("a lesson's variant validates");
        let mut sim = Sim::new(&cfg, 1);
        sim.set_trace(false);
        sim.run_until(SimTime(NS_PER_S));
        if sim.totals().events > best.0 {
            best = (sim.totals().events, v.name.clone());
        }
    }
    best.1
}

/// Heap bytes one history snapshot holds (measured by cloning the newest).
fn snapshot_bytes(sim: &Sim) -> usize {
    let Some(last) = sim.history().last() else { return 0 };
    let before = alloc::live();
    let copy = last.clone();
    let bytes = alloc::live() - before + std::mem::size_of_val(&copy);
    drop(copy);
    bytes
}

/// Heap samples at the marks: (simulated s, heap bytes, of them the history's, RSS in kB).
type Sample = (u64, usize, usize, u64);

/// `shard` = (i, n): this process soaks runs i, i + n, i + 2n, ... (scripts/soak runs two
/// shards at once, one per core).
pub fn run(shard: (usize, usize)) -> Result<String, Vec<Failure>> {
    let total_s = scaled(SOAK_S);
    let marks_s: Vec<u64> = MARKS_MIN.iter().map(|m| scaled(m * 60)).collect();
    let mut failures = Vec::new();
    let mut lines = Vec::new();
    let mut events_all = 0u64;
    let lessons = blksim::course::lessons::all();
    let runs = shard_runs(&lessons, shard);
    let soaked: Vec<String> = runs.iter().map(|(l, v)| format!("{} {v}", l.id)).collect();
    for (l, variant) in runs.iter().cloned() {
        let started = std::time::Instant::now();
        let result = guarded(|| soak_one(l, &variant, total_s, &marks_s));
        match result {
            Err(e) => failures.push(Failure { seed: 1, what: format!("{} {variant:?}: {e}", l.id) }),
            Ok((events, now, samples)) => {
                events_all += events;
                let shown: Vec<String> = samples
                    .iter()
                    .map(|(s, heap, hist, rss)| {
                        format!("{s} s: heap {:.1} MiB (history {:.1}) RSS {:.0} MiB", mib(*heap), mib(*hist), *rss as f64 / 1024.0)
                    })
                    .collect();
                eprintln!(
                    "soak long: {} {variant:?}: {:.1} simulated s, {events} events, {:.0} s wall; {}",
                    l.id,
                    now.as_secs_f64(),
                    started.elapsed().as_secs_f64(),
                    shown.join(", ")
                );
                if let (Some(first), Some(last)) = (samples.first(), samples.last()) {
                    if let Some(what) = heap_grew(first, last) {
                        failures.push(Failure { seed: 1, what: format!("{} {variant:?}: {what}", l.id) });
                    }
                    lines.push(format!("{} {variant} {:.1}->{:.1} MiB", l.id, mib(first.1), mib(last.1)));
                }
            }
        }
    }
    if failures.is_empty() {
        Ok(format!(
            "shard {}/{}: {} runs ({}) of {total_s} simulated s each with the trace on, {events_all} events, invariants every simulated second, heap flat beyond the history (+{} MiB at most): {}",
            shard.0,
            shard.1,
            runs.len(),
            soaked.join(", "),
            GROWTH_SLACK_BYTES >> 20,
            lines.join(", ")
        ))
    } else {
        Err(failures)
    }
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

/// The runs of this shard: each lesson's heaviest variant, and after it the lesson's `ALSO`.
fn shard_runs(lessons: &[blksim::course::lessons::Lesson], shard: (usize, usize)) -> Vec<(&blksim::course::lessons::Lesson, String)> {
    let mut runs: Vec<(&blksim::course::lessons::Lesson, String)> = Vec::new();
    for l in lessons {
        runs.push((l, heaviest_variant(l)));
        for (id, v) in ALSO {
            if l.id == *id && runs.last().is_some_and(|(_, h)| h != v) {
                runs.push((l, v.to_string()));
            }
        }
    }
    runs.into_iter().enumerate().filter(|(i, _)| i % shard.1 == shard.0).map(|(_, r)| r).collect()
}

/// One run for `total_s` simulated seconds with the trace on, `check_invariants` every
/// simulated second, the heap sampled at `marks_s`: its events, where it stopped, the samples.
fn soak_one(l: &blksim::course::lessons::Lesson, variant: &str, total_s: u64, marks_s: &[u64]) -> (u64, SimTime, Vec<Sample>) {
    let cfg = l.config(variant, &[]).expect("a lesson's variant validates");
    let base = alloc::live();
    let mut sim = Sim::new(&cfg, 1);
    sim.set_trace(true);
    let mut samples = Vec::new();
    for s in 1..=total_s {
        sim.run_until(SimTime(s * NS_PER_S));
        sim.check_invariants();
        if marks_s.contains(&s) {
            let heap = alloc::live() - base;
            let history = sim.history().len() * snapshot_bytes(&sim);
            samples.push((s, heap, history, vm_kb("VmRSS").unwrap_or(0)));
        }
        if sim.is_finished() {
            break;
        }
    }
    (sim.totals().events, sim.now(), samples)
}

/// The limit: the heap beyond the history grows by at most `GROWTH_SLACK_BYTES` from the
/// first sample to the last; else what grew.
fn heap_grew(first: &Sample, last: &Sample) -> Option<String> {
    let other = |(_, heap, hist, _): &Sample| heap.saturating_sub(*hist);
    (other(last) > other(first) + GROWTH_SLACK_BYTES).then(|| {
        format!(
            "the heap beyond the history grew from {:.1} MiB at {} s to {:.1} MiB at {} s",
            mib(other(first)),
            first.0,
            mib(other(last)),
            last.0
        )
    })
}
