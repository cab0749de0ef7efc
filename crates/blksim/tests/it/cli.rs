//! The CLI as users run it: the real binary, its exit codes and its one-line errors.

use std::process::Command;

fn blksim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(args).output().expect("run blksim");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_bad(args: &[&str], names: &str) {
    let (code, out, err) = blksim(args);
    assert_eq!(code, 2, "{args:?} should exit 2; stderr: {err}");
    assert!(out.is_empty(), "{args:?} printed to stdout: {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}: expected one line, got: {err}");
    assert!(err.contains(names), "{args:?}: '{err}' does not name '{names}'");
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_problem() {
    assert_bad(&["run", "no-such-lesson"], "no-such-lesson");
    assert_bad(&["run", "scsi-starved", "--set", "queue.depth=-3"], "queue.depth");
    assert_bad(&["run", "scsi-starved", "--set", "queue.colour=red"], "queue.colour");
    assert_bad(&["run", "scsi-starved", "--seed", "x1"], "--seed");
    assert_bad(&["run", "scsi-starved", "--variant", "nope"], "nope");
    assert_bad(&["run", "scsi-starved", "--duration", "0"], "--duration");
    assert_bad(&["run", "scsi-starved", "--set", "workload.bs=1000"], "workload.bs");
    assert_bad(&["run", "scsi-starved", "--set", "disks=100000"], "disks");
    assert_bad(&["run", "scsi-starved", "--frobnicate"], "--frobnicate");
    assert_bad(&["sweep", "scsi-starved", "--seeds", "0"], "--seeds");
    assert_bad(&["run", "dm-sg-lists", "--set", "cpu.irq_cpus=4"], "cpu.irq_cpus");
    assert_bad(&["run", "dm-sg-lists", "--set", "cpu.irq_cpus=4,x"], "cpu.irq_cpus");
    assert_bad(&["run", "dm-sg-lists", "--set", "cpu.irq_cpus=4,99"], "cpu.irq_cpus");
    assert_bad(&["explode"], "explode");
    assert_bad(&[], "usage");
}

#[test]
fn the_depth_message_says_what_is_allowed() {
    let (_, _, err) = blksim(&["run", "scsi-starved", "--set", "queue.depth=-3"]);
    assert_eq!(err.trim(), "blksim: queue.depth: '-3' is not allowed; expected an integer from 1 to 1024 (tags)");
}

#[test]
fn lessons_lists_every_lesson_with_its_variants_and_says_which_are_not_calibrated() {
    let (code, out, _) = blksim(&["lessons", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = v.as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "anatomy-of-a-request",
            "queue-depth-and-the-elevator",
            "dm-sg-lists",
            "raid5-chunk",
            "mq-clone-stall",
            "nr-requests",
            "scsi-starved"
        ]
    );
    for l in v.as_array().unwrap() {
        assert!(l["variants"].as_array().unwrap().len() >= 2);
        // A lesson that is not calibrated says why: the mechanisms it lacks (model gaps), or,
        // when everything it asks for is modelled, its text's "Status in blkviz" section says
        // which bands are not met.
        if !l["calibrated"].as_bool().unwrap() {
            let path = format!("{}/../../lessons/{}.md", env!("CARGO_MANIFEST_DIR"), l["id"].as_str().unwrap());
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                !l["model_gaps"].as_array().unwrap().is_empty() || text.contains("## Status in blkviz"),
                "{} is uncalibrated but says nothing about why",
                l["id"]
            );
        }
    }
    let (_, text, _) = blksim(&["lessons"]);
    assert!(text.contains("NOT YET CALIBRATED"));
}

#[test]
fn run_json_has_the_contract_fields() {
    let (code, out, err) = blksim(&["run", "scsi-starved", "--seed", "7", "--duration", "0.5", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for f in [
        "lesson",
        "variant",
        "seed",
        "sim_seconds",
        "events",
        "throughput_mb_s",
        "read_mb_s",
        "write_mb_s",
        "iops",
        "cs_per_s",
        "intr_per_s",
        "cpu",
        "threads",
        "devices",
        "fairness",
        "jobs",
        "completion_s",
        "latency_ms",
    ] {
        assert!(v.get(f).is_some(), "missing {f}");
    }
    assert_eq!(v["variant"], "before");
    assert_eq!(v["devices"].as_array().unwrap().len(), 12);
    for f in ["rrqm_s", "wrqm_s", "r_s", "w_s", "rkb_s", "wkb_s", "avgrq_sz", "avgqu_sz", "await_ms", "util_pct"] {
        assert!(v["devices"][0].get(f).is_some(), "device field {f}");
    }
    for f in ["user_pct", "sys_pct", "softirq_pct", "iowait_pct", "idle_pct"] {
        assert!(v["cpu"].get(f).is_some(), "cpu field {f}");
    }
}

#[test]
fn compare_runs_every_variant_and_link_prints_the_fragment() {
    let (code, out, _) = blksim(&["compare", "scsi-starved", "--duration", "0.2", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&String> = v["variants"].as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 3);
    let (code, out, _) = blksim(&["link", "dm-sg-lists", "--variant", "workaround", "--set", "dm.max_sectors_kb=96", "--seed", "9"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "#/lesson/dm-sg-lists?v=1&variant=workaround&dm.max_sectors_kb=96&seed=9");
    // An A/B link: B is checked like the variant.
    let (code, out, _) = blksim(&["link", "scsi-starved", "--variant", "regressed", "--b", "fixed"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "#/lesson/scsi-starved?v=1&variant=regressed&b=fixed&seed=1");
    let (code, _, err) = blksim(&["link", "scsi-starved", "--b", "bogus"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("blksim: --b: ") && err.contains("bogus"), "{err}");
}

#[test]
fn sweep_reports_the_completion_distribution() {
    let (code, out, err) = blksim(&["sweep", "nr-requests", "--seeds", "3", "--set", "workload.size=8m", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["runs"], 3);
    assert_eq!(v["completed_runs"], 3);
    let p50 = v["completion_s"]["p50"].as_f64().unwrap();
    let max = v["completion_s"]["max"].as_f64().unwrap();
    assert!(p50 > 0.0 && max >= p50);
}

#[test]
fn irq_affinity_decides_which_ksoftirqd_saturates() {
    // dm-sg-lists routes both HBAs to CPU 4; sent to CPU 1, the completion work moves with them.
    let (code, out, err) = blksim(&["run", "dm-sg-lists", "--set", "cpu.irq_cpus=1,1", "--duration", "1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let busiest = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| a["cpu_pct"].as_f64().unwrap().total_cmp(&b["cpu_pct"].as_f64().unwrap()))
        .unwrap();
    assert_eq!(busiest["name"], "ksoftirqd/1");
}
