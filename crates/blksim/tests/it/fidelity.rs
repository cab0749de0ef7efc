//! The issues' fidelity bands, on the CLI's path (`run_one` + `RunReport`, seed 1, the lesson's
//! default duration). A band the model does not reach yet is an ignored test whose reason says
//! what is missing: `cargo test -- --ignored` shows where the model stands.

use blksim::cli::run_one;
use blksim::{lessons, RunReport};

fn run(lesson: &str, variant: &str) -> RunReport {
    let l = lessons::find(lesson).unwrap();
    let cfg = l.config(variant, &[]).unwrap();
    let mut sim = run_one(&cfg, 1, None);
    RunReport::from_sim(&mut sim, lesson, variant)
}

fn within(what: &str, x: f64, lo: f64, hi: f64) {
    assert!((lo..=hi).contains(&x), "{what} = {x:.2}, band {lo}–{hi}");
}

fn sum_dm(r: &RunReport, f: impl Fn(&blksim::tools::stats::Iostat) -> f64) -> f64 {
    r.devices.iter().filter(|d| d.name.starts_with("dm-")).map(f).sum()
}

#[test]
fn dm_sg_lists_regressed_is_cpu_bound_in_one_ksoftirqd_with_long_bio_lists() {
    let r = run("dm-sg-lists", "regressed");
    within("regressed MB/s", r.throughput_mb_s, 450.0, 750.0);
    let busiest = r.threads.iter().filter(|t| t.name.starts_with("ksoftirqd/")).map(|t| t.cpu_pct).fold(0.0, f64::max);
    assert!(busiest >= 90.0, "busiest ksoftirqd at {busiest:.1}%");
    let merges_per_request = sum_dm(&r, |d| d.rrqm_s) / sum_dm(&r, |d| d.r_s);
    assert!(merges_per_request >= 100.0, "rrqm/s ÷ r/s = {merges_per_request:.1}");
}

#[test]
#[ignore = "band not met: the workaround reaches ~1.8 GB/s (ratio ~2.85). With 32 page bios per request the recount still costs ~1.4 µs per page on the one interrupted CPU, so ksoftirqd/4 stays at 100%; a fixed per-visit cost cannot give both the report's 600 MB/s and an unbound 2.8 GB/s (see the lesson's Status)"]
fn dm_sg_lists_workaround_band_and_ratio() {
    let reg = run("dm-sg-lists", "regressed");
    let wa = run("dm-sg-lists", "workaround");
    within("workaround MB/s", wa.throughput_mb_s, 2100.0, 3500.0);
    within("workaround ÷ regressed", wa.throughput_mb_s / reg.throughput_mb_s, 3.5, 6.0);
}

#[test]
fn raid5_chunk_workaround_band() {
    // 100 readers' files on the report's 84 GB array (mdadm -z 12000000): short seeks.
    let wa = run("raid5-chunk", "workaround");
    within("workaround MB/s", wa.throughput_mb_s, 200.0, 350.0);
}

#[test]
#[ignore = "bands not met: the stripe-cache case is not slower (~210 MB/s against the aligned ~218): raid5d's page reads merge into ~22 KiB member requests and the disks stay busy; readahead thrashing, which the report names, is modelled but costs both variants only a few percent at the report's memory; context switches come out ~24k/s, below 30k, and 49x the aligned case's, above 30x"]
fn raid5_chunk_bands() {
    let reg = run("raid5-chunk", "regressed");
    let wa = run("raid5-chunk", "workaround");
    within("regressed MB/s", reg.throughput_mb_s, 60.0, 130.0);
    within("workaround MB/s", wa.throughput_mb_s, 200.0, 350.0);
    within("throughput ratio", wa.throughput_mb_s / reg.throughput_mb_s, 2.0, 4.5);
    within("regressed cs/s", reg.cs_per_s, 30_000.0, 80_000.0);
    within("cs ratio", reg.cs_per_s / wa.cs_per_s, 8.0, 30.0);
}

#[test]
fn raid5_chunk_regressed_goes_through_the_stripe_cache_and_switches_far_more() {
    // What does hold: the oversized chunk sends every page through raid5d, and the context
    // switches per second are many times the aligned case's.
    let reg = run("raid5-chunk", "regressed");
    let wa = run("raid5-chunk", "workaround");
    let raid5d = |r: &RunReport| r.threads.iter().find(|t| t.name == "md0_raid5").unwrap().cpu_pct;
    assert!(raid5d(&reg) > 5.0 && raid5d(&wa) == 0.0);
    assert!(reg.cs_per_s > 8.0 * wa.cs_per_s, "cs/s {} vs {}", reg.cs_per_s, wa.cs_per_s);
}

#[test]
fn scsi_starved_regressed_is_unfair_and_the_fix_restores_before() {
    let before = run("scsi-starved", "before");
    let regressed = run("scsi-starved", "regressed");
    let fixed = run("scsi-starved", "fixed");
    assert!(regressed.fairness <= before.fairness - 0.05, "fairness {} vs {}", regressed.fairness, before.fairness);
    assert!(regressed.throughput_mb_s < before.throughput_mb_s);
    assert!(fixed.throughput_mb_s >= 0.95 * before.throughput_mb_s);
}

#[test]
#[ignore = "bands not met: regressed/before throughput is 0.27 (the completing device's own queue always takes the freed host slot and the writers keep three queues full, so nine disks never dispatch), and context switches fall (0.32x) because the starved writers sleep in get_request_wait; see the lesson's Status"]
fn scsi_starved_throughput_and_context_switch_bands() {
    let before = run("scsi-starved", "before");
    let regressed = run("scsi-starved", "regressed");
    within("regressed ÷ before MB/s", regressed.throughput_mb_s / before.throughput_mb_s, 0.5, 0.8);
    within("cs ratio", regressed.cs_per_s / before.cs_per_s, 2.5, 6.0);
}

#[test]
fn nr_requests_512_leaves_a_backlog_in_the_elevator_where_small_writes_merge() {
    let reg = run("nr-requests", "regressed");
    let wa = run("nr-requests", "workaround");
    let sda = |r: &RunReport| r.devices.iter().find(|d| d.name == "sda").unwrap().clone();
    let (w, r) = (sda(&wa), sda(&reg));
    assert!(w.wrqm_s / w.w_s >= 4.0, "workaround: wrqm/s ÷ w/s = {:.1}", w.wrqm_s / w.w_s);
    assert!(r.wrqm_s <= 0.05 * r.w_s, "regressed: {} merges/s against {} w/s", r.wrqm_s, r.w_s);
}

#[test]
fn nr_requests_workaround_band() {
    let wa = run("nr-requests", "workaround");
    within("workaround MB/s", wa.throughput_mb_s, 57.0, 95.0);
    let sda = wa.devices.iter().find(|d| d.name == "sda").unwrap();
    assert!(sda.wrqm_s / sda.w_s >= 4.0);
}

#[test]
#[ignore = "bands not met: regressed runs at ~28 MB/s (ratio ~2.8): every late 4 KiB write costs the in-order controller two partial-stripe writes with reads (~5 ms each), and the model's late writes, though fewer than the report's 1 in 32, cost more than the real 3ware paid"]
fn nr_requests_regressed_bands() {
    let reg = run("nr-requests", "regressed");
    let wa = run("nr-requests", "workaround");
    within("regressed MB/s", reg.throughput_mb_s, 32.0, 54.0);
    within("ratio", wa.throughput_mb_s / reg.throughput_mb_s, 1.4, 2.2);
}

fn completion_s(variant: &str, seed: u64) -> f64 {
    let l = lessons::find("mq-clone-stall").unwrap();
    let cfg = l.config(variant, &[]).unwrap();
    run_one(&cfg, seed, None).finished_at().expect("the burst finishes").ns() as f64 / 1e9
}

fn tail_ratio(variant: &str) -> (f64, f64) {
    let mut t: Vec<f64> = (1..=200).map(|seed| completion_s(variant, seed)).collect();
    t.sort_by(f64::total_cmp);
    (t[100], t[199] / t[100])
}

#[test]
fn mq_clone_stall_fixed_and_direct_have_no_tail_and_the_burst_median_is_in_band() {
    let (median, _) = tail_ratio("regressed");
    within("regressed median completion (s)", median, 0.005, 0.100);
    for v in ["fixed", "direct"] {
        let (_, ratio) = tail_ratio(v);
        assert!(ratio <= 5.0, "{v}: max ÷ median = {ratio:.1}");
    }
}

#[test]
#[ignore = "band not met: no stall emerges. blk_mq_alloc_request runs the hardware queue before kdmwork sleeps, so the tags it waits for belong to dispatched clones whose frees are credited to it; what held tags without a queue run in 2015 is not in the sources we could read, and blkviz does not invent it (see the lesson's Status)"]
fn mq_clone_stall_regressed_has_a_tail_hundreds_of_times_the_median() {
    let (_, ratio) = tail_ratio("regressed");
    assert!(ratio >= 100.0, "max ÷ median = {ratio:.1}");
}
