//! The run report: the JSON of `blksim run` (the CLI contract's field names) and the numbers
//! the UI shows. Built from counters, never from anything lesson-specific.

use crate::engine::time::{NS_PER_MS, NS_PER_S};
use crate::engine::Sim;
use crate::tools::snapshot::Interval;
use crate::tools::stats::{CpuPct, Iostat};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    pub name: String,
    pub pid: u32,
    pub cpu_pct: f64,
    pub cs: u64,
    /// `top`'s state letter: R running/runnable, D uninterruptible sleep, S sleeping, X exited.
    pub state: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub device: String,
    pub bytes: u64,
    pub done: bool,
    pub completion_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyReport {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// vmstat's columns as means over the run's whole seconds (one vmstat line per second): `r`
/// and `b` as sampled at each second's end, the rest over each second. `sy` is procps's
/// (system, irq and softirq time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VmstatReport {
    pub r: f64,
    pub b: f64,
    #[serde(rename = "in")]
    pub intr: f64,
    pub cs: f64,
    pub us: f64,
    pub sy: f64,
    pub id: f64,
    pub wa: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub lesson: String,
    pub variant: String,
    pub seed: u64,
    pub sim_seconds: f64,
    pub events: u64,
    pub throughput_mb_s: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
    pub cs_per_s: f64,
    pub intr_per_s: f64,
    pub cpu: CpuPct,
    pub threads: Vec<ThreadReport>,
    pub devices: Vec<Iostat>,
    pub fairness: f64,
    /// fio's `jobs` (`--output-format=json`): one per clone, or per section with
    /// `group_reporting`, in the job file's order.
    pub jobs: Vec<crate::tools::fio_report::FioJobReport>,
    /// Each job's process: its name, device, bytes done and end.
    pub processes: Vec<JobReport>,
    pub completion_s: Option<f64>,
    /// The run's longest stall: the longest span in which no job completed a read or a write
    /// or finished (s), and when it began (s from the start). A run that did not finish counts
    /// the span since its last progress.
    pub longest_stall_s: f64,
    pub longest_stall_from_s: f64,
    pub latency_ms: LatencyReport,
    /// Readahead pages reclaimed before the reader got to them and read again (MB): buffered
    /// readers whose windows outgrow the page cache (`vm.mem_mb` less md's stripe cache).
    pub readahead_thrashed_mb: f64,
    /// vmstat over the run's whole seconds.
    pub vmstat: VmstatReport,
    /// The mean, over the run's whole seconds, of how many jobs completed at least one read or
    /// write in that second ("only 10 of 100 processes are working").
    pub progressing_jobs_mean: f64,
    /// Parts of the scenario the model does not simulate yet (empty when all is modelled).
    pub model_gaps: Vec<String>,
    /// The scenario's `kernel`, if it names one.
    pub kernel: Option<String>,
    /// The value of every era knob the run had (`scenario::era::ERA`), by key: `kernel`'s, or
    /// where set explicitly, the knob's own.
    pub era: std::collections::BTreeMap<String, String>,
    /// Calls per second of the counted kernel functions over the whole run, by function name,
    /// as bcc's `funccount -i 1` totals them (`engine::FuncCount`).
    pub funccount: std::collections::BTreeMap<String, f64>,
}

fn per_s(x: u64, dt_ns: u64) -> f64 {
    if dt_ns == 0 {
        0.0
    } else {
        x as f64 * NS_PER_S as f64 / dt_ns as f64
    }
}

/// The numbers of one interval (from `prev` to `cur`): what the live tables show each second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub end_s: f64,
    /// How long the interval is: a second, or less for the numbers so far or a run's last part.
    pub span_s: f64,
    pub throughput_mb_s: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
    pub cs_per_s: f64,
    pub intr_per_s: f64,
    pub running: u32,
    pub blocked: u32,
    /// vmstat `bi` and `bo`: KiB per second (vmstat's 1 KiB blocks) that `submit_bio` took in
    /// and out (/proc/vmstat pgpgin, pgpgout), counted once at the top of a stack.
    pub bi: f64,
    pub bo: f64,
    /// /proc/meminfo `Dirty` and `Writeback` at the end, in MB: buffered writes not yet on disk.
    pub dirty_mb: f64,
    pub writeback_mb: f64,
    pub cpu: CpuPct,
    pub devices: Vec<Iostat>,
    /// Jain's index over the disks' throughput in this interval (1 = all equal).
    pub fairness: f64,
    /// Calls a second of `blk_mq_delay_run_hw_queues` (bcc's funccount): blk-mq's 3 ms
    /// re-runs after an elevator had work and gave none.
    #[serde(default)]
    pub blk_mq_delay_run_hw_queues_per_s: f64,
}

impl IntervalReport {
    pub fn between(sim: &Sim, prev: &Interval, cur: &Interval) -> IntervalReport {
        let dt = cur.end - prev.end;
        let rb = cur.read_bytes - prev.read_bytes;
        let wb = cur.write_bytes - prev.write_bytes;
        IntervalReport {
            end_s: cur.end.as_secs_f64(),
            span_s: dt as f64 / 1e9,
            throughput_mb_s: per_s(rb + wb, dt) / 1e6,
            read_mb_s: per_s(rb, dt) / 1e6,
            write_mb_s: per_s(wb, dt) / 1e6,
            iops: per_s(cur.ios - prev.ios, dt),
            cs_per_s: per_s(cur.context_switches - prev.context_switches, dt),
            intr_per_s: per_s(cur.interrupts - prev.interrupts, dt),
            blk_mq_delay_run_hw_queues_per_s: per_s(
                cur.funccount.blk_mq_delay_run_hw_queues - prev.funccount.blk_mq_delay_run_hw_queues,
                dt,
            ),
            running: cur.running,
            blocked: cur.blocked,
            bi: per_s(cur.pgpgin_bytes - prev.pgpgin_bytes, dt) / 1024.0,
            bo: per_s(cur.pgpgout_bytes - prev.pgpgout_bytes, dt) / 1024.0,
            dirty_mb: cur.dirty_bytes as f64 / 1e6,
            writeback_mb: cur.writeback_bytes as f64 / 1e6,
            cpu: cur.cpu.pct_since(&prev.cpu),
            devices: sim.devs.iter().enumerate().map(|(i, d)| cur.diskstats[i].iostat(&prev.diskstats[i], dt, &d.name)).collect(),
            // Over the disks: a dm or md device carries its members' bytes again, and a disk
            // with several paths is one disk.
            fairness: sim.disk_fairness(
                |i| {
                    let (c, p) = (&cur.diskstats[i], &prev.diskstats[i]);
                    c.sectors[0] + c.sectors[1] - p.sectors[0] - p.sectors[1]
                },
                |i| cur.diskstats[i].io_ticks_ns - prev.diskstats[i].io_ticks_ns,
            ),
        }
    }
}

impl RunReport {
    /// The report over the whole run so far, from time 0.
    pub fn from_sim(sim: &mut Sim, lesson: &str, variant: &str) -> RunReport {
        let cur = sim.cumulative();
        let zero = Interval::zero(cur.diskstats.len());
        let iv = IntervalReport::between(sim, &zero, &cur);
        let total_ns = cur.end.ns().max(1);
        let mut threads: Vec<ThreadReport> = sim
            .threads
            .iter()
            .map(|t| ThreadReport {
                name: t.name.clone(),
                pid: t.pid,
                cpu_pct: 100.0 * t.cpu_ns as f64 / total_ns as f64,
                cs: t.cs,
                state: t.top_state().to_string(),
            })
            .collect();
        // top's order: busiest first; ties by pid so the order is stable.
        threads.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
        let processes = sim
            .jobs
            .iter()
            .map(|j| JobReport {
                name: format!("{}.{}", sim.threads[j.tid].name, j.id.0),
                device: sim.devs[j.dev].name.clone(),
                bytes: j.bytes_done,
                done: j.done_at.is_some(),
                completion_s: j.done_at.map(|t| t.as_secs_f64()),
            })
            .collect();
        let ms = |ns: u64| ns as f64 / NS_PER_MS as f64;
        let whole_seconds = per_second_means(sim, &cur);
        let (stall_from_ns, stall_ns) = sim.longest_stall_ns();
        RunReport {
            lesson: lesson.to_string(),
            variant: variant.to_string(),
            seed: sim.seed(),
            sim_seconds: cur.end.as_secs_f64(),
            events: sim.acct.totals.events,
            throughput_mb_s: iv.throughput_mb_s,
            read_mb_s: iv.read_mb_s,
            write_mb_s: iv.write_mb_s,
            iops: iv.iops,
            cs_per_s: iv.cs_per_s,
            intr_per_s: iv.intr_per_s,
            cpu: iv.cpu,
            threads,
            devices: iv.devices,
            fairness: sim.fairness(),
            jobs: crate::tools::fio_report::fio_jobs(sim),
            processes,
            completion_s: sim.finished_at().map(|t| t.as_secs_f64()),
            longest_stall_s: stall_ns as f64 / NS_PER_S as f64,
            longest_stall_from_s: stall_from_ns as f64 / NS_PER_S as f64,
            latency_ms: LatencyReport {
                p50: ms(sim.acct.latency.quantile_ns(0.5)),
                p99: ms(sim.acct.latency.quantile_ns(0.99)),
                max: ms(sim.acct.latency.max_ns()),
            },
            readahead_thrashed_mb: sim.totals().readahead_thrashed_bytes as f64 / 1e6,
            vmstat: whole_seconds.0,
            progressing_jobs_mean: whole_seconds.1,
            model_gaps: sim.model_gaps(),
            kernel: sim.config().scenario.kernel.clone(),
            era: crate::scenario::era::era_of(&sim.config().scenario),
            funccount: {
                let secs = cur.end.as_secs_f64();
                let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
                sim.acct.totals.funccount.by_name().iter().map(|&(f, n)| (f.to_string(), rate(n))).collect()
            },
        }
    }
}

/// vmstat's means and the mean count of progressing jobs over the whole seconds of the run:
/// the one-second snapshots, each against the one before (the first against time 0). A run
/// shorter than a second has one line, over the run so far (as the page shows it before its
/// first whole second), not zeros.
fn per_second_means(sim: &Sim, cur: &Interval) -> (VmstatReport, f64) {
    let mut ticks: Vec<&Interval> = sim.history().filter(|t| t.end.ns() % NS_PER_S == 0 && t.end.ns() > 0).collect();
    if ticks.is_empty() {
        if cur.end.ns() == 0 {
            return (VmstatReport::default(), 0.0);
        }
        ticks.push(cur);
    }
    let zero = Interval::zero_with(cur.diskstats.len(), cur.per_core.len());
    let mut v = VmstatReport::default();
    let mut progressing = 0.0;
    let mut prev = &zero;
    for &t in &ticks {
        let dt = t.end - prev.end;
        let cpu = t.cpu.pct_since(&prev.cpu);
        v.r += t.running as f64;
        v.b += t.blocked as f64;
        v.intr += per_s(t.interrupts - prev.interrupts, dt);
        v.cs += per_s(t.context_switches - prev.context_switches, dt);
        v.us += cpu.user_pct;
        v.sy += cpu.sys_pct + cpu.softirq_pct;
        v.id += cpu.idle_pct;
        v.wa += cpu.iowait_pct;
        progressing += t.job_bytes.iter().enumerate().filter(|&(i, &b)| b > prev.job_bytes.get(i).copied().unwrap_or(0)).count() as f64;
        prev = t;
    }
    let n = ticks.len() as f64;
    let mean =
        VmstatReport { r: v.r / n, b: v.b / n, intr: v.intr / n, cs: v.cs / n, us: v.us / n, sy: v.sy / n, id: v.id / n, wa: v.wa / n };
    (mean, progressing / n)
}

/// A figure as the table prints it: no more digits than the measurement has.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{:.1}", x).trim_end_matches(".0").to_string()
    } else if a >= 0.1 || a == 0.0 {
        format!("{x:.2}").trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.4}").trim_end_matches('0').to_string()
    }
}
