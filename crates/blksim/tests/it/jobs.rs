//! Several fio jobs in one run, reported as fio reports them (`run --json`'s `jobs`): each job
//! counted from its own I/Os, named and ordered as in the job file.

use blksim::course::lessons;
use blksim::engine::run_one;
use blksim::tools::fio_report::FioJobReport;
use blksim::tools::report::RunReport;

/// Runs a job file in the sandbox (with `sets` after it) for `secs`: fio's `jobs`, and the report.
fn run(text: &str, sets: &[(&str, &str)], seed: u64, secs: f64) -> (Vec<FioJobReport>, RunReport) {
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let mut job = blksim::fio::parse(text).unwrap();
    job.fit_devices(&sandbox.config(&variant, &[]).unwrap().scenario);
    let mut knobs = job.knobs.clone();
    knobs.extend(sets.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let cfg = sandbox.config(&variant, &knobs).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = run_one(&cfg, seed, Some(secs));
    let r = RunReport::from_sim(&mut sim, "sandbox", &variant);
    (r.jobs.clone(), r)
}

const SSD: &[(&str, &str)] = &[("disk.kind", "ssd"), ("queue.scheduler", "noop")];

#[test]
fn a_reader_and_a_writer_are_reported_as_in_the_file_each_from_its_own_ios() {
    let text = "[global]\nioengine=libaio\ndirect=1\n[reader]\nrw=randread\nbs=4k\niodepth=4\n[writer]\nrw=write\nbs=64k\niodepth=8\n";
    let (jobs, r) = run(text, &[], 1, 1.0);
    let names: Vec<&str> = jobs.iter().map(|j| j.jobname.as_str()).collect();
    assert_eq!(names, ["reader", "writer"]);
    let (reader, writer) = (&jobs[0], &jobs[1]);
    // The reader only reads and the writer only writes: nothing is split from a total.
    assert!(reader.read.total_ios > 0 && reader.write.total_ios == 0, "{reader:?}");
    assert!(writer.write.total_ios > 0 && writer.read.total_ios == 0, "{writer:?}");
    // fio's arithmetic: bw_bytes = 1000 × io_bytes / runtime (ms), bw in KiB/s.
    for d in [&reader.read, &writer.write] {
        assert_eq!(d.bw_bytes, 1000 * d.io_bytes / d.runtime);
        assert_eq!(d.bw, d.bw_bytes / 1024);
        assert!(d.clat_ns.min <= d.clat_ns.percentile["50.000000"] && d.clat_ns.percentile["99.000000"] <= d.clat_ns.max);
        assert_eq!(d.clat_ns.percentile.len(), 17, "fio's default percentile_list");
    }
    assert!(reader.write.clat_ns.percentile.is_empty(), "no samples, no percentiles (as fio)");
    // The jobs' bytes are the run's.
    let secs = r.sim_seconds * 1e6;
    assert_eq!(reader.read.io_bytes as f64, (r.read_mb_s * secs).round());
    assert_eq!(writer.write.io_bytes as f64, (r.write_mb_s * secs).round());
}

/// The page's row per job section (`job_figures`): a section's clones summed, each figure
/// fio's over the same runtime, read and write apart.
#[test]
fn the_page_s_figures_per_job_sum_a_section_s_clones_as_group_reporting_does() {
    let text =
        "[global]\nioengine=libaio\ndirect=1\n[reader]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=2\n[writer]\nrw=write\nbs=64k\niodepth=8\n";
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let mut job = blksim::fio::parse(text).unwrap();
    job.fit_devices(&sandbox.config(&variant, &[]).unwrap().scenario);
    let cfg = sandbox.config(&variant, &job.knobs).unwrap();
    let sim = run_one(&cfg, 1, Some(1.0));
    let (clones, sections) = (blksim::tools::fio_report::fio_jobs(&sim), blksim::tools::fio_report::job_figures(&sim));
    let names: Vec<&str> = sections.iter().map(|j| j.jobname.as_str()).collect();
    assert_eq!(names, ["reader", "writer"], "one row per section, not per clone ({} clones)", clones.len());
    assert_eq!((sections[0].jobs, sections[1].jobs), (2, 1));
    let (reader, writer) = (&sections[0], &sections[1]);
    assert!(reader.read.total_ios > 0 && reader.write.total_ios == 0 && writer.write.total_ios > 0 && writer.read.total_ios == 0);
    // The reader's I/Os are its two clones' I/Os; its bytes over the longer clone's runtime.
    assert_eq!(reader.read.total_ios, clones[0].read.total_ios + clones[1].read.total_ios);
    let runtime = clones[0].job_runtime.max(clones[1].job_runtime);
    assert_eq!(reader.read.bw_bytes, 1000 * (clones[0].read.io_bytes + clones[1].read.io_bytes) / runtime);
    assert_eq!(writer.write.bw_bytes, clones[2].write.bw_bytes);
    assert_eq!(writer.write.p99_ns, clones[2].write.clat_ns.percentile["99.000000"]);
    // The chart's histogram holds every I/O of the section.
    assert_eq!(reader.clat_buckets.iter().map(|b| b.1).sum::<u64>(), reader.read.total_ios);
}

#[test]
fn two_identical_jobs_share_alike_and_unequal_ones_differ_as_they_should() {
    let same = "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\n[a]\n[b]\n";
    for seed in 1..=3 {
        let (jobs, _) = run(same, SSD, seed, 0.5);
        let (a, b) = (jobs[0].read.iops, jobs[1].read.iops);
        assert!(a > 1000.0 && (a - b).abs() / (a + b) < 0.05, "seed {seed}: a {a} b {b} IOPS");
    }
    // Equal queue depths on a bandwidth-bound SSD behind noop: the jobs' I/Os take turns in the
    // one queue, so each gets the same IOPS, and the 64k job 16 times the bytes.
    let unequal = "[global]\nioengine=libaio\ndirect=1\nrw=randread\niodepth=8\n[small]\nbs=4k\n[large]\nbs=64k\n";
    let (jobs, _) = run(unequal, SSD, 1, 0.5);
    let (small, large) = (&jobs[0].read, &jobs[1].read);
    assert!(large.bw > 4 * small.bw, "4k {} KiB/s, 64k {} KiB/s", small.bw, large.bw);
    assert!((large.iops - small.iops).abs() / (large.iops + small.iops) < 0.1, "4k {} IOPS, 64k {} IOPS", small.iops, large.iops);
}

#[test]
fn randrw_mixes_in_rwmixread_s_proportion() {
    for (mix, want) in [("", 0.5), ("rwmixread=70\n", 0.7), ("rwmixwrite=10\n", 0.9)] {
        let text = format!("[m]\nrw=randrw\n{mix}bs=4k\nioengine=libaio\niodepth=8\ndirect=1\n");
        let (jobs, _) = run(&text, SSD, 1, 0.5);
        let (r, w) = (jobs[0].read.total_ios as f64, jobs[0].write.total_ios as f64);
        // Each I/O drawn on its own: within 4 standard deviations of a binomial share.
        let n = r + w;
        let sd = (want * (1.0 - want) / n).sqrt();
        assert!(n > 1000.0 && (r / n - want).abs() < 4.0 * sd, "{mix:?}: {r} reads of {n}");
    }
}

#[test]
fn group_reporting_stonewall_startdelay_and_rate_iops_act_as_fio_s_do() {
    // numjobs=3 with group_reporting: one entry counting three clones, their bytes together.
    let text = "[g]\nrw=randread\nbs=4k\ndirect=1\nnumjobs=3\ngroup_reporting\n[solo]\nrw=read\nbs=64k\ndirect=1\nnumjobs=2\n";
    let (jobs, r) = run(text, SSD, 1, 0.3);
    let shape: Vec<(&str, u32)> = jobs.iter().map(|j| (j.jobname.as_str(), j.jobs)).collect();
    assert_eq!(shape, [("g", 3), ("solo", 1), ("solo", 1)]);
    let g_bytes: u64 = r.processes.iter().filter(|p| p.name.starts_with("g.")).map(|p| p.bytes).sum();
    assert_eq!(jobs[0].read.io_bytes, g_bytes);
    // The second group starts when the first is done: its runtime is what is left of the run.
    let text = "[first]\nrw=read\nbs=64k\ndirect=1\nsize=8m\n[second]\nstonewall\nrw=read\nbs=64k\ndirect=1\n";
    let (jobs, _) = run(text, SSD, 1, 1.0);
    assert_eq!((jobs[0].groupid, jobs[1].groupid), (0, 1));
    assert_eq!(jobs[0].read.io_bytes, 8 << 20);
    assert!(
        jobs[0].job_runtime + jobs[1].job_runtime <= 1000 && jobs[1].job_runtime > 0,
        "{} + {} ms",
        jobs[0].job_runtime,
        jobs[1].job_runtime
    );
    // startdelay and rate_iops: 200 IOPS from 0.5 s on, for the half second left.
    let text = "[paced]\nrw=randread\nbs=4k\ndirect=1\nrate_iops=200\nstartdelay=0.5\n";
    let (jobs, _) = run(text, SSD, 1, 1.0);
    let d = &jobs[0].read;
    assert!((d.runtime as i64 - 500).abs() <= 1 && (d.iops - 200.0).abs() < 5.0, "{} ms, {} IOPS", d.runtime, d.iops);
    // thinktime: 1 ms after each completion caps a sync reader near 1000 IOPS.
    let (jobs, _) = run("[t]\nrw=randread\nbs=4k\ndirect=1\nthinktime=1000\n", SSD, 1, 0.5);
    assert!(jobs[0].read.iops < 1000.0 && jobs[0].read.iops > 500.0, "{} IOPS", jobs[0].read.iops);
}

#[test]
fn a_link_carries_every_job_of_a_job_file() {
    use blksim::course::link::LinkState;
    let text = "[global]\nioengine=libaio\ndirect=1\nruntime=2\n[reader]\nrw=randread\nbs=4k\n[writer]\nrw=write\nbs=64k\n[third]\nrw=randrw\nrwmixread=70\nthinktime=100\n";
    let job = blksim::fio::parse(text).unwrap();
    let st = LinkState { lesson: lessons::SANDBOX.to_string(), overrides: job.knobs.clone(), ..LinkState::default() };
    let back = LinkState::decode(&st.encode()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, st);
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let cfg = sandbox.config(&sandbox.first_variant().name, &back.overrides).unwrap();
    let names: Vec<&str> = cfg.scenario.all_jobs().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["reader", "writer", "third"]);
    assert_eq!((cfg.scenario.jobs[1].fio.rwmixread, cfg.scenario.jobs[1].fio.thinktime), (70, 100));
}

/// ionice under cfq: two sequential readers of one disk, each waiting on its own read (psync),
/// so each has the disk for its slice and idles in it for its next read.
#[test]
fn cfq_serves_readers_by_their_io_priority_and_noop_ignores_it() {
    let pair = |a: &str, b: &str| format!("[global]\nioengine=psync\ndirect=1\nrw=read\nbs=64k\n[a]\n{a}[b]\n{b}");
    let bytes = |text: &str, sets: &[(&str, &str)]| {
        let (jobs, _) = run(text, sets, 1, 3.0);
        (jobs[0].read.io_bytes as f64, jobs[1].read.io_bytes as f64)
    };
    for rules in ["simple", "2.6.20"] {
        let cfq: &[(&str, &str)] = &[("disk.kind", "hdd"), ("queue.scheduler", "cfq"), ("queue.cfq", rules)];
        let (a, b) = bytes(&pair("", ""), cfq);
        assert!((a - b).abs() / (a + b) < 0.1, "{rules}: equal priorities share alike: {a} {b}");
        // Level 0's slice is 1.8 × 100 ms and level 7's 0.4 ×: 4.5 to 1 in disk time at least
        // (2.6.20's level walk also serves level 0 more often).
        let (hi, lo) = bytes(&pair("prio=0\n", "prio=7\n"), cfq);
        assert!(hi > 3.5 * lo && lo > 0.0, "{rules}: prio 0 {hi} B, prio 7 {lo} B");
        // The idle class is served only when no other queue has requests: a streaming
        // best-effort reader always has one.
        let (be, idle) = bytes(&pair("", "prioclass=3\n"), cfq);
        assert!(idle < 0.02 * be, "{rules}: best effort {be} B, idle class {idle} B");
        // Real time before best effort. 2.6.30+ also lets a real-time request preempt a
        // best-effort slice, so the real-time reader keeps the disk. 2.6.20 does not
        // (`cfq_should_preempt` preempts only the idle class): the real-time reader is
        // chosen first whenever both wait, but its read arriving during the other's slice
        // waits that slice out, so the two take turns.
        let (rt, be) = bytes(&pair("prioclass=1\n", ""), cfq);
        if rules == "simple" {
            assert!(be < 0.1 * rt, "{rules}: real time {rt} B, best effort {be} B");
        } else {
            assert!(rt > be && be > 0.5 * rt, "{rules}: real time {rt} B, best effort {be} B");
        }
    }
    // noop has no notion of priority: the two readers share alike.
    let (hi, lo) = bytes(&pair("prio=0\n", "prio=7\n"), &[("disk.kind", "hdd"), ("queue.scheduler", "noop")]);
    assert!((hi - lo).abs() / (hi + lo) < 0.15, "noop: {hi} {lo}");
}
