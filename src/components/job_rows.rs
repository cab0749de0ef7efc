//! fio's figures per job: a row for each job section of the job file (its name, its colour,
//! MB/s, IOPS and the 99th percentile of its completion latency, read and write apart where
//! the job does both), as the core counts them from each job's own I/Os
//! (`tools::fio_report::job_figures`). In the A/B view each job's row in B stands under its
//! row in A, with the ratio B/A of its MB/s.

use super::latency_heat::latency_label;
use crate::format;
use crate::palette::job_colour;
use blksim::tools::fio_report::{JobDirFigures, JobFigures};
use yew::prelude::*;

/// A job's directions to show: those with I/Os (read first, as fio prints them), or the read
/// direction alone before the job's first completion.
fn dirs(j: &JobFigures) -> Vec<(&'static str, &JobDirFigures)> {
    let mut v: Vec<_> = [("read", &j.read), ("write", &j.write)].into_iter().filter(|(_, d)| d.total_ios > 0).collect();
    if v.is_empty() {
        v.push(("read", &j.read));
    }
    v
}

fn mb_s(d: &JobDirFigures) -> f64 {
    d.bw_bytes as f64 / 1e6
}

/// One row: a job's direction in run `run` ("A", "B", or "" outside the A/B view). `first`: the
/// job's first row, which names it; `vs`: A's figures, for B's ratio.
fn row(run: &str, section: usize, j: &JobFigures, dir: &str, d: &JobDirFigures, first: bool, vs: Option<&JobDirFigures>) -> Html {
    let clones = if j.jobs > 1 { format!(" ×{}", j.jobs) } else { String::new() };
    html! {
        <tr data-job={j.jobname.clone()} data-dir={dir.to_string()} data-run={(!run.is_empty()).then(|| run.to_string())} class={classes!(first.then_some("first"))}>
            <td class="l name">
                if first {
                    <span class="job-swatch" data-colour={job_colour(section)} style={format!("background:{}", job_colour(section))} aria-hidden="true"></span>
                    { format!("{}{clones}", j.jobname) }
                }
            </td>
            if !run.is_empty() { <td class="l run">{ run }</td> }
            <td class="l">{ dir }</td>
            <td data-col="mb_s">{ format::throughput(mb_s(d)) }</td>
            <td data-col="iops">{ format::rate(d.iops) }</td>
            <td data-col="p99">{ if d.total_ios > 0 { latency_label(d.p99_ns as f64) } else { "–".to_string() } }</td>
            if !run.is_empty() {
                <td data-col="ratio">{ vs.map(|a| format::ratio(mb_s(d), mb_s(a))).unwrap_or_default() }</td>
            }
        </tr>
    }
}

/// The table of jobs: shown where a run has several job sections (one job's figures are the
/// big numbers already). `b`: run B's jobs in the A/B view, matched to A's by name.
pub fn job_table(a: &[JobFigures], b: Option<&[JobFigures]>) -> Html {
    if a.len() < 2 && b.is_none_or(|b| b.len() < 2) {
        return html! {};
    }
    let ab = b.is_some();
    let mut rows = Vec::new();
    for (i, j) in a.iter().enumerate() {
        let other = b.and_then(|b| b.iter().find(|o| o.jobname == j.jobname));
        for (k, (dir, d)) in dirs(j).into_iter().enumerate() {
            rows.push(row(if ab { "A" } else { "" }, i, j, dir, d, k == 0, None));
            if let Some(o) = other {
                let od = if dir == "read" { &o.read } else { &o.write };
                rows.push(row("B", i, o, dir, od, false, Some(d)));
            } else if ab {
                rows.push(html! { <tr data-job={j.jobname.clone()} data-run="B"><td></td><td class="l run">{"B"}</td><td class="l dim" colspan="5">{ "no such job in B" }</td></tr> });
            }
        }
    }
    // B's jobs that A lacks.
    for (i, o) in b.unwrap_or_default().iter().enumerate().filter(|(_, o)| !a.iter().any(|j| j.jobname == o.jobname)) {
        for (k, (dir, d)) in dirs(o).into_iter().enumerate() {
            rows.push(row("B", i, o, dir, d, k == 0, None));
        }
    }
    html! {
        <table class="jobs" aria-label="fio: each job" data-testid="job-rows">
            <caption title="each job section's clones together, over its runtime so far: fio's figures for the job, not this second's">{ "fio, each job (from its start)" }</caption>
            <thead><tr>
                <th class="l">{ "job" }</th>
                if ab { <th class="l">{ "run" }</th> }
                <th class="l">{ "rw" }</th>
                <th title="fio's bw: the job's bytes over its runtime so far">{ "MB/s" }</th>
                <th title="the job's I/Os over its runtime so far">{ "IOPS" }</th>
                <th title="the 99th percentile of the job's completion latency (fio's clat)">{ "p99 clat" }</th>
                if ab { <th title="B's MB/s over A's">{ "B/A" }</th> }
            </tr></thead>
            <tbody>{ for rows }</tbody>
        </table>
    }
}

/// The latency chart's legend where it draws a series per job: each job's colour and name.
pub fn job_legend(jobs: &[JobFigures]) -> Html {
    if jobs.len() < 2 {
        return html! {};
    }
    html! {
        <ul class="job-legend" aria-label="Jobs on the latency chart" data-testid="job-legend">
            { for jobs.iter().enumerate().map(|(i, j)| html! {
                <li data-job={j.jobname.clone()}>
                    <span class="job-swatch" data-colour={job_colour(i)} style={format!("background:{}", job_colour(i))} aria-hidden="true"></span>
                    { &j.jobname }
                </li>
            }) }
        </ul>
    }
}
