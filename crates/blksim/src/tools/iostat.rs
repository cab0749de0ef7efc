//! What `iostat -x` would have printed for a real trace (btt -I's way, with the kernel's
//! `io_ticks` for %util): per device, the seconds the trace has records in, and the whole
//! trace as iostat's first report. Per-second figures are kept only for the seconds that hold
//! something, so memory goes by the records, never by the time the trace spans.

use crate::tools::blkparse_input::RealRecord;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// iostat's figures for one device and one second of the trace: what completed in it, the
/// merges, and how long the device had a request out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Flushes and discards completed, apart from reads and writes, as iostat shows them (f/s
    /// and d/s, the kernel counting them apart since 5.5 and 4.19).
    pub f_s: f64,
    pub d_s: f64,
}

/// One device's iostat: the seconds that hold a record or a busy stretch's start or end, in
/// order, and the whole trace as iostat's first report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DevIostat {
    pub seconds: Vec<IostatSecond>,
    pub trace: IostatSecond,
    /// Requests issued and never completed though a request issued after them did (a lost C, a
    /// CPU's file missing), merged ones aside.
    pub never_completed: u64,
    /// Requests issued and still out when the trace ends (no request issued after them
    /// completed).
    pub out_at_end: u64,
}

/// The most requests kept per device: one per record at most, so bounded by the trace's
/// records (`REPLAY_RECORDS_MAX`) already.
const REQS_MAX: usize = crate::tools::blkparse_input::REPLAY_RECORDS_MAX as usize;

/// iostat's interval, in ns.
const SECOND_NS: u64 = 1_000_000_000;

/// One second's counts, indexed by the consts below.
type Counts = [u64; 9];
const R: usize = 0;
const W: usize = 1;
const RSEC: usize = 2;
const WSEC: usize = 3;
const RRQM: usize = 4;
const WRQM: usize = 5;
const BUSY: usize = 6;
const FL: usize = 7;
const DISC: usize = 8;

/// A request as iostat's `in_flight` counts it, from its I (or D) to its C.
struct Req {
    open: u64,
    close: Option<u64>,
    /// When a new request went in at its sector while it was out: its C is lost.
    replaced: Option<u64>,
    issued: bool,
}

/// One device's counts: per second that holds something; its requests in the order they went
/// in, and the open ones by start sector; the bios queued and not yet taken by a G or a merge,
/// by sector; the sectors of requests a G made.
#[derive(Default)]
struct DevCounts {
    seconds: BTreeMap<u64, Counts>,
    reqs: Vec<Req>,
    open: BTreeMap<u64, usize>,
    queued: BTreeMap<u64, u32>,
    /// Sectors a G has made a new request at, not yet inserted or issued: an I or D there,
    /// with a request still out, is a new request (the old one's C lost), where without a G it
    /// is the old one requeued or dispatched again (a trace of D and C only, as ZFS's, shows
    /// a discard dispatched three times before its one C).
    fresh: BTreeSet<u64>,
}

/// Per device: its seconds, the whole trace, and the requests never completed (records in
/// time order, from time 0).
///
/// %util is the kernel's `io_ticks`: the time the device had a request in flight, from the
/// request's insertion (I: `add_request` -> `drive_stat_acct` raises `in_flight`) to its
/// completion, so time waiting in the elevator counts; a request issued with no I (blk-mq
/// straight to the driver) counts from its D, a requeued one once. btt's own `-I` counts from
/// D. A completion finds its request as btt and the kernel do: by the request's start sector,
/// which a front merge (F) moves to the bio's; a request merged into the one before it (M at
/// its start sector with no bio queued there) leaves with no C of its own. A device with no I
/// and no D in the whole trace is bio-based (dm-linear, md): it has no requests, and its bios
/// count from their Q to their C, as bio-based dm's `start_io_acct`/`end_io_acct` do (2.6.16
/// on) and as `blksim run` counts md0 and dm-0.
pub fn iostat(records: &[RealRecord]) -> BTreeMap<(u32, u32), DevIostat> {
    let last_ns = records.iter().map(|r| r.time_ns).max().unwrap_or(0);
    let mut devs: BTreeMap<(u32, u32), DevCounts> = BTreeMap::new();
    let request_based: BTreeSet<(u32, u32)> =
        records.iter().filter(|r| matches!(r.action, "I" | "D")).map(|r| (r.major, r.minor)).collect();
    for r in records {
        let dev = (r.major, r.minor);
        let d = devs.entry(dev).or_default();
        d.count(r);
        if request_based.contains(&dev) {
            d.request(r);
        } else {
            d.bio(r);
        }
    }
    devs.into_iter().map(|(dev, d)| (dev, d.report(last_ns))).collect()
}

impl DevCounts {
    /// The record's counts in its second. A completion counts as the kernel's diskstats do: a
    /// discard and a flush with no data apart (d/s, f/s), a write, or a read with data; one
    /// with no data and no flush (a flush sequence's closing `C NS 0`) in none. Sectors are
    /// summed, halved into kB only when shown, so 512-byte I/Os count.
    fn count(&mut self, r: &RealRecord) {
        use crate::tools::blkparse_input::{TC_DISCARD, TC_FLUSH};
        let x = self.seconds.entry(r.time_ns / SECOND_NS).or_default();
        let sec = u64::from(r.sectors);
        let discard = r.cats & TC_DISCARD != 0;
        match r.action {
            "C" if discard => x[DISC] += 1,
            "C" if r.cats & TC_FLUSH != 0 && sec == 0 => x[FL] += 1,
            "C" if r.write => (x[W], x[WSEC]) = (x[W] + 1, x[WSEC] + sec),
            "C" if sec > 0 => (x[R], x[RSEC]) = (x[R] + 1, x[RSEC] + sec),
            "M" | "F" if discard => {}
            "M" | "F" if r.write => x[WRQM] += 1,
            "M" | "F" => x[RRQM] += 1,
            _ => {}
        }
    }

    /// A new request at `sector` from `t`: one still open there lost its C (a request that
    /// completed is gone from `open`), or was requeued (R) and goes in again.
    fn start(&mut self, sector: u64, t: u64) {
        if let Some(&i) = self.open.get(&sector) {
            self.reqs[i].replaced = Some(t);
        }
        if self.reqs.len() < REQS_MAX {
            self.open.insert(sector, self.reqs.len());
            self.reqs.push(Req { open: t, close: None, replaced: None, issued: false });
        }
    }

    /// A request-based device's record: requests open at I (or D), move with F, leave with a
    /// request merge or their C.
    fn request(&mut self, r: &RealRecord) {
        let (s, t) = (r.sector, r.time_ns);
        let open = self.open.get(&s).copied();
        match r.action {
            "Q" => *self.queued.entry(s).or_default() += 1,
            // A bio merging: the bio's Q taken, the request it joins unchanged (M) or starting
            // at the bio's sector (F).
            "M" | "F" if self.queued.contains_key(&s) => {
                self.take_q(s);
                if r.action == "F" {
                    if let Some(i) = self.open.remove(&(s + u64::from(r.sectors))) {
                        self.open.insert(s, i);
                    }
                }
            }
            // A request merge (`attempt_merge`, traced as M at the merged request's start):
            // it leaves with no C of its own.
            "M" => {
                if let Some(i) = open {
                    self.open.remove(&s);
                    self.reqs[i].close = Some(t);
                }
            }
            "G" => {
                self.take_q(s);
                self.fresh.insert(s);
            }
            "I" | "D" => match open {
                // Inserted again before its D (a plug flushed to the elevator), issued after its
                // I, or requeued (no G made a new request there): the same request.
                Some(i) if !self.reqs[i].issued || !self.fresh.contains(&s) => {
                    self.reqs[i].issued = r.action == "D";
                }
                _ => {
                    self.fresh.remove(&s);
                    self.start(s, t);
                    if let Some(&i) = self.open.get(&s) {
                        self.reqs[i].issued = r.action == "D";
                    }
                }
            },
            "C" => {
                if let Some(i) = open {
                    self.open.remove(&s);
                    self.reqs[i].close = Some(t);
                }
            }
            // A requeue: the request goes in again (I, D) as the same one.
            "R" => {
                if let Some(i) = open {
                    self.reqs[i].issued = false;
                }
            }
            _ => {}
        }
    }

    /// A bio-based device's record: each bio from its Q to its C.
    fn bio(&mut self, r: &RealRecord) {
        match r.action {
            "Q" => self.start(r.sector, r.time_ns),
            "C" => {
                if let Some(i) = self.open.remove(&r.sector) {
                    self.reqs[i].close = Some(r.time_ns);
                }
            }
            _ => {}
        }
    }

    /// The bio queued at `sector` taken by a G or a merge.
    fn take_q(&mut self, sector: u64) {
        if let Some(n) = self.queued.get_mut(&sector) {
            *n -= 1;
            if *n == 0 {
                self.queued.remove(&sector);
            }
        }
    }

    /// The stretches the device had a request in flight, in order, and how many requests never
    /// completed: (passed by a later request's C, still out at the trace's end). A request with
    /// no C that a request issued after it overtook (a lost record, a CPU's file missing)
    /// counts until every request that went in before it has completed, or until a new request
    /// goes in at its sector, whichever comes first: the device is not held busy to the
    /// trace's end by one lost record. One that nothing issued after it overtook is still out
    /// when the trace ends, and counts to its end (or to a new request at its sector).
    fn busy(&self, last_ns: u64) -> (Vec<(u64, u64)>, u64, u64) {
        // Whether a request issued after each one completed.
        let mut overtaken = vec![false; self.reqs.len()];
        let mut later_done = false;
        for (i, q) in self.reqs.iter().enumerate().rev() {
            overtaken[i] = later_done;
            later_done |= q.close.is_some();
        }
        let (mut out, mut lost, mut at_end, mut before) = (Vec::<(u64, u64)>::new(), 0u64, 0u64, 0u64);
        for (q, &overtaken) in self.reqs.iter().zip(&overtaken) {
            let close = q.close.unwrap_or_else(|| {
                let until = if overtaken {
                    lost += 1;
                    q.open.max(before)
                } else {
                    at_end += 1;
                    last_ns
                };
                until.min(q.replaced.unwrap_or(u64::MAX))
            });
            before = before.max(close);
            match out.last_mut() {
                Some(last) if q.open <= last.1 => last.1 = last.1.max(close),
                _ => out.push((q.open, close)),
            }
        }
        (out, lost, at_end)
    }

    /// The busy stretches counted into the seconds (the whole seconds between a stretch's first
    /// and last that hold no record counted only in the whole trace), and the rates.
    fn report(mut self, last_ns: u64) -> DevIostat {
        let (busy, never_completed, out_at_end) = self.busy(last_ns);
        let mut unlisted_busy = 0u64;
        for &(from, to) in &busy {
            unlisted_busy += add_busy(&mut self.seconds, from, to);
        }
        let mut total: Counts = [0; 9];
        for x in self.seconds.values() {
            for (t, v) in total.iter_mut().zip(x) {
                *t += v;
            }
        }
        total[BUSY] += unlisted_busy;
        // Each second over a whole second, as iostat's interval is one (the trace's last,
        // partial one too: divided by its fraction, one record in its first microsecond read
        // as a million a second); the whole trace over its span (a trace of one instant over
        // a second).
        let seconds = self.seconds.iter().map(|(&s, x)| rates(s, x, SECOND_NS)).collect();
        let span = if last_ns == 0 { SECOND_NS } else { last_ns };
        DevIostat { seconds, trace: rates(0, &total, span), never_completed, out_at_end }
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
        seconds.entry(first).or_default()[BUSY] += to - from;
        return 0;
    }
    seconds.entry(first).or_default()[BUSY] += (first + 1) * SECOND_NS - from;
    seconds.entry(last).or_default()[BUSY] += to - last * SECOND_NS;
    let mut listed = 0u64;
    for (_, x) in seconds.range_mut(first + 1..last) {
        x[BUSY] += SECOND_NS;
        listed += 1;
    }
    (last - first - 1 - listed) * SECOND_NS
}

/// What replay and the page say of the requests with no C that later ones overtook
/// (`DevIostat::never_completed`), in one line naming the devices, if any. Requests still out
/// when the trace ends (`out_at_end`) are no sign of a damaged trace, and only the JSON counts
/// them.
pub fn never_completed_note(devs: &BTreeMap<(u32, u32), DevIostat>) -> Option<String> {
    let lost: Vec<String> =
        devs.iter().filter(|(_, v)| v.never_completed > 0).map(|(d, v)| format!("{},{} ({})", d.0, d.1, v.never_completed)).collect();
    let n: u64 = devs.values().map(|v| v.never_completed).sum();
    (n > 0).then(|| {
        format!(
            "{} issued and never completed though later ones did (a lost C, a CPU's file missing), on {}: each counted busy only until the requests issued before it had completed",
            crate::scenario::counted(n, "request"),
            lost.join(", ")
        )
    })
}

/// A second's (or the trace's) counts as rates over `span_ns`.
fn rates(second: u64, x: &Counts, span_ns: u64) -> IostatSecond {
    let rate = |n: f64| n * 1e9 / span_ns as f64;
    IostatSecond {
        second,
        r_s: rate(x[R] as f64),
        w_s: rate(x[W] as f64),
        rkb_s: rate(x[RSEC] as f64 / 2.0),
        wkb_s: rate(x[WSEC] as f64 / 2.0),
        rrqm_s: rate(x[RRQM] as f64),
        wrqm_s: rate(x[WRQM] as f64),
        util_pct: 100.0 * x[BUSY] as f64 / span_ns as f64,
        f_s: rate(x[FL] as f64),
        d_s: rate(x[DISC] as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ns: u64, action: &'static str, sector: u64) -> RealRecord {
        RealRecord::read_of_8_sectors(time_ns, action, sector)
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
            // Requeued: G I D I D C, busy from the first I to the C only: 30%.
            (
                &[
                    rec(100 * ms, "G", 8),
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

    fn sized(time_ns: u64, action: &'static str, sector: u64, sectors: u32) -> RealRecord {
        RealRecord { sectors, ..rec(time_ns, action, sector) }
    }

    /// A front merge moves the request's start to the bio's sector, where its C comes: the C
    /// finds it, and the device is idle after it, not busy to the trace's end.
    #[test]
    fn a_completion_finds_its_request_after_a_front_merge() {
        let ms = 1_000_000;
        let recs = [
            sized(0, "Q", 100, 8),
            sized(0, "G", 100, 8),
            sized(ms, "I", 100, 8),
            sized(2 * ms, "Q", 92, 8),
            sized(2 * ms, "F", 92, 8),
            sized(3 * ms, "D", 92, 16),
            sized(100 * ms, "C", 92, 16),
            sized(1000 * ms, "Q", 4000, 8),
        ];
        let io = &iostat(&recs)[&(8, 0)];
        assert_eq!(io.never_completed, 0);
        assert!((io.seconds[0].util_pct - 9.9).abs() < 1e-9, "{}", io.seconds[0].util_pct);
    }

    /// A request merged into the one before it (M at its start, no bio queued there) leaves
    /// with that one's C; it is not a request never completed.
    #[test]
    fn a_request_merge_ends_the_merged_request() {
        let ms = 1_000_000;
        let recs = [
            sized(0, "I", 100, 8),
            sized(ms, "I", 108, 8),
            sized(2 * ms, "M", 108, 8),
            sized(3 * ms, "D", 100, 16),
            sized(200 * ms, "C", 100, 16),
            sized(1000 * ms, "Q", 4000, 8),
        ];
        let io = &iostat(&recs)[&(8, 0)];
        assert_eq!(io.never_completed, 0);
        assert!((io.seconds[0].util_pct - 20.0).abs() < 1e-9, "{}", io.seconds[0].util_pct);
    }

    /// A request whose C is lost counts until the requests issued before it have completed or
    /// a new one goes in at its sector: one lost C among many leaves %util where it was.
    #[test]
    fn a_lost_completion_does_not_hold_the_device_busy() {
        let ms = 1_000_000;
        let mut recs = Vec::new();
        for k in 0..10u64 {
            recs.push(rec(k * 100 * ms, "G", 8 * k));
            recs.push(rec(k * 100 * ms, "D", 8 * k));
            if k != 3 {
                recs.push(rec(k * 100 * ms + 10 * ms, "C", 8 * k));
            }
        }
        // A new request at the lost one's sector.
        recs.push(rec(950 * ms, "G", 24));
        recs.push(rec(950 * ms, "D", 24));
        recs.push(rec(960 * ms, "C", 24));
        recs.push(rec(1000 * ms, "Q", 4000));
        let io = &iostat(&recs)[&(8, 0)];
        assert_eq!(io.never_completed, 1);
        // Ten requests of 10 ms but the lost one: 100 ms busy of 1 s.
        assert!((io.seconds[0].util_pct - 10.0).abs() < 1e-9, "{}", io.seconds[0].util_pct);
    }

    /// kB/s from the sectors summed, then halved (a 1- and a 3-sector write in a second are
    /// 2 kB/s, where halving each gave 1); a flush with no data and a discard are not reads or
    /// writes; the trace's last part-second is not divided by its fraction.
    #[test]
    fn kilobytes_sum_sectors_and_flushes_and_discards_count_apart() {
        use crate::tools::blkparse_input::{TC_DISCARD, TC_FLUSH, TC_WRITE};
        let ms = 1_000_000;
        let w = |t, action, sector, sectors| RealRecord { write: true, cats: TC_WRITE, ..sized(t, action, sector, sectors) };
        let recs = [
            w(0, "D", 8, 1),
            w(10 * ms, "C", 8, 1),
            w(20 * ms, "D", 16, 3),
            w(30 * ms, "C", 16, 3),
            RealRecord { cats: TC_FLUSH, ..sized(40 * ms, "C", 0, 0) },
            RealRecord { write: true, cats: TC_WRITE | TC_DISCARD, ..sized(50 * ms, "C", 64, 2048) },
            // The trace's last record, a millisecond into its second second.
            w(1001 * ms, "C", 99, 8),
        ];
        let io = &iostat(&recs)[&(8, 0)];
        let s0 = &io.seconds[0];
        assert_eq!((s0.r_s, s0.w_s, s0.wkb_s, s0.f_s, s0.d_s), (0.0, 2.0, 2.0, 1.0, 1.0), "{s0:?}");
        // The last second counts its one completion as one a second, not a thousand.
        assert_eq!((io.seconds[1].w_s, io.seconds[1].wkb_s), (1.0, 4.0), "{:?}", io.seconds[1]);
        assert!((io.trace.wkb_s - 6.0 / 1.001).abs() < 1e-9, "{:?}", io.trace);
    }
}
