//! What fio reports of each job: `--output-format=json`'s `jobs` (stat.c
//! `show_thread_status_json`, `add_ddir_status_json`, `add_ddir_lat_json`), and the text
//! block fio prints per job (`show_thread_status_normal`). Counted from each job's own I/Os as
//! they complete (`fio::job::DirStat`), never split from a total.

use crate::engine::time::NS_PER_MS;
use crate::engine::Sim;
use crate::fio::job::DirStat;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// fio's default `percentile_list` (options.c): 1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:
/// 99.9:99.95:99.99.
pub const PERCENTILES: [f64; 17] = [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// `clat_ns`: completion latency in ns; `percentile` keyed as fio keys it (`"%f"`: "99.000000"),
/// left out with no samples, as fio leaves it out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClatReport {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    #[serde(rename = "N")]
    pub n: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentile: BTreeMap<String, u64>,
}

/// One direction of a job (`"read"`, `"write"`): bytes, KiB/s and B/s over the job's runtime
/// in ms, as fio computes them (`bw_bytes = 1000 × io_bytes / runtime`, `bw = bw_bytes / 1024`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DdirReport {
    pub io_bytes: u64,
    pub io_kbytes: u64,
    pub bw_bytes: u64,
    pub bw: u64,
    pub iops: f64,
    pub runtime: u64,
    pub total_ios: u64,
    pub clat_ns: ClatReport,
}

/// One entry of fio's `jobs`: a clone, or a job section's clones together with
/// `group_reporting=1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FioJobReport {
    pub jobname: String,
    /// fio's reporting group: a `stonewall` (or `wait_for`) starts the next.
    pub groupid: u32,
    /// How many clones the entry counts (fio's "jobs=N" in its text).
    pub jobs: u32,
    pub read: DdirReport,
    pub write: DdirReport,
    /// The longest of its clones' runtimes, ms.
    pub job_runtime: u64,
}

fn ddir(st: &DirStat, runtime_ms: u64) -> DdirReport {
    let clat = &st.clat;
    let bw_bytes = (1000 * st.io_bytes).checked_div(runtime_ms).unwrap_or(0);
    let percentile =
        if clat.samples > 0 { PERCENTILES.iter().map(|&p| (format!("{p:.6}"), clat.percentile_ns(p))).collect() } else { BTreeMap::new() };
    DdirReport {
        io_bytes: st.io_bytes,
        io_kbytes: st.io_bytes >> 10,
        bw_bytes,
        bw: bw_bytes / 1024,
        iops: if runtime_ms > 0 { 1000.0 * st.total_ios as f64 / runtime_ms as f64 } else { 0.0 },
        runtime: runtime_ms,
        total_ios: st.total_ios,
        clat_ns: ClatReport { min: clat.min_ns, max: clat.max_ns, mean: clat.mean_ns(), n: clat.samples, percentile },
    }
}

/// A report's figures as they are summed: a clone's, or a group's (`sum_thread_stats`).
struct Entry {
    jobname: String,
    groupid: u32,
    jobs: u32,
    section: u16,
    stat: [DirStat; 2],
    runtime_ms: u64,
}

/// The entries of fio's `jobs` as they are summed: each clone, or a section's clones together
/// where the section asks for `group_reporting` (or `by_section`, the page's one row per job
/// section). A section that waits for others (`stonewall`, `wait_for`) starts a new group.
fn entries(sim: &Sim, by_section: bool) -> Vec<Entry> {
    let now = sim.now();
    let sections: Vec<&crate::scenario::Workload> = sim.cfg.scenario.all_jobs().collect();
    let mut groupid = 0;
    let mut out: Vec<Entry> = Vec::new();
    for job in sim.jobs.iter() {
        let sec = job.run.section;
        let w = sections[sec as usize];
        let new_section = out.last().is_none_or(|e| e.section != sec);
        if new_section && sec > 0 && (w.fio.stonewall || !w.fio.wait_for.is_empty()) {
            groupid += 1;
        }
        // A job's runtime: from the end of its ramp to its end (or now), whole ms as fio counts.
        let end = job.done_at.unwrap_or(now);
        let runtime_ms = match job.run.started_at {
            Some(_) if end > job.run.stat_from => (end - job.run.stat_from) / NS_PER_MS,
            _ => 0,
        };
        match out.last_mut() {
            Some(e) if (w.fio.group_reporting || by_section) && !new_section => {
                e.jobs += 1;
                e.runtime_ms = e.runtime_ms.max(runtime_ms);
                for (d, st) in e.stat.iter_mut().zip(&job.run.stat) {
                    d.io_bytes += st.io_bytes;
                    d.total_ios += st.total_ios;
                    d.clat.add(&st.clat);
                }
            }
            _ => out.push(Entry { jobname: w.name.clone(), groupid, jobs: 1, section: sec, stat: job.run.stat.clone(), runtime_ms }),
        }
    }
    out
}

/// fio's `jobs`, in the job file's order: each clone, or each `group_reporting` section's
/// clones summed (`sum_thread_stats`: bytes, I/Os and latencies summed, over the longest
/// runtime).
pub fn fio_jobs(sim: &Sim) -> Vec<FioJobReport> {
    entries(sim, false)
        .into_iter()
        .map(|e| FioJobReport {
            jobname: e.jobname,
            groupid: e.groupid,
            jobs: e.jobs,
            read: ddir(&e.stat[0], e.runtime_ms),
            write: ddir(&e.stat[1], e.runtime_ms),
            job_runtime: e.runtime_ms,
        })
        .collect()
}

/// One direction of a job section as the page shows it: fio's `bw_bytes`, `iops`,
/// `total_ios` and clat's 99th percentile (ns), over the runtime so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobDirFigures {
    pub bw_bytes: u64,
    pub iops: f64,
    pub total_ios: u64,
    pub p99_ns: u64,
}

/// One job section of the job file, its clones summed as `group_reporting` sums them: the
/// page's row of that job, and its latencies (both directions, fio's clat) for the chart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFigures {
    pub jobname: String,
    pub jobs: u32,
    pub read: JobDirFigures,
    pub write: JobDirFigures,
    pub clat_buckets: Vec<(u64, u64)>,
}

/// Each job section's figures so far, in the job file's order (`JobFigures`).
pub fn job_figures(sim: &Sim) -> Vec<JobFigures> {
    // As `ddir` computes them, without the percentile list the page does not show.
    let dir = |st: &DirStat, runtime_ms: u64| JobDirFigures {
        bw_bytes: (1000 * st.io_bytes).checked_div(runtime_ms).unwrap_or(0),
        iops: if runtime_ms > 0 { 1000.0 * st.total_ios as f64 / runtime_ms as f64 } else { 0.0 },
        total_ios: st.total_ios,
        p99_ns: if st.clat.samples > 0 { st.clat.percentile_ns(99.0) } else { 0 },
    };
    entries(sim, true)
        .into_iter()
        .map(|e| {
            let mut clat = e.stat[0].clat.clone();
            clat.add(&e.stat[1].clat);
            JobFigures {
                read: dir(&e.stat[0], e.runtime_ms),
                write: dir(&e.stat[1], e.runtime_ms),
                clat_buckets: clat.buckets().collect(),
                jobname: e.jobname,
                jobs: e.jobs,
            }
        })
        .collect()
}

/// The job's block as fio prints it (`show_thread_status_normal`), latencies in µs.
pub fn fio_text(jobs: &[FioJobReport]) -> String {
    let mut s = String::new();
    for j in jobs {
        let _ = writeln!(s, "{}: (groupid={}, jobs={}): err= 0", j.jobname, j.groupid, j.jobs);
        for (name, d) in [("read", &j.read), ("write", &j.write)] {
            if d.total_ios == 0 {
                continue;
            }
            let _ = writeln!(
                s,
                "  {name}: IOPS={:.0}, BW={}KiB/s ({:.1}MB/s)({}KiB/{}msec)",
                d.iops,
                d.bw,
                d.bw_bytes as f64 / 1e6,
                d.io_kbytes,
                d.runtime
            );
            let c = &d.clat_ns;
            let us = |ns: u64| ns as f64 / 1000.0;
            let _ = writeln!(s, "    clat (usec): min={:.0}, max={:.0}, avg={:.2}", us(c.min), us(c.max), c.mean / 1000.0);
            let _ = writeln!(s, "     clat percentiles (usec):");
            let cells: Vec<String> = PERCENTILES
                .iter()
                .map(|p| format!("{p:>5.2}th=[{:>6.0}]", us(c.percentile.get(&format!("{p:.6}")).copied().unwrap_or(0))))
                .collect();
            for row in cells.chunks(4) {
                let _ = writeln!(s, "     | {}", row.join(", "));
            }
        }
    }
    s
}
