//! `kernel=VERSION`: one knob for every era rule; an explicit knob beats it in any order.

use std::process::Command;

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(args).output().expect("run blksim");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("run --json is JSON")
}

fn era(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["run", "sandbox", "--duration", "0.001", "--json"];
    a.extend_from_slice(args);
    run_json(&a)
}

#[test]
fn kernel_sets_each_eras_rules_and_run_json_shows_them() {
    let none = era(&[]);
    assert_eq!(none["kernel"], serde_json::Value::Null);
    assert_eq!(none["era"]["queue.plugging"], "task", "without kernel, the knobs' own defaults");
    assert_eq!(none["era"]["vm.writeback"], "per-bdi");
    for (k, want) in [
        (
            "2.6.2",
            &[
                ("queue.plugging", "2.6.2"),
                ("queue.scheduler", "deadline"),
                ("vm.dirty_ratio", "40"),
                ("queue.batch_hard_limit", "false"),
                ("dm.congestion_callout", "false"),
                ("vm.writeback", "pdflush"),
            ][..],
        ),
        (
            "2.6.20",
            &[
                ("queue.plugging", "2.6.20"),
                ("queue.scheduler", "cfq"),
                ("queue.cfq", "2.6.20"),
                ("vm.readahead", "2.6.20"),
                ("vm.dirty_ratio", "40"),
                ("queue.rq_affinity", "0"),
            ],
        ),
        (
            "2.6.32",
            &[
                ("vm.writeback", "per-bdi"),
                ("vm.dirty_ratio", "20"),
                ("vm.bdi_dirty_limit", "writeout"),
                ("queue.rq_affinity", "1"),
                ("iosched.quantum", "4"),
                ("cpu.scheduler", "fair"),
            ],
        ),
        (
            "4.0",
            &[
                ("queue.plugging", "task"),
                ("cpu.kblockd_highpri", "true"),
                ("dm.clone_alloc", "sleep"),
                ("blk_mq.rerun_after_splice", "false"),
                ("iosched.quantum", "8"),
                ("scsi.run_queue", "fixed"),
            ],
        ),
    ] {
        let v = era(&["--set", &format!("kernel={k}")]);
        assert_eq!(v["kernel"], k);
        for (knob, value) in want {
            assert_eq!(v["era"][knob], *value, "kernel={k}: {knob}");
        }
    }
    // Any version in the range maps by the rules' ranges: 2.6.18 is 2.6.20's plug, 3.2 the task plug.
    assert_eq!(era(&["--set", "kernel=2.6.18"])["era"]["queue.plugging"], "2.6.20");
    assert_eq!(era(&["--set", "kernel=3.2"])["era"]["queue.plugging"], "task");
    assert_eq!(era(&["--set", "kernel=2.6.39-rc4"])["era"]["scsi.run_queue"], "kblockd");
    // A default elevator the model lacks is named where the run says what it leaves out.
    let gaps = era(&["--set", "kernel=2.6.10"])["model_gaps"].to_string();
    assert!(gaps.contains("anticipatory"), "{gaps}");
}

#[test]
fn an_explicit_knob_beats_kernel_in_either_order() {
    for args in [["--set", "queue.plugging=task", "--set", "kernel=2.6.20"], ["--set", "kernel=2.6.20", "--set", "queue.plugging=task"]] {
        let v = era(&args);
        assert_eq!(v["era"]["queue.plugging"], "task", "{args:?}");
        assert_eq!(v["era"]["vm.readahead"], "2.6.20", "{args:?}: the rest follow the kernel");
    }
    // A lesson's front matter is explicit too: nr-requests (2.6.2) keeps its plug under 4.0.
    let v = run_json(&["run", "nr-requests", "--set", "kernel=4.0", "--duration", "0.001", "--json"]);
    assert_eq!((v["era"]["queue.plugging"].as_str(), v["era"]["vm.writeback"].as_str()), (Some("2.6.2"), Some("pdflush")));
    assert_eq!(v["era"]["cpu.kblockd_highpri"], "true", "what it does not set follows 4.0");
    let v = run_json(&["run", "nr-requests", "--duration", "0.001", "--json"]);
    assert_eq!(v["kernel"], "2.6.2");
}

#[test]
fn a_bad_version_is_refused_with_what_is_allowed_and_an_elevator_the_kernel_lacks_is_named() {
    for bad in ["kernel=6.7", "kernel=4.21", "kernel=2.6.1", "kernel=2.4.31", "kernel=banana"] {
        let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(["run", "sandbox", "--set", bad]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(err.contains("kernel: '") && err.contains("from 2.6.2 to 6.6"), "{bad}: {err}");
    }
    // From 5.0 a legacy elevator is refused, with what the kernel allows.
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "sandbox", "--set", "queue.scheduler=cfq", "--set", "kernel=5.4"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("queue.scheduler") && err.contains("kernel 5.4 allows none, mq-deadline, bfq or kyber"), "{err}");
    // An elevator the kernel lacks runs, and the run says so.
    let gaps = era(&["--set", "kernel=2.6.20", "--set", "queue.scheduler=none"])["model_gaps"].to_string();
    assert!(gaps.contains("kernel 2.6.20 has no blk-mq SCSI disks") && gaps.contains("3.17"), "{gaps}");
    // Without a kernel every elevator the model has is accepted.
    era(&["--set", "queue.scheduler=mq-deadline"]);
}

#[test]
fn a_link_carries_kernel() {
    use blksim::course::link::LinkState;
    let f = "#/sandbox?v=1&kernel=2.6.20&queue.plugging=task&seed=1";
    let st = LinkState::decode(f).expect("a link with kernel");
    assert_eq!(st.encode(), f);
    let l = blksim::course::lessons::find("sandbox").unwrap();
    let cfg = l.config("custom", &st.overrides).unwrap();
    assert_eq!(cfg.scenario.kernel.as_deref(), Some("2.6.20"));
    assert_eq!(blksim::scenario::get_knob(&cfg.scenario, "queue.plugging").as_deref(), Some("task"));
    assert_eq!(blksim::scenario::get_knob(&cfg.scenario, "vm.readahead").as_deref(), Some("2.6.20"));
    // A bad version is named and dropped; the rest stays.
    let (st, e) = LinkState::decode_lenient("#/lesson/mq-clone-stall?v=1&kernel=9.9&seed=4").unwrap();
    assert_eq!((e.unwrap().field.as_str(), st.seed, st.overrides.len()), ("kernel", 4, 0));
    // An old link without kernel opens as it did.
    assert!(LinkState::decode("#/lesson/scsi-starved?v=1&variant=regressed&seed=7").is_ok());
}

#[test]
fn dm_multipath_is_bio_based_up_to_2_6_30_unless_set() {
    assert_eq!(era(&[])["era"]["dm.mpath"], "request", "without kernel, today's request-based dm");
    assert_eq!(era(&["--set", "kernel=2.6.18"])["era"]["dm.mpath"], "bio");
    assert_eq!(era(&["--set", "kernel=2.6.30"])["era"]["dm.mpath"], "bio");
    assert_eq!(era(&["--set", "kernel=2.6.31"])["era"]["dm.mpath"], "request");
    for order in [["dm.mpath=request", "kernel=2.6.18"], ["kernel=2.6.18", "dm.mpath=request"]] {
        let v = era(&["--set", "stack=dm", "--set", order[0], "--set", order[1]]);
        assert_eq!(v["era"]["dm.mpath"], "request", "{order:?}");
    }
}

#[test]
fn a_device_nodes_readahead_is_a_bio_per_page_to_3_17_and_mpage_from_3_18() {
    // Bios merged into each request (iostat's rrqm/s over r/s) of one buffered reader of sda.
    let merged = |args: &[&str]| {
        let mut a = vec!["run", "sandbox", "--duration", "0.5", "--json", "--set", "workload.direct=false"];
        for s in args {
            a.extend(["--set", s]);
        }
        let v = run_json(&a);
        let d = &v["devices"][0];
        (v["era"]["vm.blkdev_readahead"].clone(), d["rrqm_s"].as_f64().unwrap() / d["r_s"].as_f64().unwrap())
    };
    let (rule, per_page) = merged(&["kernel=3.17"]);
    assert_eq!(rule, "readpage");
    assert!(per_page > 30.0, "4 KiB bios merged into 256 KiB requests: {per_page}");
    let (rule, mpage) = merged(&["kernel=3.18"]);
    assert_eq!(rule, "mpage");
    assert!(mpage < 2.0, "a window's pages in a few large bios: {mpage}");
    let (rule, explicit) = merged(&["kernel=3.18", "vm.blkdev_readahead=readpage"]);
    assert_eq!(rule, "readpage");
    assert!(explicit > 30.0, "an explicit rule beats the kernel's: {explicit}");
}
