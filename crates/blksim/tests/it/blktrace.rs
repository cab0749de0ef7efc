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

/// Record lines (blkparse's per-record lines, not its summary), sorted: blkparse orders
/// records of the same instant by its own rules.
fn record_lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.split_once(',').is_some_and(|(maj, _)| !maj.is_empty() && maj.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn blkparse_matches_blkviz(lesson: &str, variant: &str, duration: &str) {
    let dir = trace_dir(lesson);
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["trace", lesson, "--variant", variant, "--duration", duration, "--out"])
        .arg(&dir)
        .output()
        .expect("run blksim");
    assert!(out.status.success(), "blksim trace failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut devices: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".blktrace.0")).map(str::to_string))
        .collect();
    devices.sort();
    assert!(!devices.is_empty(), "no blktrace files in {}", dir.display());
    let parsed = dir.join("blkparse.real.txt");
    let mut cmd = Command::new("blkparse");
    cmd.current_dir(&dir);
    for d in &devices {
        cmd.args(["-i", d]);
    }
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
    let differ: Vec<_> = real.iter().zip(&ours).filter(|(a, b)| a != b).take(3).collect();
    assert!(differ.is_empty(), "{lesson}: blkparse and blkviz differ: {differ:?}");
    let summary = std::fs::read_to_string(&parsed).unwrap();
    assert!(summary.contains("Skips: 0 forward"), "{lesson}: blkparse found sequence gaps");
    std::fs::remove_dir_all(Path::new(&dir)).unwrap();
}

#[test]
fn the_real_blkparse_reads_a_dm_multipath_trace_as_blkviz_prints_it() {
    // Remaps (A) with their pdus, clones, merges, completions in ksoftirqd, 80 disks.
    blkparse_matches_blkviz("dm-sg-lists", "workaround", "0.02");
}

#[test]
fn the_real_blkparse_reads_a_page_cache_writeback_trace_as_blkviz_prints_it() {
    // Buffered writes: plugs and unplugs with their counts, sleeps in get_request_wait, pdflush.
    blkparse_matches_blkviz("nr-requests", "regressed", "0.3");
}
