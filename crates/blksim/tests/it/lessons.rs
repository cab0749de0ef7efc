//! Every lesson file parses, and every variant validates and runs.

use blksim::course::lessons;
use blksim::engine::run_one;

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
    let sim = blksim::engine::run_one(&cfg, 1, None);
    assert!(sim.is_finished());
    let top = sim.threads_view();
    let mkfs = top.iter().find(|t| t.name == "mkfs.xfs").expect("the job's process");
    assert_eq!(mkfs.state, 'X');
    let mkfs_id = top.iter().position(|t| t.name == "mkfs.xfs").unwrap() as u32;
    assert!(!sim.core_threads().contains(&Some(mkfs_id)));
}

/// A step that names its seed and a time point opens that run where its longest stall begins
/// (a sweep's slowest run, as the lesson tells it): the time point is exactly the stall's
/// start, and the run stands still for most of its length from there. When the model changes
/// and the stall moves, this says where it is now.
#[test]
fn a_seeded_step_opens_its_run_where_its_longest_stall_begins() {
    let mut seen = 0;
    for l in lessons::all() {
        for (i, st) in l.steps.iter().enumerate() {
            let (Some(seed), Some(t)) = (st.seed, st.t) else { continue };
            seen += 1;
            let cfg = l.config(&st.variant, &[]).unwrap();
            let sim = run_one(&cfg, seed, None);
            let (from_ns, stall_ns) = sim.longest_stall_ns();
            let at = blksim::SimTime::from_secs_f64(t).ns();
            assert_eq!(at, from_ns, "{}.steps[{i}]: t = {t}, but seed {seed}'s longest stall begins at {} s", l.id, from_ns as f64 / 1e9);
            assert!(stall_ns * 2 >= sim.now().ns(), "{}.steps[{i}]: seed {seed} stalls {stall_ns} ns of {} ns", l.id, sim.now().ns());
        }
    }
    assert!(seen > 0, "mq-clone-stall's distribution step opens its slowest seed at its stall");
}

/// The longest stall is the longest span without a job's I/O completing: a run that never
/// stands still has short ones, and the runs that do stall (the sweep's slow tail) have one
/// as long as most of the run.
#[test]
fn the_longest_stall_is_the_span_without_a_jobs_io_completing() {
    let l = lessons::find("mq-clone-stall").unwrap();
    let cfg = l.config("regressed", &[]).unwrap();
    let quick = run_one(&cfg, 1, None);
    let (_, quick_stall) = quick.longest_stall_ns();
    assert!(quick_stall > 0 && quick_stall * 10 < quick.now().ns(), "seed 1: stall {quick_stall} ns of {} ns", quick.now().ns());
    let slow = run_one(&cfg, 5, None);
    let (from, stall) = slow.longest_stall_ns();
    assert!(stall > 1_000_000_000 && from < 1_000_000_000, "seed 5 stalls over a second, early: {stall} ns from {from} ns");
    // Cut short inside the stall, the run counts the stall up to now.
    let cut = run_one(&cfg, 5, Some(2.0));
    assert_eq!(cut.longest_stall_ns(), (from, 2_000_000_000 - from));
}

/// The walk PageDown takes: every step once, in order, and the prediction once, before the
/// step that shows its answer; a lesson that asks after that step is refused by name.
#[test]
fn the_prediction_comes_before_the_step_that_shows_its_answer() {
    use blksim::course::lessons::Stop;
    for l in lessons::all() {
        let stops: Vec<Stop> = (0..l.stops()).map(|i| l.stop(i).expect("a stop")).collect();
        assert_eq!(l.stop(l.stops()), None, "{}: nothing past the last stop", l.id);
        let steps: Vec<usize> = stops.iter().filter_map(|s| if let Stop::Step(k) = s { Some(*k) } else { None }).collect();
        assert_eq!(steps, (0..l.steps.len()).collect::<Vec<_>>(), "{}: every step once, in order", l.id);
        assert_eq!(stops.iter().filter(|s| **s == Stop::Predict).count(), 1, "{}", l.id);
        for k in 0..l.steps.len() {
            assert_eq!(l.stop(l.stop_of_step(k)), Some(Stop::Step(k)), "{}", l.id);
        }
        let p = l.predict_stop().unwrap();
        assert!(p < l.steps.len(), "{}: asked before the last step's comparison, not after it", l.id);
        // Moved one step later, past the step that shows the answer: refused, naming it.
        let mut late = l.clone();
        late.predict.as_mut().unwrap().after_step = l.steps.len() as u32;
        let e = lessons::check(&late).expect_err(&l.id).to_string();
        assert!(e.contains("predict.after_step") && e.contains("already shows its answer"), "{}: {e}", l.id);
        let mut past = l.clone();
        past.predict.as_mut().unwrap().after_step = l.steps.len() as u32 + 1;
        let e = lessons::check(&past).expect_err(&l.id).to_string();
        assert!(e.contains("past the last step"), "{}: {e}", l.id);
    }
}

/// A step's time point past its runs' end (their duration) is refused: the page would open the
/// step at the end, not where its text says.
#[test]
fn a_step_past_its_runs_end_is_refused() {
    for l in lessons::all() {
        let Some(k) = l.steps.iter().position(|st| st.t.is_some()) else { continue };
        let mut late = l.clone();
        let end_s = l.config(&l.steps[k].variant, &[]).unwrap().scenario.duration_s;
        late.steps[k].t = Some(end_s + 0.5);
        let e = lessons::check(&late).expect_err(&l.id).to_string();
        assert!(e.contains(&format!("{}.steps[{k}].t", l.id)) && e.contains("past the run's end"), "{e}");
        // At the end itself: allowed (the step opens on the whole run's numbers).
        late.steps[k].t = Some(end_s);
        if let Err(e) = lessons::check(&late) {
            panic!("{}: a step at the run's end is refused: {e}", l.id);
        }
    }
}

/// A caveat's knobs (`caveat_sets`) are checked like a row's own: a set without the caveat's
/// text, an empty set and a knob the run does not have are refused, naming the row and the set.
#[test]
fn a_caveats_knobs_are_checked_like_the_rows_own() {
    let l = lessons::find("raid5-chunk").unwrap();
    let at = l.fidelity.iter().position(|r| !r.caveat_sets.is_empty()).expect("raid5-chunk has a measured caveat");
    let refused = |edit: &dyn Fn(&mut blksim::course::fidelity::FidelityRow)| {
        let mut bad = l.clone();
        edit(&mut bad.fidelity[at]);
        lessons::check(&bad).expect_err("refused").to_string()
    };
    let e = refused(&|r| r.caveat.clear());
    assert!(e.contains(&format!("raid5-chunk.fidelity[{at}].caveat_sets[0]")) && e.contains("caveat text"), "{e}");
    let e = refused(&|r| r.caveat_sets[0].clear());
    assert!(e.contains("at least one knob"), "{e}");
    let e = refused(&|r| {
        r.caveat_sets.push([("cpu.no_such_knob".to_string(), "1".to_string())].into_iter().collect());
    });
    assert!(e.contains("caveat_sets[1]") && e.contains("cpu.no_such_knob"), "{e}");
}

/// A step that opens a seed has cues of that seed: a single-run cue of another seed would
/// measure a run the class does not see, and is refused; a sweep is allowed.
#[test]
fn a_seeded_steps_cue_measures_that_seed() {
    let l = lessons::find("mq-clone-stall").unwrap();
    let k = l
        .steps
        .iter()
        .position(|st| st.seed.is_some() && st.check.iter().any(|r| r.seeds.is_none()))
        .expect("a seeded step with a single-run cue");
    let j = l.steps[k].check.iter().position(|r| r.seeds.is_none()).unwrap();
    lessons::check(&l).unwrap();
    let mut bad = l.clone();
    bad.steps[k].check[j].seed = None;
    let e = lessons::check(&bad).expect_err("refused").to_string();
    assert!(
        e.contains(&format!("mq-clone-stall.steps[{k}].check[{j}].seed")) && e.contains(&format!("runs seed {}", l.steps[k].seed.unwrap())),
        "{e}"
    );
    // Both a seed and a sweep: refused too.
    let mut both = l.clone();
    both.steps[k].check[j].seeds = Some(10);
    both.steps[k].check[j].stat = Some(blksim::course::fidelity::SweepStat::Max);
    both.steps[k].check[j].over = None;
    let e = lessons::check(&both).expect_err("refused").to_string();
    assert!(e.contains("not both"), "{e}");
}
