//! What `iostat -x` would have printed for a real trace (btt -I's way, with the kernel's
//! `io_ticks` for %util): per device, the seconds the trace has records in, and the whole
//! trace as iostat's first report. Per-second figures are kept only for the seconds that hold
//! something, so memory goes by the records, never by the time the trace spans.

use crate::tools::blkparse_input::RealRecord;
use crate::tools::btt::OPEN_MAX;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// iostat's figures for one device and one second of the trace: what completed in it, the
/// merges, and how long the device had a request out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct IostatSecond {
    pub second: u64,
    pub r_s: f64,
    pub w_s: f64,
    // The keys `run --json` uses for the same columns (docs/cli.md's `devices`), so that a script
    // compares a run with its trace's replay by one name.
    pub rkb_s: f64,
    pub wkb_s: f64,
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub util_pct: f64,
}

/// One device's iostat: the seconds that hold a record or a busy stretch's start or end, in
/// order, and the whole trace as iostat's first report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DevIostat {
    pub seconds: Vec<IostatSecond>,
    pub trace: IostatSecond,
}

/// iostat's interval, in ns.
const SECOND_NS: u64 = 1_000_000_000;

/// One second's counts: r, w, rkB, wkB, rrqm, wrqm and busy ns.
type Counts = [u64; 7];

/// One device's counts: per second that holds something, and the busy ns of the whole
/// seconds no record falls in (a stretch busy from end to end, counted in the whole trace).
#[derive(Default)]
struct DevCounts {
    seconds: BTreeMap<u64, Counts>,
    busy: Vec<(u64, u64)>,
}

/// Per device: its seconds and the whole trace (records in time order, from time 0).
pub fn iostat(records: &[RealRecord]) -> BTreeMap<(u32, u32), DevIostat> {
    let last_ns = records.iter().map(|r| r.time_ns).max().unwrap_or(0);
    let mut devs: BTreeMap<(u32, u32), DevCounts> = BTreeMap::new();
    // Requests in flight (by start sector), and since when the device has had any. As the
    // kernel counts them for iostat's %util (`io_ticks`): from the request's insertion (I:
    // `add_request` -> `drive_stat_acct` raises `in_flight`) to its completion, so time
    // waiting in the elevator counts; a request issued with no I (blk-mq straight to the
    // driver) counts from its D, a requeued one once. btt's own `-I` counts from D. A merge
    // adds no request. A device with no I and no D in the whole trace is bio-based (dm-linear,
    // md): it has no requests, and its bios count from their Q to their C, as bio-based dm's
    // `start_io_acct`/`end_io_acct` do (2.6.16 on) and as `blksim run` counts md0 and dm-0.
    let mut busy: BTreeMap<(u32, u32), (BTreeSet<u64>, u64)> = BTreeMap::new();
    let request_based: BTreeSet<(u32, u32)> =
        records.iter().filter(|r| matches!(r.action, "I" | "D")).map(|r| (r.major, r.minor)).collect();
    for r in records {
        let dev = (r.major, r.minor);
        let d = devs.entry(dev).or_default();
        let x = d.seconds.entry(r.time_ns / SECOND_NS).or_default();
        let kb = u64::from(r.sectors) / 2;
        match (r.action, r.write) {
            ("C", false) => (x[0], x[2]) = (x[0] + 1, x[2] + kb),
            ("C", true) => (x[1], x[3]) = (x[1] + 1, x[3] + kb),
            ("M" | "F", false) => x[4] += 1,
            ("M" | "F", true) => x[5] += 1,
            _ => {}
        }
        let (out, since) = busy.entry(dev).or_default();
        let opens = if request_based.contains(&dev) { matches!(r.action, "I" | "D") } else { r.action == "Q" };
        match r.action {
            _ if opens && out.len() < OPEN_MAX => {
                if out.is_empty() {
                    *since = r.time_ns;
                }
                out.insert(r.sector);
            }
            "C" if out.remove(&r.sector) && out.is_empty() => d.busy.push((*since, r.time_ns)),
            _ => {}
        }
    }
    // A device still busy when the trace ends was busy to its end.
    for (dev, (out, since)) in &busy {
        if !out.is_empty() {
            if let Some(d) = devs.get_mut(dev) {
                d.busy.push((*since, last_ns));
            }
        }
    }
    devs.into_iter().map(|(dev, d)| (dev, d.report(last_ns))).collect()
}

impl DevCounts {
    /// The busy stretches counted into the seconds (the whole seconds between a stretch's first
    /// and last that hold no record counted only in the whole trace), and the rates.
    fn report(mut self, last_ns: u64) -> DevIostat {
        let mut unlisted_busy = 0u64;
        for &(from, to) in &self.busy {
            unlisted_busy += add_busy(&mut self.seconds, from, to);
        }
        let mut total: Counts = [0; 7];
        for x in self.seconds.values() {
            for (t, v) in total.iter_mut().zip(x) {
                *t += v;
            }
        }
        total[6] += unlisted_busy;
        let seconds = self.seconds.iter().map(|(&s, x)| rates(s, x, SECOND_NS.min(last_ns.saturating_sub(s * SECOND_NS)).max(1))).collect();
        DevIostat { seconds, trace: rates(0, &total, last_ns.max(1)) }
    }
}

/// Counts a busy stretch from `from` to `to` into the seconds it spans: its first and last
/// second, and any between that hold a record. Returns the busy ns of the seconds between that
/// hold none (whole seconds, so a stretch of days adds two entries, not one per second).
fn add_busy(seconds: &mut BTreeMap<u64, Counts>, from: u64, to: u64) -> u64 {
    if to <= from {
        return 0;
    }
    let (first, last) = (from / SECOND_NS, (to - 1) / SECOND_NS);
    if first == last {
        seconds.entry(first).or_default()[6] += to - from;
        return 0;
    }
    seconds.entry(first).or_default()[6] += (first + 1) * SECOND_NS - from;
    seconds.entry(last).or_default()[6] += to - last * SECOND_NS;
    let mut listed = 0u64;
    for (_, x) in seconds.range_mut(first + 1..last) {
        x[6] += SECOND_NS;
        listed += 1;
    }
    (last - first - 1 - listed) * SECOND_NS
}

/// A second's (or the trace's) counts as rates over `span_ns`.
fn rates(second: u64, x: &Counts, span_ns: u64) -> IostatSecond {
    let rate = |n: u64| n as f64 * 1e9 / span_ns as f64;
    IostatSecond {
        second,
        r_s: rate(x[0]),
        w_s: rate(x[1]),
        rkb_s: rate(x[2]),
        wkb_s: rate(x[3]),
        rrqm_s: rate(x[4]),
        wrqm_s: rate(x[5]),
        util_pct: 100.0 * x[6] as f64 / span_ns as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ns: u64, action: &'static str, sector: u64) -> RealRecord {
        RealRecord {
            time_ns,
            major: 8,
            minor: 0,
            cpu: 0,
            seq: 0,
            action,
            write: false,
            sector,
            sectors: 8,
            pid: 1,
            comm: String::new(),
            from: None,
        }
    }

    /// Seconds with nothing in them take no room: a request out for ten days, with records only
    /// at its ends, is four entries, and the whole trace still counts the days between as busy.
    #[test]
    fn seconds_are_kept_only_where_something_happened() {
        let day = 86_400 * SECOND_NS;
        let recs = [rec(0, "I", 8), rec(SECOND_NS / 2, "D", 8), rec(10 * day, "C", 8), rec(10 * day + 3 * SECOND_NS / 2, "Q", 64)];
        let io = &iostat(&recs)[&(8, 0)];
        assert_eq!(io.seconds.iter().map(|s| s.second).collect::<Vec<_>>(), [0, 863_999, 864_000, 864_001]);
        let busy = 10.0 * 86_400.0 / (10.0 * 86_400.0 + 1.5) * 100.0;
        assert!((io.trace.util_pct - busy).abs() < 1e-6, "{} against {busy}", io.trace.util_pct);
        assert!((io.seconds[0].util_pct - 100.0).abs() < 1e-9);
    }
    /// A bio-based device (no I or D anywhere in the trace: dm-linear, md) is busy from each
    /// bio's Q to its C, as bio-based dm's `start_io_acct`/`end_io_acct` count; on a device with
    /// requests a Q alone opens nothing.
    #[test]
    fn util_counts_a_bio_based_device_from_q_to_c() {
        let ms = 1_000_000;
        // Two bios overlapping: 100-400 and 300-600 ms, busy 100-600 of 1 s: 50%.
        let bio_based =
            [rec(100 * ms, "Q", 8), rec(300 * ms, "Q", 16), rec(400 * ms, "C", 8), rec(600 * ms, "C", 16), rec(1000 * ms, "C", 99)];
        let got = iostat(&bio_based)[&(8, 0)].seconds[0].util_pct;
        assert!((got - 50.0).abs() < 1e-9, "bio-based: 50% expected, {got}%");
        // The same with one request (I, D) on the device: only it counts, 700-800 ms: 10%.
        let mut with_request = bio_based.to_vec();
        with_request.insert(4, rec(700 * ms, "I", 32));
        with_request.insert(5, rec(700 * ms, "D", 32));
        with_request.insert(6, rec(800 * ms, "C", 32));
        let got = iostat(&with_request)[&(8, 0)].seconds[0].util_pct;
        assert!((got - 10.0).abs() < 1e-9, "request-based: 10% expected, {got}%");
    }

    /// %util as io_ticks: busy from I (or D, where a request has no I, as blk-mq's direct
    /// issue) to C; a requeued request (I D, I D) counts once and ends at its C.
    #[test]
    fn util_counts_a_request_from_its_insertion_or_issue_to_its_completion_once() {
        let ms = 1_000_000;
        let runs: [(&[RealRecord], f64); 3] = [
            // Inserted at 0, issued at 300 ms, done at 500 ms, trace to 1 s: 50%.
            (&[rec(0, "I", 8), rec(300 * ms, "D", 8), rec(500 * ms, "C", 8), rec(1000 * ms, "Q", 64)], 50.0),
            // No I: from D at 200 ms to C at 600 ms: 40%.
            (&[rec(0, "Q", 8), rec(200 * ms, "D", 8), rec(600 * ms, "C", 8), rec(1000 * ms, "Q", 64)], 40.0),
            // Requeued: I D I D C, busy from the first I to the C only: 30%.
            (
                &[
                    rec(100 * ms, "I", 8),
                    rec(150 * ms, "D", 8),
                    rec(200 * ms, "I", 8),
                    rec(250 * ms, "D", 8),
                    rec(400 * ms, "C", 8),
                    rec(1000 * ms, "Q", 64),
                ],
                30.0,
            ),
        ];
        for (records, util) in runs {
            let got = iostat(records)[&(8, 0)].seconds[0].util_pct;
            assert!((got - util).abs() < 1e-9, "{util}% expected, {got}%");
        }
    }
}
