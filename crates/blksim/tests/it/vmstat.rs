//! vmstat's columns as procps reads them (`r` = runnable, `b` = asleep in `io_schedule`), and
//! the run report's means over whole seconds.

use blksim::{Sim, SimTime};

fn raid5_chunk(variant: &str) -> blksim::RunReport {
    let l = blksim::course::lessons::find("raid5-chunk").unwrap();
    let cfg = l.config(variant, &[]).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    // Five seconds: over the first three the herd has not formed yet (vmstat r reads 0 there,
    // 16.8 over five, 38 in the lesson's steady state).
    sim.run_until(SimTime::from_secs_f64(5.0));
    blksim::RunReport::from_sim(&mut sim, "raid5-chunk", variant)
}

#[test]
fn stripe_waiters_show_in_neither_r_nor_b_and_page_waiters_in_b() {
    // The oversized chunk: most of the 100 readers wait for a stripe head in plain schedule()
    // (get_active_stripe), so b stays small; the herd is caught runnable in r.
    let regressed = raid5_chunk("regressed");
    assert!(regressed.vmstat.b < 20.0, "b {}", regressed.vmstat.b);
    assert!(regressed.vmstat.r > 10.0, "r {}", regressed.vmstat.r);
    // The chunk that fits: the readers wait for their pages in io_schedule (lock_page): b.
    let workaround = raid5_chunk("workaround");
    assert!(workaround.vmstat.b > 80.0, "b {}", workaround.vmstat.b);
    assert!(workaround.vmstat.r < 5.0, "r {}", workaround.vmstat.r);
    for r in [&regressed, &workaround] {
        // Over five whole seconds the means of the per-second lines are the run's rates.
        assert!((r.vmstat.cs - r.cs_per_s).abs() < 1e-6 * r.cs_per_s.max(1.0), "{} vs {}", r.vmstat.cs, r.cs_per_s);
        assert!((r.vmstat.intr - r.intr_per_s).abs() < 1e-6 * r.intr_per_s.max(1.0));
        let total = r.vmstat.us + r.vmstat.sy + r.vmstat.id + r.vmstat.wa;
        assert!((total - 100.0).abs() < 0.01, "us+sy+id+wa = {total}");
        assert!(r.progressing_jobs_mean > 0.0 && r.progressing_jobs_mean <= 100.0);
    }
}
