//! fio's own example job files (Debian's `fio-examples`, which `scripts/setup test` installs)
//! as a user pastes them into the sandbox or gives them to `blksim run --job-file`: each one
//! runs, with every option the model lacks named, or is refused with one clear line.

use blksim::course::lessons;
use blksim::engine::run_one;
use std::collections::BTreeMap;

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

#[test]
fn every_fio_example_job_file_runs_or_says_in_one_line_why_not() {
    let dir = std::fs::read_dir(EXAMPLES)
        .unwrap_or_else(|e| panic!("{EXAMPLES}: {e}: Debian's fio-examples package is missing; scripts/setup test installs it"));
    let mut files: Vec<_> = dir.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "fio")).collect();
    files.sort();
    assert!(files.len() >= 80, "only {} job files in {EXAMPLES}", files.len());
    let sandbox = lessons::find(lessons::SANDBOX).unwrap();
    let variant = sandbox.first_variant().name.clone();
    let base = sandbox.config(&variant, &[]).unwrap();
    let (mut ran, mut refused) = (0, Vec::new());
    let mut not_modelled: BTreeMap<String, u32> = BTreeMap::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let mut job = match blksim::fio::parse(&text) {
            Ok(job) => job,
            Err(e) => {
                let msg = e.to_string();
                assert_eq!(msg.lines().count(), 1, "{name}: {msg}");
                refused.push(format!("{name}: {msg}"));
                continue;
            }
        };
        job.fit_devices(&base.scenario);
        for item in &job.not_modelled {
            // The option's name (before '='), to count what fio's examples use that blkviz lacks.
            let option =
                if item.starts_with("the jobs after") { "(a second job section)" } else { item.split(['=', ' ']).next().unwrap_or(item) };
            *not_modelled.entry(option.to_string()).or_default() += 1;
        }
        match sandbox.config(&variant, &job.knobs) {
            Ok(cfg) => {
                let sim = run_one(&cfg, 1, Some(0.01));
                assert!(sim.now().ns() > 0 || sim.is_finished(), "{name}: the run did not start");
                ran += 1;
            }
            Err(e) => {
                let msg = e.to_string();
                assert_eq!(msg.lines().count(), 1, "{name}: {msg}");
                refused.push(format!("{name}: {msg}"));
            }
        }
    }
    println!("fio examples: {ran} of {} run; refused: {refused:?}", files.len());
    println!("options not modelled (files using them): {not_modelled:?}");
    // Every file fio ships is a workload blkviz can at least approximate: none is refused.
    assert!(refused.is_empty(), "refused: {refused:?}");
}

/// dd reads or writes in order, one block at a time: the sandbox's default job (named dd)
/// turned into a libaio random reader is fio's, in top and on the diagram ("fio ×4", not
/// "dd ×4"); a job that dd can run keeps its name, and a name the user gave stands.
#[test]
fn a_job_dd_cannot_run_is_named_fio() {
    use blksim::scenario::{set_knob, Scenario};
    let names = |sets: &[(&str, &str)]| {
        let mut s = Scenario::default();
        for (k, v) in sets {
            set_knob(&mut s, k, v).unwrap();
        }
        let sim = blksim::Sim::new(&s.validate().unwrap(), 1);
        let mut n: Vec<String> = sim.threads_view().into_iter().filter(|t| t.name == "dd" || t.name == "fio").map(|t| t.name).collect();
        n.dedup();
        n
    };
    assert_eq!(names(&[("workload.numjobs", "4")]), ["dd"]);
    assert_eq!(names(&[("workload.numjobs", "4"), ("workload.rw", "randread")]), ["fio"]);
    assert_eq!(names(&[("workload.ioengine", "libaio"), ("workload.iodepth", "32")]), ["fio"]);
    let mut s = Scenario::default();
    set_knob(&mut s, "workload.name", "mkfs.xfs").unwrap();
    set_knob(&mut s, "workload.rw", "randwrite").unwrap();
    assert_eq!(s.validate().unwrap().scenario.workload.name, "mkfs.xfs");
}
