//! The NVMe driver and drive (`disk.kind=nvme`): a queue pair per CPU, completions on the
//! submitting CPU, and a flash drive whose dies work in parallel as the queue deepens.

use crate::mechanisms::sim;
use blksim::calib::{NVME_970_EVO_PLUS, NVME_CHANNELS};
use blksim::hw::transfer_ns;
use blksim::scenario::{knob_applies, set_knob, Scenario};
use blksim::{RunReport, SimTime};

/// 4 KiB O_DIRECT random reads on the NVMe drive: `jobs` libaio jobs of `iodepth` each, one per
/// CPU, under the sandbox's CFS (each job keeps its CPU). Returns the run's report after `secs`.
fn randread(iodepth: &str, jobs: &str, secs: f64) -> RunReport {
    let cores = jobs.parse::<u32>().unwrap().max(2).to_string();
    let mut s = sim(&[
        ("disk.kind", "nvme"),
        ("queue.scheduler", "none"),
        ("cpu.cores", &cores),
        ("cpu.scheduler", "fair"),
        ("cpu.load_balance", "2.6.32"),
        ("cpu.wake_idle", "idle_cpu"),
        ("workload.rw", "randread"),
        ("workload.direct", "true"),
        ("workload.bs", "4k"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", iodepth),
        ("workload.numjobs", jobs),
    ]);
    s.run_until(SimTime::from_secs_f64(secs));
    RunReport::from_sim(&mut s, "t", "t")
}

/// What one 4 KiB read costs inside the drive with nothing else in it: the controller's
/// command, the die's tR, the channel, then the PCIe link.
fn drive_ns() -> u64 {
    let f = NVME_970_EVO_PLUS;
    f.command_ns + f.t_r_ns + transfer_ns(4096, f.channel_bytes_per_s) + transfer_ns(4096, f.link_bytes_per_s)
}

#[test]
fn at_qd1_a_read_costs_the_drive_and_a_short_host_path_and_completes_where_it_was_sent() {
    let r = randread("1", "1", 0.3);
    let bound = 1e9 / drive_ns() as f64;
    // The drive alone bounds it; the host path (syscall, blk-mq, nvme_queue_rq, the interrupt
    // and the completion: no SCSI host, no softirq hop) adds well under 15 µs.
    assert!(r.iops < bound, "{:.0} IOPS above the drive's own {bound:.0}", r.iops);
    assert!(r.iops > 1e9 / (drive_ns() + 15_000) as f64, "{:.0} IOPS: the host path costs more than 15 µs", r.iops);
    // Each completion interrupts the CPU that sent the command: no IPI is counted beside it.
    assert!((r.intr_per_s - r.iops).abs() <= 1.0, "{:.0} interrupts a second for {:.0} IOPS", r.intr_per_s, r.iops);
    assert_eq!(r.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["nvme0n1"]);
}

#[test]
fn iops_grow_with_depth_until_the_dies_are_busy() {
    let (qd1, qd4, qd16) = (randread("1", "1", 0.2).iops, randread("4", "1", 0.2).iops, randread("16", "1", 0.2).iops);
    let qd128 = randread("32", "4", 0.1).iops;
    // More reads in flight find more dies free: nearly 4× at QD4 (some land on a busy die).
    assert!(qd4 > 3.0 * qd1, "QD4 {qd4:.0} against QD1 {qd1:.0}");
    assert!(qd16 > 2.0 * qd4, "QD16 {qd16:.0} against QD4 {qd4:.0}");
    // 32 dies, each sensing a page and moving it over its channel at a time: the ceiling.
    let f = NVME_970_EVO_PLUS;
    let dies = (NVME_CHANNELS * f.dies_per_channel) as f64;
    let ceiling = dies * 1e9 / (f.t_r_ns + transfer_ns(4096, f.channel_bytes_per_s)) as f64;
    assert!(qd128 < ceiling, "QD32 × 4: {qd128:.0} IOPS above the dies' {ceiling:.0}");
    assert!(qd128 > 0.75 * ceiling, "QD32 × 4: {qd128:.0} IOPS, far below the dies' {ceiling:.0}");
}

#[test]
fn an_nvme_drive_takes_blk_mq_only_and_says_what_is_allowed() {
    let refused = |knobs: &[(&str, &str)]| {
        let mut s = Scenario::default();
        set_knob(&mut s, "disk.kind", "nvme").unwrap();
        for (k, v) in knobs {
            set_knob(&mut s, k, v).unwrap();
        }
        s.validate().err()
    };
    for legacy in ["noop", "deadline", "cfq"] {
        let e = refused(&[("queue.scheduler", legacy)]).expect("a legacy elevator is refused");
        assert_eq!(e.field, "queue.scheduler");
        assert!(e.message.contains("queue.scheduler=none") && e.message.contains("3.19"), "{}", e.message);
    }
    // A kernel's era rules choose a legacy elevator only where the user did not set one.
    assert!(refused(&[("queue.scheduler", "none"), ("kernel", "4.0")]).is_none());
    assert_eq!(refused(&[("queue.scheduler", "none"), ("kernel", "3.10")]).expect("before blk-mq NVMe").field, "kernel");
    assert_eq!(refused(&[("queue.scheduler", "none"), ("stack", "dm")]).expect("dm-multipath's paths are SCSI").field, "stack");
    for stack in ["direct", "lvm"] {
        assert!(refused(&[("queue.scheduler", "none"), ("stack", stack)]).is_none(), "stack={stack}");
    }
    // The SCSI host's and device's knobs do not act on it; on a SCSI disk they still do.
    let mut s = Scenario::default();
    set_knob(&mut s, "queue.scheduler", "none").unwrap();
    for key in ["host.can_queue", "host.nr_hw_queues", "host.link_mb_s", "queue.depth"] {
        assert!(knob_applies(&s, key).is_ok(), "{key} on an sd disk");
    }
    set_knob(&mut s, "disk.kind", "nvme").unwrap();
    for key in ["host.can_queue", "host.nr_hw_queues", "host.irq_per_hw_queue", "host.link_mb_s", "queue.depth"] {
        let why = knob_applies(&s, key).expect_err(key);
        assert!(why.contains("no SCSI host"), "{key}: {why}");
    }
}

#[test]
fn the_drive_holds_its_queue_pairs_commands_up_to_what_a_slot_number_names() {
    use blksim::hw::Disk;
    use blksim::scenario::{ControllerCache, DiskKind, MemberDrive};
    let drive = |pairs: u32| {
        let mut rng = blksim::engine::rng::Stream::new(1, 0);
        let mut d = Disk::new(DiskKind::Nvme, false, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        d.set_queue_pairs(pairs);
        d.slot_count()
    };
    // 1023 commands a queue pair (its tags), for every CPU's pair.
    assert_eq!(drive(1), 1023);
    assert_eq!(drive(4), 4 * 1023);
    // Past 64 pairs the slots a u16 names (less the RAID engine's) are all: the rest wait.
    assert_eq!(drive(256), usize::from(u16::MAX) - 1);
}

/// 4 KiB random reads at QD32 on one CPU's queue pair, under `kernel`, `scheduler` and
/// `blk_mq.plug` (the kernel's own rule if empty): the IOPS and the CPU time kblockd took.
fn under(kernel: &str, scheduler: &str, plug: &str) -> (f64, f64) {
    let mut knobs = vec![
        ("disk.kind", "nvme"),
        ("kernel", kernel),
        ("queue.scheduler", scheduler),
        ("workload.rw", "randread"),
        ("workload.direct", "true"),
        ("workload.bs", "4k"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "32"),
    ];
    if !plug.is_empty() {
        knobs.push(("blk_mq.plug", plug));
    }
    let mut s = sim(&knobs);
    s.run_until(SimTime::from_secs_f64(0.1));
    let r = RunReport::from_sim(&mut s, "t", "t");
    let kblockd: f64 = r.threads.iter().filter(|t| t.name.starts_with("kblockd")).map(|t| t.cpu_pct).sum();
    (r.iops, kblockd)
}

#[test]
fn under_5x_none_dispatches_as_4_0_and_mq_deadline_schedules_from_the_plugs_flush() {
    // none: the submitter hands each request to nvme_queue_rq itself, in either dispatch (no
    // budget, never busy), so the figures are 4.0's.
    let (v4, k4) = under("4.0", "none", "");
    let (v5, k5) = under("5.10", "none", "");
    assert_eq!(v4, v5, "none: 4.0 {v4:.0} IOPS, 5.10 {v5:.0}");
    assert!(k4 == 0.0 && k5 == 0.0, "none runs no queue from kblockd: {k4} {k5} %CPU");
    // mq-deadline (5.x) without a task's plug: every insert goes to the scheduler and the queue
    // is run from kblockd (`blk_mq_sched_insert_request(rq, false, true, true)`), which then
    // does the dispatching.
    let (vo, ko) = under("5.10", "mq-deadline", "off");
    assert!(ko > 5.0 && vo > 0.0, "mq-deadline unplugged: kblockd {ko:.1} %CPU, {vo:.0} IOPS");
    // 5.10 plugs NVMe's requests (nvme_commit_rqs): blk_finish_plug inserts them and runs the
    // queue from fio, and kblockd has nothing to do; fio no longer waits for it to be switched in.
    let (vd, kd) = under("5.10", "mq-deadline", "");
    assert!(kd == 0.0 && vd > 1.5 * vo, "mq-deadline plugged: kblockd {kd:.1} %CPU, {vd:.0} IOPS (unplugged {vo:.0})");
}
