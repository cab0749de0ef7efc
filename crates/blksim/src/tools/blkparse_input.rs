//! Reading real traces, as blktrace's `blkparse.c` does (`read_events`, `handle_notify`,
//! `check_data_endianness`): the binary `struct blk_io_trace` records of per-CPU files or of a
//! `blkparse -d` dump, and blkparse's default text output. Nothing here trusts its input: a bad
//! or cut file gets one message naming where (byte offset or line) and what was expected.

use crate::tools::blktrace_api::{BLK_IO_TRACE_MAGIC, BLK_IO_TRACE_VERSION, HEADER_BYTES};
use std::collections::BTreeMap;

/// The most records one trace may hold (as `blksim trace` writes at most): about 200 MB of
/// blktrace files. A larger trace is refused, not truncated silently.
pub const REPLAY_RECORDS_MAX: u64 = 4_000_000;

/// One record of a real trace, as blkparse prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealRecord {
    pub time_ns: u64,
    pub major: u32,
    pub minor: u32,
    pub cpu: u32,
    /// blkparse's sequence column (per device and CPU in the kernel's numbering).
    pub seq: u32,
    /// The action code blkparse prints (`Q`, `G`, ..., `UT`).
    pub action: &'static str,
    pub write: bool,
    /// The trace categories of the action word (`BLK_TC_*`: read, write, flush, sync, ahead,
    /// meta, discard, FUA), from which blkparse writes its RWBS (`rwbs`).
    pub cats: u16,
    pub sector: u64,
    pub sectors: u32,
    pub pid: u32,
    /// The process name (`[comm]`); empty where the record does not carry one (C).
    pub comm: String,
    /// A: the device and sector it came from; X: the sector the split's second part starts at
    /// (major/minor 0); U: how many requests the unplug let go (in the sector).
    pub from: Option<(u32, u32, u64)>,
    /// A: the device the remap's payload names as its target, which blkparse prints in place
    /// of the record's own (a partition's remap onto its disk prints the partition).
    pub remap_to: Option<(u32, u32)>,
    /// C and R: the error the request ended with (blkparse's `[0]`).
    pub error: u16,
}

#[cfg(test)]
impl RealRecord {
    /// A read of 8 sectors on 8,0 by pid 1 on CPU 0: the record the tools' unit tests vary.
    pub(crate) fn read_of_8_sectors(time_ns: u64, action: &'static str, sector: u64) -> Self {
        RealRecord {
            time_ns,
            major: 8,
            minor: 0,
            cpu: 0,
            seq: 0,
            action,
            write: false,
            cats: 0,
            sector,
            sectors: 8,
            pid: 1,
            comm: String::new(),
            from: None,
            remap_to: None,
            error: 0,
        }
    }
}

/// A trace blkviz could not read: where, and what it expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError(pub String);

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What reading found besides the records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadNotes {
    /// Records of kinds blkviz does not show (requeue, bounce, abort, driver data, messages).
    pub skipped: u64,
    /// Binary files that end inside a record (a trace written until the disk filled): where,
    /// in one line each. Their records before it are read, as blkparse's `read_data` stops at
    /// end of file.
    pub cut: Vec<String>,
    /// Text files with lines that are neither records nor blkparse's closing summary: how
    /// many, and the first, in one line each (they are passed over, as blkparse's own output
    /// has none).
    pub stray: Vec<String>,
    /// CPUs whose records sit further in time from the rest than any trace runs (a clock
    /// skewed on them, or times corrupted): set aside, in one line (`set_aside_skewed`).
    pub clock: Vec<String>,
    /// Per-CPU sets with a CPU's file missing (`sdb.blktrace.5` among `.0` to `.39`), a line
    /// per device (`missing_cpu_files`).
    pub missing: Vec<String>,
    /// Process names by pid from every binary file's notes (`BLK_TN_PROCESS`): one table for
    /// the whole trace, as blkparse keeps one, so a pid named in one CPU's file is named in
    /// all.
    pub comms: BTreeMap<u32, String>,
}

impl ReadNotes {
    /// Every note, a line each, in the order replay and the page print them.
    pub fn lines(&self) -> impl Iterator<Item = &String> {
        self.cut.iter().chain(&self.stray).chain(&self.clock).chain(&self.missing)
    }
}

/// blkparse's action codes by `__BLK_TA_*` number (`blktrace_api.h`).
fn action_code(basic: u32) -> Option<&'static str> {
    Some(match basic {
        1 => "Q",
        2 => "M",
        3 => "F",
        4 => "G",
        5 => "S",
        7 => "D",
        8 => "C",
        9 => "P",
        10 => "U",
        11 => "UT",
        12 => "I",
        6 => "R",
        13 => "X",
        15 => "A",
        _ => return None,
    })
}

const BLK_TC_NOTIFY_ACT: u32 = (1 << 10) << 16;
const BLK_TC_WRITE_ACT: u32 = (1 << 1) << 16;
const BLK_TN_PROCESS: u32 = 0;

fn is_binary(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && {
        let le = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let be = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        (le & 0xffff_ff00) == BLK_IO_TRACE_MAGIC || (be & 0xffff_ff00) == BLK_IO_TRACE_MAGIC
    }
}

/// Reads one file: binary if it starts with blktrace's magic, else blkparse's text.
pub fn read_any(name: &str, bytes: &[u8], out: &mut Vec<RealRecord>, notes: &mut ReadNotes) -> Result<(), TraceError> {
    if is_binary(bytes) {
        return read_binary(name, bytes, out, notes);
    }
    if bytes.is_empty() {
        // blktrace leaves an empty file for a CPU that traced nothing.
        return Ok(());
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        TraceError(format!(
            "{name}: at byte {}: expected blktrace's binary records (magic 0x{:08x}) or blkparse's text, found bytes that are neither",
            e.valid_up_to(),
            BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION
        ))
    })?;
    read_text(name, text, out, notes)
}

/// A binary trace's bytes, read in the byte order its magic reads right in
/// (`check_data_endianness`).
struct Raw<'a> {
    b: &'a [u8],
    big: bool,
}

impl Raw<'_> {
    fn u16_at(&self, o: usize) -> u16 {
        let b = self.b;
        if self.big {
            u16::from_be_bytes([b[o], b[o + 1]])
        } else {
            u16::from_le_bytes([b[o], b[o + 1]])
        }
    }

    fn u32_at(&self, o: usize) -> u32 {
        let b = self.b;
        let a = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    fn u64_at(&self, o: usize) -> u64 {
        let big = self.big;
        (u64::from(self.u32_at(o + if big { 0 } else { 4 })) << 32) | u64::from(self.u32_at(o + if big { 4 } else { 0 }))
    }
}

/// `read_events`: header after header, each checked, its payload taken; process notes name
/// the pids (`handle_notify`). The byte order is the one the magic reads right in.
pub fn read_binary(name: &str, b: &[u8], out: &mut Vec<RealRecord>, notes: &mut ReadNotes) -> Result<(), TraceError> {
    let big = b.len() >= 4 && (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) & 0xffff_ff00) != BLK_IO_TRACE_MAGIC;
    let raw = Raw { b, big };
    let mut at = 0usize;
    while at < b.len() {
        let here = at as u64;
        if b.len() - at < HEADER_BYTES {
            notes.cut.push(format!(
                "{name}: cut short at byte {here} (a {HEADER_BYTES}-byte blk_io_trace header, {} byte(s) left): read up to it, as blkparse does",
                b.len() - at
            ));
            break;
        }
        verify_trace(name, here, raw.u32_at(at))?;
        let pdu_len = usize::from(raw.u16_at(at + 46));
        let pdu_at = at + HEADER_BYTES;
        if b.len() - pdu_at < pdu_len {
            notes.cut.push(format!(
                "{name}: cut short at byte {pdu_at} (a {pdu_len}-byte payload, {} byte(s) left): read up to it, as blkparse does",
                b.len() - pdu_at
            ));
            break;
        }
        let pdu = &b[pdu_at..pdu_at + pdu_len];
        let o = at;
        at = pdu_at + pdu_len;
        let action = raw.u32_at(o + 28);
        let pid = raw.u32_at(o + 32);
        if action & BLK_TC_NOTIFY_ACT != 0 {
            if action & 0xffff == BLK_TN_PROCESS {
                let comm: String = pdu.iter().take_while(|&&c| c != 0).take(16).map(|&c| char::from(c)).collect();
                // The first name a pid is given stays, as blkparse's `add_ppm_hash` keeps it (pid 0
                // is swapper/0 on every CPU).
                notes.comms.entry(pid).or_insert(comm);
            } else {
                notes.skipped += 1;
            }
            continue;
        }
        let Some(code) = action_code(action & 0xffff) else {
            notes.skipped += 1;
            continue;
        };
        if out.len() as u64 >= REPLAY_RECORDS_MAX {
            return Err(TraceError(format!("{name}: at byte {here}: more than {REPLAY_RECORDS_MAX} records; trace a shorter stretch")));
        }
        out.push(binary_record(&raw, o, pdu, code, &notes.comms));
    }
    Ok(())
}

/// `verify_trace`: a header's magic and version, `here` its byte offset.
fn verify_trace(name: &str, here: u64, magic: u32) -> Result<(), TraceError> {
    if magic & 0xffff_ff00 != BLK_IO_TRACE_MAGIC {
        return Err(TraceError(format!(
            "{name}: at byte {here}: expected blktrace's magic 0x{:08x}, found 0x{magic:08x}",
            BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION
        )));
    }
    if magic & 0xff != BLK_IO_TRACE_VERSION {
        return Err(TraceError(format!(
            "{name}: at byte {here}: expected blk_io_trace version {BLK_IO_TRACE_VERSION}, found {}",
            magic & 0xff
        )));
    }
    Ok(())
}

/// The record whose header is at `o` (its payload `pdu`, its action `code`), the process named
/// as the notes read so far name its pid (a completion carries none, as blkparse prints it).
fn binary_record(raw: &Raw, o: usize, pdu: &[u8], code: &'static str, comms: &BTreeMap<u32, String>) -> RealRecord {
    let action = raw.u32_at(o + 28);
    let pid = raw.u32_at(o + 32);
    let device = raw.u32_at(o + 36);
    let sector = raw.u64_at(o + 16);
    let be64 = |p: &[u8]| p.get(..8).map(|s| u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]));
    // `struct blk_io_trace_remap`: device_from, device_to, sector_from, big-endian.
    let be32 = |p: &[u8]| u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
    let (from, remap_to) = match code {
        "A" if pdu.len() >= 16 => {
            let (dev, to) = (be32(pdu), be32(&pdu[4..]));
            (be64(&pdu[8..]).map(|s| (dev >> 20, dev & 0xf_ffff, s)), Some((to >> 20, to & 0xf_ffff)))
        }
        "X" | "U" | "UT" => (be64(pdu).map(|s| (0, 0, s)), None),
        _ => (None, None),
    };
    RealRecord {
        time_ns: raw.u64_at(o + 8),
        major: device >> 20,
        minor: device & 0xf_ffff,
        cpu: raw.u32_at(o + 40),
        seq: raw.u32_at(o + 4),
        action: code,
        write: action & BLK_TC_WRITE_ACT != 0,
        cats: (action >> 16) as u16,
        sector,
        sectors: raw.u32_at(o + 24) / 512,
        pid,
        comm: if matches!(code, "C" | "R") { String::new() } else { comms.get(&pid).cloned().unwrap_or_default() },
        from,
        remap_to,
        error: raw.u16_at(o + 44),
    }
}

/// blkparse's default output, a record a line
/// (`  8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]`); its summary, `#`
/// comment lines (a header some scripts add) and any other line that does not start with
/// `MAJ,MIN` are passed over. A line that does start so but does not read as a record is an
/// error naming the line, unless it is the text's last and unfinished (no newline): a text cut
/// mid-line is read up to the cut, as a cut binary file is.
pub fn read_text(name: &str, text: &str, out: &mut Vec<RealRecord>, notes: &mut ReadNotes) -> Result<(), TraceError> {
    let before = out.len();
    // blkparse's summary starts at its first "CPU0 (8,0):" or "Total (8,0):" line; any other
    // line that is not a record is named (a file edited by hand, or two outputs pasted together).
    let mut summary = false;
    let (mut stray, mut first_stray) = (0u64, None::<(usize, &str)>);
    let lines = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| {
            TraceError(format!("{name}: line {}: expected {what} in a blkparse record: '{}'", i + 1, crate::scenario::clip_line(line)))
        };
        match text_record(line) {
            Ok(Some(r)) => {
                if out.len() as u64 >= REPLAY_RECORDS_MAX {
                    return Err(TraceError(format!(
                        "{name}: line {}: more than {REPLAY_RECORDS_MAX} records; trace a shorter stretch",
                        i + 1
                    )));
                }
                out.push(r);
            }
            Ok(None) => notes.skipped += 1,
            Err(None) => {
                let w: Vec<&str> = line.split_whitespace().collect();
                let head = w.first().copied().unwrap_or("");
                summary |= (head.starts_with("CPU") && head[3..].parse::<u32>().is_ok() || head == "Total")
                    && w.get(1).is_some_and(|x| x.starts_with('('));
                if !summary && !w.is_empty() && !head.starts_with('#') {
                    stray += 1;
                    first_stray.get_or_insert((i + 1, line));
                }
            }
            Err(Some(what)) if i + 1 == lines && !text.ends_with('\n') => {
                notes
                    .cut
                    .push(format!("{name}: cut short in line {} ({what} missing): read up to it, as blkparse reads a cut file", i + 1));
            }
            Err(Some(what)) => return Err(bad(what)),
        }
    }
    if let Some((n, line)) = first_stray.filter(|_| out.len() > before) {
        notes.stray.push(format!(
            "{name}: {} neither a record nor blkparse's summary, passed over (the first, line {n}: '{}')",
            crate::scenario::counted(stray, "line"),
            crate::scenario::clip(line)
        ));
    }
    if out.len() == before && notes.skipped == 0 {
        return Err(TraceError(format!(
            "{name}: expected blkparse records ('MAJ,MIN CPU SEQ SECONDS.NS PID ACTION RWBS ...') or blktrace's binary records, found none"
        )));
    }
    Ok(())
}

/// One line of blkparse's text: a record; `Ok(None)` for an action blkviz does not show;
/// `Err(None)` for a line that is no record (no `MAJ,MIN` first); `Err(Some(what))` for a record
/// missing `what`. The process name is what the brackets hold, spaces and all
/// (`[DataXceiver for]`), on every action; an unplug's count follows them.
fn text_record(line: &str) -> Result<Option<RealRecord>, Option<&'static str>> {
    let (body, comm, after) = match (line.find(" ["), line.rfind(']')) {
        (Some(a), Some(b)) if b > a => (&line[..a], Some(&line[a + 2..b]), &line[b + 1..]),
        _ => (line, None, ""),
    };
    let w: Vec<&str> = body.split_whitespace().chain(after.split_whitespace()).collect();
    let dev = w.first().and_then(|d| d.split_once(',')).and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    let (major, minor) = dev.ok_or(None)?;
    if w.len() < 6 {
        return Err(Some("CPU, sequence, time, pid and action"));
    }
    let cpu = w[1].parse().map_err(|_| Some("a CPU number"))?;
    let seq = w[2].parse().map_err(|_| Some("a sequence number"))?;
    let time_ns = parse_time(w[3]).ok_or(Some("a time as SECONDS.NANOSECONDS"))?;
    let pid = w[4].parse().map_err(|_| Some("a pid"))?;
    let Some(code) = (1..=15).filter_map(action_code).find(|c| *c == w[5]) else { return Ok(None) };
    let rwbs = w.get(6).ok_or(Some("the RWBS field"))?;
    let rest = &w[7.min(w.len())..];
    let (sector, sectors, from) = text_fields(code, rest)?;
    let error = if matches!(code, "C" | "R") { comm.and_then(|e| e.parse::<i32>().ok()).unwrap_or(0) as u16 } else { 0 };
    let comm = if matches!(code, "C" | "R") { String::new() } else { comm.unwrap_or("").to_string() };
    let cats = cats_of_rwbs(rwbs);
    // blkparse's RWBS (`fill_rwbs`) prints a discard as D in place of W: the kernel traces it
    // as a write (BLK_TC_WRITE), and blkparse's summary counts it among the writes.
    let write = cats & (TC_WRITE | TC_DISCARD) != 0;
    let cats = if cats & TC_DISCARD != 0 { cats | TC_WRITE } else { cats };
    Ok(Some(RealRecord {
        time_ns,
        major,
        minor,
        cpu,
        seq,
        action: code,
        write,
        cats,
        sector,
        sectors,
        pid,
        comm,
        from,
        remap_to: None,
        error,
    }))
}

/// What `text_fields` reads: (sector, size in sectors, `RealRecord::from`).
type TextFields = (u64, u32, Option<(u32, u32, u64)>);

/// A record's fields after its RWBS and outside its brackets (`rest`) for its action `code`,
/// as blkparse's `process_default` prints them for each action: a sector and `+ size` where the
/// record has a size (a request with no data, an empty flush, prints no size, and but for C no
/// sector either); `Err` names what is missing.
fn text_fields(code: &str, rest: &[&str]) -> Result<TextFields, Option<&'static str>> {
    let num = |k: usize, what: &'static str| rest.get(k).and_then(|s| s.parse::<u64>().ok()).ok_or(Some(what));
    Ok(match code {
        "P" => (0, 0, None),
        "U" | "UT" => (0, 0, Some((0, 0, num(0, "the unplug's request count")?))),
        "X" => (num(0, "a sector")?, 0, Some((0, 0, num(2, "the split's sector")?))),
        "A" => {
            let dev = rest.get(4).and_then(|s| s.strip_prefix('(')).and_then(|s| s.strip_suffix(')')).and_then(|s| s.split_once(','));
            let (fm, fn_) = dev.and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))).ok_or(Some("(MAJ,MIN) after <-"))?;
            (num(0, "a sector")?, num(2, "a size in sectors")? as u32, Some((fm, fn_, num(5, "the remap's sector")?)))
        }
        _ if rest.is_empty() && !matches!(code, "C" | "R") => (0, 0, None),
        _ if rest.len() == 1 && matches!(code, "C" | "R") => (num(0, "a sector")?, 0, None),
        _ => (num(0, "a sector")?, num(2, "a size in sectors")? as u32, None),
    })
}

// Trace categories (`enum blktrace_cat`), as `RealRecord::cats` holds them.
pub const TC_READ: u16 = 1 << 0;
pub const TC_WRITE: u16 = 1 << 1;
pub const TC_FLUSH: u16 = 1 << 2;
pub const TC_SYNC: u16 = 1 << 3;
pub const TC_AHEAD: u16 = 1 << 11;
pub const TC_META: u16 = 1 << 12;
pub const TC_DISCARD: u16 = 1 << 13;
pub const TC_FUA: u16 = 1 << 15;

/// blkparse 1.2's `fill_rwbs`: F for a flush, then D (discard), W (write), R (a read with
/// data) or N (none), then F for FUA, A (readahead), S (sync), M (metadata).
pub fn rwbs(cats: u16, bytes: bool) -> String {
    let mut s = String::with_capacity(6);
    if cats & TC_FLUSH != 0 {
        s.push('F');
    }
    s.push(if cats & TC_DISCARD != 0 {
        'D'
    } else if cats & TC_WRITE != 0 {
        'W'
    } else if bytes {
        'R'
    } else {
        'N'
    });
    for (bit, c) in [(TC_FUA, 'F'), (TC_AHEAD, 'A'), (TC_SYNC, 'S'), (TC_META, 'M')] {
        if cats & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// The categories a blkparse RWBS field names (`rwbs` read back): a leading F before the
/// direction is a flush, one after it FUA.
fn cats_of_rwbs(field: &str) -> u16 {
    let b = field.as_bytes();
    let flush = b.len() > 1 && b[0] == b'F';
    let mut cats = if flush { TC_FLUSH } else { 0 };
    let rest = if flush { &b[1..] } else { b };
    for (i, &c) in rest.iter().enumerate() {
        cats |= match (i, c) {
            (0, b'D') => TC_DISCARD,
            (0, b'W') => TC_WRITE,
            (0, b'R') => TC_READ,
            (_, b'F') => TC_FUA,
            (_, b'A') => TC_AHEAD,
            (_, b'S') => TC_SYNC,
            (_, b'M') => TC_META,
            _ => 0,
        };
    }
    cats
}

fn parse_time(s: &str) -> Option<u64> {
    let (secs, ns) = s.split_once('.')?;
    if ns.len() != 9 || !ns.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(ns.parse().ok()?)
}

/// Where a file goes among blktrace's per-CPU files: by device name, then CPU number
/// (`sda.blktrace.10` after `sda.blktrace.9`), as `blkparse -i DEV` opens a device's CPUs in
/// turn; a name that is not `DEV.blktrace.N` goes by its name alone, before the CPU files.
pub fn file_sort_key(name: &str) -> (String, u64, String) {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match base.rsplit_once(".blktrace.") {
        Some((dev, cpu)) if !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()) => {
            (dev.to_string(), cpu.parse().unwrap_or(u64::MAX), name.to_string())
        }
        _ => (base.to_string(), 0, name.to_string()),
    }
}

/// What replay and the page say when the files held no record: cut before the first one, or
/// not a trace at all (`names`: the files read, named when there is one).
pub fn no_records(records: &[RealRecord], notes: &ReadNotes, names: &[String]) -> Option<String> {
    if !records.is_empty() {
        return None;
    }
    Some(if notes.cut.is_empty() {
        let which = match names {
            [one] => format!("'{}'", crate::scenario::clip_path(one)),
            many => format!("these {} files", many.len()),
        };
        format!("no records in {which}: expected blktrace's binary records (DEV.blktrace.N), a `blkparse -d` dump or blkparse's text")
    } else {
        format!("no records before the cut: {}", notes.cut.join("; "))
    })
}

/// Refuses records read twice: the same trace given both as blkparse's text and as blktrace's
/// files (`blksim trace` writes both into one directory, so `replay DIR/*` reads each record
/// twice), or a `blkparse -d` dump beside the per-CPU files it came from. The kernel numbers a
/// device's records per CPU (blkparse's sequence column), so two files holding records of one
/// device and CPU with overlapping sequence ranges hold the same records. `file_ends` as for
/// `merge`, before it.
pub fn each_record_once(names: &[String], records: &[RealRecord], file_ends: &[usize]) -> Result<(), TraceError> {
    // (major, minor, cpu) -> (file, lowest and highest sequence) per file holding it.
    type DevCpu = (u32, u32, u32);
    let mut held: BTreeMap<DevCpu, Vec<(usize, u32, u32)>> = BTreeMap::new();
    let mut start = 0;
    for (f, &end) in file_ends.iter().enumerate() {
        let mut ranges: BTreeMap<DevCpu, (u32, u32)> = BTreeMap::new();
        for r in &records[start..end] {
            let e = ranges.entry((r.major, r.minor, r.cpu)).or_insert((r.seq, r.seq));
            *e = (e.0.min(r.seq), e.1.max(r.seq));
        }
        for (key, (lo, hi)) in ranges {
            let files = held.entry(key).or_default();
            if let Some(&(g, glo, ghi)) = files.iter().find(|&&(_, glo, ghi)| lo <= ghi && glo <= hi) {
                let name = |i: usize| crate::scenario::clip_path(names.get(i).map_or("?", |n| n.as_str()));
                return Err(TraceError(format!(
                    "'{}' and '{}' both hold device {},{} CPU {}'s records {} to {}: each would count twice; expected each record once (one of a trace's blkparse text, `blkparse -d` dump or per-CPU files)",
                    name(g),
                    name(f),
                    key.0,
                    key.1,
                    key.2,
                    lo.max(glo),
                    hi.min(ghi)
                )));
            }
            files.push((f, lo, hi));
        }
        start = end;
    }
    Ok(())
}

/// Puts records in the order blkparse prints them and makes times relative to the first
/// record, as blkparse does. `file_ends[i]` is where file i's records end in `records` (read
/// file by file, in `file_sort_key` order). One file (a `blkparse -d` dump, blkparse's text,
/// one CPU's file) keeps its order, sorted by time (a stable sort: a dump is in time order
/// already, which is the order btt reads it in). Several files (blktrace's per-CPU files) are
/// merged as blkparse's `do_file` merges them (`tools::blkparse::file_order`), so records of
/// one instant come out in blkparse's order too.
pub fn merge(records: &mut Vec<RealRecord>, file_ends: &[usize]) -> Option<String> {
    let streams: Vec<std::ops::Range<usize>> =
        file_ends.iter().scan(0, |start, &end| Some(std::mem::replace(start, end)..end)).filter(|r| !r.is_empty()).collect();
    assert!(file_ends.last().is_none_or(|&e| e == records.len()), "file ends cover the records");
    if streams.len() > 1 {
        // Each file in time order (a per-CPU file is already; a dump or a text file may not
        // be), so the merge below sees streams as blkparse's does.
        for r in &streams {
            records[r.clone()].sort_by_key(|x| x.time_ns);
        }
        let times: Vec<Vec<u64>> = streams.iter().map(|r| records[r.clone()].iter().map(|x| x.time_ns).collect()).collect();
        let order = crate::tools::blkparse::file_order(&times);
        let mut taken: Vec<Option<RealRecord>> = std::mem::take(records).into_iter().map(Some).collect();
        *records =
            order.into_iter().map(|(s, i)| taken[streams[s as usize].start + i as usize].take().expect("each record once")).collect();
    } else {
        records.sort_by_key(|r| r.time_ns);
    }
    let note = set_aside_skewed(records);
    let t0 = records.iter().map(|r| r.time_ns).min().unwrap_or(0);
    for r in records.iter_mut() {
        r.time_ns -= t0;
    }
    note
}

/// Records this far in time from all others belong to no trace the rest does: no blktrace
/// session runs a year, and a sound per-CPU clock is never a year off the others.
pub const CLOCK_GAP_NS: u64 = 365 * 86_400 * 1_000_000_000;

/// Sets aside the records that sit more than `CLOCK_GAP_NS` from the largest group of records
/// (groups split where consecutive times are further apart than that): a CPU whose clock is
/// skewed, or times corrupted in the file. They are set aside, not re-based: blktrace stamps
/// each CPU's records with that CPU's clock and nothing in the trace ties one CPU's clock to
/// another's, so any offset would be a guess, and a request queued on one CPU and completed on
/// another would get a made-up Q2C. Returns the one line naming them, per CPU, if any.
pub fn set_aside_skewed(records: &mut Vec<RealRecord>) -> Option<String> {
    let mut t: Vec<u64> = records.iter().map(|r| r.time_ns).collect();
    t.sort_unstable();
    // The largest group of records no gap splits (the earliest on a tie): [lo, hi].
    let (mut best, mut start) = ((0usize, 0usize), 0usize);
    for i in 1..=t.len() {
        if i == t.len() || t[i] - t[i - 1] > CLOCK_GAP_NS {
            if i - start > best.1 - best.0 {
                best = (start, i);
            }
            start = i;
        }
    }
    if best.1 - best.0 == t.len() {
        return None;
    }
    let (lo, hi) = (t[best.0], t[best.1 - 1]);
    let mut aside: BTreeMap<u32, u64> = BTreeMap::new();
    let mut nearest = u64::MAX;
    records.retain(|r| {
        let keep = (lo..=hi).contains(&r.time_ns);
        if !keep {
            *aside.entry(r.cpu).or_default() += 1;
            nearest = nearest.min(if r.time_ns < lo { lo - r.time_ns } else { r.time_ns - hi });
        }
        keep
    });
    let who: Vec<String> = aside.iter().map(|(cpu, n)| format!("CPU {cpu}'s {}", crate::scenario::counted(*n, "record"))).collect();
    Some(format!(
        "{} sit {} s or more from the other records (a clock skewed on that CPU, or corrupted times): set aside, since nothing in a trace ties one CPU's clock to another's; the figures are of the other {}",
        who.join(", "),
        nearest / 1_000_000_000,
        crate::scenario::counted(records.len() as u64, "record")
    ))
}

/// After the files are read (`file_ends` as for `merge`): each record once
/// (`each_record_once`), the records merged in blkparse's order (`merge`) and any set aside
/// for their clock named in `notes`.
pub fn finish(names: &[String], records: &mut Vec<RealRecord>, file_ends: &[usize], notes: &mut ReadNotes) -> Result<(), TraceError> {
    each_record_once(names, records, file_ends)?;
    // A record read before its pid's note (in another CPU's file) takes the name the trace
    // gives that pid.
    for r in records.iter_mut().filter(|r| r.comm.is_empty() && !matches!(r.action, "C" | "R")) {
        if let Some(c) = notes.comms.get(&r.pid) {
            r.comm.clone_from(c);
        }
    }
    notes.clock.extend(merge(records, file_ends));
    notes.missing.extend(missing_cpu_files(names));
    Ok(())
}

/// blktrace writes one file per CPU, `DEV.blktrace.N` for N from 0 to the last CPU: a set whose
/// numbers skip one lacks that CPU's records, and the requests it issued or completed. One line
/// per device that lacks any, naming the files missing.
pub fn missing_cpu_files(names: &[String]) -> Vec<String> {
    let mut sets: BTreeMap<&str, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for n in names {
        if let Some((dev, cpu)) = n.rsplit_once(".blktrace.") {
            if let Ok(cpu) = cpu.parse::<u64>() {
                sets.entry(dev).or_default().insert(cpu);
            }
        }
    }
    let mut out = Vec::new();
    for (dev, cpus) in sets {
        let last = *cpus.last().expect("a set holds a CPU");
        let missing: Vec<u64> = (0..last).filter(|c| !cpus.contains(c)).collect();
        if missing.is_empty() {
            continue;
        }
        let shown: Vec<String> = missing.iter().take(8).map(|c| c.to_string()).collect();
        let more = if missing.len() > 8 { format!(" and {} more", missing.len() - 8) } else { String::new() };
        out.push(format!(
            "{}: no file for CPU {}{more} among CPUs 0 to {last} ({}.blktrace.N): its records are missing, and requests it issued or completed look lost",
            crate::scenario::clip_path(dev),
            shown.join(", "),
            crate::scenario::clip_path(dev.rsplit(['/', '\\']).next().unwrap_or(dev))
        ));
    }
    out
}

/// A record as blkparse 1.2's default format prints it (`process_default`): its RWBS from the
/// record's categories (`rwbs`), a sector and `+ size` only where the record has a size (a
/// completion's sector always), a remap under the device its payload names, a pid no note named
/// as `(null)` (C's printf of a NULL name).
pub fn blkparse_line(r: &RealRecord) -> String {
    let rwbs = rwbs(r.cats, r.sectors > 0);
    let comm = if r.comm.is_empty() { "(null)" } else { &r.comm };
    let sized = |tail: &str| if r.sectors > 0 { format!("{} + {} {tail}", r.sector, r.sectors) } else { tail.to_string() };
    let tail = match (r.action, r.from) {
        ("C" | "R", _) if r.sectors == 0 => format!("{} [{}]", r.sector, r.error),
        ("C" | "R", _) => format!("{} + {} [{}]", r.sector, r.sectors, r.error),
        ("P", _) => format!("[{comm}]"),
        ("U" | "UT", Some((_, _, n))) => format!("[{comm}] {n}"),
        ("X", Some((_, _, at))) => format!("{} / {at} [{comm}]", r.sector),
        ("A", Some((m, n, s))) => format!("{} + {} <- ({m},{n}) {s}", r.sector, r.sectors),
        _ => sized(&format!("[{comm}]")),
    };
    let (major, minor) = r.remap_to.unwrap_or((r.major, r.minor));
    format!(
        "{:>3},{:<3} {:>2} {:>8} {:>5}.{:09} {:>5} {:>2} {rwbs:>3} {tail}",
        major,
        minor,
        r.cpu,
        r.seq,
        r.time_ns / 1_000_000_000,
        r.time_ns % 1_000_000_000,
        r.pid,
        r.action
    )
}
