//! The stacked drivers' mechanisms (drivers/md: dm-multipath's request-based clones and
//! their completion, md raid5's stripe cache), one test each, as in `mechanisms.rs`.

use super::mechanisms::sim;
use blksim::kernel::trace::blktrace::Action;
use blksim::{Sim, SimTime};

/// Softirq CPU time per completed dm request, for a dm-multipath reader of a device node.
fn dm_softirq_ns_per_request(max_sectors_kb: &str, partial: &str) -> f64 {
    let mut s = sim(&[
        ("stack", "dm"),
        ("workload.direct", "false"),
        ("queue.read_ahead_kb", "512"),
        ("dm.max_sectors_kb", max_sectors_kb),
        ("dm.partial_completion", partial),
        ("cpu.cores", "1"),
    ]);
    s.run_until(SimTime(500_000_000));
    let cum = s.cumulative();
    let dm = s.topology().devices.len();
    let requests = cum.diskstats[dm].ios[0] as f64;
    assert!(requests > 20.0, "only {requests} dm requests");
    cum.cpu.softirq_ns as f64 / requests
}

#[test]
fn end_clone_bio_partial_updates_make_completion_cost_grow_as_n_squared() {
    // A 512 KiB dm request carries 128 page bios, a 128 KiB one 32. With the partial update
    // (2.6.32) each clone-bio completion recounts the remaining bios: N(N-1)/2 visits, so 4×
    // the bios costs ~16× the softirq time. With the fix it grows only ~4× (linear), a little
    // less for the costs per request (the interrupt, the request, the reader's one wakeup).
    let quadratic = dm_softirq_ns_per_request("512", "true") / dm_softirq_ns_per_request("128", "true");
    let linear = dm_softirq_ns_per_request("512", "false") / dm_softirq_ns_per_request("128", "false");
    assert!(quadratic > 10.0, "N=128 vs N=32 with partial completion: {quadratic:.1}×");
    assert!((2.5..5.0).contains(&linear), "without partial completion: {linear:.1}×");
}

#[test]
fn a_readahead_window_of_page_bios_merges_into_one_dm_request_and_one_clone() {
    let mut s = sim(&[("stack", "dm"), ("workload.direct", "false"), ("queue.read_ahead_kb", "512")]);
    s.set_trace(true);
    s.run_until(SimTime(300_000_000));
    let recs: Vec<_> = s.trace().since(0).0.copied().collect();
    let dm = blksim::engine::ids::DevId(1);
    let merges = recs.iter().filter(|r| r.dev == dm && r.action == Action::M).count();
    let gets = recs.iter().filter(|r| r.dev == dm && r.action == Action::G).count();
    let remaps = recs.iter().filter(|r| r.dev.0 == 0 && r.action == Action::A).count();
    assert!(gets > 0 && merges >= 100 * gets, "{merges} merges into {gets} requests");
    assert_eq!(remaps, recs.iter().filter(|r| r.dev == dm && r.action == Action::D).count(), "one clone per dispatched request");
}

#[test]
fn softirq_overrun_is_deferred_to_the_ksoftirqd_of_the_interrupted_cpu() {
    // Eight dm readers, all interrupts on CPU 1: the completion work overruns the softirq budget
    // and ksoftirqd/1 takes it; ksoftirqd/0 never runs.
    let mut s = sim(&[
        ("stack", "dm"),
        ("disks", "8"),
        ("workload.numjobs", "8"),
        ("workload.direct", "false"),
        ("queue.read_ahead_kb", "512"),
        ("dm.max_sectors_kb", "512"),
    ]);
    s.run_until(SimTime(1_000_000_000));
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    let k = |n: &str| r.threads.iter().find(|t| t.name == n).map_or(0.0, |t| t.cpu_pct);
    assert!(k("ksoftirqd/1") > 50.0 || k("ksoftirqd/0") > 50.0, "ksoftirqd: {} / {}", k("ksoftirqd/0"), k("ksoftirqd/1"));
    assert!(k("ksoftirqd/0").min(k("ksoftirqd/1")) < 1.0, "only the interrupted CPU's ksoftirqd works");
}

fn raid5_reader(chunk_kb: &str, split: &str) -> (blksim::RunReport, u64) {
    let mut s = sim(&[
        ("stack", "md"),
        ("disks", "4"),
        ("workload.numjobs", "4"),
        ("workload.direct", "false"),
        ("workload.filesystem", "xfs"),
        ("workload.bs", "64k"),
        ("queue.read_ahead_kb", "512"),
        ("disk.max_sectors_kb", "64"),
        ("md.chunk_kb", chunk_kb),
        ("md.split_aligned_reads", split),
    ]);
    s.run_until(SimTime(1_000_000_000));
    let stripe_read = s.totals().stripe_read_bytes;
    (blksim::RunReport::from_sim(&mut s, "t", "t"), stripe_read)
}

#[test]
fn an_aligned_read_that_fits_the_member_bypasses_the_stripe_cache() {
    // (raid5d runs in every case: a reader waiting on a page of md wakes it through sync_page.)
    let raid5d_cpu = |r: &blksim::RunReport| r.threads.iter().find(|t| t.name == "md0_raid5").unwrap().cpu_pct;
    let (fits, fits_stripe) = raid5_reader("64", "false");
    let (oversized, oversized_stripe) = raid5_reader("128", "false");
    let (split, split_stripe) = raid5_reader("128", "true");
    assert!(fits.read_mb_s > 10.0 && split.read_mb_s > 10.0);
    assert_eq!(fits_stripe, 0, "64 KiB chunks fit the member's 64 KiB: nothing goes through the stripe cache");
    assert_eq!(split_stripe, 0, "split aligned reads (v4.3+) also bypass the cache");
    assert!(oversized_stripe as f64 > 0.9 * oversized.read_mb_s * 1e6, "124 KiB bios do not fit: their pages go through the cache");
    assert!(raid5d_cpu(&oversized) > 10.0 * raid5d_cpu(&fits), "raid5d handles every page of the oversized reads");
    // Through the stripe cache the members see one-page reads (merged only by their elevator).
    let sd = |r: &blksim::RunReport| r.devices.iter().find(|d| d.name == "sda").unwrap().avgrq_sz;
    assert!(sd(&oversized) < sd(&fits), "avgrq-sz {} vs {}", sd(&oversized), sd(&fits));
}

/// One XFS reader of a 4-disk md RAID5 with 64 KiB chunks (which fit the member), with or
/// without 2.6.20's `chunk_aligned_read` and `raid5_mergeable_bvec`: its report, and the bytes
/// raid5d returned to bios from stripe heads.
fn raid5_reader_of_era(set: (&str, &str)) -> (blksim::RunReport, u64) {
    let mut s = sim(&[
        ("stack", "md"),
        ("disks", "4"),
        ("workload.direct", "false"),
        ("workload.filesystem", "xfs"),
        ("workload.bs", "64k"),
        ("queue.read_ahead_kb", "512"),
        set,
    ]);
    s.run_until(SimTime(1_000_000_000));
    let returned = s.totals().stripe_returned_bytes;
    (blksim::RunReport::from_sim(&mut s, "t", "t"), returned)
}

#[test]
fn before_2_6_20_every_read_goes_through_the_stripe_cache() {
    let (bypass, bypass_stripe) = raid5_reader_of_era(("md.aligned_reads", "true"));
    let (cached, cached_stripe) = raid5_reader_of_era(("md.aligned_reads", "false"));
    let (era, era_stripe) = raid5_reader_of_era(("kernel", "2.6.19"));
    assert!(bypass.read_mb_s > 10.0 && cached.read_mb_s > 10.0 && era.read_mb_s > 10.0);
    assert_eq!(bypass_stripe, 0, "2.6.20+: every read bio lies in one chunk and goes straight to its member");
    // Without chunk_aligned_read every page read comes back through a stripe head (at least
    // what read() copied: the rest is readahead still in flight or not yet read).
    let copied = |r: &blksim::RunReport| r.read_mb_s * 1e6;
    assert!(cached_stripe as f64 >= 0.9 * copied(&cached), "{cached_stripe} bytes through stripe heads of {}", copied(&cached));
    assert!(era_stripe as f64 >= 0.9 * copied(&era), "kernel=2.6.19 has no chunk_aligned_read");
    // Without raid5_mergeable_bvec, XFS's read bios run to md's 124 KiB across chunk ends.
    let md_rq = |r: &blksim::RunReport| r.devices.iter().find(|d| d.name == "md0").unwrap().avgrq_sz;
    assert!(md_rq(&bypass) <= 128.0 && md_rq(&cached) > 128.0, "md0 avgrq-sz {} vs {}", md_rq(&bypass), md_rq(&cached));
    let raid5d_cpu = |r: &blksim::RunReport| r.threads.iter().find(|t| t.name == "md0_raid5").unwrap().cpu_pct;
    assert!(
        raid5d_cpu(&cached) > 5.0 * raid5d_cpu(&bypass),
        "raid5d handles every page: {} vs {}",
        raid5d_cpu(&cached),
        raid5d_cpu(&bypass)
    );
}

#[test]
fn every_stripe_released_to_the_cache_wakes_every_thread_asleep_on_it() {
    // 2.6.20: __release_stripe wakes wait_for_stripe for every stripe back on the inactive
    // list, and the wait is not exclusive: whoever sleeps on it wakes, to find the condition
    // (below 3/4 of the cache) mostly false and sleep again: the thundering herd.
    let mut s = sim(&[
        ("stack", "md"),
        ("disks", "4"),
        ("workload.numjobs", "16"),
        ("workload.direct", "false"),
        ("workload.filesystem", "xfs"),
        ("workload.bs", "64k"),
        ("queue.read_ahead_kb", "512"),
        ("disk.max_sectors_kb", "64"),
        ("md.chunk_kb", "128"),
        ("md.stripe_cache_size", "32"),
    ]);
    let asleep = |s: &Sim| -> std::collections::BTreeSet<u32> {
        let (devs, _) = s.occupancy();
        devs.iter().flat_map(|d| d.stripe_sleepers.iter().copied()).collect()
    };
    let (mut herds, mut before) = (0, asleep(&s));
    while s.now() < SimTime(300_000_000) && s.step() {
        let after = asleep(&s);
        if before.iter().any(|p| !after.contains(p)) {
            assert!(before.is_disjoint(&after), "a release woke some sleepers but not all: {before:?} -> {after:?}");
            herds += (before.len() > 1) as u32;
        }
        before = after;
    }
    assert!(herds > 20, "only {herds} wakeups of several sleepers at once");
}

#[test]
fn the_kdmwork_thread_sleeps_in_bt_get_while_the_path_has_no_tag() {
    // dm-multipath over a blk-mq path with 8 tags (scsi-mq: `can_queue` tags per hardware
    // queue) and a sleeping clone allocation: the one kdmwork thread sleeps (S on the path) and
    // maps nothing more until a clone completes and its freed tag wakes it.
    let mut s = sim(&[
        ("stack", "dm"),
        ("disk.kind", "ramlun"),
        ("queue.scheduler", "none"),
        ("host.can_queue", "8"),
        ("queue.depth", "8"),
        ("dm.clone_alloc", "sleep"),
        ("workload.rw", "write"),
        ("workload.bs", "64k"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "16"),
        ("workload.size", "4m"),
    ]);
    s.set_trace(true);
    while s.step() {
        s.check_invariants();
    }
    let names: Vec<String> = s.threads_view().into_iter().map(|t| t.name).collect();
    let kdm = names.iter().position(|n| n == "kdmwork-253:0").expect("a kdmwork thread") as u32;
    let recs: Vec<_> = s.trace().since(0).0.copied().collect();
    let sleeps: Vec<_> = recs.iter().filter(|r| r.action == Action::S && r.thread.0 == kdm).collect();
    assert!(sleeps.len() >= 5, "kdmwork slept {} times", sleeps.len());
    for sl in sleeps {
        let next_map = recs.iter().find(|r| r.time > sl.time && r.action == Action::A).map(|r| r.time);
        let next_done = recs.iter().find(|r| r.time > sl.time && r.action == Action::C && r.dev.0 == 0).map(|r| r.time);
        if let (Some(m), Some(c)) = (next_map, next_done) {
            assert!(m >= c, "mapped at {m:?} before any clone completed ({c:?})");
        }
    }
    assert!(s.is_finished());
}

fn raid5_writer(rw: &str, bs: &str) -> blksim::RunReport {
    let mut s = sim(&[
        ("stack", "md"),
        ("disks", "4"),
        ("md.chunk_kb", "64"),
        ("md.stripe_cache_size", "1024"),
        ("workload.rw", rw),
        ("workload.bs", bs),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "4"),
        ("disk.max_sectors_kb", "512"),
    ]);
    s.run_until(SimTime(1_000_000_000));
    blksim::RunReport::from_sim(&mut s, "t", "t")
}

#[test]
fn raid5_full_stripe_writes_read_nothing_and_small_writes_read_before_writing() {
    // 4 disks, 64 KiB chunks: a stripe holds 192 KiB of data. Sequential 192 KiB writes cover
    // whole stripes: data and parity are written, nothing is read. Random 4 KiB writes need the
    // old data (or the rest of the row) first: the members read as much as they write.
    let full = raid5_writer("write", "192k");
    let small = raid5_writer("randwrite", "4k");
    let sum = |r: &blksim::RunReport, f: fn(&blksim::tools::stats::Iostat) -> f64| -> f64 {
        r.devices.iter().filter(|d| d.name.starts_with("sd")).map(f).sum()
    };
    assert!(full.write_mb_s > 1.0 && small.write_mb_s > 0.0);
    assert_eq!(sum(&full, |d| d.rkb_s), 0.0, "a full-stripe write reads nothing");
    // Parity: members write 4/3 of what the job writes.
    let ratio = sum(&full, |d| d.wkb_s) / (full.write_mb_s * 1e6 / 1024.0);
    assert!((1.25..1.45).contains(&ratio), "members wrote {ratio:.2}x the data");
    assert!(sum(&small, |d| d.rkb_s) >= 0.9 * sum(&small, |d| d.wkb_s) / 2.0, "read-modify-write reads before it writes");
}

#[test]
fn multipath_failover_uses_one_path_and_multibus_takes_them_in_turn() {
    let run = |grouping: &str| {
        let mut s = sim(&[
            ("stack", "dm"),
            ("disks", "2"),
            ("hbas", "2"),
            ("dm.paths", "2"),
            ("dm.path_grouping", grouping),
            ("workload.numjobs", "2"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "8"),
            ("workload.bs", "64k"),
        ]);
        s.run_until(SimTime(500_000_000));
        let r = blksim::RunReport::from_sim(&mut s, "t", "t");
        // sda, sdb: the two paths to disk 0 (on HBA 0 and HBA 1).
        let rs = |n: &str| r.devices.iter().find(|d| d.name == n).unwrap().r_s;
        (rs("sda"), rs("sdb"), r.fairness)
    };
    let (a, b, fair) = run("failover");
    assert!(a > 0.0 && b == 0.0, "failover: {a} and {b} r/s");
    assert!(fair > 0.99, "fairness is over disks, not paths: {fair}");
    let (a, b, _) = run("multibus");
    assert!(a > 0.0 && (a - b).abs() <= 0.1 * a, "multibus: {a} and {b} r/s");
}

/// One buffered reader of a dm-multipath device over 4 paths to one disk (2.6.20 readahead:
/// each 4 KiB page a bio; the per-task plug, which holds a whole window for the first queue it
/// reaches to merge), traced for 0.3 s: the path and size of each clone dm-0
/// sent down (its A records, in order), and the mean request size (sectors) the paths' queues
/// sent to the disk.
fn mpath_reader(mode: &str, grouping: &str) -> (Vec<(u16, u32)>, f64) {
    let mut knobs = vec![
        ("stack", "dm"),
        ("hbas", "4"),
        ("dm.paths", "4"),
        ("dm.mpath", mode),
        ("dm.path_grouping", grouping),
        ("workload.direct", "false"),
        ("queue.plugging", "task"),
        ("vm.readahead", "2.6.20"),
    ];
    if mode == "bio" {
        knobs.push(("dm.rr_min_io", "1"));
    }
    let mut s = sim(&knobs);
    s.set_trace(true);
    s.run_until(SimTime(300_000_000));
    let dm = blksim::engine::ids::DevId(4);
    let recs: Vec<_> = s.trace().since(0).0.copied().collect();
    let clones = recs.iter().filter(|r| r.action == Action::A && r.dev.0 < 4 && r.from.is_some_and(|(d, _)| d == dm));
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    let paths: Vec<_> = r.devices.iter().filter(|d| d.name.starts_with("sd") && d.r_s > 0.0).collect();
    let sectors = paths.iter().map(|d| d.avgrq_sz * d.r_s).sum::<f64>() / paths.iter().map(|d| d.r_s).sum::<f64>();
    (clones.map(|r| (r.dev.0, r.bytes)).collect(), sectors)
}

#[test]
fn bio_based_multibus_sends_each_bio_down_the_next_path_where_it_cannot_merge() {
    // 2.6.18's map_io with rr_min_io=1: every page bio's clone goes to the path after the
    // previous one's, so no path's queue holds two neighbours: one 4 KiB bio per request.
    let (clones, multibus) = mpath_reader("bio", "multibus");
    assert!(clones.len() > 100 && clones.iter().all(|c| c.1 == 4096), "{} clones, each one page bio", clones.len());
    assert!(clones.windows(2).all(|w| w[1].0 == (w[0].0 + 1) % 4), "round robin, one bio a path: {:?}", &clones[..12]);
    assert!((8.0..8.5).contains(&multibus), "bio-based multibus: {multibus:.1} sectors a request");
    // Failover sends every bio down sda, whose plugged queue merges the window's pages.
    let (clones, failover) = mpath_reader("bio", "failover");
    assert!(!clones.is_empty() && clones.iter().all(|c| c.0 == 0), "failover: all on sda");
    assert!(failover > 4.0 * multibus, "bio-based failover {failover:.1} sectors against multibus {multibus:.1}");
    // Request-based (2.6.31+): the pages merge in dm's own queue first, and each path gets
    // whole requests, so its queue sends down requests of many pages.
    let (clones, rq_multibus) = mpath_reader("request", "multibus");
    let mean = clones.iter().map(|c| c.1 as f64).sum::<f64>() / clones.len() as f64;
    assert!(mean > 4.0 * 4096.0, "request-based clones: {mean:.0} bytes each");
    assert!(rq_multibus > 4.0 * multibus, "request-based multibus {rq_multibus:.1} sectors a request");
}
