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
    // A knob of a layer the lesson's stack lacks changes nothing: refused, with why.
    assert_bad(&["run", "nr-requests", "--set", "md.chunk_kb=64"], "md.chunk_kb: changes nothing here: no md device with stack=lvm");
    assert_bad(&["link", "nr-requests", "--set", "iosched.slice_idle=0"], "queue.scheduler is deadline");
    assert_bad(&["compare", "scsi-starved", "--set", "dm.paths=2", "--duration", "0.1"], "dm.paths");
    // In a comparison a knob need act in one variant only: mq-clone-stall's `direct` has no dm.
    let (code, _, err) = blksim(&["compare", "mq-clone-stall", "--set", "dm.clone_alloc=nowait", "--duration", "0.1"]);
    assert_eq!(code, 0, "{err}");
    assert_bad(&["explode"], "explode");
    assert_bad(&[], "usage");
    // A negative number reaches the option's own check, which says the range.
    for (args, names) in [
        (&["run", "scsi-starved", "--seed", "-1"][..], "expected a whole number from 0"),
        (&["run", "scsi-starved", "--duration", "-1"], "expected seconds from"),
        (&["sweep", "scsi-starved", "--seeds", "-5"], "--seeds"),
        // Too short to run a nanosecond.
        (&["run", "scsi-starved", "--duration", "1e-300"], "expected seconds from 0.000001"),
        // The duration knob has the same bounds, in the same words.
        (&["run", "scsi-starved", "--set", "duration=1e-9"], "duration: '1e-9' is not allowed; expected seconds from 0.000001 to 3600"),
        // Both ends given: one of them, please.
        (&["run", "scsi-starved", "--set", "duration=2", "--duration", "3"], "--duration and --set duration= both given"),
    ] {
        assert_bad(args, names);
    }
    // A trace with no records says so, rather than printing empty tables.
    let empty = std::env::temp_dir().join(format!("blkviz-empty-{}.blktrace.0", std::process::id()));
    std::fs::write(&empty, b"").unwrap();
    assert_bad(&["replay", empty.to_str().unwrap()], "no records");
    std::fs::remove_file(&empty).unwrap();
}

#[test]
fn help_and_version_answer_on_stdout_for_every_subcommand() {
    let (code, out, _) = blksim(&["--version"]);
    assert_eq!((code, out.trim()), (0, concat!("blksim ", env!("CARGO_PKG_VERSION"))));
    let (code, out, _) = blksim(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Examples:") && out.contains("fidelity"), "{out}");
    for sub in ["lessons", "knobs", "run", "compare", "sweep", "link", "fidelity", "trace"] {
        let (code, out, err) = blksim(&[sub, "--help"]);
        assert_eq!(code, 0, "{sub} --help: {err}");
        assert!(out.contains(&format!("blksim {sub}")) && out.contains("Examples:"), "{sub} --help: {out}");
    }
    // The knobs with their ranges, in the help of --set.
    let (_, out, _) = blksim(&["run", "--help"]);
    assert!(out.contains("queue.nr_requests") && out.contains("an integer from 4 to"), "{out}");
}

#[test]
fn a_mistyped_option_is_named_with_the_options_allowed_and_the_likely_one() {
    let (code, _, err) = blksim(&["run", "scsi-starved", "--sed", "3"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'--sed'") && err.contains("--seed") && err.contains("allowed:"), "{err}");
}

#[test]
fn the_depth_message_says_what_is_allowed() {
    let (_, _, err) = blksim(&["run", "scsi-starved", "--set", "queue.depth=-3"]);
    assert_eq!(err.trim(), "blksim: queue.depth: '-3' is not allowed; expected an integer from 1 to 1024 (tags)");
}

#[test]
fn lessons_lists_every_lesson_with_its_variants_and_its_measured_fidelity() {
    let (code, out, _) = blksim(&["lessons", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = v.as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "anatomy-of-a-request",
            "queue-depth-and-the-elevator",
            "writer-starves-reader",
            "dm-sg-lists",
            "raid5-chunk",
            "mq-clone-stall",
            "nr-requests",
            "scsi-starved",
            "bfq-many-hw-queues"
        ]
    );
    let kinds: Vec<&str> = v.as_array().unwrap().iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[..3], ["primer", "primer", "primer"], "the first three are primers");
    assert!(kinds[3..].iter().all(|&k| k == "regression"), "{kinds:?}");
    for l in v.as_array().unwrap() {
        assert!(l["variants"].as_array().unwrap().len() >= 2);
        // A regression has a scoreboard of its own; a primer has one when it quotes public figures.
        assert!(l["kind"] == "primer" || blksim::course::fidelity::committed_for(l["id"].as_str().unwrap()).is_some(), "{}", l["id"]);
        // A regression lesson's status is measured (the committed scoreboard), never typed:
        // "reproduces its report" exactly when "calibrated".
        let board = blksim::course::fidelity::committed_for(l["id"].as_str().unwrap());
        match board {
            None => assert!(l["fidelity"].is_null() && l["calibrated"].as_bool().unwrap()),
            Some(b) => {
                assert_eq!(l["fidelity"].as_str().unwrap(), b.status());
                assert_eq!(l["calibrated"].as_bool().unwrap(), b.reproduced);
                assert_eq!(b.status().starts_with("reproduces its report"), b.reproduced);
                // The holding rows that rest on a simplification are counted in it.
                let caveats = b.rows.iter().filter(|r| r.holds && !r.fitted && !r.caveat.is_empty()).count();
                assert_eq!(b.status().contains("with a caveat") || b.status().contains("with caveats"), caveats > 0, "{}", b.status());
            }
        }
    }
    let (_, text, _) = blksim(&["lessons"]);
    assert!(text.contains("[primer]"), "{text}");
    assert!(text.contains("reproduces"), "{text}");
    // Every title starts in one column, and a variant name with a comma in it is quoted.
    let title_at: Vec<usize> = text
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.find(char::is_whitespace).unwrap() + l[l.find(' ').unwrap()..].find(|c: char| c != ' ').unwrap())
        .collect();
    assert!(title_at.len() >= 7 && title_at.iter().all(|&c| c == title_at[0]), "{title_at:?}\n{text}");
    assert!(text.contains("fixed, \"2 sockets, rq_affinity 1\", "), "{text}");
}

#[test]
fn fidelity_json_has_every_row_with_its_report_band_measurement_and_verdict() {
    let (code, out, _) = blksim(&["fidelity", "nr-requests", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lessons = v["lessons"].as_array().unwrap();
    assert_eq!(lessons.len(), 1);
    let rows = lessons[0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), blksim::course::lessons::find("nr-requests").unwrap().fidelity.len());
    for r in rows {
        assert_eq!(r["lesson"], "nr-requests");
        assert!(r["name"].is_string() && r["unit"].is_string() && r["how"].is_string());
        assert!(r["report"].is_number() || r["report"].is_null());
        let (lo, hi, x) = (r["band"]["lo"].as_f64().unwrap(), r["band"]["hi"].as_f64().unwrap(), r["measured"].as_f64().unwrap());
        assert!(r["fitted"].is_boolean());
        assert_eq!(r["holds"].as_bool().unwrap(), lo <= x && x <= hi);
    }
    // The same numbers as the committed board.
    assert_eq!(lessons[0], serde_json::to_value(blksim::course::fidelity::committed_for("nr-requests").unwrap()).unwrap());
}

#[test]
fn fidelity_check_exits_1_on_a_missed_row_and_plain_runs_exit_0() {
    // Any lesson with a missed row (several have one), and any with none.
    let missing = blksim::course::fidelity::committed().into_iter().find(|l| l.rows.iter().any(|r| !r.holds));
    if let Some(l) = missing {
        assert_eq!(blksim(&["fidelity", &l.lesson]).0, 0);
        assert_eq!(blksim(&["fidelity", &l.lesson, "--check"]).0, 1);
    }
    let held = blksim::course::fidelity::committed().into_iter().find(|l| l.rows.iter().all(|r| r.holds));
    if let Some(l) = held {
        assert_eq!(blksim(&["fidelity", &l.lesson, "--check"]).0, 0);
    }
    let (code, _, err) = blksim(&["fidelity", "anatomy-of-a-request"]);
    assert_eq!(code, 2);
    assert!(err.contains("no fidelity rows"), "{err}");
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
    for f in [
        "rrqm_s",
        "wrqm_s",
        "r_s",
        "w_s",
        "rkb_s",
        "wkb_s",
        "avgrq_sz",
        "avgqu_sz",
        "await_ms",
        "r_await_ms",
        "w_await_ms",
        "svctm_ms",
        "util_pct",
    ] {
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
    assert_eq!(v["knobs_set"], serde_json::json!({}), "no --set: none listed");
    // The table: variant names that are phrases ("2 sockets, rq_affinity 1") widen the first
    // column, so every row's figures end where the header's do.
    let (code, out, err) = blksim(&["compare", "dm-sg-lists", "--duration", "0.02"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().skip(1).take_while(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), 7, "{out}");
    assert!(rows.iter().any(|r| r.starts_with("2 sockets, rq_affinity 1 ")), "{out}");
    // Right-aligned figures under a header of the same widths: a row as long as the header
    // has its columns where the header's are.
    for r in &rows[1..] {
        assert_eq!(r.chars().count(), rows[0].chars().count(), "misaligned row {r:?}\n{out}");
    }
    // A lesson of two fio jobs: each variant's jobs, each from its own I/Os (the writer
    // writes only, the reader reads only), with fio's bw and the p99 of clat.
    let (code, out, err) = blksim(&["compare", "writer-starves-reader", "--duration", "2"]);
    assert_eq!(code, 0, "{err}");
    let block: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("each job")).skip(2).take_while(|l| !l.is_empty()).collect();
    assert_eq!(block.len(), 5 * 2, "a row per variant and job\n{out}");
    for r in &block {
        let f: Vec<&str> = r.split_whitespace().collect();
        let (job, rd, wr) = (f[f.len() - 5], &f[f.len() - 4..f.len() - 2], &f[f.len() - 2..]);
        let (did, none) = if job == "reader" { (rd, wr) } else { (wr, rd) };
        assert!(none == ["-", "-"] && did.iter().all(|x| x.parse::<f64>().is_ok_and(|x| x > 0.0)), "{r}");
    }
    // sweep: each job's bw and iops over the seeds, a line per direction it did I/O in.
    let (code, out, err) = blksim(&["sweep", "writer-starves-reader", "--variant", "cfq", "--seeds", "2", "--duration", "1"]);
    assert_eq!(code, 0, "{err}");
    let jobs: Vec<&str> = out.lines().filter(|l| l.starts_with("job ")).collect();
    assert!(jobs.len() == 2 && jobs[0].contains("writer write") && jobs[1].contains("reader read"), "{out}");
    let (code, out, _) = blksim(&["link", "dm-sg-lists", "--variant", "workaround", "--set", "dm.max_sectors_kb=96", "--seed", "9"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "#/lesson/dm-sg-lists?v=1&variant=workaround&dm.max_sectors_kb=96&seed=9");
    // An A/B link: B is checked like the variant.
    // A knob set twice: the last value, once (as run uses it).
    let (code, out, _) = blksim(&["link", "scsi-starved", "--set", "queue.depth=32", "--set", "queue.depth=64", "--seed", "1"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "#/lesson/scsi-starved?v=1&queue.depth=64&seed=1");
    let (code, out, _) = blksim(&["link", "scsi-starved", "--variant", "regressed", "--b", "fixed"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "#/lesson/scsi-starved?v=1&variant=regressed&b=fixed&seed=1");
    let (code, _, err) = blksim(&["link", "scsi-starved", "--b", "bogus"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("blksim: --b: ") && err.contains("bogus"), "{err}");
    // B the same as A's variant (named, or A's default) is a link the page would refuse in
    // part: refused here too, naming the others (`link` must not write one).
    assert_bad(
        &["link", "scsi-starved", "--variant", "before", "--b", "before"],
        "--b: 'before' is run A's variant too (A/B compares two variants); expected another: regressed, fixed",
    );
    assert_bad(&["link", "scsi-starved", "--b", "before"], "expected another: regressed, fixed");
    // The sandbox has one variant: its B is a copy of A, whose knobs the page then changes.
    let (code, out, err) = blksim(&["link", "sandbox", "--b", "custom"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#/sandbox?v=1&b=custom&seed=1"), "{out}");
    // A pasted link's run B with knobs of its own: `link` writes them again, `run` says it
    // runs A and names them.
    let pasted = "#/sandbox?v=1&disks=2&b.queue.scheduler=cfq&seed=4";
    let (code, out, err) = blksim(&["link", pasted]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("#/sandbox?v=1&b=custom&disks=2&b.queue.scheduler=cfq&seed=4"), "{out}");
    let (code, _, err) = blksim(&["run", pasted, "--duration", "0.05"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("b.queue.scheduler=cfq (run B's own knobs"), "{err}");
}

/// A link pasted where the lesson goes (a whole address or its fragment) runs the run the page
/// opens: the same report as the same words given one by one; words after it win; a link wrong
/// in any part is refused in one line naming the parts, not run without them.
#[test]
fn a_link_the_app_copied_runs_as_its_words_would() {
    let words =
        ["run", "dm-sg-lists", "--variant", "workaround", "--set", "dm.max_sectors_kb=96", "--seed", "9", "--duration", "0.2", "--json"];
    let (code, by_words, err) = blksim(&words);
    assert_eq!(code, 0, "{err}");
    let url = "https://blkviz.example/#/lesson/dm-sg-lists?v=1&variant=workaround&dm.max_sectors_kb=96&seed=9&t=1.5&step=2";
    let (code, by_link, err) = blksim(&["run", url, "--duration", "0.2", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_link, by_words, "the link's run is the words' run");
    // The JSON says which knobs its figures came from.
    let v: serde_json::Value = serde_json::from_str(&by_words).unwrap();
    assert_eq!(v["knobs_set"], serde_json::json!({"dm.max_sectors_kb": "96"}), "{by_words}");
    // The command line's words come after the link's.
    let (code, out, err) =
        blksim(&["run", "#/lesson/dm-sg-lists?v=1&variant=workaround&seed=9", "--seed", "3", "--duration", "0.1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["variant"].as_str(), v["seed"].as_u64()), (Some("workaround"), Some(3)));
    // `link` rewrites a link in this build's form, B and knobs kept, a hand-written one too.
    let (code, out, err) = blksim(&["link", "#/lesson/scsi-starved?b=fixed&variant=regressed&queue.depth=32", "--set", "queue.depth=64"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "#/lesson/scsi-starved?v=1&variant=regressed&b=fixed&queue.depth=64&seed=1");
    assert_bad(&["run", "#/lesson/raid5-chunk?v=1&variant=nope&queue.depth=0"], "the link: variant: unknown variant 'nope'");
    // The knob a reader changed is the one named: RAID5's need, not the lesson's 8 HBAs.
    assert_bad(&["run", "raid5-chunk", "--set", "disks=1"], "disks: 1 disk for stack=md; RAID5 needs at least 3");
    assert_bad(&["run", "#/lesson/raid5-chunk?v=1&variant=nope&queue.depth=0"], "queue.depth: '0' is not allowed");
    assert_bad(&["run", "#/lesson/no-such-lesson?v=1"], "no-such-lesson");
    assert_bad(&["run", "#/lesson/raid5-chunk?v=7"], "link version 7");
    // Pasted with a newline; with the page's view in it (a pace the page would refuse too):
    // the same run. What the command does not use of it is said on stderr.
    let pasted = "https://blkviz.example/#/lesson/dm-sg-lists?variant=workaround&dm.max_sectors_kb=96&seed=9&speed=2&b=fixed\n";
    let (code, out, err) = blksim(&["run", pasted, "--duration", "0.2", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, by_words);
    assert_eq!(err.trim(), "blksim: run does not use the link's b=fixed (the A/B view's second variant; `compare` runs every variant)");
    // A wrong part is named alone, not after the missing version the link is read without.
    assert_bad(&["run", "#/lesson/raid5-chunk?seed=abc"], "the link: seed: 'abc' is not allowed");
    // --duration comes after the link's duration knob, as --set would.
    let (code, out, err) = blksim(&["run", "#/lesson/nr-requests?v=1&duration=2", "--duration", "0.1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("nr-requests / regressed  seed 1  0.100 s simulated"), "{out}");
    // The text names the knobs set on top of the variant's, the link's and --set's alike.
    let (code, out, err) = blksim(&["run", "#/lesson/dm-sg-lists?v=1&dm.max_sectors_kb=96", "--set", "cpu.cores=8", "--duration", "0.05"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().nth(1), Some("knobs set  dm.max_sectors_kb=96 cpu.cores=8"), "{out}");
    // `link` keeps the link's moment and drops its view; the link's B is named as the link's.
    let (code, out, err) = blksim(&["link", "#/lesson/scsi-starved?variant=regressed&b=fixed&t=1.5&speed=0.5&step=2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "#/lesson/scsi-starved?v=1&variant=regressed&b=fixed&seed=1&t=1.5");
    assert_bad(&["link", "#/lesson/scsi-starved?variant=regressed&b=fixed", "--variant", "fixed"], "the link's B (b=fixed)");
    assert_bad(&["fidelity", "#/lesson/nr-requests?variant=fixed"], "not a link");
    // Values as this build writes them, as the page's Copy link would give them.
    let (code, out, err) =
        blksim(&["link", "sandbox", "--set", "disk.write_cache=yes", "--set", "workload.bs=4KiB", "--set", "duration=0.30"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "#/sandbox?v=1&disk.write_cache=true&workload.bs=4k&duration=0.3&seed=1");
    // A link to click: --base, or a whole link's own address, before the fragment.
    let (code, out, err) = blksim(&["link", "nr-requests", "--base", "https://blkviz.example/app/", "--seed", "3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "https://blkviz.example/app/#/lesson/nr-requests?v=1&seed=3");
    let (code, out, err) = blksim(&["link", "https://h.example/x/#/lesson/nr-requests?variant=fixed"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "https://h.example/x/#/lesson/nr-requests?v=1&variant=fixed&seed=1");
    assert_bad(&["link", "nr-requests", "--base", "ftp://x"], "--base: 'ftp://x' is not allowed");
    // As mail and bug trackers pass links on: in <...>, with &amp; for &; and an address
    // without the app's fragment is named as such, not as an unknown lesson.
    let (code, out, err) = blksim(&["link", "<https://h.example/x/#/lesson/nr-requests?variant=fixed&amp;seed=2>"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "https://h.example/x/#/lesson/nr-requests?v=1&variant=fixed&seed=2");
    assert_bad(&["run", "https://h.example/x/"], "has no #/lesson/");
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
    assert_eq!(v["slowest"]["completion_s"].as_f64(), Some(max), "the slowest run is the max");
    let bins = v["histogram"]["bins"].as_array().unwrap();
    assert_eq!(bins.iter().map(|b| b["runs"].as_u64().unwrap()).sum::<u64>(), 3);
}

/// `sweep` names its slowest run and links to it where its longest stall begins: in
/// mq-clone-stall's seeds 1-6, seed 5 stands still for over a minute after 43 ms.
#[test]
fn sweep_names_its_slowest_run_and_links_to_its_stall() {
    let (code, out, err) = blksim(&["sweep", "mq-clone-stall", "--variant", "regressed", "--seeds", "6", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let slow = &v["slowest"];
    assert_eq!(slow["seed"], 5);
    let (from, stall) = (slow["longest_stall_from_s"].as_f64().unwrap(), slow["longest_stall_s"].as_f64().unwrap());
    assert!(stall > 60.0 && from < 0.1, "seed 5 stalls {stall} s from {from} s");
    let link = slow["link"].as_str().unwrap();
    assert_eq!(link, format!("#/lesson/mq-clone-stall?v=1&variant=regressed&seed=5&t={from}&speed=1"));
    let (_, text, _) = blksim(&["sweep", "mq-clone-stall", "--variant", "regressed", "--seeds", "6"]);
    assert!(text.contains(&format!("slowest       seed 5: longest stall {stall:.4} s from {from:.4} s; opened there: {link}")), "{text}");
    // The distribution, binned as the page bins it: five fast runs in the first log-spaced
    // bin, the stalled one alone in the last, and the empty bins between them printed.
    let h = &v["histogram"];
    assert_eq!((h["of"].as_str(), h["log"].as_bool()), (Some("completion_s"), Some(true)));
    let bins = h["bins"].as_array().unwrap();
    let runs: Vec<u64> = bins.iter().map(|b| b["runs"].as_u64().unwrap()).collect();
    assert_eq!((runs[0], runs[runs.len() - 1], runs.iter().sum::<u64>()), (5, 1, 6), "{runs:?}");
    let max = v["completion_s"]["max"].as_f64().unwrap();
    assert!((bins[bins.len() - 1]["to"].as_f64().unwrap() - max).abs() < 1e-9);
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("completion_s histogram (log-spaced bins)")).skip(1).collect();
    assert_eq!(lines.len(), bins.len(), "{text}");
    assert!(lines[0].ends_with(&format!("{:>6}  {}", 5, "#".repeat(40))), "{text}");
    assert!(lines[lines.len() - 1].ends_with(&format!("{:>6}  {}", 1, "#".repeat(8))), "{text}");
    // Each seed's figures, in seed order; the text names the slowest few, slowest first.
    let per_seed = v["per_seed"].as_array().unwrap();
    assert_eq!(per_seed.iter().map(|r| r["seed"].as_u64().unwrap()).collect::<Vec<_>>(), (1..=6).collect::<Vec<u64>>());
    assert_eq!(per_seed[4]["completion_s"].as_f64(), Some(max));
    assert_eq!(per_seed[4]["longest_stall_s"].as_f64(), Some(stall));
    assert!(text.contains(&format!("slowest seeds 5 ({max:.4} s), ")), "{text}");
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

#[test]
fn rq_affinity_sends_the_other_sockets_completions_to_its_first_cpu() {
    // dm-sg-lists on two sockets, both HBAs on CPU 4: with rq_affinity 1 the readers of socket
    // 0 complete by IPI on CPU 0 (their clones inherit req->cpu), those of socket 1 on CPU 4; with
    // 0 everything stays on CPU 4; with 2 on each reader's own CPU.
    let busy = |variant: &str| -> Vec<String> {
        let (code, out, err) = blksim(&["run", "dm-sg-lists", "--variant", variant, "--duration", "1", "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut names: Vec<String> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("ksoftirqd/") && t["cpu_pct"].as_f64().unwrap() > 20.0)
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(busy("2 sockets, rq_affinity 1"), ["ksoftirqd/0", "ksoftirqd/4"]);
    assert_eq!(busy("2 sockets, rq_affinity 0"), ["ksoftirqd/4"]);
    assert_eq!(busy("2 sockets, rq_affinity 2").len(), 8);
}

#[test]
fn run_takes_an_fio_job_file_and_names_what_it_does_not_model() {
    let path = std::env::temp_dir().join(format!("blkviz-job-{}.fio", std::process::id()));
    std::fs::write(&path, "[global]\nioengine=libaio\niodepth=8\nverify=crc32c\n\n[randreads]\nrw=randread\nbs=4k\ndirect=1\n").unwrap();
    let (code, out, err) = blksim(&["run", "--job-file", path.to_str().unwrap(), "--duration", "0.2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lesson"], "sandbox");
    assert!(v["iops"].as_f64().unwrap() > 0.0);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("verify=crc32c"), "{err}");
    // A --set after it wins over the file.
    let (code, out, _) =
        blksim(&["run", "--job-file", path.to_str().unwrap(), "--set", "workload.rw=randwrite", "--duration", "0.2", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["write_mb_s"].as_f64().unwrap() > 0.0 && v["read_mb_s"].as_f64().unwrap() == 0.0);
    // --strict refuses it instead, naming what it does not model; a file it all applies to runs.
    let (code, out, err) = blksim(&["run", "--job-file", path.to_str().unwrap(), "--strict", "--duration", "0.2"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("not modelled (refused with --strict): verify=crc32c"), "{err}");
    std::fs::write(&path, "[randreads]\nrw=randread\nbs=4k\ndirect=1\n").unwrap();
    let (code, _, err) = blksim(&["run", "--job-file", path.to_str().unwrap(), "--strict", "--duration", "0.2"]);
    assert_eq!((code, err.as_str()), (0, ""));
    std::fs::remove_file(&path).unwrap();
    assert_bad(&["run", "--job-file", "/nonexistent/job.fio"], "--job-file");
    // --strict is about a job file: without one it names what it needs.
    assert_bad(&["run", "scsi-starved", "--strict"], "not provided: --job-file <FILE>");
}

/// A buffered random read reads its own pages and nothing else: the kernel's readahead leaves
/// a small random read alone (`ondemand_readahead`), and with `read_ahead_kb` 0 there is none.
/// So the disk sees one 4 KiB read per read(), as with O_DIRECT, not the next page too (which
/// would double r/s and halve the await).
#[test]
fn a_buffered_random_read_reads_only_its_own_pages() {
    let path = std::env::temp_dir().join(format!("blkviz-randread-{}.fio", std::process::id()));
    std::fs::write(&path, "[job]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n").unwrap();
    let job = path.to_str().unwrap();
    for extra in [&[][..], &["--set", "queue.read_ahead_kb=0"], &["--set", "workload.direct=true"]] {
        let mut args = vec!["run", "--job-file", job, "--duration", "1", "--json"];
        args.extend_from_slice(extra);
        let (code, out, err) = blksim(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let iops = v["iops"].as_f64().unwrap();
        let sda = &v["devices"][0];
        assert!(iops > 10.0, "{extra:?}: {iops} IOPS");
        assert!((sda["r_s"].as_f64().unwrap() - iops).abs() <= 1.0, "{extra:?}: {} r/s for {iops} reads", sda["r_s"]);
        assert!((sda["rkb_s"].as_f64().unwrap() - 4.0 * iops).abs() <= 4.0, "{extra:?}: {} kB/s", sda["rkb_s"]);
        // Nothing of it is "not modelled" (the note about unsorted writeback is for writes).
        assert_eq!(v["model_gaps"], serde_json::json!([]), "{extra:?}");
    }
    std::fs::remove_file(&path).unwrap();
}

/// `trace --json` says what it wrote, and how blkparse reads it; an empty `--out` is refused.
#[test]
fn trace_says_in_json_what_it_wrote() {
    let dir = std::env::temp_dir().join(format!("blkviz-trace-json-{}", std::process::id()));
    let (code, out, err) = blksim(&["trace", "scsi-starved", "--duration", "0.1", "--out", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["records"].as_u64().unwrap() > 100, "{v}");
    let files = v["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f == "blkparse.txt"));
    for f in files {
        assert!(dir.join(f.as_str().unwrap()).exists(), "{f} was written");
    }
    assert!(v["blkparse"].as_str().unwrap().starts_with("blkparse -i sd"), "{v}");
    // The same run again into the same directory replaces its own files.
    let (code, _, err) = blksim(&["trace", "scsi-starved", "--duration", "0.1", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Another run's files would be read with this one's (replay DIR, blkparse -i): refused,
    // and nothing written.
    let before = std::fs::read(dir.join("blkparse.txt")).unwrap();
    let (code, _, err) = blksim(&["trace", "nr-requests", "--duration", "0.1", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already holds blktrace files this run does not write (sda.blktrace.0"), "{err}");
    assert!(err.contains("expected an empty directory"), "{err}");
    assert_eq!(std::fs::read(dir.join("blkparse.txt")).unwrap(), before, "nothing written");
    // replay reads each file once: the directory twice, or it and a file in it, is refused.
    let d = dir.to_str().unwrap();
    let (code, _, err) = blksim(&["replay", d, d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is given twice") && err.contains("expected each file once"), "{err}");
    let one = dir.join("sda.blktrace.0");
    assert_bad(&["replay", d, one.to_str().unwrap()], "is given twice");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_bad(&["trace", "scsi-starved", "--out", ""], "--out");
}
