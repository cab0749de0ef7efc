//! blkparse's default output format (blktrace's `blkparse.c`, 1.2): one line per trace record,
//! as the page's log, its blkparse export and `blksim trace` print them.

use crate::engine::ids::ThreadId;
use crate::tools::trace::{Action, TraceRecord};

/// What the log needs to know about a record's device and thread.
pub struct Names<'a> {
    /// (name, major, minor) per device id.
    pub devices: &'a [(String, u32, u32)],
    /// (pid, comm) per thread id.
    pub threads: &'a dyn Fn(u32) -> (u32, String),
}

/// The pid and command a record names; an interrupt on an idle CPU names its idle task.
pub fn process(r: &TraceRecord, n: &Names) -> (u32, String) {
    if r.thread == ThreadId::SWAPPER {
        // 2.6-era name (the idle tasks were all "swapper" until 3.x), as kblockd/N is.
        (0, "swapper".to_string())
    } else {
        (n.threads)(r.thread.0)
    }
}

/// One line in `blkparse`'s default format:
/// `8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]`.
pub fn blkparse_line(r: &TraceRecord, n: &Names) -> String {
    let (_, maj, min) = n.devices.get(r.dev.0 as usize).cloned().unwrap_or_default();
    let (pid, comm) = process(r, n);
    // Plug and unplug carry no data: blkparse shows N for their rwbs.
    let rwbs = match r.action {
        Action::P | Action::U => "N",
        _ if r.write => "W",
        _ => "R",
    };
    let secs = r.time.ns() / 1_000_000_000;
    let nsecs = r.time.ns() % 1_000_000_000;
    let tail = match (r.action, r.from) {
        (Action::C, _) => format!("{} + {} [0]", r.sector, r.bytes / 512),
        (Action::P, _) => format!("[{comm}]"),
        (Action::U, _) => format!("[{comm}] {}", r.related),
        (Action::X, Some((_, rest_at))) => format!("{} / {rest_at} [{comm}]", r.sector),
        (Action::A, Some((from, from_sector))) => {
            let (_, fmaj, fmin) = n.devices.get(from.0 as usize).cloned().unwrap_or_default();
            format!("{} + {} <- ({fmaj},{fmin}) {from_sector}", r.sector, r.bytes / 512)
        }
        _ => format!("{} + {} [{comm}]", r.sector, r.bytes / 512),
    };
    format!("{maj:>3},{min:<3} {:>2} {:>8} {secs:>5}.{nsecs:09} {pid:>5} {:>2} {rwbs:>3} {tail}", r.cpu, r.seq + 1, r.action.code())
}

/// The order in which blkparse prints per-device, per-CPU trace files (`do_file`, 1.2): one
/// stream per file, devices in `-i` order and CPUs ascending, each stream in file order. The
/// streams form a list kept in order of their next record's time (`ms_sort`): a stream goes in
/// before the first with a time not earlier than its own, but never before the list's head on
/// a tie; the head's stream keeps the lead until its next record is strictly later than the
/// second stream's (`ms_resort`). So records of one instant come out by these rules, not by
/// device or sequence number. `streams[i]` holds stream i's record times, in file order; the
/// answer is (stream, index) per record, in print order.
pub fn file_order(streams: &[Vec<u64>]) -> Vec<(u32, u32)> {
    let mut next = vec![0u32; streams.len()];
    let peek = |next: &[u32], s: u32| streams[s as usize][next[s as usize] as usize];
    let sort_in = |list: &mut Vec<u32>, next: &[u32], s: u32| {
        let t = peek(next, s);
        if list.is_empty() || t < peek(next, list[0]) {
            list.insert(0, s);
        } else {
            let mut i = 0;
            while i + 1 < list.len() && peek(next, list[i + 1]) < t {
                i += 1;
            }
            list.insert(i + 1, s);
        }
    };
    let mut list: Vec<u32> = Vec::with_capacity(streams.len());
    for (s, times) in streams.iter().enumerate() {
        if !times.is_empty() {
            sort_in(&mut list, &next, s as u32);
        }
    }
    let mut out = Vec::with_capacity(streams.iter().map(Vec::len).sum());
    while let Some(&head) = list.first() {
        out.push((head, next[head as usize]));
        next[head as usize] += 1;
        if next[head as usize] as usize == streams[head as usize].len() {
            list.remove(0);
        } else if list.len() > 1 && peek(&next, head) > peek(&next, list[1]) {
            list.remove(0);
            sort_in(&mut list, &next, head);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ids::DevId;
    use crate::engine::time::SimTime;

    fn rec(action: Action, t: u64) -> TraceRecord {
        TraceRecord {
            seq: 0,
            time: SimTime(t),
            dev: DevId(0),
            cpu: 3,
            action,
            write: false,
            sector: 223490,
            bytes: 4096,
            thread: ThreadId(0),
            token: 7,
            related: 0,
            from: None,
        }
    }

    /// `r` as a blkparse line, on sda (8,0) below dm-0 (253,0), every thread `dd` with pid 697.
    fn line(r: &TraceRecord) -> String {
        let devices = vec![("sda".to_string(), 8, 0), ("dm-0".to_string(), 253, 0)];
        let threads = |_| (697, "dd".to_string());
        blkparse_line(r, &Names { devices: &devices, threads: &threads })
    }

    #[test]
    fn files_merge_as_blkparse_merges_them() {
        // The head's stream keeps the lead on a tie (stream 2's second record before stream
        // 0's, stream 0's second before stream 1's), and an exhausted stream leaves the list.
        let streams = vec![vec![5, 5, 9], vec![5, 7], vec![1, 5]];
        assert_eq!(file_order(&streams), vec![(2, 0), (2, 1), (0, 0), (0, 1), (1, 0), (1, 1), (0, 2)]);
        // A stream sorted back in goes before the others of its time (stream 2 before 1).
        let streams = vec![vec![5], vec![9], vec![1, 9]];
        assert_eq!(file_order(&streams), vec![(2, 0), (0, 0), (2, 1), (1, 0)]);
    }

    #[test]
    fn a_line_reads_like_blkparse() {
        assert_eq!(line(&rec(Action::Q, 12_000)), "  8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]");
    }

    #[test]
    fn plug_unplug_and_remap_lines_read_like_blkparse() {
        assert_eq!(line(&rec(Action::P, 0)), "  8,0    3        1     0.000000000   697  P   N [dd]");
        let unplug = TraceRecord { related: 3, ..rec(Action::U, 0) };
        assert_eq!(line(&unplug), "  8,0    3        1     0.000000000   697  U   N [dd] 3");
        let remap = TraceRecord { from: Some((DevId(1), 223490)), ..rec(Action::A, 0) };
        assert_eq!(line(&remap), "  8,0    3        1     0.000000000   697  A   R 223490 + 8 <- (253,0) 223490");
    }

    #[test]
    fn splits_and_the_idle_task_read_like_blkparse() {
        let split = TraceRecord { from: Some((DevId(0), 223746)), ..rec(Action::X, 0) };
        assert_eq!(line(&split), "  8,0    3        1     0.000000000   697  X   R 223490 / 223746 [dd]");
        let idle = TraceRecord { thread: ThreadId::SWAPPER, ..rec(Action::D, 0) };
        assert_eq!(line(&idle), "  8,0    3        1     0.000000000     0  D   R 223490 + 8 [swapper]");
    }
}
