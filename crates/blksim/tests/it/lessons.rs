//! Every lesson file parses, and every variant validates and runs.

use blksim::cli::run_one;
use blksim::lessons;

#[test]
fn every_lesson_and_variant_runs() {
    for l in lessons::all() {
        assert!(l.variants.len() >= 2, "{}", l.id);
        lessons::check(&l).unwrap_or_else(|e| panic!("{}: {e}", l.id));
        assert!(!l.steps.is_empty() && l.predict.is_some(), "{}: a lesson has steps and a prediction", l.id);
        for v in &l.variants {
            let cfg = l.config(&v.name, &[]).unwrap_or_else(|e| panic!("{}/{}: {e}", l.id, v.name));
            let sim = run_one(&cfg, 1, Some(0.05));
            assert!(sim.totals().events > 0, "{}/{} ran no event", l.id, v.name);
            sim.check_invariants();
        }
    }
}

/// A run ends at its last job's last I/O; top then shows the job's process as exited, not as
/// running, and no CPU runs it.
#[test]
fn a_finished_run_shows_its_jobs_as_exited() {
    let cfg = lessons::find("mq-clone-stall").unwrap().config("regressed", &[]).unwrap();
    let sim = blksim::cli::run_one(&cfg, 1, None);
    assert!(sim.is_finished());
    let top = sim.threads_view();
    let mkfs = top.iter().find(|t| t.name == "mkfs.xfs").expect("the job's process");
    assert_eq!(mkfs.state, 'X');
    let mkfs_id = top.iter().position(|t| t.name == "mkfs.xfs").unwrap() as u32;
    assert!(!sim.core_threads().contains(&Some(mkfs_id)));
}
