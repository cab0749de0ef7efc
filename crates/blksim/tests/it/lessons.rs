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
