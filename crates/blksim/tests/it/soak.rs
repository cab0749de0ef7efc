//! What `scripts/soak` found, each as the case its seed made (`soak fuzz --seed N` replays the
//! original): the inputs spelled out, so the test stands without the soak's generator.

use blksim::course::link::LinkState;
use blksim::scenario::{set_knob, Scenario};
use blksim::{Sim, SimTime};

/// `soak fuzz --seed 581`: a job file's 16 MiB direct write on nr-requests' RAID controller
/// put a completion in each of 121 of the controller's 254 tag slots at once, past the event
/// queue's limit (it counted 16 completions per disk): a panic.
#[test]
fn a_raid_controller_with_every_tag_busy_stays_within_the_event_queue() {
    let l = blksim::course::lessons::find("nr-requests").unwrap();
    let sets: Vec<(String, String)> = [
        ("workload.bs", "16775680"),
        ("workload.numjobs", "4"),
        ("workload.direct", "true"),
        ("workload.size", "986469634k"),
        ("workload.rw", "read"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let cfg = l.config("regressed", &sets).unwrap();
    let mut sim = Sim::new(&cfg, 581);
    sim.run_until_bounded(SimTime(20_000_000), 2000);
    sim.check_invariants();
    // A RAM LUN's 64 slots, every one busy, with the most jobs the queue allows.
    let mut s = Scenario::default();
    for (k, v) in [
        ("disk.kind", "ramlun"),
        ("workload.direct", "true"),
        ("workload.bs", "1m"),
        ("workload.numjobs", "64"),
        ("disk.max_sectors_kb", "4"),
    ] {
        set_knob(&mut s, k, v).unwrap();
    }
    let mut sim = Sim::new(&s.validate().unwrap(), 1);
    sim.run_until(SimTime(5_000_000));
    sim.check_invariants();
}

/// `soak fuzz --seed 24`, `--seed 69`, `--seed 117`, `--seed 223`, `--seed 250`: garbled input
/// quoted back in an error must keep the error one line and short: control characters are
/// escaped, and a key of 5000 characters is clipped like any value.
#[test]
fn errors_quote_garbled_input_on_one_short_line() {
    for link in ["u\r\nx", "#/lesson/raid5-chunk?v=1&a\nb=1", "#/lesson/raid5-chunk?v=1&7\n8%ZZ=1"] {
        let e = LinkState::decode(link).unwrap_err().to_string();
        assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
    }
    let e = set_knob(&mut Scenario::default(), "vm.mem_mb", "\n12").unwrap_err().to_string();
    assert!(!e.contains('\n') && e.contains("\\n12"), "{e:?}");
    let long = "k".repeat(5000);
    let e = set_knob(&mut Scenario::default(), &long, "1").unwrap_err();
    assert!(e.field.chars().count() <= 41, "{} characters", e.field.len());
}

/// `soak fuzz --seed 1327`, `--seed 4404`: an empty key (`--set =5`, a link's `&=5`) is named
/// as '' rather than by an empty field.
#[test]
fn an_empty_knob_name_is_named() {
    let e = set_knob(&mut Scenario::default(), "", "5").unwrap_err();
    assert_eq!(e.field, "''");
    assert!(e.message.starts_with("an empty knob name"), "{e}");
    let e = LinkState::decode("#/lesson/scsi-starved?v=1&=5").unwrap_err();
    assert_eq!(e.field, "''", "{e}");
}

/// `soak fuzz --seed 32646`: a link whose knobs go with A's variant but not with B's opened,
/// and B failed only when the page built it. Now B is dropped and named; A opens.
#[test]
fn a_link_whose_b_does_not_take_its_knobs_opens_a_and_names_b() {
    let f = "#/lesson/mq-clone-stall?v=1&variant=regressed&b=direct&dm.paths=3";
    let (st, e) = LinkState::decode_lenient(f).unwrap();
    assert_eq!((st.variant.as_deref(), st.b.as_deref()), (Some("regressed"), None));
    let e = e.unwrap();
    assert_eq!(e.field, "b");
    assert!(e.message.contains("direct") && e.message.contains("dm.paths"), "{e}");
    assert_eq!(LinkState::decode(f).unwrap_err().field, "b");
}

/// `soak props --seed 4294967684`: with multipathd polling (dm over blk-mq), the disks read
/// its 4 KiB path checks besides the jobs' bytes; the books count them apart.
#[test]
fn multipathd_path_checks_are_the_only_bytes_beyond_the_jobs() {
    let mut s = Scenario::default();
    for (k, v) in [
        ("disks", "2"),
        ("hbas", "2"),
        ("workload.rw", "write"),
        ("workload.bs", "16k"),
        ("workload.numjobs", "11"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "13"),
        ("queue.nr_requests", "20"),
        ("queue.depth", "1"),
        ("host.can_queue", "30"),
        ("disk.max_sectors_kb", "8"),
        ("disk.kind", "ssd"),
        ("disk.write_cache", "true"),
        ("cpu.cores", "2"),
        ("workload.size", "256k"),
        ("workload.direct", "false"),
        ("workload.fsync", "true"),
        ("scsi.run_queue", "fixed"),
        ("vm.mem_mb", "107"),
        ("queue.scheduler", "none"),
        ("stack", "dm"),
        ("workload.filesystem", "xfs"),
        ("queue.read_ahead_kb", "512"),
        ("dm.partial_completion", "true"),
        ("dm.max_sectors_kb", "8"),
        ("dm.clone_alloc", "nowait"),
        ("queue.plugging", "2.6.2"),
        ("md.chunk_kb", "128"),
        ("md.stripe_cache_size", "60"),
        ("md.split_aligned_reads", "true"),
        ("vm.writeback", "pdflush"),
        ("queue.max_segments", "16"),
        ("host.nr_hw_queues", "2"),
        ("blk_mq.rerun_after_splice", "true"),
        ("dm.polling_interval", "1"),
        ("dm.paths", "1"),
        ("dm.path_grouping", "multibus"),
        ("cpu.scheduler", "fair"),
    ] {
        set_knob(&mut s, k, v).unwrap();
    }
    let mut sim = Sim::new(&s.validate().unwrap(), 4294967684);
    while sim.now() < SimTime(100_000_000) && sim.step() {
        sim.check_invariants();
    }
    assert!(sim.is_finished() && sim.bios_live() == 0, "the case finished with nothing in flight");
    assert!(sim.totals().path_check_bytes >= 4096, "multipathd checked no path");
    let leaves = sim.topology().devices.len();
    let cum = sim.cumulative();
    let sectors: u64 = cum.diskstats[..leaves].iter().map(|d| d.sectors[0] + d.sectors[1]).sum();
    let t = sim.totals();
    let (dirty, writeback) = sim.page_cache_bytes();
    let jobs = t.bytes_written + t.bytes_read;
    let disk = sectors * 512 + dirty + writeback;
    assert!(disk >= jobs && disk - jobs <= t.path_check_bytes, "disks {disk}, jobs {jobs}, path checks {}", t.path_check_bytes);
}

/// `soak long` (raid5-chunk `regressed`, trace on): after about seven simulated minutes a
/// readahead bio's completion subtracted past zero. An old window, done, kept the id of its
/// read; a new read given the same id had its bios (and its end) credited to the old window,
/// so the new window never became done. It shows at 8 simulated seconds as a window pending
/// on a read that is not its job's (the invariant names it).
#[test]
fn a_readahead_window_done_long_ago_does_not_take_a_new_reads_bios() {
    let l = blksim::course::lessons::find("raid5-chunk").unwrap();
    let mut sim = Sim::new(&l.config("regressed", &[]).unwrap(), 1);
    for ms in (10..=9_000).step_by(10) {
        sim.run_until(SimTime(ms * 1_000_000));
        sim.check_invariants();
    }
}

/// `soak fuzz --seed 73393`: mq-clone-stall with `stack=lvm` and `workload.bs=16775680`: the
/// 16 MiB RAM LUN less LVM's metadata is smaller than one block, so the job's one block ran
/// past the end of the disk (a panic). Such a block is refused, naming the device's size.
#[test]
fn a_block_larger_than_the_device_is_refused() {
    let l = blksim::course::lessons::find("mq-clone-stall").unwrap();
    let sets = |bs: &str| vec![("stack".to_string(), "lvm".to_string()), ("workload.bs".to_string(), bs.to_string())];
    let e = l.config("regressed", &sets("16775680")).unwrap_err().to_string();
    assert!(e.contains("workload.bs") && e.contains("16580608"), "{e}");
    // The largest block that fits runs.
    let cfg = l.config("regressed", &sets("16580608")).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.run_until(SimTime(50_000_000));
    sim.check_invariants();
    // Sixteen jobs of 8 MiB on the 16 MiB LUN: too small for a block each, so each gets all
    // of it (fio's clones overlap too), within the disk.
    let mut s = Scenario::default();
    for (k, v) in [("disk.kind", "ramlun"), ("workload.numjobs", "16"), ("workload.bs", "8m"), ("workload.rw", "randread")] {
        set_knob(&mut s, k, v).unwrap();
    }
    let mut sim = Sim::new(&s.validate().unwrap(), 1);
    sim.run_until(SimTime(50_000_000));
    sim.check_invariants();
}
