//! Property cases at scale: random bounded scenarios (the knob space of
//! `tests/it/invariants.rs`'s proptest strategy, drawn from a seed) run with the trace off
//! (readahead's runs) and on (bios one by one), `check_invariants` after every event of both,
//! then the books: every bio and clone completes once, iostat's bytes equal the jobs' bytes,
//! and the two runs' reports are equal.

use crate::gen::Gen;
use crate::{guarded, scaled, Failure};
use blksim::scenario::{set_knob, Scenario};
use blksim::tools::report::RunReport;
use blksim::{Sim, SimTime};

/// Cases at scale 1.
const CASES: u64 = 10_000;
/// Simulated time each case runs (each of its two runs).
const CASE_NS: u64 = 100_000_000;
/// Seeds of props cases start here (fuzz's start at 0).
const SEED_BASE: u64 = 1 << 32;

/// The scenario of a seed, as the knob settings that make it (so a failure prints a
/// `blksim run --set ...` line that replays it).
pub fn knobs(seed: u64) -> Vec<(String, String)> {
    let mut g = Gen::new(seed);
    let d = Draws::new(&mut g);
    let mut k: Vec<(String, String)> = Vec::new();
    proptest_knobs(&mut g, &d, &mut k);
    more_knobs(&mut g, &d, &mut k);
    k
}

/// The draws that several knobs depend on, made first, in this order.
struct Draws {
    disks: u64,
    stack: &'static str,
    kind: &'static str,
    scheduler: &'static str,
    cores: u64,
    fs: bool,
    split: bool,
    partial: bool,
    fsync: bool,
    wc: bool,
    bs: &'static str,
    size: &'static str,
    max_kb: u64,
}

impl Draws {
    fn new(g: &mut Gen) -> Draws {
        let disks = g.range(1, 6);
        let stack = *g.pick(&["direct", "dm", "md", "lvm"]);
        let kind = *g.pick(&["hdd", "ssd", "ramlun", "hwraid5"]);
        let scheduler = *g.pick(&["noop", "deadline", "cfq", "none", "mq-deadline"]);
        let cores = g.range(1, 4);
        let fs = g.chance(50);
        let split = g.chance(50);
        let partial = g.chance(50);
        let fsync = g.chance(50);
        let wc = g.chance(50);
        let bs = *g.pick(&["4k", "16k", "64k", "256k", "1m"]);
        let size = *g.pick(&["0", "256k", "4m"]);
        let max_kb = *g.pick(&[4u64, 8, 64, 512]);
        Draws { disks, stack, kind, scheduler, cores, fs, split, partial, fsync, wc, bs, size, max_kb }
    }
}

/// The knob space of `tests/it/invariants.rs`'s proptest strategy.
fn proptest_knobs(g: &mut Gen, d: &Draws, k: &mut Vec<(String, String)>) {
    let mut set = |key: &str, v: String| k.push((key.to_string(), v));
    set("disks", (if d.stack == "md" { d.disks.max(3) } else { d.disks }).to_string());
    set("hbas", g.range(1, 3).min(d.disks).to_string());
    set("workload.rw", g.pick(&["read", "write", "randread", "randwrite"]).to_string());
    set("workload.bs", d.bs.to_string());
    set("workload.numjobs", g.range(1, 12).to_string());
    set("workload.ioengine", g.pick(&["sync", "libaio"]).to_string());
    set("workload.iodepth", g.range(1, 32).to_string());
    set("queue.nr_requests", g.range(4, 64).to_string());
    set("queue.depth", g.range(1, 64).to_string());
    set("host.can_queue", g.range(1, 64).to_string());
    set("disk.max_sectors_kb", d.max_kb.to_string());
    set("disk.kind", d.kind.to_string());
    set("disk.write_cache", d.wc.to_string());
    set("cpu.cores", d.cores.to_string());
    // A finite job of at least one block.
    let size = if d.size != "0" && blksim::scenario::parse_size(d.size) < blksim::scenario::parse_size(d.bs) { d.bs } else { d.size };
    set("workload.size", size.to_string());
    set("workload.direct", g.chance(50).to_string());
    set("workload.fsync", d.fsync.to_string());
    set("scsi.run_queue", g.pick(&["direct", "kblockd", "fixed"]).to_string());
    set("vm.mem_mb", g.range(64, 256).to_string());
    set("queue.scheduler", d.scheduler.to_string());
    set("stack", d.stack.to_string());
    set("workload.filesystem", (if d.fs { "xfs" } else { "none" }).to_string());
    set("queue.read_ahead_kb", g.pick(&["0", "16", "512"]).to_string());
    set("dm.partial_completion", d.partial.to_string());
    set("dm.max_sectors_kb", d.max_kb.to_string());
    set("dm.clone_alloc", g.pick(&["sleep", "mempool", "nowait"]).to_string());
    set("queue.plugging", (if d.split { "2.6.2" } else { "task" }).to_string());
    set("md.chunk_kb", g.pick(&["64", "128"]).to_string());
    set("md.stripe_cache_size", g.range(17, 64).to_string());
    set("md.split_aligned_reads", d.split.to_string());
    // Before 2.6.20 every md read goes through the stripe cache (from an existing draw, so the
    // generator's stream is unchanged).
    set("md.aligned_reads", (!d.partial).to_string());
    if d.partial {
        set("vm.writeback", "pdflush".into());
    }
    if d.kind == "hwraid5" {
        set("disk.controller_cache", (if d.fs { "gathering" } else { "in-order" }).to_string());
    }
    set("queue.max_segments", (if d.fsync { "16" } else { "128" }).to_string());
    if d.wc && d.stack == "direct" && d.disks >= 2 {
        set("workload.filename", "sdb".into());
    }
    if d.scheduler == "none" {
        set("host.nr_hw_queues", d.cores.min(4).to_string());
        set("blk_mq.rerun_after_splice", d.split.to_string());
        set("dm.polling_interval", (if d.fs { "1" } else { "0" }).to_string());
    }
    if d.stack == "dm" {
        let paths = g.range(1, 2);
        set("dm.paths", paths.to_string());
        set("dm.path_grouping", g.pick(&["failover", "multibus"]).to_string());
        // 2.6.30's bio-based dm-multipath too, each bio mapped to a path.
        if g.chance(50) {
            set("dm.mpath", "bio".into());
            if paths >= 2 {
                set("dm.rr_min_io", g.pick(&["1", "1000"]).to_string());
            }
        }
    }
}

/// Beyond the proptest's space: the CPU scheduler, rq_affinity, sockets, writeback eras,
/// wakeup placement and kblockd's priority.
fn more_knobs(g: &mut Gen, d: &Draws, k: &mut Vec<(String, String)>) {
    let mut set = |key: &str, v: String| k.push((key.to_string(), v));
    // wakeup placement and kblockd's priority.
    if g.chance(25) {
        set("cpu.scheduler", "fair".into());
    }
    if g.chance(25) {
        set("queue.rq_affinity", g.range(0, 2).to_string());
    }
    if d.cores >= 2 && g.chance(20) {
        set("cpu.sockets", "2".into());
    }
    if !d.partial && g.chance(20) {
        set("vm.writeback", g.pick(&["pdflush", "per-bdi"]).to_string());
    }
    // Wakeup placement and kblockd's priority: the kernel's idle test and 4.0's WQ_HIGHPRI.
    if g.chance(30) {
        set("cpu.wake_idle", "idle_cpu".into());
    }
    if g.chance(20) {
        set("cpu.kblockd_highpri", "true".into());
    }
}

/// One case: `Err` says what broke.
fn case(seed: u64) -> Result<bool, String> {
    let knobs = knobs(seed);
    let mut s = Scenario::default();
    for (k, v) in &knobs {
        set_knob(&mut s, k, v).map_err(|e| format!("the generator made a bad knob: {e}"))?;
    }
    // A scenario the generator makes may not go together (validate says why): not a failure.
    let Ok(cfg) = s.validate() else { return Ok(false) };
    let run = |trace: bool| -> Result<String, String> {
        let mut sim = Sim::new(&cfg, seed);
        sim.set_trace(trace);
        let mut last = SimTime::ZERO;
        let until = SimTime(CASE_NS);
        while sim.now() < until && sim.step() {
            if sim.now() < last {
                return Err("time went back".into());
            }
            last = sim.now();
            sim.check_invariants();
        }
        books(&mut sim)?;
        sim.run_until(until);
        Ok(serde_json::to_string(&RunReport::from_sim(&mut sim, "sandbox", "")).expect("json"))
    };
    let off = run(false)?;
    let on = run(true)?;
    if off != on {
        return Err("the report with the trace on differs from the one with it off".into());
    }
    Ok(true)
}

/// The books at the end of a case, as `tests/it/invariants.rs` checks them.
fn books(sim: &mut Sim) -> Result<(), String> {
    let t = sim.totals().clone();
    let check = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
    check(t.bios_completed <= t.bios_submitted, "more bios completed than submitted".into())?;
    check(t.bios_submitted - t.bios_completed == sim.bios_live() as u64, "bios live != submitted - completed".into())?;
    let leaves = sim.topology().devices.len();
    let cum = sim.cumulative();
    let sectors: u64 = cum.diskstats[..leaves].iter().map(|d| d.sectors[0] + d.sectors[1]).sum();
    let (dirty, writeback) = sim.page_cache_bytes();
    check(t.buffered_read_bytes <= t.readahead_bytes, "read() copied pages that were never read".into())?;
    let cache_hits = t.stripe_returned_bytes.saturating_sub(t.stripe_read_bytes);
    let app = (t.bytes_read + t.bytes_written - t.buffered_read_bytes + t.readahead_bytes).saturating_sub(cache_hits);
    let disk = sectors * 512 + dirty + writeback;
    check(disk >= app, format!("iostat {} + dirty {dirty} + writeback {writeback} < jobs {app}", sectors * 512))?;
    check(t.clones.completed <= t.clones.made && t.clones.bios_completed <= t.clones.bios_made, "more clones completed than made".into())?;
    if sim.bios_live() == 0 {
        check(t.clones.completed == t.clones.made, "a clone outlived its bios".into())?;
        check(t.clones.bios_completed == t.clones.bios_made, "a clone bio outlived its bios".into())?;
    }
    let raid5 = sim.topology().upper.iter().any(|u| u.name.starts_with("md"));
    if sim.is_finished() && sim.bios_live() == 0 && !raid5 {
        // Beyond the jobs' bytes, the disks read only multipathd's path checks.
        check(
            disk - app <= t.path_check_bytes,
            format!("finished: iostat + dirty + writeback {disk} != jobs {app} (+ path checks {})", t.path_check_bytes),
        )?;
    }
    Ok(())
}

fn describe(seed: u64) -> String {
    let sets: Vec<String> = knobs(seed).iter().map(|(k, v)| format!("--set {k}={v}")).collect();
    format!("blksim run --seed {seed} {}", sets.join(" "))
}

pub fn run() -> Result<String, Vec<Failure>> {
    let cases = scaled(CASES);
    let mut failures = Vec::new();
    let mut valid = 0;
    for i in 0..cases {
        let seed = SEED_BASE + i;
        if i % 1000 == 0 && i > 0 {
            eprintln!("soak props: {i} of {cases}");
        }
        match guarded(|| case(seed)) {
            Ok(Ok(ran)) => valid += ran as u64,
            Ok(Err(e)) | Err(e) => failures.push(Failure { seed, what: format!("{e}; the scenario: {}", describe(seed)) }),
        }
    }
    if failures.is_empty() {
        Ok(format!(
            "{cases} random bounded scenarios ({valid} valid), {} ms each with the trace off and on, check_invariants after every event, books and trace on = off",
            CASE_NS / 1_000_000
        ))
    } else {
        Err(failures)
    }
}

pub fn replay(seed: u64) -> Result<String, Vec<Failure>> {
    eprintln!("soak props --seed {seed}: {}", describe(seed));
    match guarded(|| case(seed)) {
        Ok(Ok(ran)) => Ok(format!("case {seed} holds (ran: {ran})")),
        Ok(Err(e)) | Err(e) => Err(vec![Failure { seed, what: e }]),
    }
}
