//! What blktrace's `btt` computes from a trace (btt/trace_*.c, iostat.c, seek.c), over records
//! read from real files (`blkparse_input`) or a run's own. Like btt, it knows no tokens: a
//! request is found by its sectors (a back merge joins the request that ends where the bio
//! starts, a front merge the one that starts where it ends), and every phase is averaged per
//! I/O, a merged bio counting as one (btt's "ALL" table: Q2Q, Q2G, S2G, G2I, Q2M, I2D, M2D,
//! D2C, Q2C). A device that remaps bios (dm linear, md) has its Q2A, and its Q2Q apart.

use crate::tools::blkparse_input::RealRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One btt line: min, average and max in seconds over `n` samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub n: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
}

impl Phase {
    /// A sample, as btt's `tdelta` takes it: a gap of zero (or less) counts as 1 ns.
    fn add(&mut self, ns: u64) {
        let ns = ns.max(1);
        self.min_ns = if self.n == 0 { ns } else { self.min_ns.min(ns) };
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns;
        self.n += 1;
    }

    fn merge(&mut self, o: &Phase) {
        if o.n == 0 {
            return;
        }
        self.min_ns = if self.n == 0 { o.min_ns } else { self.min_ns.min(o.min_ns) };
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.n += o.n;
    }

    /// The average in seconds (0 without samples).
    pub fn avg_s(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64 / 1e9
        }
    }
}

/// btt's phases, the names as it prints them.
pub const PHASES: [&str; 9] = ["Q2Q", "Q2G", "S2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C"];

/// The lines of btt's "All Devices" table, in its order (output.c `output_avgs`): a remapping
/// device's Q2Q, Q2A and Q2C go to the `dm` lines, every other device's to the plain ones.
pub const ALL_PHASES: [&str; 13] = ["Q2Qdm", "Q2Adm", "Q2Cdm", "Q2Q", "Q2A", "Q2G", "S2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C"];

/// btt's `remapper_dev`: md (major 9) and device-mapper (253, 254), by major number alone.
pub fn remapper_dev(major: u32) -> bool {
    matches!(major, 9 | 253 | 254)
}

/// btt's figures for one device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceBtt {
    pub major: u32,
    pub minor: u32,
    /// btt's `remapper_dev` (md, device-mapper): its Q2Q, Q2A and Q2C are btt's `dm` lines.
    pub remaps: bool,
    /// Indexed as [`PHASES`].
    pub phases: [Phase; 9],
    /// Q2A: from a bio's Q to the A that remaps it (or the request it is the first bio of)
    /// onto the device below.
    pub q2a: Phase,
    /// Bios queued and requests issued (btt's merge table: #Q, #D).
    pub queued: u64,
    pub issued: u64,
}

struct Bio {
    q: u64,
    m: Option<u64>,
}

struct Req {
    end: u64,
    g: u64,
    i: Option<u64>,
    d: Option<u64>,
    bios: Vec<Bio>,
}

#[derive(Default)]
struct Dev {
    out: DeviceBtt,
    /// Queued bios by sector, waiting for their G or merge (several may share a sector): when
    /// each was queued, and where it ends.
    queued: BTreeMap<u64, Vec<(u64, u64)>>,
    sleeping: BTreeMap<u64, u64>,
    /// Requests by start sector, and the start of each by its end (for back merges).
    reqs: BTreeMap<u64, Req>,
    by_end: BTreeMap<u64, u64>,
}

/// The most bios or requests btt keeps open per device: beyond it the oldest are forgotten
/// (a trace cut in the middle of a stream leaves some that never complete).
const OPEN_MAX: usize = 65_536;

/// The newest bio queued at `sector` that no G or merge has taken yet.
fn take_q(queued: &mut BTreeMap<u64, Vec<(u64, u64)>>, sector: u64) -> Option<u64> {
    let v = queued.get_mut(&sector)?;
    let q = v.pop().map(|(t, _)| t);
    if v.is_empty() {
        queued.remove(&sector);
    }
    q
}

impl Dev {
    /// `last_q` is btt's one `last_q` for the whole trace: Q2Q is the time since the previous
    /// Q on any device (trace_queue.c's `update_lq`), a remapping device's going to `Q2Qdm`.
    fn record(&mut self, r: &RealRecord, last_q: &mut Option<u64>) {
        let t = r.time_ns;
        let end = r.sector + u64::from(r.sectors);
        match r.action {
            // trace_queue: a Q of no bytes is let go.
            "Q" if r.sectors == 0 => {}
            "Q" => self.queue(r.sector, end, t, last_q),
            "S" => {
                self.sleeping.insert(r.sector, t);
            }
            "G" => self.getrq(r.sector, end, t),
            "M" => self.back_merge(r.sector, end, t),
            "F" => self.front_merge(r.sector, end, t),
            "I" => self.insert(r.sector, t),
            "D" => self.issue(r.sector, t),
            "C" => self.complete(r.sector, t),
            _ => {}
        }
    }

    /// Q: Q2Q, and the bio open until a G or a merge takes it.
    fn queue(&mut self, sector: u64, end: u64, t: u64, last_q: &mut Option<u64>) {
        if let Some(last) = *last_q {
            self.out.phases[0].add(t.saturating_sub(last));
        }
        *last_q = Some(t);
        self.out.queued += 1;
        if self.queued.len() < OPEN_MAX {
            self.queued.entry(sector).or_default().push((t, end));
        }
    }

    /// G: Q2G (and S2G after a sleep), and the request open with its first bio.
    fn getrq(&mut self, sector: u64, end: u64, t: u64) {
        let p = &mut self.out.phases;
        let Some(q) = take_q(&mut self.queued, sector) else { return };
        p[1].add(t.saturating_sub(q));
        if let Some(s) = self.sleeping.remove(&sector) {
            p[2].add(t.saturating_sub(s));
        }
        if self.reqs.len() < OPEN_MAX {
            self.by_end.insert(end, sector);
            self.reqs.insert(sector, Req { end, g: t, i: None, d: None, bios: vec![Bio { q, m: None }] });
        }
    }

    /// M: Q2M, the bio added to the request that ends where it starts.
    fn back_merge(&mut self, sector: u64, end: u64, t: u64) {
        let Some(q) = take_q(&mut self.queued, sector) else { return };
        let Some(start) = self.by_end.remove(&sector) else { return };
        let Some(req) = self.reqs.get_mut(&start) else { return };
        self.out.phases[4].add(t.saturating_sub(q));
        req.end = end;
        req.bios.push(Bio { q, m: Some(t) });
        self.by_end.insert(end, start);
    }

    /// F: Q2M, the bio added before the request that starts where it ends.
    fn front_merge(&mut self, sector: u64, end: u64, t: u64) {
        let Some(q) = take_q(&mut self.queued, sector) else { return };
        let Some(mut req) = self.reqs.remove(&end) else { return };
        self.out.phases[4].add(t.saturating_sub(q));
        req.bios.push(Bio { q, m: Some(t) });
        self.by_end.insert(req.end, sector);
        self.reqs.insert(sector, req);
    }

    /// I: G2I.
    fn insert(&mut self, sector: u64, t: u64) {
        if let Some(req) = self.reqs.get_mut(&sector) {
            self.out.phases[3].add(t.saturating_sub(req.g));
            req.i = Some(t);
        }
    }

    /// D: I2D, and M2D for each merged bio; the request takes no more merges.
    fn issue(&mut self, sector: u64, t: u64) {
        self.out.issued += 1;
        let p = &mut self.out.phases;
        if let Some(req) = self.reqs.get_mut(&sector) {
            if let Some(i) = req.i {
                p[5].add(t.saturating_sub(i));
            }
            for m in req.bios.iter().filter_map(|b| b.m) {
                p[6].add(t.saturating_sub(m));
            }
            req.d = Some(t);
            self.by_end.remove(&req.end);
        }
    }

    /// C: D2C and Q2C for each bio of the request.
    fn complete(&mut self, sector: u64, t: u64) {
        let p = &mut self.out.phases;
        let Some(req) = self.reqs.remove(&sector) else {
            // A bio-based device's bio (dm linear, md) ends with no request: Q2C only.
            if let Some(q) = take_q(&mut self.queued, sector) {
                p[8].add(t.saturating_sub(q));
            }
            return;
        };
        self.by_end.remove(&req.end);
        let Some(d) = req.d else { return };
        for b in &req.bios {
            p[7].add(t.saturating_sub(d));
            p[8].add(t.saturating_sub(b.q));
        }
    }
}

/// btt over time-ordered records: per device, in (major, minor) order.
pub fn btt(records: &[RealRecord]) -> Vec<DeviceBtt> {
    let mut devs: BTreeMap<(u32, u32), Dev> = BTreeMap::new();
    let mut last_q = None;
    for r in records {
        if r.action == "A" {
            if let Some((m, n, from_sector)) = r.from {
                // trace_remap: the Q still open at the sector it came from (btt keeps a Q until
                // its I/O completes): a bio of a bio-based device (dm linear, md), or the first
                // bio of a request (request-based dm's clone).
                let src = devs.entry((m, n)).or_default();
                // btt's `dip_find_sec` finds the Q whose range holds the sector, not only one
                // that starts there: md remaps a stripe's page from inside its bio.
                let q = src.queued.get(&from_sector).and_then(|v| v.last().map(|&(t, _)| t)).or_else(|| {
                    let (_, v) = src.queued.range(..=from_sector).next_back()?;
                    v.iter().rev().find(|&&(_, end)| end > from_sector).map(|&(t, _)| t)
                });
                if let Some(q) = q.or_else(|| src.reqs.get(&from_sector).map(|req| req.bios[0].q)) {
                    src.out.q2a.add(r.time_ns.saturating_sub(q));
                }
            }
        }
        devs.entry((r.major, r.minor)).or_default().record(r, &mut last_q);
    }
    devs.into_iter().map(|((major, minor), d)| DeviceBtt { major, minor, remaps: remapper_dev(major), ..d.out }).collect()
}

/// What replay and the page say of an empty "All Devices" table: btt follows each I/O from its
/// Q, so a trace with no Q (ZFS's, which traces only D and C) has no phase; the actions it does
/// hold are named.
pub fn empty_note(records: &[RealRecord], all: &[Phase]) -> Option<String> {
    if all.iter().any(|p| p.n > 0) || records.iter().any(|r| r.action == "Q") {
        return None;
    }
    let held: std::collections::BTreeSet<&str> = records.iter().map(|r| r.action).collect();
    Some(format!(
        "no Q records in this trace (it holds {} only): btt follows each I/O from its Q, so its table is empty, as the real btt's is",
        held.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

/// btt's "All Devices" table, indexed as [`ALL_PHASES`]: the phases summed over the devices,
/// a remapping device's Q2Q, Q2A and Q2C on the `dm` lines.
pub fn all_devices(devs: &[DeviceBtt]) -> [Phase; 13] {
    let mut all = [Phase::default(); 13];
    for d in devs {
        let (q2q, q2a, q2c) = if d.remaps { (0, 1, 2) } else { (3, 4, 12) };
        all[q2q].merge(&d.phases[0]);
        all[q2a].merge(&d.q2a);
        all[q2c].merge(&d.phases[8]);
        for (a, p) in all[5..12].iter_mut().zip(&d.phases[1..8]) {
            a.merge(p);
        }
    }
    all
}

/// What replay and the page say of a trace with splits ({n}: how many X records): btt's own
/// figures differ there, and a reader checking one against the other should know why.
const SPLITS_DIFFER: &str = "{n} splits (X) in this trace: btt does not follow a split bio to its pieces' requests (it prints no D2C for them) and pairs their Q, G and S otherwise, so its Q2G, S2G, G2I, I2D, D2C and Q2C differ from these, which match each piece by its start sector.";

/// The splits (X records) in a trace, and what replay and the page say of them (`SPLITS_DIFFER`)
/// when there are any.
pub fn splits_note(records: &[RealRecord]) -> (u64, Option<String>) {
    let n = records.iter().filter(|r| r.action == "X").count() as u64;
    (n, (n > 0).then(|| SPLITS_DIFFER.replace("{n}", &n.to_string())))
}

/// Per device: its plotted (time ns, sector) points and how many requests it issued.
pub type Offsets = BTreeMap<(u32, u32), (Vec<(u64, u64)>, u64)>;

/// seekwatcher's and iowatcher's plot: the sector of each issued request (D) over time, per
/// device, at most `points_max` points each (every k-th when there are more), and how many
/// requests the device issued (more than its points where thinned, which `thinned_note` says).
pub fn offsets(records: &[RealRecord], points_max: u32) -> Offsets {
    let mut all: BTreeMap<(u32, u32), Vec<(u64, u64)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.action == "D") {
        all.entry((r.major, r.minor)).or_default().push((r.time_ns, r.sector));
    }
    all.into_iter()
        .map(|(dev, v)| {
            let n = v.len() as u64;
            let k = v.len().div_ceil(points_max.max(1) as usize).max(1);
            let v = if k > 1 { v.into_iter().step_by(k).collect() } else { v };
            (dev, (v, n))
        })
        .collect()
}

/// What the plot says where it thins a device's points: one line per device thinned.
pub fn thinned_note(offsets: &Offsets) -> Vec<String> {
    offsets
        .iter()
        .filter(|(_, (v, n))| (v.len() as u64) < *n)
        .map(|((ma, mi), (v, n))| {
            format!(
                "offsets of {ma},{mi}: {} points drawn, one in {} of its {n} issued requests",
                v.len(),
                n.div_ceil(v.len().max(1) as u64).max(1)
            )
        })
        .collect()
}

/// D2C over time, for a latency heat map as Brendan Gregg draws one from blktrace: the trace
/// cut into columns of `span_ns` (from time 0 to its last record), each counting the requests
/// that completed in it per power of two of their D2C in ns (entry `e`: [2^e, 2^(e+1)), the
/// last entry holding longer ones, as `LatencyHist::log2_counts`). A C pairs with the D still
/// open at its device and sector, as btt pairs them; a C with no D (a bio-based device's) is
/// not counted. Each column is (its end in s, its counts); empty spans are zero columns.
pub fn d2c_columns(records: &[RealRecord], span_ns: u64) -> Vec<(f64, Vec<u64>)> {
    use crate::tools::stats::LOG2_BUCKETS;
    // The latest record, not the last one: a hand-made text may be out of order.
    let Some(last) = records.iter().map(|r| r.time_ns).max() else { return Vec::new() };
    let span_ns = span_ns.max(1);
    let n = last / span_ns + 1;
    let mut cols: Vec<(f64, Vec<u64>)> = (0..n).map(|i| (((i + 1) * span_ns).min(last) as f64 / 1e9, vec![0; LOG2_BUCKETS])).collect();
    let mut issued: BTreeMap<(u32, u32, u64), u64> = BTreeMap::new();
    for r in records {
        match r.action {
            "D" if issued.len() < OPEN_MAX => {
                issued.insert((r.major, r.minor, r.sector), r.time_ns);
            }
            "C" => {
                if let Some(d) = issued.remove(&(r.major, r.minor, r.sector)) {
                    let ns = r.time_ns.saturating_sub(d).max(1);
                    // Within the columns: no record is later than `last`.
                    let col = &mut cols[(r.time_ns / span_ns) as usize].1;
                    col[(ns.ilog2() as usize).min(LOG2_BUCKETS - 1)] += 1;
                }
            }
            _ => {}
        }
    }
    cols
}

/// The column span for a trace of `duration_ns`: seconds, unless that makes fewer than 20
/// columns (then the largest power of ten of ns, down to 1 µs, that makes 20: a 4 ms trace in
/// 0.1 ms columns) or more than 2000 (then 10 s, 100 s, …: a day in 100 s columns).
pub fn d2c_span_ns(duration_ns: u64) -> u64 {
    let mut span = 1_000_000_000u64;
    while duration_ns / span > 2_000 {
        span *= 10;
    }
    while span > 1_000 && duration_ns / span < 20 {
        span /= 10;
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d2c_columns_count_each_completion_in_its_span_by_its_issue_to_completion_time() {
        let recs = vec![
            rec(100, "D", 8),
            rec(1_100, "C", 8), // 1000 ns: [512, 1024) is entry 9
            rec(500_000_000, "D", 16),
            rec(1_600_000_000, "C", 16), // 1.1 s, completing in the second second
            rec(1_700_000_000, "C", 24), // no D: not counted
            rec(3_200_000_000, "Q", 32),
        ];
        let cols = d2c_columns(&recs, 1_000_000_000);
        assert_eq!(cols.iter().map(|c| c.0).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 3.2]);
        assert_eq!(cols[0].1[9], 1);
        assert_eq!(cols[1].1[30], 1, "1.1e9 ns is in [2^30, 2^31)");
        assert_eq!(cols.iter().map(|c| c.1.iter().sum::<u64>()).collect::<Vec<_>>(), [1, 1, 0, 0]);
        assert!(d2c_columns(&[], 1_000_000_000).is_empty());
        // Out of order (a hand-made text): the latest record sets the columns, nothing panics.
        let unordered = [rec(2_500_000_000, "D", 8), rec(2_600_000_000, "C", 8), rec(100, "Q", 0)];
        let cols = d2c_columns(&unordered, 1_000_000_000);
        assert_eq!((cols.len(), cols[2].1.iter().sum::<u64>()), (3, 1));
        // The span: at least 20 columns, a power of ten from 1 µs to 1 s.
        assert_eq!(d2c_span_ns(4_000_000), 100_000);
        assert_eq!(d2c_span_ns(10_000_000_000), 100_000_000);
        assert_eq!(d2c_span_ns(600_000_000_000), 1_000_000_000);
        assert_eq!(d2c_span_ns(3_600_000_000_000), 10_000_000_000);
        assert_eq!(d2c_span_ns(5_000), 1_000);
        assert_eq!(d2c_span_ns(86_400_000_000_000), 100_000_000_000);
    }

    fn rec(time_ns: u64, action: &'static str, sector: u64) -> RealRecord {
        RealRecord::read_of_8_sectors(time_ns, action, sector)
    }

    /// Offsets beyond the points asked for are thinned to every k-th, and the note says so.
    #[test]
    fn thinned_offsets_are_said() {
        let recs: Vec<RealRecord> = (0..10).map(|k| rec(k * 1000, "D", k * 8)).collect();
        let o = offsets(&recs, 4);
        assert_eq!((o[&(8, 0)].0.len(), o[&(8, 0)].1), (4, 10));
        assert_eq!(thinned_note(&o), ["offsets of 8,0: 4 points drawn, one in 3 of its 10 issued requests"]);
        assert!(thinned_note(&offsets(&recs, 10)).is_empty());
    }
}
