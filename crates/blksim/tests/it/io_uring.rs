//! fio's io_uring engine against libaio: batched submission, completions reaped from the ring,
//! and a wait that wakes once for `iodepth_batch_complete_min` completions.

use crate::mechanisms::sim;
use blksim::{RunReport, Sim, SimTime};

/// A 4 KiB random reader at iodepth 32 on a RAM LUN under 5.10, one second, with `extra` knobs.
fn run(engine: &str, extra: &[(&str, &str)]) -> (Sim, RunReport) {
    let mut knobs = vec![
        ("kernel", "5.10"),
        ("disk.kind", "ramlun"),
        ("workload.rw", "randread"),
        ("workload.bs", "4k"),
        ("workload.direct", "true"),
        ("workload.iodepth", "32"),
        ("workload.ioengine", engine),
    ];
    knobs.extend_from_slice(extra);
    let mut s = sim(&knobs);
    s.run_until(SimTime(1_000_000_000));
    let r = RunReport::from_sim(&mut s, "t", "t");
    (s, r)
}

const BATCH8: &[(&str, &str)] = &[("workload.iodepth_batch_submit", "8"), ("workload.iodepth_batch_complete_min", "8")];

fn ios(r: &RunReport) -> f64 {
    r.iops * r.sim_seconds
}

/// The fio process's (context switches, CPU %).
fn fio_thread(r: &RunReport) -> (u64, f64) {
    let t = r.threads.iter().find(|t| t.name == "fio").expect("the job's process");
    (t.cs, t.cpu_pct)
}

#[test]
fn batched_io_uring_enters_the_kernel_less_than_once_per_io_and_switches_less_than_libaio() {
    let (uring_sim, uring) = run("io_uring", BATCH8);
    let (_, libaio) = run("libaio", BATCH8);
    // Each io_uring_enter commits 8 SQEs or waits for 8 CQEs: about 2 calls per 8 I/Os, where
    // libaio makes one io_submit per I/O.
    let enters = uring_sim.io_uring_enters() as f64;
    assert!(enters > 0.0 && enters < ios(&uring) / 3.0, "{enters} io_uring_enter calls for {} I/Os", ios(&uring));
    // The job sleeps once per 8 completions, not once per completion.
    let per_io = |r: &RunReport| fio_thread(r).0 as f64 / ios(r);
    assert!(per_io(&uring) < per_io(&libaio) / 3.0, "fio's switches per I/O: io_uring {} vs libaio {}", per_io(&uring), per_io(&libaio));
    // On a RAM LUN the submitting CPU is the limit: fewer calls and wakeups are more I/Os per
    // CPU second (both submit under 5.10's plug, whose flush runs the queue from fio).
    let per_cpu = |r: &RunReport| r.iops / (r.cpu.sys_pct + r.cpu.softirq_pct);
    assert!(per_cpu(&uring) > 1.25 * per_cpu(&libaio), "IOPS per CPU %: io_uring {} vs libaio {}", per_cpu(&uring), per_cpu(&libaio));
}

#[test]
fn at_fios_defaults_io_uring_submits_each_io_alone_as_libaio_does() {
    // iodepth_batch_submit=1 and iodepth_batch_complete_min=1 (fio's defaults): one
    // io_uring_enter per I/O and a wakeup per completion, the calls the model charges libaio.
    let (uring_sim, uring) = run("io_uring", &[]);
    let (_, libaio) = run("libaio", &[]);
    assert_eq!((uring.iops, uring.cs_per_s, uring.cpu.sys_pct), (libaio.iops, libaio.cs_per_s, libaio.cpu.sys_pct));
    assert!(uring_sim.io_uring_enters() as f64 >= ios(&uring), "a commit per I/O");
}

#[test]
fn a_full_queue_waits_for_iodepth_batch_complete_min_completions() {
    // A slow disk: the job is asleep whenever its queue is full, so its wakeups are its waits.
    let slow = |min: &'static str| {
        let knobs = [
            ("disk.kind", "hdd"),
            ("workload.iodepth_batch_complete_min", min),
            ("workload.iodepth_batch_submit", min),
            ("queue.scheduler", "none"),
        ];
        run("io_uring", &knobs)
    };
    let (_, one) = slow("1");
    let (_, four) = slow("4");
    let per_io = |r: &RunReport| fio_thread(r).0 as f64 / ios(r);
    assert!(per_io(&one) > 0.8, "one wakeup per completion: {}", per_io(&one));
    assert!(per_io(&four) < 0.35 && per_io(&four) > 0.2, "one wakeup per 4 completions: {}", per_io(&four));
}

#[test]
fn before_5_4_each_completion_wakes_the_waiting_job_to_count_the_ring() {
    let slow = |kernel: &'static str| {
        let knobs = [
            ("kernel", kernel),
            ("disk.kind", "hdd"),
            ("workload.iodepth_batch_complete_min", "4"),
            ("workload.iodepth_batch_submit", "4"),
            ("queue.scheduler", "none"),
        ];
        run("io_uring", &knobs)
    };
    let ((s52, v52), (s510, v510)) = (slow("5.2"), slow("5.10"));
    assert_eq!(s52.config().scenario.io_uring.cq_wake, blksim::scenario::knob_table_uring::CqWake::Each);
    assert_eq!(s510.config().scenario.io_uring.cq_wake, blksim::scenario::knob_table_uring::CqWake::MinComplete);
    // 5.2's wait_event_interruptible: a switch in at each CQE (three of four to sleep again);
    // 5.10's io_should_wake: one per four.
    let per_io = |r: &RunReport| fio_thread(r).0 as f64 / ios(r);
    assert!(per_io(&v52) > 0.8 && per_io(&v510) < 0.35, "fio's switches per I/O: 5.2 {} vs 5.10 {}", per_io(&v52), per_io(&v510));
    // The waits are the same calls: the wakeups in between stay in the kernel.
    let enters_per_io = |s: &Sim, r: &RunReport| s.io_uring_enters() as f64 / ios(r);
    assert!((enters_per_io(&s52, &v52) - enters_per_io(&s510, &v510)).abs() < 0.05);
}

#[test]
fn io_uring_runs_are_deterministic() {
    let (a_sim, a) = run("io_uring", BATCH8);
    let (b_sim, b) = run("io_uring", BATCH8);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_eq!(a_sim.io_uring_enters(), b_sim.io_uring_enters());
}

#[test]
fn fio_job_files_set_the_batching_options_by_their_fio_names() {
    let job = blksim::fio::parse(
        "[a]\nioengine=io_uring\niodepth=32\niodepth_batch=16\niodepth_batch_complete=8\niodepth_batch_complete_max=16\n",
    )
    .unwrap();
    let knob = |k: &str| job.knobs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(knob("workload.iodepth_batch_submit"), Some("16"));
    assert_eq!(knob("workload.iodepth_batch_complete_min"), Some("8"));
    assert_eq!(knob("workload.iodepth_batch_complete_max"), Some("16"));
    assert!(job.notes().is_none_or(|n| !n.contains("iodepth_batch")), "{:?}", job.notes());
}
