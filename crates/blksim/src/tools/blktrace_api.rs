//! `include/linux/blktrace_api.h` (2.6.32; `include/uapi/...` since 3.7): the binary records the
//! `blktrace` tool writes, one file per traced device and CPU (`sda.blktrace.0`, ...), each a
//! run of `struct blk_io_trace` headers with their payloads. What `blkparse -i` and `btt` read.
//!
//! The header is 48 bytes in the writer's byte order (blkparse tells it from the magic); the
//! payloads of a remap, a split and an unplug are big-endian, as the kernel writes them. Before
//! a process's first record in a file comes its `BLK_TN_PROCESS` note (pid and `comm`), which is
//! how blkparse learns the `[comm]` it prints.

use crate::kernel::trace::blktrace::{Action, TraceRecord};
use crate::tools::blkparse::{process, Names};
use std::collections::BTreeMap;

pub const BLK_IO_TRACE_MAGIC: u32 = 0x6561_7400;
pub const BLK_IO_TRACE_VERSION: u32 = 0x07;
/// Header bytes before the payload.
pub const HEADER_BYTES: usize = 48;

// Trace categories (`enum blktrace_cat`), shifted into the action's upper half.
const BLK_TC_SHIFT: u32 = 16;
const BLK_TC_READ: u32 = 1 << 0;
const BLK_TC_WRITE: u32 = 1 << 1;
const BLK_TC_QUEUE: u32 = 1 << 4;
const BLK_TC_ISSUE: u32 = 1 << 6;
const BLK_TC_COMPLETE: u32 = 1 << 7;
const BLK_TC_FS: u32 = 1 << 8;
const BLK_TC_NOTIFY: u32 = 1 << 10;

const fn tc(cat: u32) -> u32 {
    cat << BLK_TC_SHIFT
}

// Basic actions (`enum blktrace_act`).
const BLK_TA_QUEUE: u32 = 1;
const BLK_TA_BACKMERGE: u32 = 2;
const BLK_TA_FRONTMERGE: u32 = 3;
const BLK_TA_GETRQ: u32 = 4;
const BLK_TA_SLEEPRQ: u32 = 5;
const BLK_TA_ISSUE: u32 = 7;
const BLK_TA_COMPLETE: u32 = 8;
const BLK_TA_PLUG: u32 = 9;
const BLK_TA_UNPLUG_IO: u32 = 10;
const BLK_TA_INSERT: u32 = 12;
const BLK_TA_SPLIT: u32 = 13;
const BLK_TA_REMAP: u32 = 15;
/// `BLK_TN_PROCESS`: a pid's command name.
const BLK_TN_PROCESS: u32 = tc(BLK_TC_NOTIFY);

/// The action word the kernel writes for a record: the basic action, its category, and the
/// direction (`ddir_act[rw & WRITE]`; plug and unplug carry rw 0, so READ); requests of the
/// file system also carry `BLK_TC_FS` (`blk_add_trace_rq`).
pub fn action_word(r: &TraceRecord) -> u32 {
    let (basic, cat) = match r.action {
        Action::Q => (BLK_TA_QUEUE, BLK_TC_QUEUE),
        Action::M => (BLK_TA_BACKMERGE, BLK_TC_QUEUE),
        Action::F => (BLK_TA_FRONTMERGE, BLK_TC_QUEUE),
        Action::G => (BLK_TA_GETRQ, BLK_TC_QUEUE),
        Action::S => (BLK_TA_SLEEPRQ, BLK_TC_QUEUE),
        Action::P => (BLK_TA_PLUG, BLK_TC_QUEUE),
        Action::U => (BLK_TA_UNPLUG_IO, BLK_TC_QUEUE),
        Action::I => (BLK_TA_INSERT, BLK_TC_QUEUE | BLK_TC_FS),
        Action::D => (BLK_TA_ISSUE, BLK_TC_ISSUE | BLK_TC_FS),
        Action::C => (BLK_TA_COMPLETE, BLK_TC_COMPLETE | BLK_TC_FS),
        Action::X => (BLK_TA_SPLIT, 0),
        Action::A => (BLK_TA_REMAP, BLK_TC_QUEUE),
    };
    let dir = if r.write && !matches!(r.action, Action::P | Action::U) { BLK_TC_WRITE } else { BLK_TC_READ };
    basic | tc(cat | dir)
}

/// The kernel's `dev_t` as blktrace records it: major in the top 12 bits, minor in the low 20.
pub fn dev_t(major: u32, minor: u32) -> u32 {
    (major << 20) | (minor & 0xf_ffff)
}

/// Appends one `struct blk_io_trace` header (little-endian, error 0), its `pdu_len` bytes of
/// payload to follow. Public for the tests that hand-build records for the real blkparse.
#[allow(clippy::too_many_arguments)]
pub fn header(
    out: &mut Vec<u8>,
    sequence: u32,
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    cpu: u32,
    pdu_len: u16,
) {
    out.extend_from_slice(&(BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION).to_le_bytes());
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend_from_slice(&time_ns.to_le_bytes());
    out.extend_from_slice(&sector.to_le_bytes());
    out.extend_from_slice(&bytes.to_le_bytes());
    out.extend_from_slice(&action.to_le_bytes());
    out.extend_from_slice(&pid.to_le_bytes());
    out.extend_from_slice(&device.to_le_bytes());
    out.extend_from_slice(&cpu.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // error
    out.extend_from_slice(&pdu_len.to_le_bytes());
}

/// Appends one record to a blktrace stream: the process's note first if this stream has not
/// named it yet, then the header with the next sequence number and the action's payload.
fn write_record(buf: &mut Vec<u8>, seq: &mut u32, noted: &mut Vec<u32>, r: &TraceRecord, n: &Names, device: u32) {
    let (pid, comm) = process(r, n);
    if !noted.contains(&pid) {
        noted.push(pid);
        // TASK_COMM_LEN bytes, NUL-padded, as `trace_note_tsk` sends `tsk->comm`.
        let mut name = [0u8; 16];
        for (i, b) in comm.bytes().take(15).enumerate() {
            name[i] = b;
        }
        header(buf, 0, r.time.ns(), 0, 0, BLK_TN_PROCESS, pid, device, r.cpu as u32, 16);
        buf.extend_from_slice(&name);
    }
    *seq += 1;
    let pdu: Vec<u8> = match (r.action, r.from) {
        (Action::A, Some((from, from_sector))) => {
            let (_, fmaj, fmin) = n.devices.get(from.0 as usize).cloned().unwrap_or_default();
            let mut p = Vec::with_capacity(16);
            p.extend_from_slice(&dev_t(fmaj, fmin).to_be_bytes());
            p.extend_from_slice(&device.to_be_bytes());
            p.extend_from_slice(&from_sector.to_be_bytes());
            p
        }
        (Action::X, Some((_, rest_at))) => rest_at.to_be_bytes().to_vec(),
        (Action::U, _) => (r.related as u64).to_be_bytes().to_vec(),
        _ => Vec::new(),
    };
    let bytes = if matches!(r.action, Action::P | Action::U) { 0 } else { r.bytes };
    header(buf, *seq, r.time.ns(), r.sector, bytes, action_word(r), pid, device, r.cpu as u32, pdu.len() as u16);
    buf.extend_from_slice(&pdu);
}

/// The records as one stream in time order, as `blkparse -d` dumps them: what `btt -i` reads
/// (and `blksim replay`). The page's "Export blktrace" downloads it. Sequence numbers and
/// process notes are per device and CPU, as in the per-CPU files.
#[inline]
pub fn encode_dump(records: &[TraceRecord], n: &Names) -> Vec<u8> {
    // The trace is in the order the engine made the records; a work item's records are
    // stamped within it (`TraceClock`), so a later record of another device can be stamped
    // earlier. btt reads a dump in file order and wants time order, as blkparse -d writes it.
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.time, r.seq));
    let mut out = Vec::new();
    let mut streams: BTreeMap<(u16, u16), (u32, Vec<u32>)> = BTreeMap::new();
    for r in sorted {
        let (_, major, minor) = n.devices.get(r.dev.0 as usize).cloned().unwrap_or_default();
        let (seq, noted) = streams.entry((r.dev.0, r.cpu)).or_default();
        write_record(&mut out, seq, noted, r, n, dev_t(major, minor));
    }
    out
}

/// One traced device's per-CPU files.
struct DevFiles {
    name: String,
    device: u32,
    /// Per CPU: the file's bytes, the last sequence number, and the pids already noted.
    cpus: BTreeMap<u16, (Vec<u8>, u32, Vec<u32>)>,
}

/// Encodes records as blktrace's per-device, per-CPU files: (file name, bytes), every device
/// that has a record getting a file for each of CPUs `0..ncpus` (empty where nothing ran), as
/// `blktrace` leaves them. Sequence numbers count per device and CPU, as the kernel's do.
pub fn encode(records: &[TraceRecord], n: &Names, ncpus: u16) -> Vec<(String, Vec<u8>)> {
    // Each file in time order, as the kernel fills a CPU's buffer (one device's records are
    // stamped in order already; this keeps any caller's order out of it).
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.time, r.seq));
    let mut devs: BTreeMap<u16, DevFiles> = BTreeMap::new();
    for r in sorted {
        let (name, major, minor) = n.devices.get(r.dev.0 as usize).cloned().unwrap_or_default();
        let d = devs.entry(r.dev.0).or_insert_with(|| DevFiles { name, device: dev_t(major, minor), cpus: BTreeMap::new() });
        let (buf, seq, noted) = d.cpus.entry(r.cpu).or_default();
        write_record(buf, seq, noted, r, n, d.device);
    }
    let mut out = Vec::new();
    for d in devs.values_mut() {
        let cpus = ncpus.max(d.cpus.keys().max().map_or(0, |&c| c + 1));
        for cpu in 0..cpus {
            let bytes = d.cpus.remove(&cpu).map(|(b, _, _)| b).unwrap_or_default();
            out.push((format!("{}.blktrace.{cpu}", d.name), bytes));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ids::{DevId, ThreadId};
    use crate::engine::time::SimTime;

    fn rec(action: Action, write: bool) -> TraceRecord {
        TraceRecord {
            seq: 0,
            time: SimTime(1_500),
            dev: DevId(0),
            cpu: 1,
            action,
            write,
            sector: 2048,
            bytes: 4096,
            thread: ThreadId(0),
            token: 0,
            related: 0,
            from: None,
        }
    }

    #[test]
    fn action_words_are_the_kernels() {
        // BLK_TA_QUEUE | BLK_TC_ACT(BLK_TC_QUEUE), read: 0x00110001.
        assert_eq!(action_word(&rec(Action::Q, false)), 0x0011_0001);
        // BLK_TA_COMPLETE | BLK_TC_ACT(BLK_TC_COMPLETE | BLK_TC_FS), write: 0x01820008.
        assert_eq!(action_word(&rec(Action::C, true)), 0x0182_0008);
        // A plug carries rw 0: READ.
        assert_eq!(action_word(&rec(Action::P, true)), 0x0011_0009);
    }

    #[test]
    fn a_file_holds_a_process_note_then_headers_with_sequences_per_cpu() {
        let devices = vec![("sda".to_string(), 8, 16)];
        let threads = |_| (697, "dd".to_string());
        let n = Names { devices: &devices, threads: &threads };
        let files = encode(&[rec(Action::Q, false), rec(Action::G, false)], &n, 2);
        assert_eq!(files.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(), ["sda.blktrace.0", "sda.blktrace.1"]);
        assert!(files[0].1.is_empty());
        let b = &files[1].1;
        assert_eq!(b.len(), (HEADER_BYTES + 16) + 2 * HEADER_BYTES);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!(u32_at(0), 0x6561_7407);
        assert_eq!(u32_at(28), BLK_TN_PROCESS);
        assert_eq!(&b[HEADER_BYTES..HEADER_BYTES + 3], b"dd\0");
        let first = HEADER_BYTES + 16;
        assert_eq!(u32_at(first + 4), 1, "sequence");
        assert_eq!(u32_at(first + 36), (8 << 20) | 16, "device");
        assert_eq!(u32_at(first + HEADER_BYTES + 4), 2, "sequence");
    }
}
