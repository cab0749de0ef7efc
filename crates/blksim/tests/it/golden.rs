//! The golden outputs: every lesson's `compare --seed 1 --json` and `run --seed 3 --duration 2
//! --json`, the mq-clone-stall sweep of 200 seeds and `fidelity --json`, as the CLI prints them,
//! byte for byte. A change that only moves code must leave them as they are; a change that
//! moves the model records them afresh (`scripts/golden`) in its own commit and says why.

use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/outputs"))
}

/// Every golden file and the CLI arguments that print it.
pub fn cases() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for l in blksim::course::lessons::all() {
        let id = l.id.to_string();
        out.push((format!("compare-{id}.json"), vec!["compare".into(), id.clone(), "--seed".into(), "1".into(), "--json".into()]));
        let run = ["run", &id, "--seed", "3", "--duration", "2", "--json"];
        out.push((format!("run-{id}.json"), run.iter().map(|s| s.to_string()).collect()));
    }
    let sweep = ["sweep", "mq-clone-stall", "--seeds", "200", "--json"];
    out.push(("sweep-mq-clone-stall.json".into(), sweep.iter().map(|s| s.to_string()).collect()));
    out.push(("fidelity.json".into(), vec!["fidelity".into(), "--json".into()]));
    out
}

fn cli(args: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    blksim::cli::main(args, &mut out).unwrap_or_else(|e| panic!("blksim {}: {e}", args.join(" ")));
    out
}

#[test]
fn the_cli_prints_the_golden_outputs_byte_for_byte() {
    let cases = cases();
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .expect("tests/golden/outputs")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut named: Vec<String> = cases.iter().map(|(f, _)| f.clone()).collect();
    named.sort();
    assert_eq!(files, named, "tests/golden/outputs holds exactly one file per golden case");
    let mut moved = Vec::new();
    for (file, args) in &cases {
        let want = std::fs::read(dir().join(file)).expect("golden file");
        if cli(args) != want {
            moved.push(format!("blksim {}", args.join(" ")));
        }
    }
    assert!(moved.is_empty(), "these outputs differ from tests/golden/outputs (scripts/golden records them afresh): {moved:#?}");
}
