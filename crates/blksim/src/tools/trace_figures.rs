//! A real trace read and measured, as the trace page shows it: blktrace's per-CPU files, a
//! `blkparse -d` dump or blkparse's text in (`read`), the figures out (`TraceFigures`): btt's
//! phases, iostat over the trace, the offsets of issued requests, D2C over time, the notes on
//! what reading found, and the log's first lines. The page's trace reader (a Web Worker of its
//! own) runs `read` and posts the figures; the page keeps only their deserializer. What crosses
//! is the figures, never every record: a 512 MiB trace's records would not fit a message well.

use crate::tools::blkparse_input::{self, ReadNotes};
use crate::tools::btt::{self, DeviceBtt, Phase};
use crate::tools::iostat::{self, IostatSecond};
use serde::{Deserialize, Serialize};

/// Log lines kept (the figures use every record).
pub const LOG_LINES_MAX: u32 = 500;
/// Points of the offsets' plot kept per device (every k-th beyond it, `btt::offsets`).
pub const OFFSET_POINTS_MAX: u32 = 4000;

/// Per device (major, minor), in order: the (time in ns, sector) of each issued request.
pub type DeviceOffsets = Vec<((u32, u32), Vec<(u64, u64)>)>;

/// What the page shows of a trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceFigures {
    /// The files, in blkparse's order.
    pub names: Vec<String>,
    /// Records read (after each record once and the clock's checks).
    pub records: u64,
    /// Records of kinds not shown.
    pub skipped: u64,
    /// What reading said besides the records (`ReadNotes::lines`: files cut short, lines passed
    /// over, records set aside for their clock, CPUs' files missing) and requests never
    /// completed: one line each.
    pub cut: Vec<String>,
    /// What btt's own figures would differ in, if the trace has splits (`btt::splits_note`).
    pub splits_note: Option<String>,
    /// btt's "All Devices" table, indexed as `btt::ALL_PHASES`.
    pub all: [Phase; 13],
    pub devices: Vec<DeviceBtt>,
    /// iostat per device over the whole trace (as iostat's first report), by (major, minor) in
    /// order. Pairs, not a map: the page reads them in order or looks up one of a few devices,
    /// so it keeps no `BTreeMap` code for them (bincode writes the two alike).
    pub iostat: Vec<((u32, u32), IostatSecond)>,
    /// The sector of each issued request over time, per device (in order), thinned.
    pub offsets: DeviceOffsets,
    /// Where the offsets' points are thinned, a line per device (`btt::thinned_note`).
    pub thinned: Vec<String>,
    /// The completions by D2C over time (`btt::d2c_columns`), in columns of `d2c_span_ns`.
    pub d2c: Vec<(f64, Vec<u64>)>,
    pub d2c_span_ns: u64,
    /// The latest record's time (from the first record): the span iostat averages over.
    pub last_ns: u64,
    /// The first `LOG_LINES_MAX` records as blkparse prints them.
    pub log: Vec<String>,
}

/// Reads files (names and bytes, in any order) as one trace, as `blksim replay` reads them, and
/// measures it; or the one line that says what is wrong with them.
pub fn read(mut files: Vec<(String, Vec<u8>)>) -> Result<TraceFigures, String> {
    let mut records = Vec::new();
    let mut notes = ReadNotes::default();
    // Per-CPU files in blkparse's order (device, then CPU number), whatever order they came in.
    files.sort_by_key(|(name, _)| blkparse_input::file_sort_key(name));
    let mut file_ends = Vec::with_capacity(files.len());
    for (name, bytes) in &files {
        blkparse_input::read_any(name, bytes, &mut records, &mut notes).map_err(|e| e.to_string())?;
        file_ends.push(records.len());
    }
    let names: Vec<String> = files.into_iter().map(|(n, _)| n).collect();
    if let Some(e) = blkparse_input::no_records(&records, &notes, &names) {
        return Err(e);
    }
    blkparse_input::finish(&names, &mut records, &file_ends, &mut notes).map_err(|e| e.to_string())?;
    let devices = btt::btt(&records);
    let iostat = iostat::iostat(&records);
    let never = iostat::never_completed_note(&iostat);
    let all = btt::all_devices(&devices);
    let empty = btt::empty_note(&records, &all);
    let offsets = btt::offsets(&records, OFFSET_POINTS_MAX);
    let last_ns = records.iter().map(|r| r.time_ns).max().unwrap_or(0);
    let d2c_span_ns = btt::d2c_span_ns(last_ns);
    Ok(TraceFigures {
        names,
        records: records.len() as u64,
        skipped: notes.skipped,
        cut: notes.lines().cloned().chain(never).chain(empty).collect(),
        splits_note: btt::splits_note(&records).1,
        all,
        devices,
        iostat: iostat.into_iter().map(|(d, v)| (d, v.trace)).collect(),
        thinned: btt::thinned_note(&offsets),
        offsets: offsets.into_iter().map(|(d, (v, _))| (d, v)).collect(),
        d2c: btt::d2c_columns(&records, d2c_span_ns),
        d2c_span_ns,
        last_ns,
        log: records.iter().take(LOG_LINES_MAX as usize).map(blkparse_input::blkparse_line).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_is_no_trace_is_named_in_one_line() {
        let e = read(vec![("notes.txt".into(), b"lecture notes\nnothing here\n".to_vec())]).unwrap_err();
        assert!(e.starts_with("notes.txt: expected blkparse records"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn blkparse_text_reads_to_its_figures() {
        let text = "  8,0    0        1     0.000000000  100  Q   R 2048 + 8 [fio]\n  8,0    0        2     0.000001000  100  G   R 2048 + 8 [fio]\n  8,0    0        3     0.000002000  100  I   R 2048 + 8 [fio]\n  8,0    0        4     0.000003000  100  D   R 2048 + 8 [fio]\n  8,0    0        5     0.000503000    0  C   R 2048 + 8 [0]\n";
        let f = read(vec![("sda.txt".into(), text.as_bytes().to_vec())]).unwrap();
        assert_eq!(f.records, 5);
        assert_eq!(f.log.len(), 5);
        assert_eq!(f.devices.len(), 1);
        assert_eq!((f.devices[0].queued, f.devices[0].issued), (1, 1));
        let d2c = btt::ALL_PHASES.iter().position(|p| *p == "D2C").unwrap();
        assert_eq!((f.all[d2c].n, f.all[d2c].min_ns), (1, 500_000));
        assert_eq!(f.offsets, vec![((8, 0), vec![(3_000, 2048)])]);
        assert!(f.iostat.len() == 1 && f.iostat[0].0 == (8, 0) && f.iostat[0].1.r_s > 0.0);
    }
}
