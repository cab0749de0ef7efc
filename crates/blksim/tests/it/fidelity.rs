//! The fidelity scoreboard (`blksim fidelity`): measured afresh, it must equal the committed
//! `lessons/fidelity.json`, which the app's Fidelity page and lesson Status tables show. A model
//! change that moves any figure fails here until `scripts/fidelity` rewrites the file, so the
//! diff of that file is the change's effect on every lesson at once.

use blksim::course::fidelity;

#[test]
fn the_committed_scoreboard_is_what_the_model_measures_now() {
    let fresh = fidelity::to_json(&fidelity::run_all(), &fidelity::run_sections());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lessons/fidelity.json");
    let committed = std::fs::read_to_string(path).expect("lessons/fidelity.json exists (scripts/fidelity writes it)");
    if fresh != committed {
        let moved: Vec<String> = fidelity::run_all()
            .iter()
            .chain(&fidelity::run_sections())
            .flat_map(|l| l.rows.clone())
            .zip(fidelity::committed().iter().chain(&fidelity::committed_sections()).flat_map(|l| l.rows.clone()))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("{} / {}: {} (committed {})", a.lesson, a.name, a.measured, b.measured))
            .collect();
        panic!("lessons/fidelity.json is stale: run scripts/fidelity and commit the result. Moved: {moved:?}");
    }
}

#[test]
fn every_regression_lesson_has_rows_and_every_row_has_a_reason_while_it_misses() {
    for l in blksim::course::lessons::all() {
        // A primer may have rows too: public figures for the mechanism it teaches.
        assert!(l.kind != "regression" || !l.fidelity.is_empty(), "{}: a regression lesson has fidelity rows", l.id);
    }
    for l in fidelity::committed().into_iter().chain(fidelity::committed_sections()) {
        for r in &l.rows {
            assert!(r.holds || !r.why_missed.is_empty(), "{} / {} misses without saying why", l.lesson, r.name);
        }
        let predicted = l.rows.iter().filter(|r| !r.fitted).count() as u32;
        assert_eq!(l.predicted_rows, predicted);
        assert_eq!(l.reproduced, l.rows.iter().filter(|r| !r.fitted).all(|r| r.holds));
    }
}

/// A caveat names a simplification a figure rests on, and is needed only where the figure would
/// leave its band without it: each caveat carries the kernel's rule as knobs (`caveat_sets`),
/// the scoreboard measures the row again under each, and every such figure must fall outside
/// the band. A model change that brings one back inside fails here: the caveat has gone stale.
#[test]
fn every_caveat_is_measured_and_each_of_its_figures_leaves_the_band() {
    let cues = blksim::course::cues::committed();
    let predict = cues.iter().flat_map(|c| c.predict.clone());
    let mut seen = 0;
    for r in fidelity::committed().into_iter().chain(fidelity::committed_sections()).flat_map(|l| l.rows).chain(predict) {
        if r.caveat.is_empty() {
            assert!(r.caveat_runs.is_empty(), "{} / {}: figures for a caveat it does not have", r.lesson, r.name);
            continue;
        }
        assert!(!r.caveat_runs.is_empty(), "{} / {}: a caveat without caveat_sets (its figure would be typed)", r.lesson, r.name);
        for c in &r.caveat_runs {
            seen += 1;
            assert_eq!(c.holds, (r.band.lo..=r.band.hi).contains(&c.measured), "{} / {}", r.lesson, r.name);
            assert!(
                !c.holds,
                "{} / {}: with {:?} it reads {}, inside {}–{}: the caveat is not needed",
                r.lesson, r.name, c.set, c.measured, r.band.lo, r.band.hi
            );
        }
        assert!(r.caveat_line().contains(&format!("{} {}", r.caveat_runs[0].measured, r.unit)), "{}", r.caveat_line());
    }
    assert!(seen >= 4, "the board's caveats (mq-clone-stall's two rules, raid5-chunk's idle test): {seen} figures");
}

#[test]
fn a_row_holds_exactly_when_its_measurement_is_inside_its_band() {
    for l in fidelity::committed().into_iter().chain(fidelity::committed_sections()) {
        for r in &l.rows {
            assert_eq!(r.holds, (r.band.lo..=r.band.hi).contains(&r.measured), "{} / {}", l.lesson, r.name);
        }
    }
}

/// The lessons' cues (`blksim fidelity --cues`, `lessons/cues.json`): each step's "watch" line
/// and each prediction's answer carry check rows measured like the scoreboard's. The committed
/// file must be what the model measures now; every step's cue must hold (the step panel states
/// it about the run on screen); a prediction's row may miss only with a reason, which the
/// reveal shows beside the report's figure.
#[test]
fn every_cue_agrees_with_the_model_and_the_committed_cues_are_current() {
    let fresh = blksim::course::cues::run_all();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lessons/cues.json");
    let committed = std::fs::read_to_string(path).expect("lessons/cues.json exists (scripts/fidelity writes it)");
    assert!(blksim::course::cues::to_json(&fresh) == committed, "lessons/cues.json is stale: run scripts/fidelity and commit the result");
    for l in blksim::course::lessons::all() {
        let c = fresh.iter().find(|c| c.lesson == l.id).expect("every lesson has cues");
        for (i, (st, rows)) in l.steps.iter().zip(&c.steps).enumerate() {
            assert!(!st.watch.is_empty() && !st.check.is_empty(), "{} step {}: a step says what to watch and how to check it", l.id, i + 1);
            for r in rows {
                assert!(
                    r.holds,
                    "{} step {}: the cue '{}' does not hold: {} is outside {}–{}",
                    l.id,
                    i + 1,
                    r.name,
                    r.measured,
                    r.band.lo,
                    r.band.hi
                );
            }
        }
        if let Some(p) = &l.predict {
            assert!(!p.check.is_empty(), "{}: the prediction's answer is checked against the model", l.id);
        }
        for r in &c.predict {
            assert!(r.holds || !r.why_missed.is_empty(), "{}: the prediction's row '{}' misses without saying why", l.id, r.name);
        }
    }
}

#[test]
fn the_devices_section_has_a_dozen_rows_each_with_its_source_setup_and_sandbox_link() {
    let d = fidelity::devices();
    fidelity::check(&d).unwrap();
    assert!(d.fidelity.len() >= 12, "{} rows", d.fidelity.len());
    let board = fidelity::committed_sections();
    let sec = board.iter().find(|s| s.lesson == fidelity::DEVICES).expect("the devices section is on the board");
    assert_eq!(sec.rows.len(), d.fidelity.len());
    for r in &sec.rows {
        assert!(!r.source.is_empty() && !r.setup.is_empty(), "{}: no source or setup", r.name);
        let link = r.link.as_deref().expect("a sandbox link");
        // The link opens: every knob in it passes the same checks as --set.
        let st = blksim::course::link::LinkState::decode(link).unwrap_or_else(|e| panic!("{}: {link}: {e:?}", r.name));
        assert_eq!(st.lesson, blksim::course::lessons::SANDBOX);
    }
    // At least two rows per device model.
    for kind in ["hdd", "ssd", "ramlun", "hwraid5"] {
        let n = d.fidelity.iter().filter(|r| r.set.get("disk.kind").map_or("hdd", |k| k.as_str()) == kind).count();
        assert!(n >= 2, "{kind}: {n} rows");
    }
}

/// Every devices row names its source's identity (a URL, a Message-ID or a DOI); the section
/// counts its independent sources (distinct `source_id`s) in `--json` and in the heading
/// `blksim fidelity devices` prints.
#[test]
fn every_devices_row_names_its_source_id_and_the_section_counts_its_independent_sources() {
    let d = fidelity::devices();
    for r in &d.fidelity {
        assert!(!r.source_id.trim().is_empty(), "{}: no source_id", r.name);
    }
    let distinct: std::collections::BTreeSet<&str> = d.fidelity.iter().map(|r| r.source_id.as_str()).collect();
    let board = fidelity::committed_sections();
    let sec = board.iter().find(|s| s.lesson == fidelity::DEVICES).expect("the devices section is on the board");
    assert_eq!(sec.sources, Some(distinct.len() as u32), "the committed count is the rows' distinct source_ids");
    assert_eq!(fidelity::independent_sources(&d.fidelity), distinct.len() as u32);
    let heading = sec.section_heading();
    assert!(heading.contains(&format!("{} rows from {} independent sources", d.fidelity.len(), distinct.len())), "{heading}");
    for l in fidelity::committed() {
        assert_eq!(l.sources, None, "{}: a lesson has no source count", l.lesson);
    }
}
