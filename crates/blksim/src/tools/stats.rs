//! Statistics the real tools would show: a simulated /proc/diskstats per device (iostat -x),
//! per-core CPU time (vmstat us/sy/wa/id, plus softirq), latency percentiles and fairness.

use crate::engine::time::{SimTime, NS_PER_MS, NS_PER_S};
use serde::{Deserialize, Serialize};

/// One device's /proc/diskstats fields, kept as the kernel keeps them (`part_round_stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStats {
    /// Completed requests, merged bios, sectors, and ticks (ns from request allocation to
    /// completion), indexed by direction: 0 read, 1 write.
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks_ns: [u64; 2],
    pub in_flight: u64,
    /// Time with at least one request in flight (%util).
    pub io_ticks_ns: u64,
    /// In-flight requests integrated over time (avgqu-sz).
    pub time_in_queue_ns: u64,
    last_update: SimTime,
}

impl DiskStats {
    /// `part_round_stats`: bring the time integrals up to `now`. A request's start and end are
    /// accounted at the time its work item had reached (`Sim::stamp_now`), which can lie a
    /// little before a per-second report already rounded to (the item began before the second
    /// ended and was applied after it): that change counts from the report's time.
    pub fn round(&mut self, now: SimTime) {
        let dt = now.ns().saturating_sub(self.last_update.ns());
        if self.in_flight > 0 {
            self.io_ticks_ns += dt;
            self.time_in_queue_ns += self.in_flight * dt;
        }
        self.last_update = self.last_update.max(now);
    }

    pub fn start(&mut self, now: SimTime) {
        self.round(now);
        self.in_flight += 1;
    }

    pub fn done(&mut self, now: SimTime, write: bool, sectors: u64, ticks_ns: u64) {
        self.round(now);
        assert!(self.in_flight > 0, "diskstats in_flight underflow");
        self.in_flight -= 1;
        let d = write as usize;
        self.ios[d] += 1;
        self.sectors[d] += sectors;
        self.ticks_ns[d] += ticks_ns;
    }

    /// The `iostat -x` line for the interval from `prev` to `self`, over `dt_ns`.
    pub fn iostat(&self, prev: &DiskStats, dt_ns: u64, name: &str) -> Iostat {
        let secs = dt_ns as f64 / NS_PER_S as f64;
        let d = |a: u64, b: u64| (a - b) as f64;
        let r = d(self.ios[0], prev.ios[0]);
        let w = d(self.ios[1], prev.ios[1]);
        let sect = d(self.sectors[0], prev.sectors[0]) + d(self.sectors[1], prev.sectors[1]);
        let ticks = d(self.ticks_ns[0], prev.ticks_ns[0]) + d(self.ticks_ns[1], prev.ticks_ns[1]);
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        Iostat {
            name: name.to_string(),
            rrqm_s: per_s(d(self.merges[0], prev.merges[0])),
            wrqm_s: per_s(d(self.merges[1], prev.merges[1])),
            r_s: per_s(r),
            w_s: per_s(w),
            rkb_s: per_s(d(self.sectors[0], prev.sectors[0]) / 2.0),
            wkb_s: per_s(d(self.sectors[1], prev.sectors[1]) / 2.0),
            avgrq_sz: if r + w > 0.0 { sect / (r + w) } else { 0.0 },
            avgqu_sz: if dt_ns > 0 { d(self.time_in_queue_ns, prev.time_in_queue_ns) / dt_ns as f64 } else { 0.0 },
            await_ms: if r + w > 0.0 { ticks / (r + w) / NS_PER_MS as f64 } else { 0.0 },
            r_await_ms: if r > 0.0 { d(self.ticks_ns[0], prev.ticks_ns[0]) / r / NS_PER_MS as f64 } else { 0.0 },
            w_await_ms: if w > 0.0 { d(self.ticks_ns[1], prev.ticks_ns[1]) / w / NS_PER_MS as f64 } else { 0.0 },
            // sysstat's svctm: the busy time (io_ticks) per completed request; %util / IOPS.
            svctm_ms: if r + w > 0.0 { d(self.io_ticks_ns, prev.io_ticks_ns) / (r + w) / NS_PER_MS as f64 } else { 0.0 },
            util_pct: if dt_ns > 0 { (100.0 * d(self.io_ticks_ns, prev.io_ticks_ns) / dt_ns as f64).min(100.0) } else { 0.0 },
        }
    }
}

/// One `iostat -x` row. Field names are the CLI contract's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Iostat {
    pub name: String,
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub r_s: f64,
    pub w_s: f64,
    pub rkb_s: f64,
    pub wkb_s: f64,
    /// Average request size in 512-byte sectors.
    pub avgrq_sz: f64,
    pub avgqu_sz: f64,
    pub await_ms: f64,
    /// `await` by direction (sysstat 10.0 on): a read's and a write's, in ms.
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    /// sysstat's `svctm`: busy time per completed request, in ms (sysstat itself warns it is
    /// not the device's service time once requests overlap).
    pub svctm_ms: f64,
    pub util_pct: f64,
}

impl Iostat {
    /// Whether the row is a disk (`sdX`, or an NVMe namespace `nvmeXnY`) rather than a stacking
    /// device (`dm-N`, `mdN`), whose bytes are its disks' bytes again: what "reached the disks"
    /// sums.
    pub fn is_disk(&self) -> bool {
        self.name.starts_with("sd") || self.name.starts_with("nvme")
    }
}

/// Per-core CPU time by what the core was doing, in ns (like /proc/stat's columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub softirq_ns: u64,
    pub iowait_ns: u64,
    pub idle_ns: u64,
}

impl CpuTimes {
    pub fn add(&mut self, o: &CpuTimes) {
        self.user_ns += o.user_ns;
        self.sys_ns += o.sys_ns;
        self.softirq_ns += o.softirq_ns;
        self.iowait_ns += o.iowait_ns;
        self.idle_ns += o.idle_ns;
    }

    pub fn total_ns(&self) -> u64 {
        self.user_ns + self.sys_ns + self.softirq_ns + self.iowait_ns + self.idle_ns
    }

    pub fn pct_since(&self, prev: &CpuTimes) -> CpuPct {
        let t = (self.total_ns() - prev.total_ns()) as f64;
        let p = |a: u64, b: u64| {
            if t > 0.0 {
                100.0 * (a - b) as f64 / t
            } else {
                0.0
            }
        };
        CpuPct {
            user_pct: p(self.user_ns, prev.user_ns),
            sys_pct: p(self.sys_ns, prev.sys_ns),
            softirq_pct: p(self.softirq_ns, prev.softirq_ns),
            iowait_pct: p(self.iowait_ns, prev.iowait_ns),
            idle_pct: if t > 0.0 { p(self.idle_ns, prev.idle_ns) } else { 100.0 },
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuPct {
    pub user_pct: f64,
    pub sys_pct: f64,
    pub softirq_pct: f64,
    pub iowait_pct: f64,
    pub idle_pct: f64,
}

/// A log-linear latency histogram (32 sub-buckets per power of two, ≤3% error), fixed size.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
}

const SUB: u32 = 32;

/// Powers of two of ns a latency heat map tells apart: 1 ns to 2^40 ns (18 minutes).
pub const LOG2_BUCKETS: usize = 41;

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist { counts: vec![0; (64 - 4) * SUB as usize], total: 0, max_ns: 0 }
    }
}

impl LatencyHist {
    fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            v as usize
        } else {
            let e = 63 - v.leading_zeros();
            let sub = (v >> (e - 5)) & (SUB as u64 - 1);
            ((e - 4) * SUB) as usize + sub as usize
        }
    }

    fn bucket_mid(i: usize) -> u64 {
        if i < SUB as usize {
            i as u64
        } else {
            let e = i as u32 / SUB + 4;
            let sub = i as u64 % SUB as u64;
            let lo = (SUB as u64 + sub) << (e - 5);
            lo + (1u64 << (e - 5)) / 2
        }
    }

    pub fn record(&mut self, ns: u64) {
        self.counts[Self::bucket(ns)] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The value at quantile `q` in [0, 1]; 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::bucket_mid(i).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The counts so far per power of two of ns: entry `e` counts latencies in [2^e, 2^(e+1))
    /// ns (entry 0 also counts 0 ns), up to `LOG2_BUCKETS` (longer ones count in the last):
    /// what a latency heat map over time takes from each one-second snapshot.
    pub fn log2_counts(&self) -> Vec<u64> {
        let mut out = vec![0u64; LOG2_BUCKETS];
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let e = if i < SUB as usize { (i as u64).max(1).ilog2() } else { i as u32 / SUB + 4 };
            out[(e as usize).min(LOG2_BUCKETS - 1)] += c;
        }
        out
    }

    /// Non-empty buckets as (lower bound ns, count), for a histogram chart.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (Self::bucket_mid(i), c))
    }
}

/// A job's completion latencies as fio keeps them (`struct io_stat` and its `io_u_plat`
/// histogram): min, max and mean exact, percentiles from `LatencyHist`'s log-linear buckets,
/// kept sparse (only the buckets hit, in order), since every job of a run has one per direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClatStat {
    buckets: Vec<(u32, u64)>,
    pub samples: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    sum_ns: u128,
}

impl ClatStat {
    pub fn record(&mut self, ns: u64) {
        let b = LatencyHist::bucket(ns) as u32;
        match self.buckets.binary_search_by_key(&b, |&(k, _)| k) {
            Ok(i) => self.buckets[i].1 += 1,
            Err(i) => self.buckets.insert(i, (b, 1)),
        }
        self.min_ns = if self.samples == 0 { ns } else { self.min_ns.min(ns) };
        self.samples += 1;
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.samples as f64
        }
    }

    /// The value at percentile `p` (0 to 100): the bucket holding the ⌈p·N/100⌉-th sample.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        let rank = ((p / 100.0 * self.samples as f64).ceil() as u64).clamp(1, self.samples.max(1));
        let mut seen = 0;
        for &(b, c) in &self.buckets {
            seen += c;
            if seen >= rank {
                return LatencyHist::bucket_mid(b as usize).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }

    /// The buckets hit as (the bucket's middle in ns, count), in order: a job's latency
    /// histogram for a chart.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets.iter().map(|&(b, c)| (LatencyHist::bucket_mid(b as usize), c))
    }

    /// Another job's latencies added in (fio's `sum_thread_stats` for `group_reporting`).
    pub fn add(&mut self, o: &ClatStat) {
        for &(b, c) in &o.buckets {
            match self.buckets.binary_search_by_key(&b, |&(k, _)| k) {
                Ok(i) => self.buckets[i].1 += c,
                Err(i) => self.buckets.insert(i, (b, c)),
            }
        }
        if o.samples > 0 {
            self.min_ns = if self.samples == 0 { o.min_ns } else { self.min_ns.min(o.min_ns) };
        }
        self.samples += o.samples;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
    }
}

/// Where the `q` quantile of `n` sorted values is: the nearest rank, ⌈q·n⌉ counted from 1
/// (so p50 of 4 values is the 2nd, p100 the largest). `blksim sweep` and the page's sweep
/// table both read their percentiles here. None for no values.
pub fn nearest_rank_index(n: usize, q: f64) -> Option<usize> {
    (n > 0).then(|| ((q * n as f64).ceil() as usize).clamp(1, n) - 1)
}

/// Jain's fairness index: (Σx)² / (n·Σx²); 1 when all are equal, 1/n when one gets everything.
pub fn jain_fairness(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

/// How a seed sweep's values are binned, the same in the page's histogram and `blksim sweep`:
/// over log-spaced bins when they spread over more than a factor of 20 (a stall among fast
/// runs, which a linear axis would squeeze into its first bin), else over linear ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepBins {
    /// Whether the bins are log-spaced (edges in log10 of the value).
    pub log: bool,
    /// The first bin's lower edge and the last bin's upper edge, in the axis's units (log10
    /// of the value on a log axis).
    pub lo: f64,
    pub hi: f64,
    pub bins: u32,
}

impl SweepBins {
    /// Bins spanning the finite values (None when there are none).
    pub fn over(values: impl IntoIterator<Item = f64>, bins: u32) -> Option<Self> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for x in values.into_iter().filter(|x| x.is_finite()) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if lo > hi {
            return None;
        }
        let log = lo > 0.0 && hi / lo > 20.0;
        let (a, b) = if log { (lo.log10(), hi.log10()) } else { (lo, hi) };
        // One value (or all equal) gets a bin around it.
        let (a, b) = if b > a { (a, b) } else { (a - 0.5, b + 0.5) };
        Some(SweepBins { log, lo: a, hi: b, bins: bins.max(1) })
    }

    /// A bin's width in the axis's units.
    pub fn width(&self) -> f64 {
        (self.hi - self.lo) / f64::from(self.bins)
    }

    /// The bin holding `x` (the largest value falls in the last bin).
    pub fn index(&self, x: f64) -> u32 {
        let at = if self.log { x.log10() } else { x };
        ((at - self.lo) / self.width()).floor().clamp(0.0, f64::from(self.bins - 1)) as u32
    }

    /// Bin `k`'s lower edge as a value (its upper edge is `edge(k + 1)`).
    pub fn edge(&self, k: u32) -> f64 {
        let at = self.lo + self.width() * f64::from(k);
        if self.log {
            10f64.powf(at)
        } else {
            at
        }
    }

    /// How many of `values` fall in each bin.
    pub fn count(&self, values: &[f64]) -> Vec<u32> {
        let mut c = vec![0u32; self.bins as usize];
        for &x in values.iter().filter(|x| x.is_finite()) {
            c[self.index(x) as usize] += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn disks_are_scsi_disks_and_nvme_namespaces_not_stacking_devices() {
        let is = |n: &str| super::Iostat { name: n.into(), ..Default::default() }.is_disk();
        assert!(is("sda") && is("sdaa") && is("nvme0n1"));
        assert!(!is("dm-0") && !is("md0") && !is("md127"));
    }

    #[test]
    fn the_nearest_rank_is_the_ceiling_of_q_n() {
        use super::nearest_rank_index as at;
        assert_eq!((at(0, 0.5), at(1, 0.0), at(1, 1.0)), (None, Some(0), Some(0)));
        assert_eq!((at(4, 0.5), at(4, 0.51), at(4, 1.0)), (Some(1), Some(2), Some(3)));
        // p99 of 200 seeds is the 198th value; p90 of 50, the 45th.
        assert_eq!((at(200, 0.99), at(50, 0.9)), (Some(197), Some(44)));
    }

    #[test]
    fn sweep_bins_go_log_for_a_stall_among_fast_runs_and_keep_its_seed() {
        let mut v = vec![0.044; 199];
        v.push(192.0);
        let b = SweepBins::over(v.iter().copied(), 12).unwrap();
        assert!(b.log);
        let c = b.count(&v);
        assert_eq!((c[0], c[11], c.iter().sum::<u32>()), (199, 1, 200));
        assert!((b.edge(0) - 0.044).abs() < 1e-12 && (b.edge(12) - 192.0).abs() < 1e-9);
        // Within a factor of 20: linear bins; one value alone: a bin around it.
        let lin = SweepBins::over([1.0, 2.0, 3.0], 4).unwrap();
        assert!(!lin.log);
        assert_eq!(lin.count(&[1.0, 2.0, 3.0]), vec![1, 0, 1, 1]);
        assert_eq!(SweepBins::over([5.0], 3).unwrap().count(&[5.0]), vec![0, 1, 0]);
        assert_eq!(SweepBins::over([f64::NAN], 3), None);
    }

    #[test]
    fn log2_counts_sum_the_fine_buckets_per_power_of_two() {
        let mut h = LatencyHist::default();
        for ns in [0, 1, 3, 31, 32, 63, 64, 1_000_000, 1_048_575, 1 << 50] {
            h.record(ns);
        }
        let c = h.log2_counts();
        assert_eq!(c.len(), LOG2_BUCKETS);
        assert_eq!(c.iter().sum::<u64>(), 10);
        // 0 and 1 in the first; 3 in [2, 4); 31 in [16, 32); 32 and 63 in [32, 64); 64 in
        // [64, 128); 1 ms and 2^20 - 1 in [2^19, 2^20); 2^50 in the last.
        assert_eq!((c[0], c[1], c[4], c[5], c[6], c[19], c[LOG2_BUCKETS - 1]), (2, 1, 1, 2, 1, 2, 1));
    }

    use super::*;

    #[test]
    fn histogram_quantiles_are_within_three_percent() {
        let mut h = LatencyHist::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [(0.5, 5_000_000.0), (0.99, 9_900_000.0)] {
            let got = h.quantile_ns(q) as f64;
            assert!((got - want).abs() / want < 0.03, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.max_ns(), 10_000_000);
    }

    #[test]
    fn jain_index_bounds() {
        assert!((jain_fairness(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_fairness(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn iostat_from_diskstats() {
        let mut s = DiskStats::default();
        let prev = s.clone();
        s.start(SimTime(0));
        s.start(SimTime(0));
        s.done(SimTime(500_000_000), false, 8, 500_000_000);
        s.done(SimTime(1_000_000_000), false, 8, 1_000_000_000);
        let io = s.iostat(&prev, NS_PER_S, "sda");
        assert_eq!(io.r_s, 2.0);
        assert_eq!(io.rkb_s, 8.0);
        assert_eq!(io.avgrq_sz, 8.0);
        assert_eq!(io.await_ms, 750.0);
        assert_eq!((io.r_await_ms, io.w_await_ms), (750.0, 0.0));
        // Busy for the whole second over two completions.
        assert_eq!(io.svctm_ms, 500.0);
        assert_eq!(io.avgqu_sz, 1.5);
        assert_eq!(io.util_pct, 100.0);
    }
}
