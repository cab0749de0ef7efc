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
/// one line and set aside, and the rest is reported (it once sized an array by that span and
/// aborted asking for 70 GB).
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
/// boots): both are reported, and the JSON holds only the seconds that have records (it once
/// wrote 1 GB, a line per second of the span).
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
