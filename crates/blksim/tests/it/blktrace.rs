//! The real blktrace tools read blkviz's binary trace: `blksim trace` writes what `blktrace`
//! would (`DEV.blktrace.CPU`), and the real `blkparse` (Debian's blktrace, which
//! `scripts/setup test` installs) must print exactly the records of blkviz's own blkparse text.

use std::path::{Path, PathBuf};
use std::process::Command;

fn trace_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blkviz-trace-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Record lines (blkparse's per-record lines, not its summary), in the order printed.
fn record_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.split_once(',').is_some_and(|(maj, _)| !maj.is_empty() && maj.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
        .collect()
}

/// `blksim trace LESSON --variant V --duration D --out DIR`; returns the traced devices in
/// the order its "read it with: ... blkparse -i A -i B" line gives them (the order its
/// blkparse.txt merges their files in, as blkparse does for that order).
fn trace_to(dir: &Path, lesson: &str, variant: &str, duration: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["trace", lesson, "--variant", variant, "--duration", duration, "--out"])
        .arg(dir)
        .output()
        .expect("run blksim");
    assert!(out.status.success(), "blksim trace failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("read it with: ")).expect("a 'read it with' line");
    let devices: Vec<String> = line.split(" -i ").skip(1).map(|d| d.trim().to_string()).collect();
    assert!(!devices.is_empty(), "no devices in {line:?}");
    for d in &devices {
        assert!(dir.join(format!("{d}.blktrace.0")).exists(), "{d}'s files are in {}", dir.display());
    }
    devices
}

/// The real `blkparse`, run in `dir` with `-i` for each device.
fn blkparse_in(dir: &Path, devices: &[String]) -> Command {
    let mut cmd = Command::new("blkparse");
    cmd.current_dir(dir);
    for d in devices {
        cmd.args(["-i", d]);
    }
    cmd
}

fn blkparse_matches_blkviz(lesson: &str, variant: &str, duration: &str) {
    let dir = trace_dir(lesson);
    let devices = trace_to(&dir, lesson, variant, duration);
    let parsed = dir.join("blkparse.real.txt");
    let mut cmd = blkparse_in(&dir, &devices);
    // -o: blkparse's "Input file ... added" lines share stdout's buffer with the records.
    let status =
        cmd.arg("-o").arg(&parsed).output().unwrap_or_else(|e| {
            panic!("blkparse could not run ({e}): Debian's blktrace package is missing; scripts/setup test installs it")
        });
    assert!(status.status.success(), "blkparse failed: {}", String::from_utf8_lossy(&status.stderr));
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.trim().is_empty(), "blkparse warned: {stderr}");
    let real = record_lines(&std::fs::read_to_string(&parsed).unwrap());
    let ours = record_lines(&std::fs::read_to_string(dir.join("blkparse.txt")).unwrap());
    assert!(ours.len() > 1000, "{lesson}: only {} records", ours.len());
    assert_eq!(real.len(), ours.len(), "{lesson}: blkparse read {} records, blkviz wrote {}", real.len(), ours.len());
    // Line for line, in order: records of one instant too (blkparse's merge of its files).
    let differ: Vec<_> = real.iter().zip(&ours).enumerate().filter(|(_, (a, b))| a != b).take(3).collect();
    assert!(differ.is_empty(), "{lesson}: blkparse and blkviz differ (line, (blkparse, blkviz)): {differ:?}");
    let real_text = std::fs::read_to_string(&parsed).unwrap();
    assert!(real_text.contains("Skips: 0 forward"), "{lesson}: blkparse found sequence gaps");
    // Its closing summary too (per device: each CPU's counts, their total, throughput, events,
    // skips), so that the whole file is blkparse's, byte for byte.
    let summary = |t: &str| t.find("\nCPU").map(|i| t[i + 1..].to_string()).unwrap_or_default();
    let ours_text = std::fs::read_to_string(dir.join("blkparse.txt")).unwrap();
    assert!(summary(&ours_text).starts_with("CPU"), "{lesson}: blkparse.txt has no summary");
    let (a, b) = (summary(&real_text), summary(&ours_text));
    let first = a.lines().zip(b.lines()).enumerate().find(|(_, (x, y))| x != y);
    assert_eq!(a, b, "{lesson}: the summaries differ; first at line {first:?}");
    assert_eq!(real_text, ours_text, "{lesson}: blkparse's output and blkparse.txt differ");
    std::fs::remove_dir_all(Path::new(&dir)).unwrap();
}

#[test]
fn the_real_blkparse_reads_a_dm_multipath_trace_as_blkviz_prints_it() {
    // Remaps (A) with their pdus, clones, merges, completions in ksoftirqd, 80 disks.
    blkparse_matches_blkviz("dm-sg-lists", "workaround", "0.02");
}

#[test]
fn the_real_blkparse_reads_an_md_trace_as_blkviz_prints_it() {
    // Nine devices over eight CPUs with records of one instant on several of them: the files'
    // merge order decides the lines' order.
    blkparse_matches_blkviz("raid5-chunk", "regressed", "0.2");
}

#[test]
fn the_real_blkparse_reads_a_page_cache_writeback_trace_as_blkviz_prints_it() {
    // Buffered writes: plugs and unplugs with their counts, sleeps in get_request_wait, pdflush.
    blkparse_matches_blkviz("nr-requests", "regressed", "0.3");
}

/// The "All Devices" section of btt's text (or of replay's), from its header to the next one.
fn all_devices_section(text: &str) -> String {
    let after = text.split("==================== All Devices").nth(1).expect("an All Devices section");
    after.split_once('\n').unwrap().1.split("====").next().unwrap().to_string()
}

/// A section's shape: each line's first word, or "" for a blank line.
fn section_shape(section: &str) -> Vec<String> {
    section.lines().map(|l| l.split_whitespace().next().unwrap_or("").to_string()).collect()
}

/// The real `btt`'s "All Devices" section for a `blkparse -d` dump.
fn real_btt_section(dump: &Path) -> String {
    // In the trace's directory: btt leaves its .dat files where it runs.
    let out = Command::new("btt").current_dir(dump.parent().unwrap()).arg("-i").arg(dump).output().expect("btt runs (Debian's blktrace)");
    assert!(out.status.success(), "btt failed: {}", String::from_utf8_lossy(&out.stderr));
    all_devices_section(&String::from_utf8_lossy(&out.stdout))
}

/// btt's "All Devices" table as the real `btt` prints it: phase -> (avg seconds, N).
fn real_btt_all(section: &str) -> Vec<(String, f64, u64)> {
    section
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && (w[0].len() == 3 || (w[0].len() == 5 && w[0].ends_with("dm"))) && w[0].contains('2'))
                .then(|| (w[0].to_string(), w[2].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect()
}

/// `blksim trace`, then the real `blkparse -d` dump and `btt`, against `blksim replay` of the
/// same files: every line of btt's All Devices table agrees in N exactly and in average within
/// 1% (or 1 µs); and replay's log is blkviz's own blkparse text.
fn btt_matches_replay(lesson: &str, variant: &str, duration: &str) {
    let dir = trace_dir(&format!("btt-{lesson}"));
    let inputs = trace_to(&dir, lesson, variant, duration);
    let st = blkparse_in(&dir, &inputs).args(["-d", "dump.bin", "-o", "/dev/null"]).output().expect("blkparse runs");
    assert!(st.status.success());
    let section = real_btt_section(&dir.join("dump.bin"));
    let real = real_btt_all(&section);
    // replay's text prints the section as btt lays it out: the same lines in the same order,
    // blank lines where btt has them (after the dm lines and at the end).
    let text = Command::new(env!("CARGO_BIN_EXE_blksim")).arg("replay").arg(&dir).output().unwrap();
    assert!(text.status.success(), "{}", String::from_utf8_lossy(&text.stderr));
    let ours = all_devices_section(&String::from_utf8_lossy(&text.stdout));
    // (replay's iostat table follows, where btt goes on with its next section)
    let ours = ours.split_once("      DEV").map_or(ours.as_str(), |(table, _)| table);
    assert_eq!(section_shape(ours), section_shape(&section), "{lesson}: replay's All Devices section\n{ours}\nbtt's\n{section}");
    // And the table itself, character for character: the same N, MIN (btt's `tdelta` counts a
    // zero gap as 1 ns), AVG and MAX on every line.
    let lines = |t: &str| t.lines().map(str::trim_end).filter(|l| l.contains('2')).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(lines(ours), lines(&section), "{lesson}: replay's All Devices table differs from btt's");
    assert!(real.iter().any(|(p, _, n)| p == "D2C" && *n > 100), "{lesson}: btt saw no completions: {real:?}");
    let rep = Command::new(env!("CARGO_BIN_EXE_blksim")).args(["replay", "--json", "--log"]).arg(&dir).output().unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
    let v: serde_json::Value = serde_json::from_slice(&rep.stdout).unwrap();
    // Every line btt prints, its dm lines (a remapping device's Q2Q, Q2A and Q2C) too; Q2Q
    // runs from the previous Q on any device, so it needs the per-CPU files merged in
    // blkparse's order (a record's time is when its work happened within its CPU step, so
    // few records share an instant).
    assert!(real.iter().any(|(p, _, _)| p.ends_with("dm")), "{lesson}: btt printed no dm lines: {real:?}");
    for (phase, avg, n) in &real {
        let ours = &v["all_devices"][phase.as_str()];
        assert_eq!(ours["n"].as_u64(), Some(*n), "{lesson}: {phase} N: btt {n}, blkviz {ours}");
        let a = ours["avg_s"].as_f64().unwrap();
        assert!((a - avg).abs() <= (avg * 0.01).max(1e-6), "{lesson}: {phase} average: btt {avg}, blkviz {a}");
    }
    // replay reads the directory's files as blkparse merges them: its log is blkviz's blkparse
    // text line for line, in order.
    let log: Vec<String> = v["log"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect();
    assert_eq!(log, record_lines(&std::fs::read_to_string(dir.join("blkparse.txt")).unwrap()), "{lesson}: replay's log");
    // The dump and the text blkparse prints read back to the same figures.
    let text = dir.join("parsed.txt");
    assert!(blkparse_in(&dir, &inputs).arg("-o").arg(&text).output().unwrap().status.success());
    for f in [dir.join("dump.bin"), text] {
        let r = Command::new(env!("CARGO_BIN_EXE_blksim")).args(["replay", "--json"]).arg(&f).output().unwrap();
        assert!(r.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&r.stderr));
        let mut w: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        // Read in blkparse's order (the dump, its text), Q2Q is btt's to the nanosecond.
        let q2q = w["all_devices"]["Q2Q"].take();
        if let Some((_, avg, n)) = real.iter().find(|(p, _, _)| p == "Q2Q") {
            assert_eq!(q2q["n"].as_u64(), Some(*n), "{lesson}: Q2Q N of {}", f.display());
            let a = q2q["avg_s"].as_f64().unwrap();
            assert!((a - avg).abs() <= (avg * 0.01).max(1e-6), "{lesson}: Q2Q of {}: btt {avg}, blkviz {a}", f.display());
        }
        let mut all = v["all_devices"].clone();
        all["Q2Q"].take();
        assert_eq!(w["all_devices"], all, "{lesson}: {} reads differently", f.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_reads_a_writeback_trace_as_the_real_btt_does() {
    btt_matches_replay("nr-requests", "workaround", "0.3");
}

#[test]
fn replay_reads_a_dm_multipath_trace_as_the_real_btt_does() {
    btt_matches_replay("dm-sg-lists", "workaround", "0.02");
}

#[test]
fn replay_reads_an_md_raid5_trace_as_the_real_btt_does() {
    // md remaps each page of a stripe from inside its bio: btt finds the Q whose range holds
    // the A's sector (Q2Adm), as `dip_find_sec` does.
    btt_matches_replay("raid5-chunk", "fixed", "0.3");
}

#[test]
fn replay_refuses_bad_files_with_one_line_naming_where() {
    let dir = trace_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("cut.blktrace.0", &[0x07, 0x74, 0x61, 0x65, 1, 2, 3], "at byte 0"),
        ("magic.bin", &[0x07, 0x74, 0x61, 0x65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "at byte 0"),
        ("words.txt", b"hello\nworld\n", "expected blkparse records"),
        ("line.txt", b"  8,0    0        1     0.00001200   697  Q   R 1 + 8 [dd]\n", "line 1"),
    ];
    for (name, bytes, says) in cases {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_blksim")).arg("replay").arg(&p).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(says) && err.contains(name), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// replay's %util from a trace is iostat's, as `run` reports it for the same run: a request is
/// in flight from its insertion (I) to its completion, waiting in the elevator included (the
/// kernel's `io_ticks`), not only from D as btt's `-I` counts; md0, bio-based, from each bio's
/// Q to its C.
#[test]
fn replay_counts_util_as_iostat_does_for_the_same_run() {
    let dir = trace_dir("util");
    trace_to(&dir, "raid5-chunk", "regressed", "1");
    let run = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "raid5-chunk", "--variant", "regressed", "--duration", "1", "--json"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let run: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let rep = Command::new(env!("CARGO_BIN_EXE_blksim")).args(["replay", "--json"]).arg(&dir).output().unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
    let rep: serde_json::Value = serde_json::from_slice(&rep.stdout).unwrap();
    let mut compared = 0;
    for d in run["devices"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        // sda, sdb, ...: SCSI disk minors go by 16; md0, bio-based (Q and C only), is 9,0.
        let device = if name == "md0" {
            "9,0".to_string()
        } else {
            let Some(letter) = name.strip_prefix("sd").filter(|l| l.len() == 1) else { continue };
            format!("8,{}", 16 * u32::from(letter.as_bytes()[0] - b'a'))
        };
        let ours = rep["devices"].as_array().unwrap().iter().find(|x| x["device"] == device).expect("the device in the trace");
        let replayed = ours["iostat"][0]["util_pct"].as_f64().unwrap();
        let reported = d["util_pct"].as_f64().unwrap();
        assert!(reported > 50.0, "{name}: a busy disk ({reported}%)");
        // The trace's second starts at its first record, the run's at 0: within a point.
        assert!((replayed - reported).abs() < 1.0, "{name}: replay {replayed}% against run {reported}%");
        compared += 1;
    }
    assert_eq!(compared, 9, "the eight members and md0");
    // And await is the trace's G→C, to the microsecond: diskstats accounts a request where its
    // work had got to, as its records are stamped (raid5d's passes once put await 3-4% under).
    let text = std::fs::read_to_string(dir.join("blkparse.txt")).unwrap();
    let mut got: std::collections::BTreeMap<(String, String), f64> = std::collections::BTreeMap::new();
    let mut g2c: std::collections::BTreeMap<String, (f64, u64)> = std::collections::BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || !f[0].starts_with("8,") {
            continue;
        }
        let (Ok(t), key) = (f[3].parse::<f64>(), (f[0].to_string(), f[7].to_string())) else { continue };
        match f[5] {
            "G" => {
                got.insert(key, t);
            }
            "C" => {
                if let Some(g) = got.remove(&key) {
                    let e = g2c.entry(f[0].to_string()).or_default();
                    e.0 += t - g;
                    e.1 += 1;
                }
            }
            _ => {}
        }
    }
    for d in run["devices"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        let Some(letter) = name.strip_prefix("sd").filter(|l| l.len() == 1) else { continue };
        let (sum, n) = g2c[&format!("8,{}", 16 * u32::from(letter.as_bytes()[0] - b'a'))];
        let (traced, reported) = (sum / n as f64 * 1e3, d["await_ms"].as_f64().unwrap());
        assert!((traced - reported).abs() < 1e-3, "{name}: iostat await {reported} ms against the trace's G→C {traced} ms");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// blktrace's binary records of one device (8,0), CPU 0, pid 4321, no payload: (sequence, ns,
/// sector, bytes, action with its category bits), written as `blksim trace` writes headers.
fn blk_io_trace(records: &[(u32, u64, u64, u32, u32)]) -> Vec<u8> {
    let mut b = Vec::new();
    for &(seq, ns, sector, bytes, action) in records {
        blksim::tools::blktrace_api::header(&mut b, seq, ns, sector, bytes, action, 4321, blksim::tools::blktrace_api::dev_t(8, 0), 0, 0);
    }
    b
}

/// An empty flush (no sector, no size: real blkparse prints `Q FWS [..]` and `C FWS 0 [0]`)
/// and a discard (RWBS `D`, traced as a write) read the same from blkparse's text as from the
/// binary records it printed them from, each counted apart from reads and writes; and the two given together are refused, since each
/// record would count twice (`blksim trace` writes both into one directory: `replay DIR/*`).
#[test]
fn replay_reads_empty_flushes_and_discards_from_text_as_from_binary_and_each_record_once() {
    let dir = trace_dir("flush");
    std::fs::create_dir_all(&dir).unwrap();
    // BLK_TC_WRITE 1<<1, FLUSH 1<<2, SYNC 1<<3, DISCARD 1<<13, in the action's high 16 bits.
    let (fws, d) = (((1 << 1) | (1 << 2) | (1 << 3)) << 16, ((1 << 1) | (1 << 13)) << 16);
    let (q, g, dd, c) = (1, 4, 7, 8);
    let bin = blk_io_trace(&[
        (1, 1000, 0, 0, q | fws),
        (2, 2000, 0, 0, g | fws),
        (3, 3000, 0, 0, dd | fws),
        (4, 4000, 0, 0, c | fws),
        (5, 5000, 4096, 1 << 20, q | d),
        (6, 5500, 4096, 1 << 20, g | d),
        (7, 5800, 4096, 1 << 20, dd | d),
        (8, 9000, 4096, 1 << 20, c | d),
    ]);
    std::fs::write(dir.join("sda.blktrace.0"), bin).unwrap();
    let parsed = blkparse_in(&dir, &["sda".to_string()]).args(["-o", "sda.txt"]).output().expect("blkparse (scripts/setup test)");
    assert!(parsed.status.success(), "{}", String::from_utf8_lossy(&parsed.stderr));
    let text = std::fs::read_to_string(dir.join("sda.txt")).unwrap();
    assert!(text.contains(" Q FWS [") && text.contains(" C FWS 0 [0]") && text.contains(" C   D 4096 + 2048 [0]"), "{text}");
    let replay = |files: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_blksim")).arg("replay").arg("--json").args(files).current_dir(&dir).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let iostat = |json: &str| {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["devices"][0]["iostat"].clone()
    };
    let (code_t, from_text, err_t) = replay(&["sda.txt"]);
    let (code_b, from_bin, err_b) = replay(&["sda.blktrace.0"]);
    assert_eq!((code_t, code_b), (Some(0), Some(0)), "{err_t}{err_b}");
    assert_eq!(iostat(&from_text), iostat(&from_bin), "text and binary read alike");
    let io = &iostat(&from_text)[0];
    // The flush and the discard are counted apart (f/s, d/s), neither a read nor a write.
    let col = |k: &str| io[k].as_f64().unwrap();
    assert_eq!([col("r_s"), col("w_s"), col("rkb_s"), col("wkb_s")], [0.0; 4], "{io}");
    assert_eq!([col("f_s"), col("d_s")], [1.0, 1.0], "{io}");
    let (code, _, err) = replay(&["sda.txt", "sda.blktrace.0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("both hold device 8,0 CPU 0's records 1 to 8") && err.lines().count() == 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
