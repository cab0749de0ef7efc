//! blk-mq as 5.x runs it (`kernel=5.10`, `blk_mq.dispatch = 5.0`): mq-deadline on the disk
//! itself, behind SCSI's dispatch budget, against `none`'s software queues.

use blksim::course::lessons;
use blksim::engine::run_one;
use blksim::tools::fio_report::FioJobReport;
use blksim::tools::report::RunReport;

/// A streaming buffered writer (1 MiB writes, written back by the flusher) and a reader of
/// one 4 KiB direct read at a time, on one HDD without NCQ (`queue.depth=1`, so the elevator
/// alone orders what the disk does), under `kernel` with `scheduler`, 8 s of seed 1: the
/// reader's report, the run's, and the dispatch the kernel's era chose.
fn writer_and_reader_on(kernel: &str, scheduler: &str) -> (FioJobReport, RunReport, blksim::scenario::MqDispatch) {
    let text = "[writer]\nrw=write\nbs=1m\nioengine=sync\ndirect=0\n[reader]\nrw=randread\nbs=4k\nioengine=sync\ndirect=1\n";
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let mut job = blksim::fio::parse(text).unwrap();
    job.fit_devices(&sandbox.config(&variant, &[]).unwrap().scenario);
    let mut knobs = job.knobs.clone();
    for (k, v) in [("kernel", kernel), ("disk.kind", "hdd"), ("queue.depth", "1"), ("queue.scheduler", scheduler)] {
        knobs.push((k.into(), v.into()));
    }
    let cfg = sandbox.config(&variant, &knobs).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = run_one(&cfg, 1, Some(8.0));
    let r = RunReport::from_sim(&mut sim, "sandbox", &variant);
    let reader = r.jobs.iter().find(|j| j.jobname == "reader").expect("the reader").clone();
    (reader, r, cfg.scenario.blk_mq.dispatch)
}

/// The pair under kernel 5.10, which runs 5.x's dispatch.
fn writer_and_reader(scheduler: &str) -> (FioJobReport, RunReport) {
    let (reader, r, dispatch) = writer_and_reader_on("5.10", scheduler);
    assert_eq!(dispatch, blksim::scenario::MqDispatch::V5_0, "kernel 5.10 runs 5.x's dispatch");
    (reader, r)
}

const MS: u64 = 1_000_000;

#[test]
fn mq_deadline_bounds_a_readers_p99_beside_a_streaming_writer_and_none_does_not() {
    let (dd, dd_run) = writer_and_reader("mq-deadline");
    let (none, none_run) = writer_and_reader("none");
    let p99 = |j: &FioJobReport| j.read.clat_ns.percentile["99.000000"];
    let (dd_p99, none_p99) = (p99(&dd), p99(&none));
    eprintln!(
        "reader p99: mq-deadline {:.1} ms ({} reads), none {:.1} ms ({} reads)",
        dd_p99 as f64 / 1e6,
        dd.read.total_ios,
        none_p99 as f64 / 1e6,
        none.read.total_ios
    );
    // The writer streams in both: the disk is busy writing all along.
    for r in [&dd_run, &none_run] {
        let writer = r.jobs.iter().find(|j| j.jobname == "writer").unwrap();
        assert!(writer.write.bw_bytes > 50_000_000, "{}", writer.write.bw_bytes);
    }
    // mq-deadline: a read leaves the elevator before the waiting writes; it waits at most for
    // the write on the disk and a write batch (fifo_batch 16 requests of at most 512 KiB,
    // about 6 ms each on this disk: some 100 ms) when writes_starved (2) read batches have
    // passed them over. That is below read_expire (500 ms), which caps the wait in any case
    // (an expired read starts the next batch): the p99 is under read_expire, and above one
    // write's service, as reads do wait for a batch.
    assert!(dd_p99 < 500 * MS, "mq-deadline p99 {dd_p99} ns, over read_expire");
    assert!(dd_p99 > 20 * MS, "mq-deadline p99 {dd_p99} ns: no read waited for a write batch");
    // none: one software queue in arrival order, and the budget admits one command at a
    // time: a read waits behind every write queued before it (up to the driver's tags of
    // 512 KiB requests), so its p99 is past read_expire and several times mq-deadline's.
    assert!(none_p99 > 500 * MS, "none p99 {none_p99} ns");
    assert!(none_p99 > 3 * dd_p99, "none p99 {none_p99} ns against mq-deadline {dd_p99} ns");
    assert!(none.read.total_ios < dd.read.total_ios, "the reader gets fewer reads done under none");
}

#[test]
fn mq_deadline_on_5_10_orders_as_deadline_on_2_6_20_does() {
    // The same algorithm (block/deadline-iosched.c, block/mq-deadline.c): the reader's mean
    // completion latency under mq-deadline (5.10, blk-mq) is within 25% of deadline's (2.6.20,
    // the legacy queue), with the same tunables and no NCQ.
    let (dd, _) = writer_and_reader("mq-deadline");
    let (legacy, _, _) = writer_and_reader_on("2.6.20", "deadline");
    let (a, b) = (dd.read.clat_ns.mean, legacy.read.clat_ns.mean);
    eprintln!("reader mean: mq-deadline 5.10 {:.1} ms, deadline 2.6.20 {:.1} ms", a / 1e6, b / 1e6);
    assert!((a - b).abs() <= 0.25 * b, "mq-deadline {a} ns against deadline {b} ns");
}

/// Eight clients of 4 KiB O_DIRECT random reads and writes under bfq on one HDD behind a SCSI
/// host with `hw` hardware queues over 64 CPUs, kernel `kernel`, 4 s of seed 1: the report.
fn bfq_clients(kernel: &str, hw: &str) -> RunReport {
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let knobs: Vec<(String, String)> = [
        ("kernel", kernel),
        ("disk.kind", "hdd"),
        ("queue.scheduler", "bfq"),
        ("cpu.cores", "64"),
        ("host.nr_hw_queues", hw),
        ("workload.numjobs", "8"),
        ("workload.rw", "randrw"),
        ("workload.bs", "4k"),
        ("workload.direct", "true"),
        ("workload.ioengine", "sync"),
        ("workload.size", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let cfg = sandbox.config(&variant, &knobs).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = run_one(&cfg, 1, Some(4.0));
    RunReport::from_sim(&mut sim, "sandbox", &variant)
}

#[test]
fn bfq_idling_re_arms_every_hardware_queue_to_5_11_and_only_the_current_cpus_from_5_12() {
    let calls = |r: &RunReport| r.funccount["blk_mq_delay_run_hw_queues"];
    let (mq, sq, fixed) = (bfq_clients("5.10", "64"), bfq_clients("5.10", "1"), bfq_clients("5.12", "64"));
    // To 5.11 each of the 64 queues' 3 ms re-run finds bfq idling and re-arms all 64: the
    // calls go up by tens of times. From 5.12 (blk_mq_get_sq_hctx) a run re-arms only its own.
    assert!(calls(&mq) > 10.0 * calls(&sq), "64 queues {} calls/s, one {}", calls(&mq), calls(&sq));
    assert!(calls(&mq) > 5.0 * calls(&fixed), "64 queues {} calls/s, with the fix {}", calls(&mq), calls(&fixed));
    assert!(calls(&fixed) < 10.0 * calls(&sq), "with the fix {} calls/s, one queue {}", calls(&fixed), calls(&sq));
    assert_eq!(fixed.era["blk_mq.run_hw_queues"], "sq_hctx");
    assert_eq!(mq.era["blk_mq.run_hw_queues"], "all");
}
