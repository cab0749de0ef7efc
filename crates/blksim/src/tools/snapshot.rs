//! The per-second snapshots behind the charts, iostat, vmstat and top: counters read at each
//! one-second tick, as the tools read /proc/diskstats, /proc/stat and /proc/PID/stat.

use crate::block::DevKind;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{SimTime, NS_PER_S};
use crate::engine::Sim;
use crate::engine::HISTORY_MAX;
use crate::kernel::sched::ThreadState;
use crate::tools::stats::{jain_fairness, CpuTimes, DiskStats};

/// One simulated second of counters, for charts and the live tables.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub end: SimTime,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// `pgpgin`/`pgpgout` so far (vmstat bi/bo).
    pub pgpgin_bytes: u64,
    pub pgpgout_bytes: u64,
    pub ios: u64,
    pub context_switches: u64,
    pub interrupts: u64,
    /// Calls of the counted kernel functions so far (bcc's funccount).
    #[serde(default)]
    pub funccount: crate::engine::FuncCount,
    pub cpu: CpuTimes,
    /// The same, per core (for the CPU strips).
    pub per_core: Vec<CpuTimes>,
    /// CPU time of every thread so far, in thread order (for top over an interval).
    pub thread_cpu_ns: Vec<u64>,
    /// top's S column at the end of the interval, in thread order (ASCII: R, S, D, X): taken
    /// at the tick, so top reads the same however far past it a page has run.
    pub thread_state: Vec<u8>,
    /// vmstat `r` and `b` at the end of the interval: runnable threads (`nr_running`), and
    /// threads asleep in `io_schedule` (`nr_iowait`, /proc/stat `procs_blocked`). A thread
    /// asleep in plain `schedule()` (md's `get_active_stripe`) is in neither.
    pub running: u32,
    pub blocked: u32,
    /// What each job had read or written by the end of the interval, in job order.
    pub job_bytes: Vec<u64>,
    /// /proc/meminfo `Dirty` and `Writeback` at the end of the interval.
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
    pub diskstats: Vec<DiskStats>,
    /// The jobs' I/O latencies so far (fio's clat), counted per power of two of ns
    /// (`LatencyHist::log2_counts`): consecutive snapshots give a second's latency spread.
    pub latency_log2: Vec<u64>,
}

/// The run's accounting: totals, the latency histogram, the snapshots taken each simulated
/// second (the most recent `HISTORY_MAX`) and the running one, and when every job with a
/// finite size had finished.
#[derive(Clone, Debug)]
pub(crate) struct Accounting {
    pub totals: crate::engine::Totals,
    pub latency: crate::tools::stats::LatencyHist,
    pub history: std::collections::VecDeque<Interval>,
    pub last_tick: Interval,
    pub finished_at: Option<SimTime>,
}

impl Accounting {
    pub(crate) fn new(devs: usize, cores: usize) -> Accounting {
        Accounting {
            totals: Default::default(),
            latency: Default::default(),
            history: Default::default(),
            last_tick: Interval::zero_with(devs, cores),
            finished_at: None,
        }
    }
}

impl Sim {
    pub(crate) fn snapshot(&mut self) -> Interval {
        let now = self.now();
        let mut cpu = CpuTimes::default();
        let mut per_core = Vec::with_capacity(self.cores.len());
        for c in 0..self.cores.len() {
            self.account(CoreId(c as u16));
            cpu.add(&self.cores[c].times);
            per_core.push(self.cores[c].times);
        }
        for d in &mut self.devs {
            d.stats.round(now);
        }
        let running = self.threads.iter().filter(|t| matches!(t.state, ThreadState::Running | ThreadState::Runnable)).count() as u32;
        let blocked =
            self.threads.iter().filter(|t| t.state == ThreadState::Sleeping && t.wait.is_some_and(|w| w.is_iowait())).count() as u32;
        Interval {
            end: now,
            read_bytes: self.acct.totals.bytes_read,
            write_bytes: self.acct.totals.bytes_written,
            pgpgin_bytes: self.acct.totals.pgpgin_bytes,
            pgpgout_bytes: self.acct.totals.pgpgout_bytes,
            ios: self.acct.totals.ios_completed,
            context_switches: self.acct.totals.context_switches,
            interrupts: self.acct.totals.interrupts,
            funccount: self.acct.totals.funccount.clone(),
            cpu,
            per_core,
            thread_cpu_ns: self.threads.iter().map(|t| t.cpu_ns).collect(),
            thread_state: self.top_states(),
            running,
            blocked,
            job_bytes: self.jobs.iter().map(|j| j.bytes_done).collect(),
            dirty_bytes: self.vm.dirty_total,
            writeback_bytes: self.vm.writeback_total,
            diskstats: self.devs.iter().map(|d| d.stats.clone()).collect(),
            latency_log2: self.acct.latency.log2_counts(),
        }
    }

    pub(crate) fn push_history(&mut self, snap: Interval) {
        if self.acct.history.len() == HISTORY_MAX {
            self.acct.history.pop_front();
        }
        self.acct.history.push_back(snap);
    }

    pub(crate) fn on_stats_tick(&mut self) {
        let snap = self.snapshot();
        self.push_history(snap.clone());
        self.acct.last_tick = snap;
        let next = self.now() + NS_PER_S;
        self.events.schedule(next, Event::StatsTick);
    }

    /// Cumulative counters from time 0 to now (what the CLI reports).
    pub fn cumulative(&mut self) -> Interval {
        self.snapshot()
    }

    /// The snapshot taken at the last one-second tick.
    pub fn last_tick(&self) -> &Interval {
        &self.acct.last_tick
    }

    /// The run's fairness across disks (Jain's index of their sectors moved).
    pub fn fairness(&self) -> f64 {
        let st = |i: usize| &self.devs[i].stats;
        self.disk_fairness(|i| st(i).sectors[0] + st(i).sectors[1], |i| st(i).io_ticks_ns)
    }

    /// Jain's index of `sectors` over the disks that had work: a request in flight at some
    /// time (`busy_ns`, diskstats' io_ticks, counts from the request's allocation, so a disk
    /// whose requests wait unserved is in) or sectors moved. A disk no job submits to is
    /// idle, not starved: 6 jobs on 12 disks, each served alike, read 0.5 when it counted.
    pub(crate) fn disk_fairness(&self, sectors: impl Fn(usize) -> u64, busy_ns: impl Fn(usize) -> u64) -> f64 {
        let moved = self.per_disk(sectors);
        let busy = self.per_disk(busy_ns);
        let worked: Vec<f64> = moved.iter().zip(&busy).filter(|(m, b)| **m > 0.0 || **b > 0.0).map(|(m, _)| *m).collect();
        jain_fairness(&worked)
    }

    /// A per-device figure summed per disk (a disk with several paths has one sd per path).
    pub(crate) fn per_disk(&self, f: impl Fn(usize) -> u64) -> Vec<f64> {
        let mut out = vec![0.0; self.disks.len()];
        for (i, d) in self.devs.iter().enumerate() {
            if let DevKind::Sd { disk, .. } | DevKind::Nvme { disk } = d.kind {
                out[disk.idx()] += f(i) as f64;
            }
        }
        out
    }

    /// The jobs' I/O latencies so far per power of two of ns (`LatencyHist::log2_counts`).
    pub fn latency_log2(&self) -> Vec<u64> {
        self.acct.latency.log2_counts()
    }

    /// Latency histogram buckets: (ns, count), for the UI's histogram.
    pub fn latency_buckets(&self) -> Vec<(u64, u64)> {
        self.acct.latency.buckets().collect()
    }

    /// Bytes in the page cache: (dirty, under writeback).
    pub fn page_cache_bytes(&self) -> (u64, u64) {
        (self.vm.dirty_total, self.vm.writeback_total)
    }

    /// A hardware RAID controller's stripe operations so far (None for other disks).
    pub fn stripe_ops(&self, disk: usize) -> Option<crate::hw::hwraid5::StripeOps> {
        self.disks.get(disk)?.stripe_ops()
    }
}

impl Interval {
    /// The all-zero interval at time 0 with the same devices as `other` (the start of a run).
    pub fn zero_for(other: &Interval) -> Interval {
        Interval::zero_with(other.diskstats.len(), other.per_core.len())
    }

    pub(crate) fn zero(ndevs: usize) -> Interval {
        Interval::zero_with(ndevs, 0)
    }

    pub(crate) fn zero_with(ndevs: usize, ncores: usize) -> Interval {
        Interval {
            end: SimTime::ZERO,
            read_bytes: 0,
            write_bytes: 0,
            pgpgin_bytes: 0,
            pgpgout_bytes: 0,
            ios: 0,
            context_switches: 0,
            interrupts: 0,
            funccount: crate::engine::FuncCount::default(),
            cpu: CpuTimes::default(),
            per_core: vec![CpuTimes::default(); ncores],
            thread_cpu_ns: Vec::new(),
            thread_state: Vec::new(),
            running: 0,
            blocked: 0,
            job_bytes: Vec::new(),
            dirty_bytes: 0,
            writeback_bytes: 0,
            diskstats: vec![DiskStats::default(); ndevs],
            latency_log2: vec![0; crate::tools::stats::LOG2_BUCKETS],
        }
    }
}
