//! blk-mq tag sets: the driver tags are the SCSI host's (`shost->tag_set`), shared by every
//! LUN's queue on it, with `hctx_may_queue`'s fair share between the active queues (4.0 and
//! 5.10), an idle queue released only by the queue's timeout work, and 5.10's
//! `host.host_tagset`, one map for all of a host's hardware queues. Every figure is measured
//! from the run: the view snapshots after each event.

use blksim::course::lessons;
use blksim::engine::Sim;
use blksim::scenario::set_knob;

/// A sandbox run of the fio job `text` with `knobs` over it, seed 1.
fn sim_of(text: &str, knobs: &[(&str, &str)]) -> Sim {
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let mut base = sandbox.config(&variant, &[]).unwrap().scenario;
    for (k, v) in knobs {
        set_knob(&mut base, k, v).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut job = blksim::fio::parse(text).unwrap();
    job.fit_devices(&base);
    let mut all: Vec<(String, String)> = knobs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    all.extend(job.knobs.clone());
    let cfg = sandbox.config(&variant, &all).unwrap_or_else(|e| panic!("{e}"));
    Sim::new(&cfg, 1)
}

/// What one snapshot shows of a host's LUNs: each LUN's commands started (`device_busy`), each
/// LUN's driver tags, the host's commands.
#[derive(Default, Debug, Clone, Copy)]
struct Most {
    started: [u32; 2],
    tags: [u32; 2],
    host_busy: u32,
    tags_total: u32,
}

/// The most seen between `from` and `to` seconds, every event.
fn most_between(sim: &mut Sim, from: f64, to: f64) -> Most {
    let ns = |s: f64| blksim::engine::time::SimTime((s * 1e9) as u64);
    let mut m = Most::default();
    while sim.now() < ns(to) && sim.step() {
        if sim.now() < ns(from) {
            continue;
        }
        let (devs, hosts) = sim.occupancy();
        for (i, d) in devs.iter().take(2).enumerate() {
            m.started[i] = m.started[i].max(d.tags);
            m.tags[i] = m.tags[i].max(d.hctx.iter().map(|h| h.tags).sum());
        }
        m.host_busy = m.host_busy.max(hosts[0].busy);
        m.tags_total = m.tags_total.max(devs.iter().map(|d| d.hctx.iter().map(|h| h.tags).sum::<u32>()).sum());
    }
    m
}

/// Two SSD LUNs on one host of `can_queue` 32, each LUN's `queue_depth` 64 (the host, not the
/// LUN, is the limit), under `kernel` with `none`.
fn two_luns(kernel: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("kernel", kernel),
        ("disk.kind", "ssd"),
        ("disks", "2"),
        ("hbas", "1"),
        ("host.can_queue", "32"),
        ("queue.depth", "64"),
        ("queue.scheduler", "none"),
    ]
}

const DEEP_READER: &str = "[a]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sda\n";
const TWO_DEEP_READERS: &str =
    "[a]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sda\n[b]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sdb\n";

#[test]
fn two_busy_luns_on_one_host_each_hold_at_most_their_fair_share_of_its_tags() {
    for kernel in ["4.0", "5.10"] {
        let mut sim = sim_of(TWO_DEEP_READERS, &two_luns(kernel));
        let start = most_between(&mut sim, 0.0, 0.1);
        let both = most_between(&mut sim, 0.1, 0.4);
        let alone = most_between(&mut sim_of(DEEP_READER, &two_luns(kernel)), 0.0, 0.4);
        eprintln!("kernel {kernel}: both busy, first 0.1 s {start:?}, then {both:?}; sda alone {alone:?}");
        // Both active on the shared set of 32: max((32 + 2 - 1) / 2, 4) = 16 each, and each
        // deep reader reaches it.
        for i in 0..2 {
            assert_eq!(both.tags[i], 16, "kernel {kernel}: LUN {i} held {} driver tags", both.tags[i]);
            assert!(both.started[i] <= 16, "kernel {kernel}: LUN {i} had {} commands started", both.started[i]);
        }
        // sdb never asks: sda alone is the set's only active user and takes all 32.
        assert_eq!(alone.tags[0], 32, "kernel {kernel}");
        assert_eq!(alone.started[0], 32, "kernel {kernel}");
        assert_eq!(alone.tags[1], 0);
    }
}

#[test]
fn a_lun_that_stops_keeps_its_share_until_the_timeout_work_finds_it_idle() {
    // sdb reads for 1 s and stops; sda reads on. sdb stays active (BLK_MQ_S_TAG_ACTIVE) until
    // its queue's timer fires with nothing in flight (blk_mq_rq_timer, armed BLK_MAX_TIMEOUT
    // = 5 s after its first command): till then sda keeps to 16 tags, afterwards it has 32.
    let text = "[a]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sda\ntime_based=1\nruntime=8\n[b]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sdb\ntime_based=1\nruntime=1\n";
    let mut sim = sim_of(text, &two_luns("5.10"));
    let during = most_between(&mut sim, 1.5, 4.5);
    let after = most_between(&mut sim, 5.5, 6.5);
    eprintln!("sdb stopped at 1 s: 1.5-4.5 s {during:?}; 5.5-6.5 s {after:?}");
    assert_eq!(during.tags[1], 0, "sdb holds nothing once stopped");
    assert_eq!(during.tags[0], 16, "sda is held to its share while sdb is still counted active");
    assert_eq!(after.tags[0], 32, "idle, sdb no longer counts: sda takes the whole map");
}

/// Two SSD LUNs (NCQ queue_depth 32 each) on one host of `can_queue` 32 with 4 hardware queues
/// over 4 CPUs, 5.10 with `none`, a deep random reader per CPU on each LUN.
fn four_queues(host_tagset: &str) -> (Most, u64) {
    let mut text = String::new();
    for (j, dev) in ["sda", "sdb"].iter().enumerate() {
        text.push_str(&format!("[r{j}]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=32\ndirect=1\nnumjobs=4\nfilename={dev}\n"));
    }
    let k = [
        ("kernel", "5.10"),
        ("disk.kind", "ssd"),
        ("disks", "2"),
        ("hbas", "1"),
        ("cpu.cores", "4"),
        ("host.nr_hw_queues", "4"),
        ("host.can_queue", "32"),
        ("queue.depth", "32"),
        ("queue.scheduler", "none"),
        ("host.host_tagset", host_tagset),
    ];
    let mut sim = sim_of(&text, &k);
    let most = most_between(&mut sim, 0.0, 0.5);
    let r = blksim::tools::report::RunReport::from_sim(&mut sim, "sandbox", "tags");
    (most, r.jobs.iter().map(|j| j.read.total_ios).sum())
}

#[test]
fn host_tagset_keeps_a_hosts_four_hardware_queues_within_can_queue() {
    let (per_hctx, ios_per_hctx) = four_queues("false");
    let (one_map, ios_one_map) = four_queues("true");
    eprintln!("can_queue 32 per hardware queue: {per_hctx:?}, {ios_per_hctx} reads; host_tagset: {one_map:?}, {ios_one_map} reads");
    // Without it each hardware queue has can_queue tags of its own: the host is sent more
    // commands than can_queue (5.5+ scsi_host_queue_ready counts them, refuses none).
    assert!(per_hctx.host_busy > 32, "{per_hctx:?}");
    assert!(per_hctx.tags_total > 32, "{per_hctx:?}");
    // With it one map of 32 serves all four queues of both LUNs.
    assert!(one_map.tags_total <= 32 && one_map.host_busy <= 32, "{one_map:?}");
    assert!(one_map.host_busy >= 24, "the map is used: {one_map:?}");
    // The SSDs do the work either way: 32 commands on the host keep two drives busy enough.
    let ratio = ios_one_map as f64 / ios_per_hctx as f64;
    assert!((0.6..=1.1).contains(&ratio), "reads with host_tagset ÷ without: {ratio:.2}");
}

#[test]
fn host_tagset_is_refused_where_it_acts_on_nothing_naming_what_it_needs() {
    let base = [("disk.kind", "ssd"), ("cpu.cores", "4"), ("host.nr_hw_queues", "4"), ("queue.scheduler", "none")];
    let refuse = |extra: &[(&str, &str)], needle: &str| {
        let mut s = blksim::scenario::Scenario::default();
        for (k, v) in base.iter().chain(extra) {
            set_knob(&mut s, k, v).unwrap_or_else(|e| panic!("{e}"));
        }
        set_knob(&mut s, "host.host_tagset", "true").unwrap();
        let e = s.validate().err().unwrap_or_else(|| panic!("{extra:?} accepted"));
        assert_eq!(e.field, "host.host_tagset");
        assert!(e.message.contains(needle), "{}", e.message);
    };
    refuse(&[("blk_mq.dispatch", "4.0")], "blk_mq.dispatch=5.0");
    refuse(&[("blk_mq.dispatch", "5.0"), ("host.nr_hw_queues", "1")], "host.nr_hw_queues is 1");
    refuse(&[("kernel", "5.4")], "kernel 5.4 has no host_tagset, which came in 5.10");
    refuse(&[("kernel", "5.10"), ("queue.scheduler", "mq-deadline"), ("disk.kind", "nvme")], "SCSI host");
    let mut s = blksim::scenario::Scenario::default();
    for (k, v) in base.iter().chain(&[("kernel", "5.10"), ("host.host_tagset", "true")]) {
        set_knob(&mut s, k, v).unwrap();
    }
    assert!(s.validate().is_ok());
    // kernel= leaves it off: a generic SCSI host's driver does not set it.
    let mut s = blksim::scenario::Scenario::default();
    set_knob(&mut s, "kernel", "6.6").unwrap();
    assert!(!s.host.host_tagset);
}

#[test]
fn with_mq_deadline_the_share_binds_at_dispatch_and_a_lun_that_starts_late_gets_its_half() {
    // 5.10, mq-deadline: driver tags are taken at dispatch (blk_mq_get_driver_tag, where
    // hctx_may_queue is asked). sda takes all 32 before sdb starts; once sdb asks, sda is held
    // to 16 and sdb gets the other 16.
    let mut k = two_luns("5.10");
    k.retain(|(key, _)| *key != "queue.scheduler");
    k.push(("queue.scheduler", "mq-deadline"));
    let text = "[a]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sda\n[b]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\ndirect=1\nfilename=sdb\nstartdelay=0.2\n";
    let mut sim = sim_of(text, &k);
    let before = most_between(&mut sim, 0.0, 0.2);
    let after = most_between(&mut sim, 0.3, 0.6);
    eprintln!("sda alone {before:?}; with sdb {after:?}");
    assert_eq!(before.tags, [32, 0], "sda alone holds the map");
    assert_eq!(after.tags, [16, 16], "each holds its share");
    let r = blksim::tools::report::RunReport::from_sim(&mut sim, "sandbox", "tags");
    let b = r.jobs.iter().find(|j| j.jobname == "b").expect("job b");
    assert!(b.read.total_ios > 1000, "sdb read {} blocks", b.read.total_ios);
}
