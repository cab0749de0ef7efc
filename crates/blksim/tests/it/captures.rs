//! `blksim replay` on real captures from public repositories (`tests/captures/`, each folder's
//! source in its README), and on damaged copies of them: nothing aborts, and what it says is
//! what blkparse and btt say of the same files.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A capture's folder, or a file in it.
fn capture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures").join(rel)
}

/// A capture's per-CPU files, in CPU order.
fn cpu_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(capture(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".blktrace."))
        .collect();
    v.sort_by_key(|p| blksim::tools::blkparse_input::file_sort_key(&p.to_string_lossy()));
    v
}

/// `blksim replay ARGS...`: (exit code, stdout, stderr).
fn replay(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_blksim")).arg("replay").args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blkviz-captures-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// LevelDB's text has CPU 13's records 1 266 874 889 s after the others': they are named in
/// one line and set aside, and the rest is reported: nothing is sized by that span.
#[test]
fn a_capture_with_one_cpus_clock_skewed_sets_that_cpu_aside_and_reports_the_rest() {
    let (code, out, err) = replay(&[capture("leveldb-ramdisk/blk_data.txt").as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("644 records from 1 file over 30.735"), "{out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("set aside")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(notes[0].starts_with("CPU 13's 196 records sit 1266874858 s or more from the other records"), "{}", notes[0]);
}

/// One record's 64-bit time overwritten (all ones) in a per-CPU file: that record is set aside
/// and named; the file's other records are read.
#[test]
fn a_corrupted_time_in_a_binary_file_sets_that_record_aside() {
    let dir = scratch("corrupt-time");
    let files = cpu_files("centos7-lvm");
    for f in &files {
        std::fs::copy(f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let (code, whole, err) = replay(&[dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let mut b = std::fs::read(dir.join("sda.blktrace.1")).unwrap();
    // The tenth header's time: walk the headers (48 bytes and their payloads).
    let mut at = 0;
    for _ in 0..9 {
        at += 48 + usize::from(u16::from_le_bytes([b[at + 46], b[at + 47]]));
    }
    b[at + 8..at + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(dir.join("sda.blktrace.1"), b).unwrap();
    let (code, out, err) = replay(&[dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let n = |s: &str| s.split_whitespace().next().unwrap().parse::<u64>().unwrap();
    assert_eq!(n(&out), n(&whole) - 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("CPU 1's 1 record sit ") && l.contains("set aside")), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two unrelated captures read together span 26.8 days (their clocks count from different
/// boots): both are reported, and the JSON holds only the seconds that have records, not a
/// line per second of the span.
#[test]
fn two_captures_days_apart_give_a_small_json() {
    let mut args: Vec<PathBuf> = cpu_files("centos7-lvm");
    args.extend(cpu_files("zfs-8cpu"));
    let args: Vec<&std::ffi::OsStr> = std::iter::once(std::ffi::OsStr::new("--json")).chain(args.iter().map(|p| p.as_os_str())).collect();
    let (code, out, err) = replay(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.len() < 400_000, "{} bytes of JSON", out.len());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["span_s"].as_f64().unwrap() > 26.0 * 86_400.0, "{}", v["span_s"]);
    assert_eq!(v["clock"].as_array().map(Vec::len), Some(0), "{}", v["clock"]);
    let devices: Vec<&str> = v["devices"].as_array().unwrap().iter().map(|d| d["device"].as_str().unwrap()).collect();
    assert!(devices.contains(&"8,0") && devices.contains(&"8,52"), "{devices:?}");
}

/// The byte ranges of a binary file's records: (start, end, action word, device).
fn headers(b: &[u8]) -> Vec<(usize, usize, u32, u32)> {
    let (mut at, mut out) = (0, Vec::new());
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    while at + 48 <= b.len() {
        let end = at + 48 + usize::from(u16::from_le_bytes([b[at + 46], b[at + 47]]));
        out.push((at, end, u32_at(at + 28), u32_at(at + 36)));
        at = end;
    }
    out
}

/// The whole-trace iostat line's %util for a device, from replay's text.
fn util(out: &str, dev: &str) -> f64 {
    let line = out.lines().find(|l| l.split_whitespace().next() == Some(dev)).unwrap_or_else(|| panic!("no {dev} line in\n{out}"));
    line.split_whitespace().nth(7).unwrap().parse().unwrap()
}

/// One completion deleted from a clean capture (CentOS 7, 0.2% busy): its request counts only
/// until the requests before it complete, so %util stays within 5 points (not 100%), and
/// the summary counts the request never completed.
#[test]
fn one_lost_completion_leaves_util_where_it_was_and_is_counted() {
    let dir = scratch("lost-c");
    for f in cpu_files("centos7-lvm") {
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let (code, clean, err) = replay(&[dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let path = dir.join("sda.blktrace.1");
    let b = std::fs::read(&path).unwrap();
    // The fifth completion on 8,0 (BLK_TA_COMPLETE is 8).
    let (from, to, _, _) = headers(&b).into_iter().filter(|h| h.2 & 0xffff == 8 && h.3 == 8 << 20).nth(4).unwrap();
    std::fs::write(&path, [&b[..from], &b[to..]].concat()).unwrap();
    let (code, lost, err) = replay(&[dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let (before, after) = (util(&clean, "8,0"), util(&lost, "8,0"));
    assert!((after - before).abs() < 5.0, "%util {before} -> {after}");
    assert!(
        lost.lines()
            .any(|l| l
                .starts_with("1 request issued and never completed though later ones did (a lost C, a CPU's file missing), on 8,0 (1)")),
        "{lost}"
    );
    assert!(!clean.contains("never completed"), "{clean}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A per-CPU set with one CPU's file missing (ZFS's 8 CPUs without CPU 3): the line names it.
#[test]
fn a_missing_cpu_file_is_named() {
    let dir = scratch("missing-cpu");
    for f in cpu_files("zfs-8cpu").into_iter().filter(|f| !f.to_string_lossy().ends_with(".3")) {
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let (code, out, err) = replay(&[dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.lines().any(|l| l.contains("keks: no file for CPU 3 among CPUs 0 to 7 (keks.blktrace.N)")), "{out}");
    let (_, whole, _) = replay(&[capture("zfs-8cpu").as_os_str()]);
    assert!(!whole.contains("no file for CPU"), "{whole}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// blkparse's closing summary for a device: (writes completed, their KiB), from its "Total"
/// section (or its one CPU's).
fn blkparse_writes_completed(text: &str, dev: &str) -> (u64, u64) {
    let head = format!("Total ({dev}):");
    let at = text.find(&head).unwrap_or_else(|| panic!("no '{head}' in blkparse's summary"));
    let line = text[at..].lines().find(|l| l.contains("Writes Completed:")).unwrap();
    let w = line.split("Writes Completed:").nth(1).unwrap();
    let (n, kib) = w.split_once(',').unwrap();
    (n.trim().parse().unwrap(), kib.trim().trim_end_matches("KiB").trim().parse().unwrap())
}

/// The CentOS 7 capture: the whole-trace iostat line's writes are blkparse's "Writes
/// Completed" over the trace's span, their kB the sectors summed and halved (blkparse's KiB
/// drop each I/O's odd half-KiB, so ours is within half a KiB per I/O above it); its w/s and
/// wkB/s are what `btt -I` prints for this capture (0.99, 28.63).
#[test]
fn the_iostat_line_counts_what_blkparse_and_btt_count() {
    let dir = scratch("blkparse-summary");
    for f in cpu_files("centos7-lvm") {
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let parsed = Command::new("blkparse").args(["-i", "sda"]).current_dir(&dir).output().expect("blkparse (scripts/setup test)");
    let (n, kib) = blkparse_writes_completed(&String::from_utf8_lossy(&parsed.stdout), "sda");
    let (code, out, err) = replay(&["--json".as_ref(), dir.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let span = v["span_s"].as_f64().unwrap();
    let io = &v["devices"].as_array().unwrap().iter().find(|d| d["device"] == "8,0").unwrap()["iostat_trace"];
    let (w, wkb) = (io["w_s"].as_f64().unwrap() * span, io["wkb_s"].as_f64().unwrap() * span);
    assert!((w - n as f64).abs() < 1e-6, "{w} writes against blkparse's {n}");
    assert!(wkb >= kib as f64 && wkb - (kib as f64) <= n as f64 / 2.0, "{wkb} kB against blkparse's {kib} KiB");
    assert_eq!(format!("{:.2} {:.2}", io["w_s"].as_f64().unwrap(), io["wkb_s"].as_f64().unwrap()), "0.99 28.64");
    assert_eq!([io["r_s"].as_f64(), io["f_s"].as_f64(), io["d_s"].as_f64()], [Some(0.0); 3]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// dm-crypt on NVMe writes only, with flush and FUA sequences: no read is counted (an empty
/// flush is no read), the flushes are f/s.
#[test]
fn flushes_are_not_reads() {
    let (code, out, err) = replay(&[capture("dmcrypt-nvme/nvme0n1.blktrace.txt").as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let line: Vec<&str> = out.lines().find(|l| l.trim_start().starts_with("259,0 ")).unwrap().split_whitespace().collect();
    assert_eq!((line[1], line[3]), ("0.0", "0.0"), "r/s and rkB/s: {line:?}");
    assert!(line[8].parse::<f64>().unwrap() > 0.5, "f/s: {line:?}");
}

/// `-` reads standard input (a dump piped in reads as the file does); a reader that closes
/// the pipe early (`| head`) ends replay quietly, exit 0.
#[test]
fn stdin_reads_and_a_closed_pipe_ends_quietly() {
    use std::io::{Read as _, Write as _};
    use std::process::Stdio;
    let file = capture("nvme-readahead/sample.blktrace.0");
    let (_, from_file, _) = replay(&[file.as_os_str()]);
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_blksim")).args(["replay", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(&file).unwrap()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let tail = |s: &str| s.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(tail(&String::from_utf8_lossy(&out.stdout)), tail(&from_file), "stdin reads as the file");
    // The log is about 100 kB, more than a pipe holds: the reader takes one line and closes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["replay", "--log"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Record lines of blkparse's output (its closing per-CPU summary aside).
fn record_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() > 6
                && w[0].split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
                && w[1].parse::<u32>().is_ok()
        })
        .map(str::to_string)
        .collect()
}

/// `blksim replay --log` prints what the real `blkparse -i` prints, line for line, on real
/// captures: per-CPU files of two kernels (CentOS 7's SATA disk under LVM: remaps printed under
/// their target, RWBS WM, WSM, WS, swapper/0 named from one pid table; ZFS's D and C only: FN,
/// DS, NS) and a `blkparse -d` dump read from standard input (NVMe readahead: RA, no process
/// notes, so `(null)`).
#[test]
fn the_log_is_blkparses_output_on_real_captures() {
    for (dir, dev) in [("centos7-lvm", "sda"), ("zfs-8cpu", "keks")] {
        let real = Command::new("blkparse").args(["-i", dev]).current_dir(capture(dir)).output().expect("blkparse (scripts/setup test)");
        let (code, ours, err) = replay(&["--log".as_ref(), capture(dir).as_os_str()]);
        assert_eq!(code, Some(0), "{err}");
        let (theirs, ours) = (record_lines(&String::from_utf8_lossy(&real.stdout)), record_lines(&ours));
        assert!(theirs.len() > 700, "{dir}: {} lines from blkparse", theirs.len());
        for (i, (a, b)) in theirs.iter().zip(&ours).enumerate() {
            assert_eq!(b, a, "{dir}: line {} differs from blkparse's", i + 1);
        }
        assert_eq!(ours.len(), theirs.len(), "{dir}");
    }
    let dump = capture("nvme-readahead/sample.blktrace.0");
    let real = Command::new("blkparse").args(["-i", "-"]).stdin(std::fs::File::open(&dump).unwrap()).output().unwrap();
    let (_, ours, _) = replay(&["--log".as_ref(), dump.as_os_str()]);
    assert_eq!(record_lines(&ours), record_lines(&String::from_utf8_lossy(&real.stdout)), "the dump's log");
    // blkparse's own text (dm-crypt on NVMe: remaps, merges, WS, FWFS) prints back as it was.
    let text = capture("dmcrypt-nvme/nvme0n1.blktrace.txt");
    let (_, ours, _) = replay(&["--log".as_ref(), text.as_os_str()]);
    assert_eq!(record_lines(&ours), record_lines(&std::fs::read_to_string(&text).unwrap()), "the text's log");
}

/// The "All Devices" table: btt's text from its header to the next section's.
fn all_devices(text: &str) -> Vec<String> {
    let from = text.find("==================== All Devices").expect("an All Devices section");
    text[from..].lines().skip(1).take_while(|l| !l.starts_with("====") && !l.trim_start().starts_with("DEV ")).map(str::to_string).collect()
}

/// replay's "All Devices" table equals the real btt's, character for character, on a per-CPU
/// capture (made a dump with `blkparse -d`, as btt reads one) and on a dump.
#[test]
fn the_btt_table_is_btts_on_real_captures() {
    let dir = scratch("btt");
    let dumped = Command::new("blkparse")
        .args(["-i", "sda", "-d"])
        .arg(dir.join("sda.bin"))
        .arg("-O")
        .current_dir(capture("centos7-lvm"))
        .output()
        .unwrap();
    assert!(dumped.status.success());
    for (dump, ours) in [
        (dir.join("sda.bin"), capture("centos7-lvm")),
        (capture("nvme-readahead/sample.blktrace.0"), capture("nvme-readahead/sample.blktrace.0")),
    ] {
        let real = Command::new("btt").arg("-i").arg(&dump).current_dir(&dir).output().expect("btt (scripts/setup test)");
        let (code, out, err) = replay(&[ours.as_os_str()]);
        assert_eq!(code, Some(0), "{err}");
        let theirs = all_devices(&String::from_utf8_lossy(&real.stdout));
        assert!(theirs.iter().any(|l| l.starts_with("Q2C ")), "{theirs:?}");
        assert_eq!(all_devices(&out), theirs, "{}", ours.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A capture of D and C only (ZFS's) has no btt phases but D2C: the empty table says why.
#[test]
fn an_empty_btt_table_says_why() {
    let (code, out, err) = replay(&[capture("zfs-8cpu").as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.lines().any(|l| l.starts_with("no Q records in this trace")), "{out}");
}
