//! blkparse's default output format (blktrace's `blkparse.c`, 1.2): one line per trace record,
//! as the page's log, its blkparse export and `blksim trace` print them.

use crate::engine::ids::ThreadId;
use crate::kernel::trace::blktrace::{Action, TraceRecord};

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
        // The 2.6 kernel's name for every CPU's idle task (3.x names them swapper/N), as
        // kblockd/N is its worker's.
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

/// One device's (or one CPU's) counts, as blkparse keeps them (`struct io_stats`): requests
/// and KiB queued (Q), dispatched (D), completed (C) and merged (M, F), per direction, and IO
/// unplugs (U). blkviz traces no requeue, timer unplug or passthrough request.
#[derive(Clone, Copy, Default)]
struct IoStats {
    queued: [(u64, u64); 2],
    dispatched: [(u64, u64); 2],
    completed: [(u64, u64); 2],
    merged: [(u64, u64); 2],
    io_unplugs: u64,
}

impl IoStats {
    fn add(&mut self, o: &IoStats) {
        let sum = |a: &mut [(u64, u64); 2], b: &[(u64, u64); 2]| {
            for (x, y) in a.iter_mut().zip(b) {
                *x = (x.0 + y.0, x.1 + y.1);
            }
        };
        sum(&mut self.queued, &o.queued);
        sum(&mut self.dispatched, &o.dispatched);
        sum(&mut self.completed, &o.completed);
        sum(&mut self.merged, &o.merged);
        self.io_unplugs += o.io_unplugs;
    }
}

/// blkparse's `size_cnv`: a count, or KiB with its unit, in 8 columns; over a million the
/// next unit up (a count then reads `1234K`).
fn size_cnv(mut num: u64, kib: bool) -> String {
    let units = ['\0', 'K', 'M', 'G', 'P'];
    let mut i = kib as usize;
    while num > 1_000_000 && i < units.len() - 1 {
        i += 1;
        num /= 1000;
    }
    // A count's unit is C's '\0', which ends the string sprintf wrote.
    if i == 0 {
        format!("{num:>8}")
    } else {
        format!("{num:>8}{}", units[i])
    }
}

/// blkparse's `dump_io_stats`: a section's header and its lines; `depth` for a CPU's section
/// (the device's deepest reads and writes in flight, D to C), not for the total.
fn dump_io_stats(out: &mut String, header: &str, s: &IoStats, depth: Option<[u64; 2]>) {
    let pair = |p: (u64, u64)| format!("{}, {}iB", size_cnv(p.0, false), size_cnv(p.1, true));
    out.push_str(header);
    out.push('\n');
    out.push_str(&format!(" Reads Queued:    {}\t Writes Queued:    {}\n", pair(s.queued[0]), pair(s.queued[1])));
    out.push_str(&format!(" Read Dispatches: {}\t Write Dispatches: {}\n", pair(s.dispatched[0]), pair(s.dispatched[1])));
    out.push_str(&format!(" Reads Requeued:  {}\t\t Writes Requeued:  {}\n", size_cnv(0, false), size_cnv(0, false)));
    out.push_str(&format!(" Reads Completed: {}\t Writes Completed: {}\n", pair(s.completed[0]), pair(s.completed[1])));
    out.push_str(&format!(" Read Merges:     {}\t Write Merges:     {}\n", pair(s.merged[0]), pair(s.merged[1])));
    if let Some([r, w]) = depth {
        out.push_str(&format!(" Read depth:      {r:>8}{:>8}\t Write depth:      {w:>8}\n", ' '));
    }
    out.push_str(&format!(" IO unplugs:      {:>8}{:>8}\t Timer unplugs:    {:>8}\n", s.io_unplugs, ' ', 0));
}

/// blkparse's closing summary (`show_device_and_cpu_stats`, blkparse.c 1.2) for the records
/// in the order it prints them: per device (in `-i` order), a section per CPU that has records
/// of it, their total when there are several, then its throughput (KiB completed per second
/// between its first and last record), its number of records and its sequence skips (none:
/// `blksim trace` numbers every record). `streams[i]` is the (device name, CPU) of stream i.
pub fn summary(names: &[(&str, u16)], streams: &[Vec<TraceRecord>], order: &[(u32, u32)]) -> String {
    struct Dev {
        cpus: std::collections::BTreeMap<u16, IoStats>,
        events: u64,
        first_ns: Option<u64>,
        last_ns: u64,
        depth: [u64; 2],
        max_depth: [u64; 2],
    }
    // Devices in `-i` order (blkparse's `devices` array), which is the streams' order.
    let mut devs: Vec<(&str, Dev)> = Vec::new();
    for &(name, _) in names {
        if !devs.iter().any(|(n, _)| *n == name) {
            let dev = Dev { cpus: Default::default(), events: 0, first_ns: None, last_ns: 0, depth: [0; 2], max_depth: [0; 2] };
            devs.push((name, dev));
        }
    }
    // Each stream's device, found once (dm-sg-lists traces 160 devices, a trace millions of
    // records).
    let dev_of: Vec<usize> = names.iter().map(|&(name, _)| devs.iter().position(|(n, _)| *n == name).expect("listed above")).collect();
    for &(st, i) in order {
        let cpu = names[st as usize].1;
        let r = &streams[st as usize][i as usize];
        let d = &mut devs[dev_of[st as usize]].1;
        d.events += 1;
        d.first_ns.get_or_insert(r.time.ns());
        d.last_ns = r.time.ns();
        let w = r.write as usize;
        let kib = r.bytes as u64 >> 10;
        let s = d.cpus.entry(cpu).or_default();
        let bump = |p: &mut (u64, u64)| *p = (p.0 + 1, p.1 + kib);
        match r.action {
            Action::Q => bump(&mut s.queued[w]),
            Action::M | Action::F => bump(&mut s.merged[w]),
            Action::D => {
                bump(&mut s.dispatched[w]);
                d.depth[w] += 1;
                d.max_depth[w] = d.max_depth[w].max(d.depth[w]);
            }
            Action::C => {
                bump(&mut s.completed[w]);
                d.depth[w] = d.depth[w].saturating_sub(1);
            }
            Action::U => s.io_unplugs += 1,
            _ => {}
        }
    }
    let mut out = String::new();
    for (k, (name, d)) in devs.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let mut total = IoStats::default();
        for (cpu, s) in &d.cpus {
            total.add(s);
            dump_io_stats(&mut out, &format!("CPU{cpu} ({name}):"), s, Some(d.max_depth));
        }
        if d.cpus.len() > 1 {
            out.push('\n');
            dump_io_stats(&mut out, &format!("Total ({name}):"), &total, None);
        }
        let msec = (d.last_ns - d.first_ns.unwrap_or(0)) / 1_000_000;
        let rate = |kib: u64| (1000 * kib).checked_div(msec).unwrap_or(0);
        out.push_str(&format!("\nThroughput (R/W): {}KiB/s / {}KiB/s\n", rate(total.completed[0].1), rate(total.completed[1].1)));
        out.push_str(&format!("Events ({name}): {} entries\n", d.events));
        out.push_str("Skips: 0 forward (0 -   0.0%)\n");
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

    /// blkparse's `size_cnv`: 8 columns, the next unit up only past a million (C's `%'8Lu%c`,
    /// a count's unit being the '\0' that ends the string).
    #[test]
    fn sizes_switch_unit_past_a_million_as_blkparse_does() {
        assert_eq!(size_cnv(0, false), "       0");
        assert_eq!(size_cnv(1_000_000, false), " 1000000");
        assert_eq!(size_cnv(1_000_001, false), "    1000K");
        assert_eq!(size_cnv(400_000, true), "  400000K");
        assert_eq!(size_cnv(1_500_000, true), "    1500M");
        assert_eq!(size_cnv(2_000_000_000_000, true), "    2000P");
    }
}
