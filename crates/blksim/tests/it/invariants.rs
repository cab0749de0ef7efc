//! Property tests over random bounded scenarios: every bio completes exactly once, no pool or
//! queue exceeds its limit, time never goes back, iostat's bytes equal the jobs' bytes.

use blksim::scenario::{set_knob, Scenario};
use blksim::{Sim, SimTime};
use proptest::prelude::*;

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        1u32..=6,
        1u32..=3,
        prop::sample::select(vec!["read", "write", "randread", "randwrite"]),
        prop::sample::select(vec!["4k", "16k", "64k", "256k", "1m"]),
        1u32..=12,
        prop::sample::select(vec!["sync", "libaio"]),
        1u32..=32,
        (4u32..=64, 1u32..=64, 1u32..=64, prop::sample::select(vec![4u32, 8, 64, 512])),
        (
            prop::sample::select(vec!["hdd", "ssd", "ramlun", "hwraid5"]),
            any::<bool>(),
            1u32..=4,
            prop::sample::select(vec!["0", "256k", "4m"]),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(vec!["direct", "kblockd", "fixed"]),
            64u32..=256,
            prop::sample::select(vec!["noop", "deadline", "cfq", "none", "mq-deadline"]),
        ),
        (
            prop::sample::select(vec!["direct", "dm", "md", "lvm"]),
            any::<bool>(),
            prop::sample::select(vec!["0", "16", "512"]),
            any::<bool>(),
        ),
        (
            prop::sample::select(vec!["sleep", "mempool", "nowait"]),
            prop::sample::select(vec!["64", "128"]),
            17u32..=64,
            any::<bool>(),
            1u32..=2,
            prop::sample::select(vec!["failover", "multibus"]),
        ),
    )
        .prop_map(scenario_of)
}

/// What `scenario` draws, in the order it draws them.
type Draws = (
    u32,
    u32,
    &'static str,
    &'static str,
    u32,
    &'static str,
    u32,
    (u32, u32, u32, u32),
    (&'static str, bool, u32, &'static str),
    (bool, bool, &'static str, u32, &'static str),
    (&'static str, bool, &'static str, bool),
    (&'static str, &'static str, u32, bool, u32, &'static str),
);

/// The scenario a draw makes: the knobs set in turn, then the ones that depend on others.
fn scenario_of(
    (
        disks,
        hbas,
        rw,
        bs,
        numjobs,
        engine,
        iodepth,
        (nr, depth, can_queue, max_kb),
        (kind, wc, cores, size),
        (direct, fsync, run_queue, mem, scheduler),
        (stack, fs, ra_kb, partial),
        (clone_alloc, chunk, stripes, split, paths, grouping),
    ): Draws,
) -> Scenario {
    let mut s = Scenario::default();
    for (k, v) in [
        ("disks", disks.to_string()),
        ("hbas", hbas.min(disks).to_string()),
        ("workload.rw", rw.to_string()),
        ("workload.bs", bs.to_string()),
        ("workload.numjobs", numjobs.to_string()),
        ("workload.ioengine", engine.to_string()),
        ("workload.iodepth", iodepth.to_string()),
        ("queue.nr_requests", nr.to_string()),
        ("queue.depth", depth.to_string()),
        ("host.can_queue", can_queue.to_string()),
        ("disk.max_sectors_kb", max_kb.to_string()),
        ("disk.kind", kind.to_string()),
        ("disk.write_cache", wc.to_string()),
        ("cpu.cores", cores.to_string()),
        ("workload.size", size.to_string()),
        ("workload.direct", direct.to_string()),
        ("workload.fsync", fsync.to_string()),
        ("scsi.run_queue", run_queue.to_string()),
        ("vm.mem_mb", mem.to_string()),
        ("queue.scheduler", scheduler.to_string()),
        ("stack", stack.to_string()),
        ("workload.filesystem", if fs { "xfs" } else { "none" }.to_string()),
        ("queue.read_ahead_kb", ra_kb.to_string()),
        ("dm.partial_completion", partial.to_string()),
        ("dm.max_sectors_kb", max_kb.to_string()),
        ("dm.clone_alloc", clone_alloc.to_string()),
        ("queue.plugging", if split { "2.6.2" } else { "task" }.to_string()),
        ("md.chunk_kb", chunk.to_string()),
        ("md.stripe_cache_size", stripes.to_string()),
        ("md.split_aligned_reads", split.to_string()),
        // Before 2.6.20 every md read goes through the stripe cache (no new draw: the cases
        // stay the ones they were).
        ("md.aligned_reads", (!partial).to_string()),
    ] {
        set_knob(&mut s, k, &v).unwrap();
    }
    if s.workload.size != 0 && s.workload.size < s.workload.bs {
        s.workload.size = s.workload.bs;
    }
    if stack == "md" && s.disks < 3 {
        s.disks = 3;
    }
    if partial {
        set_knob(&mut s, "vm.writeback", "pdflush").unwrap();
    }
    if kind == "hwraid5" {
        set_knob(&mut s, "disk.controller_cache", if fs { "gathering" } else { "in-order" }).unwrap();
    }
    // Fewer segments than max_sectors_kb allows, and jobs on some devices only.
    set_knob(&mut s, "queue.max_segments", if fsync { "16" } else { "128" }).unwrap();
    if wc && stack == "direct" && s.disks >= 2 {
        set_knob(&mut s, "workload.filename", "sdb").unwrap();
    }
    if scheduler == "none" {
        // blk-mq of 4.0: several hardware queues, v4.0's or v4.1's splice, multipathd.
        set_knob(&mut s, "host.nr_hw_queues", &cores.min(4).to_string()).unwrap();
        set_knob(&mut s, "blk_mq.rerun_after_splice", &split.to_string()).unwrap();
        set_knob(&mut s, "dm.polling_interval", if fs { "1" } else { "0" }).unwrap();
    }
    if wc != fsync {
        // CFS and 2.6.32's load balancer, with the CPUs in two sockets when they split.
        set_knob(&mut s, "cpu.scheduler", "fair").unwrap();
        set_knob(&mut s, "cpu.load_balance", "2.6.32").unwrap();
        if cores % 2 == 0 {
            set_knob(&mut s, "cpu.sockets", "2").unwrap();
        }
    }
    if stack == "dm" {
        s.dm.paths = paths;
        set_knob(&mut s, "dm.path_grouping", grouping).unwrap();
        // With 2.6.2's plug, 2.6.2's bio-based dm-multipath: each bio's clone down a path.
        if split {
            set_knob(&mut s, "dm.mpath", "bio").unwrap();
            set_knob(&mut s, "dm.rr_min_io", if fs { "1" } else { "1000" }).unwrap();
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn every_bio_completes_once_and_no_pool_overflows(s in scenario(), seed in any::<u64>(), trace in any::<bool>()) {
        let cfg = s.validate().unwrap();
        let mut sim = Sim::new(&cfg, seed);
        // Without the trace, readahead submits its page bios as runs (`Bio::pages`).
        sim.set_trace(trace);
        let mut last = SimTime::ZERO;
        let until = SimTime(150_000_000);
        while sim.now() < until && sim.step() {
            prop_assert!(sim.now() >= last, "time went back");
            last = sim.now();
            sim.check_invariants();
        }
        // Let everything in flight drain: stop issuing by running to the end of finite jobs,
        // or check the books as they stand (bios live = submitted - completed is an invariant).
        let t = sim.totals().clone();
        prop_assert!(t.bios_completed <= t.bios_submitted);
        prop_assert_eq!(t.bios_submitted - t.bios_completed, sim.bios_live() as u64);
        // What the jobs wrote or read is on the disk (iostat), still dirty, or under writeback.
        // Requests complete before the I/O that owns them, so iostat can be ahead by the bytes
        // of direct I/Os partly complete, never behind; once everything is done, it is exact.
        // Buffered readers: the disks read what readahead brought in, of which read() copied
        // some. Only the disks count (a dm device's bytes are its paths' bytes again).
        let leaves = sim.topology().devices.len();
        let cum = sim.cumulative();
                let sectors: u64 = cum.diskstats[..leaves].iter().map(|d| d.sectors[0] + d.sectors[1]).sum();
        let (dirty, writeback) = sim.page_cache_bytes();
        prop_assert!(t.buffered_read_bytes <= t.readahead_bytes, "read() copied pages that were never read");
        // md's stripe cache may serve a page it already holds to another bio without a read.
        let cache_hits = t.stripe_returned_bytes.saturating_sub(t.stripe_read_bytes);
        let app = (t.bytes_read + t.bytes_written - t.buffered_read_bytes + t.readahead_bytes).saturating_sub(cache_hits);
        prop_assert!(sectors * 512 + dirty + writeback >= app, "iostat {} + dirty {} + writeback {} < jobs {}", sectors * 512, dirty, writeback, app);
        prop_assert!(t.clones.completed <= t.clones.made && t.clones.bios_completed <= t.clones.bios_made);
        if sim.bios_live() == 0 {
            prop_assert_eq!(t.clones.completed, t.clones.made, "a clone outlived its bios");
            prop_assert_eq!(t.clones.bios_completed, t.clones.bios_made);
        }
        // RAID5 also writes parity and reads old pages for read-modify-write: only the bound holds.
        let raid5 = sim.topology().upper.iter().any(|u| u.name.starts_with("md"));
        if sim.is_finished() && sim.bios_live() == 0 && !raid5 {
            // Beyond the jobs' bytes, the disks read only multipathd's path checks
            // (`soak props --seed 4294967684` draws such a scenario).
            let extra = sectors * 512 + dirty + writeback - app;
            prop_assert!(extra <= t.path_check_bytes, "iostat is {extra} bytes over the jobs', path checks {}", t.path_check_bytes);
            // Without fsync a buffered job is done when its data is in the page cache, while
            // writeback may still be in flight; with nothing left in the cache, no bio is.
            if dirty + writeback == 0 {
                prop_assert_eq!(sim.bios_live(), 0);
            }
        }
    }
}

#[test]
fn finite_jobs_finish_and_every_bio_is_accounted_for() {
    let mut s = Scenario::default();
    for (k, v) in [
        ("disks", "3"),
        ("workload.numjobs", "5"),
        ("workload.size", "2m"),
        ("workload.bs", "64k"),
        ("disk.max_sectors_kb", "16"),
        ("queue.nr_requests", "4"),
        ("host.can_queue", "2"),
    ] {
        set_knob(&mut s, k, v).unwrap();
    }
    let mut sim = Sim::new(&s.validate().unwrap(), 1);
    while sim.step() {
        sim.check_invariants();
    }
    assert!(sim.is_finished());
    let t = sim.totals();
    assert_eq!(t.bios_submitted, t.bios_completed);
    assert_eq!(t.bios_submitted, 5 * 2 * 1024 / 16);
    assert_eq!(t.bytes_read, 5 * 2 * 1024 * 1024);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Readahead runs are a shortcut of the simulator only: with the trace on (bios one by
    /// one) and off (runs), any scenario gives the same report.
    #[test]
    fn readahead_runs_change_nothing(s in scenario(), seed in any::<u64>()) {
        let cfg = s.validate().unwrap();
        let report = |trace: bool| {
            let mut sim = Sim::new(&cfg, seed);
            sim.set_trace(trace);
            sim.run_until(SimTime(100_000_000));
            serde_json::to_string(&blksim::tools::report::RunReport::from_sim(&mut sim, "sandbox", "")).unwrap()
        };
        prop_assert_eq!(report(false), report(true));
    }
}
