//! `blksim replay FILE...`: a real trace read as blkparse reads it (`tools::blkparse_input`),
//! and what btt and iostat would say of it (`tools::btt`). The same readers serve the page.

use super::commands::{bad, Args, CliError};
use crate::scenario::{clip, counted};
use crate::tools::blkparse_input::{self, ReadNotes, RealRecord};
use crate::tools::btt::{self, ALL_PHASES, PHASES};
use crate::tools::iostat;
use serde_json::json;
use std::fmt::Write as _;

/// The most bytes one input file may have (blkparse_input refuses more records than
/// `REPLAY_RECORDS_MAX` anyway; this stops a wrong path from reading a disk image).
pub const REPLAY_FILE_BYTES_MAX: u64 = 512 << 20;

/// The files to read: each FILE, or the `*.blktrace.N` files of a directory.
fn inputs<'a>(files: &'a [String]) -> Result<Vec<std::path::PathBuf>, CliError> {
    if files.is_empty() {
        return Err(bad(
            "replay: missing FILE; expected blktrace files (DEV.blktrace.N), a directory of them, a `blkparse -d` dump or blkparse's text",
        ));
    }
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    // Each file once: read twice, its records would count twice (a directory and a file in it,
    // or one argument repeated), and btt's phases would not agree with each other.
    let mut seen: Vec<(std::path::PathBuf, &String)> = Vec::new();
    let mut once = |p: &std::path::Path, given: &'a String| -> Result<(), CliError> {
        let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            let via = if *first == given { format!("'{}' twice", clip(given)) } else { format!("'{}' and '{}'", clip(first), clip(given)) };
            return Err(bad(format!("replay: '{}' is given twice (by {via}); expected each file once", clip(&p.display().to_string()))));
        }
        seen.push((key, given));
        Ok(())
    };
    for f in files {
        let p = std::path::Path::new(f);
        if f == "-" {
            // Standard input, as blkparse's `-i -`: a dump or text piped in.
            once(p, f)?;
            out.push(p.to_path_buf());
        } else if p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| bad(format!("replay: cannot read directory '{}': {e}", clip(f))))?;
            let mut found: Vec<_> =
                rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().contains(".blktrace.")).collect();
            found.sort_by_key(|p| blkparse_input::file_sort_key(&p.to_string_lossy()));
            if found.is_empty() {
                return Err(bad(format!("replay: '{}' holds no DEV.blktrace.N files", clip(f))));
            }
            for q in &found {
                once(q, f)?;
            }
            out.extend(found);
        } else {
            once(p, f)?;
            out.push(p.to_path_buf());
        }
    }
    Ok(out)
}

/// Reads every input into one time-ordered list of records.
pub fn read(files: &[String]) -> Result<(Vec<RealRecord>, ReadNotes, Vec<String>), CliError> {
    let paths = inputs(files)?;
    let mut records = Vec::new();
    let mut notes = ReadNotes::default();
    let mut file_ends = Vec::with_capacity(paths.len());
    for p in &paths {
        let name = p.display().to_string();
        let bytes = if name == "-" { read_stdin()? } else { read_file(p, &name)? };
        blkparse_input::read_any(&name, &bytes, &mut records, &mut notes).map_err(|e| bad(format!("replay: {e}")))?;
        file_ends.push(records.len());
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    blkparse_input::finish(&names, &mut records, &file_ends, &mut notes).map_err(|e| bad(format!("replay: {e}")))?;
    Ok((records, notes, names))
}

/// A file's bytes, at most `REPLAY_FILE_BYTES_MAX`.
fn read_file(p: &std::path::Path, name: &str) -> Result<Vec<u8>, CliError> {
    let len = std::fs::metadata(p).map_err(|e| bad(format!("replay: cannot read '{}': {e}", clip(name))))?.len();
    if len > REPLAY_FILE_BYTES_MAX {
        return Err(bad(format!("replay: '{}' has {len} bytes; at most {REPLAY_FILE_BYTES_MAX} are read", clip(name))));
    }
    std::fs::read(p).map_err(|e| bad(format!("replay: cannot read '{}': {e}", clip(name))))
}

/// Standard input's bytes (`-`), at most `REPLAY_FILE_BYTES_MAX`.
fn read_stdin() -> Result<Vec<u8>, CliError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(REPLAY_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("replay: cannot read standard input: {e}")))?;
    if bytes.len() as u64 > REPLAY_FILE_BYTES_MAX {
        return Err(bad(format!("replay: standard input has more than {REPLAY_FILE_BYTES_MAX} bytes; at most that many are read")));
    }
    Ok(bytes)
}

/// `iostat::iostat`'s figures per device (major, minor).
type IostatByDevice = std::collections::BTreeMap<(u32, u32), iostat::DevIostat>;

fn dev_name(d: (u32, u32)) -> String {
    format!("{},{}", d.0, d.1)
}

pub(super) fn cmd_replay(a: &Args) -> Result<String, CliError> {
    let (records, notes, names) = read(&a.files)?;
    let nfiles = names.len();
    if let Some(e) = blkparse_input::no_records(&records, &notes, &names) {
        return Err(bad(format!("replay: {e}")));
    }
    let devs = btt::btt(&records);
    let all = btt::all_devices(&devs);
    let iostat = iostat::iostat(&records);
    // The latest record: the span the text, the JSON and iostat's averages all use.
    let last_ns = records.iter().map(|r| r.time_ns).max().unwrap_or(0);
    let span_s = last_ns as f64 / 1e9;
    let (splits, splits_note) = btt::splits_note(&records);
    if a.json {
        let devices = devices_json(&records, &devs, &iostat);
        let all_json: serde_json::Map<String, serde_json::Value> =
            ALL_PHASES.iter().zip(&all).filter(|(_, p)| p.n > 0).map(|(n, p)| (n.to_string(), phase_json(p))).collect();
        let mut v = json!({"files": nfiles, "records": records.len(), "skipped": notes.skipped, "cut": notes.cut, "stray": notes.stray, "clock": notes.clock, "missing": notes.missing, "span_s": span_s, "splits": splits,
                           "all_devices": all_json, "devices": devices});
        if a.log {
            v["log"] = records.iter().map(blkparse_input::blkparse_line).collect::<Vec<_>>().into();
        }
        return Ok(serde_json::to_string_pretty(&v).expect("json") + "\n");
    }
    let mut s = String::new();
    if a.log {
        for r in &records {
            s.push_str(&blkparse_input::blkparse_line(r));
            s.push('\n');
        }
        s.push('\n');
    }

    // Records of kinds btt does not show (requeue, bounce, messages) are named only if any.
    let skipped = if notes.skipped > 0 { format!("; {} skipped, of kinds btt does not show", notes.skipped) } else { String::new() };
    let _ = writeln!(s, "{} from {} over {span_s:.6} s{skipped}", counted(records.len() as u64, "record"), counted(nfiles as u64, "file"));
    for c in notes.lines() {
        let _ = writeln!(s, "{c}");
    }
    if let Some(note) = &splits_note {
        let _ = writeln!(s, "{note}");
    }
    if let Some(note) = btt::empty_note(&records, &all) {
        let _ = writeln!(s, "{note}");
    }
    all_devices_text(&mut s, &all);
    iostat_text(&mut s, &iostat);
    Ok(s)
}

fn phase_json(p: &btt::Phase) -> serde_json::Value {
    json!({"n": p.n, "min_s": p.min_ns as f64 / 1e9, "avg_s": p.avg_s(), "max_s": p.max_ns as f64 / 1e9})
}

/// The JSON's `devices`: each device's counts, btt phases, iostat seconds and offsets.
fn devices_json(records: &[RealRecord], devs: &[btt::DeviceBtt], iostat: &IostatByDevice) -> Vec<serde_json::Value> {
    let offsets = btt::offsets(records, 2000);
    devs.iter()
        .map(|d| {
            let key = (d.major, d.minor);
            let phases: serde_json::Map<String, serde_json::Value> =
                PHASES.iter().zip(&d.phases).filter(|(_, p)| p.n > 0).map(|(n, p)| (n.to_string(), phase_json(p))).collect();
            json!({"device": dev_name(key), "remaps": d.remaps, "queued": d.queued, "issued": d.issued,
                   "btt": phases, "q2a": phase_json(&d.q2a),
                   "iostat": iostat.get(&key).map(|d| d.seconds.clone()).unwrap_or_default(),
                   "iostat_trace": iostat.get(&key).map(|d| d.trace),
                   "never_completed": iostat.get(&key).map_or(0, |d| d.never_completed),
                   "out_at_end": iostat.get(&key).map_or(0, |d| d.out_at_end),
                   "offsets": offsets.get(&key).map(|(v, _)| v.iter().map(|&(t, s)| json!([t as f64 / 1e9, s])).collect::<Vec<_>>()).unwrap_or_default(),
                   "offsets_issued": offsets.get(&key).map_or(0, |o| o.1)})
        })
        .collect()
}

/// btt's "All Devices" section as its output.c prints it (`output_section_hdr`, `output_hdr`,
/// `__output_avg`): the dm lines, a blank line, the rest, a blank line.
fn all_devices_text(s: &mut String, all: &[btt::Phase]) {
    let _ = writeln!(s, "\n==================== All Devices ====================\n");
    let _ = writeln!(s, "{:>15} {:>13} {:>13} {:>13} {:>11}", "ALL", "MIN", "AVG", "MAX", "N");
    let _ = writeln!(s, "--------------- ------------- ------------- ------------- -----------");
    for (name, p) in ALL_PHASES.iter().zip(all) {
        if p.n > 0 {
            let _ =
                writeln!(s, "{name:<15} {:>13.9} {:>13.9} {:>13.9} {:>11}", p.min_ns as f64 / 1e9, p.avg_s(), p.max_ns as f64 / 1e9, p.n);
        }
        if *name == "Q2Cdm" {
            s.push('\n');
        }
    }
}

/// `iostat -x` over the whole trace per device, as its first report, flushes and discards
/// after %util. A cell never reads -0.0.
fn iostat_text(s: &mut String, iostat: &IostatByDevice) {
    let _ = writeln!(
        s,
        "\n{:>9} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>7} {:>8} {:>8}   (iostat -x over the trace, as its first report)",
        "DEV", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "%util", "f/s", "d/s"
    );
    for (dev, v) in iostat {
        let m = &v.trace;
        let cells = [m.r_s, m.w_s, m.rkb_s, m.wkb_s, m.rrqm_s, m.wrqm_s, m.util_pct, m.f_s, m.d_s].map(|x| x + 0.0);
        let _ = writeln!(
            s,
            "{:>9} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>8.1} {:>8.1} {:>7.1} {:>8.1} {:>8.1}",
            dev_name(*dev),
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8]
        );
    }
    if let Some(note) = iostat::never_completed_note(iostat) {
        let _ = writeln!(s, "{note}");
    }
}
