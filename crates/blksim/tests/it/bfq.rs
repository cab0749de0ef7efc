//! BFQ on blk-mq as 5.x runs it (`kernel=5.10`, `queue.scheduler=bfq`) against `none`, on one
//! HDD: idling keeps a sequential reader's stream beside a random reader, and weights from
//! ionice split the disk between two sequential readers.

use blksim::course::lessons;
use blksim::engine::run_one;
use blksim::tools::fio_report::FioJobReport;
use blksim::tools::report::RunReport;

/// The job file's jobs under kernel 5.10 on the HDD with `sets` on top, `secs` of seed 1.
fn run(text: &str, sets: &[(&str, &str)], secs: f64) -> Vec<FioJobReport> {
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let mut job = blksim::fio::parse(text).unwrap();
    job.fit_devices(&sandbox.config(&variant, &[]).unwrap().scenario);
    let mut knobs = job.knobs.clone();
    for (k, v) in [("kernel", "5.10"), ("disk.kind", "hdd")].iter().chain(sets) {
        knobs.push((k.to_string(), v.to_string()));
    }
    let cfg = sandbox.config(&variant, &knobs).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = run_one(&cfg, 1, Some(secs));
    RunReport::from_sim(&mut sim, "sandbox", &variant).jobs
}

const SEQ: &str = "[seq]\nrw=read\nbs=128k\nioengine=psync\ndirect=1\n";
const RAND: &str = "[rand]\nrw=randread\nbs=4k\nioengine=psync\ndirect=1\n";

fn bw(jobs: &[FioJobReport], name: &str) -> f64 {
    jobs.iter().find(|j| j.jobname == name).expect("the job").read.bw_bytes as f64
}

/// Each reader has one read in flight (psync), so its queue empties at every completion: only
/// `slice_idle` keeps the sequential reader's queue in service for its next read. Weight
/// raising (`low_latency`, on by default) is turned off in the pairs measured for idling: it
/// serves the newly started random reader at 30× its weight for its first 10.5 s (checked
/// last).
#[test]
fn bfq_idling_keeps_a_sequential_readers_stream_beside_a_random_reader_and_none_does_not() {
    let alone = bw(&run(SEQ, &[("queue.scheduler", "none")], 4.0), "seq");
    let pair = format!("{SEQ}{RAND}");
    let figures = |sets: &[(&str, &str)]| {
        let jobs = run(&pair, sets, 4.0);
        (bw(&jobs, "seq"), bw(&jobs, "rand"))
    };
    let none = figures(&[("queue.scheduler", "none")]);
    let bfq = figures(&[("queue.scheduler", "bfq"), ("bfq.low_latency", "0")]);
    let no_idle = figures(&[("queue.scheduler", "bfq"), ("bfq.slice_idle", "0"), ("bfq.low_latency", "0")]);
    let raised = figures(&[("queue.scheduler", "bfq")]);
    eprintln!("seq alone {:.1} MB/s", alone / 1e6);
    for (what, (s, r)) in [("none", none), ("bfq low_latency=0", bfq), ("bfq slice_idle=0 low_latency=0", no_idle), ("bfq", raised)] {
        eprintln!("{what}: seq {:.1} MB/s ({:.0}% of alone), rand {:.2} MB/s", s / 1e6, 100.0 * s / alone, r / 1e6);
    }
    // none: the two readers' requests alternate on the disk, each sequential read after a
    // seek to the random reader's place.
    assert!(none.0 < 0.1 * alone, "none: seq {} B/s of {alone}", none.0);
    // bfq: the sequential reader keeps the disk for its budget, idling between its reads; the
    // random reader, seeky and slow, is charged its time as max_budget × time / timeout_sync,
    // so it gets about its share of disk time, not of sectors. With max_budget at the default
    // 16384 sectors (8 MiB in 125 ms, less than this disk streams) that share is above half:
    // the sequential reader keeps a third of its rate alone, ten times none's.
    assert!(bfq.0 > 0.25 * alone && bfq.0 > 5.0 * none.0, "bfq: seq {} B/s, alone {alone}, none {}", bfq.0, none.0);
    assert!(bfq.1 > 0.5 * none.1, "bfq does not starve the random reader: {} against none's {}", bfq.1, none.1);
    // Without idling the sequential queue expires as it empties: back to none's alternation.
    assert!(no_idle.0 < 0.1 * alone, "slice_idle=0: seq {} B/s", no_idle.0);
    // low_latency: both readers start weight-raised; the sequential one ends its raising
    // after 120000 sectors, the random one keeps it, and with it the disk.
    assert!(raised.1 > bfq.1 && raised.0 < 0.1 * bfq.0, "low_latency: seq {} rand {} B/s", raised.0, raised.1);
}

/// ionice's levels 0 and 7 weigh 80 and 10 (`bfq_ioprio_to_weight`).
#[test]
fn bfq_splits_two_sequential_readers_by_their_ionice_weights_and_none_evenly() {
    let text = "[global]\nrw=read\nbs=128k\nioengine=psync\ndirect=1\n[hi]\nprio=0\n[lo]\nprio=7\n";
    let ratio = |sets: &[(&str, &str)]| {
        let jobs = run(text, sets, 4.0);
        let (hi, lo) = (bw(&jobs, "hi"), bw(&jobs, "lo"));
        eprintln!("{sets:?}: prio 0 {:.1} MB/s, prio 7 {:.1} MB/s, ratio {:.2}", hi / 1e6, lo / 1e6, hi / lo.max(1.0));
        assert!(lo > 0.0, "{sets:?}: the level-7 reader is served");
        hi / lo
    };
    let none = ratio(&[("queue.scheduler", "none")]);
    assert!((0.85..1.18).contains(&none), "none ignores ionice: {none:.2}");
    // Sectors in proportion to the weights, 8 to 1, within ±25%.
    let bfq = ratio(&[("queue.scheduler", "bfq"), ("bfq.low_latency", "0")]);
    assert!((6.0..10.0).contains(&bfq), "bfq: {bfq:.2}");
    // With weight raising both start at 30× their weight; the level-0 reader reaches
    // max_service_from_wr first and drops back, so the ratio is smaller over 4 s.
    let raised = ratio(&[("queue.scheduler", "bfq")]);
    assert!(raised > 2.0 && raised < bfq, "bfq with low_latency: {raised:.2}");
}

/// bfq's bounds and counts hold between any two events, wherever it runs: NVMe's queue pair
/// per CPU (one bfq over 8 hardware queues), buffered writers (the async queues), an NCQ HDD
/// (`hw_tag`), and the real-time and idle classes beside best effort.
#[test]
fn bfq_keeps_its_invariants_on_nvme_hdd_and_with_async_and_class_queues() {
    let text = "[w]\nrw=write\nbs=64k\nioengine=psync\ndirect=0\n[r]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=8\ndirect=1\nprioclass=1\n[i]\nrw=read\nbs=64k\nioengine=psync\ndirect=1\nprioclass=3\n";
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    for disk in [&[("disk.kind", "nvme"), ("cpu.cores", "8")][..], &[("disk.kind", "hdd"), ("queue.depth", "32")]] {
        let mut job = blksim::fio::parse(text).unwrap();
        job.fit_devices(&sandbox.config(&variant, &[]).unwrap().scenario);
        let mut knobs = job.knobs.clone();
        for (k, v) in [("kernel", "5.10"), ("queue.scheduler", "bfq")].iter().chain(disk) {
            knobs.push((k.to_string(), v.to_string()));
        }
        let cfg = sandbox.config(&variant, &knobs).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = blksim::engine::Sim::new(&cfg, 1);
        let mut events = 0u64;
        let end = blksim::engine::time::SimTime::from_secs_f64(0.5);
        while sim.now() < end && sim.step() {
            sim.check_invariants();
            events += 1;
        }
        let r = RunReport::from_sim(&mut sim, "sandbox", &variant);
        let done: Vec<u64> = r.jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).collect();
        eprintln!("{disk:?}: {events} events, I/Os done per job (w, r, i) {done:?}");
        assert!(done[0] > 0 && done[1] > 0, "{disk:?}: the writer and the real-time reader are served: {done:?}");
    }
}
