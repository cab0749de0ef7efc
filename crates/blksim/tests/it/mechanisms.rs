//! One test per mechanism of the slice, showing the mechanism itself.

use blksim::scenario::{set_knob, Scenario};
use blksim::trace::Action;
use blksim::{Sim, SimTime};

fn sim(knobs: &[(&str, &str)]) -> Sim {
    let mut s = Scenario::default();
    for (k, v) in knobs {
        set_knob(&mut s, k, v).unwrap();
    }
    Sim::new(&s.validate().unwrap(), 1)
}

fn actions(sim: &Sim) -> Vec<Action> {
    sim.trace().since(0).0.map(|r| r.action).collect()
}

#[test]
fn a_full_request_pool_puts_the_submitter_to_sleep_until_a_request_is_freed() {
    // 8 libaio jobs with iodepth 4 against nr_requests 4: most submitters must sleep (S).
    let mut s = sim(&[
        ("workload.numjobs", "8"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "4"),
        ("queue.nr_requests", "4"),
        ("workload.rw", "randread"),
        ("workload.bs", "4k"),
    ]);
    s.run_until(SimTime(200_000_000));
    let a = actions(&s);
    let sleeps = a.iter().filter(|&&x| x == Action::S).count();
    assert!(sleeps > 10, "only {sleeps} sleeps");
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    // Each sleep and wakeup is a context switch, plus the I/O waits themselves.
    assert!(r.cs_per_s > r.iops, "cs/s {} vs IOPS {}", r.cs_per_s, r.iops);
}

#[test]
fn the_tag_map_caps_what_the_device_holds() {
    let mut s = sim(&[("workload.numjobs", "16"), ("workload.rw", "randread"), ("workload.bs", "4k"), ("queue.depth", "2")]);
    let mut max_in_device = 0i64;
    let mut in_device = 0i64;
    let mut cursor = 0;
    while s.now() < SimTime(300_000_000) && s.step() {
        for r in s.trace().since(cursor).0 {
            match r.action {
                Action::D => in_device += 1,
                Action::C => in_device -= 1,
                _ => {}
            }
            max_in_device = max_in_device.max(in_device);
            cursor = r.seq + 1;
        }
    }
    assert_eq!(max_in_device, 2);
}

#[test]
fn a_bio_larger_than_max_sectors_is_split() {
    let mut s = sim(&[("workload.bs", "1m"), ("disk.max_sectors_kb", "128")]);
    s.run_until(SimTime(50_000_000));
    let a = actions(&s);
    let q = a.iter().filter(|&&x| x == Action::Q).count();
    let x = a.iter().filter(|&&x| x == Action::X).count();
    assert!(q >= 8 && x == q - q / 8, "Q {q} X {x}");
}

#[test]
fn a_bio_merges_only_into_a_request_still_waiting_in_the_elevator() {
    // One sequential libaio job with a tiny tag depth: bios queue behind a busy device and merge.
    let mut merged = sim(&[("workload.ioengine", "libaio"), ("workload.iodepth", "16"), ("workload.bs", "4k"), ("queue.depth", "1")]);
    merged.run_until(SimTime(100_000_000));
    let m = actions(&merged).iter().filter(|&&x| x == Action::M).count();
    assert!(m > 100, "only {m} merges with a busy device");
    // With deep tags every request is dispatched at once: nothing waits, nothing merges.
    let mut drained = sim(&[("workload.ioengine", "libaio"), ("workload.iodepth", "16"), ("workload.bs", "4k"), ("queue.depth", "64")]);
    drained.run_until(SimTime(100_000_000));
    let m2 = actions(&drained).iter().filter(|&&x| x == Action::M).count();
    assert_eq!(m2, 0, "merges happened though no request waited");
}

#[test]
fn a_busy_host_starves_devices_and_a_completion_runs_them() {
    // 4 disks, can_queue 2: devices must wait for the host, yet all make progress.
    let mut s = sim(&[
        ("disks", "4"),
        ("workload.numjobs", "4"),
        ("host.can_queue", "2"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "4"),
        ("workload.rw", "randread"),
        ("workload.bs", "4k"),
    ]);
    s.run_until(SimTime(500_000_000));
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    for d in &r.devices {
        assert!(d.r_s > 10.0, "{} starved: {} r/s", d.name, d.r_s);
    }
}
