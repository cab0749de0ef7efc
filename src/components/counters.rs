//! The numbers: throughput and IOPS in large type, vmstat, top and iostat -x as real tables.
//! Each value is one simulated second's, like `iostat -x 1` and `vmstat 1`.

use crate::format;
use blksim::course::lessons::{IostatRows, IOSTAT_COLS};
use blksim::tools::report::IntervalReport;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct CountersProps {
    /// The last whole simulated second; None before the first second has passed.
    pub interval: Option<IntervalReport>,
    /// True when `interval` covers less than a second: the numbers so far.
    #[prop_or(false)]
    pub partial: bool,
    /// True when the jobs are done and `interval` covers the whole run.
    #[prop_or(false)]
    pub whole: bool,
    /// top: (name, pid, %CPU, state) over the same second.
    pub top: Vec<(String, u32, f64, char)>,
    /// The jobs go through the page cache (not O_DIRECT): their MB/s and the disks' differ
    /// (readahead, writeback), so both are shown, always, whatever this second's values.
    #[prop_or(false)]
    pub page_cache: bool,
    /// A job writes through the page cache: its write() returns at memory speed, so the disks'
    /// MB/s leads the big numbers (the jobs' follows).
    #[prop_or(false)]
    pub buffered_writes: bool,
    /// How many iostat rows to show (busiest first).
    #[prop_or(12)]
    pub max_devices: usize,
    /// In the A/B view: run B's numbers over the same simulated second.
    #[prop_or_default]
    pub b: Option<IntervalReport>,
    #[prop_or_default]
    pub b_top: Vec<(String, u32, f64, char)>,
    #[prop_or(false)]
    pub b_partial: bool,
    #[prop_or(false)]
    pub b_whole: bool,
    /// The lesson's first steady second: before it the numbers say "warming up".
    #[prop_or_default]
    pub warmup_s: Option<f64>,
    /// The iostat -x columns to show (`IOSTAT_COLS` names), in iostat's order; None: all.
    #[prop_or_default]
    pub iostat_cols: Option<Vec<String>>,
    /// Which devices the step is about: the busiest, or the busiest and the least served.
    #[prop_or_default]
    pub iostat_rows: IostatRows,
    /// A jump under way (a link's t, a step's, the timeline's): where the runs are going.
    #[prop_or_default]
    pub jumping_to_s: Option<f64>,
    /// When the jobs all finished (s), for A and B: a burst (mq-clone-stall's mkfs) is about its
    /// completion time, which then stands first among the big numbers.
    #[prop_or_default]
    pub done_s: Option<f64>,
    #[prop_or_default]
    pub b_done_s: Option<f64>,
    /// Takes the runs to the end of the warm-up without animating (the banner's button): at a
    /// teaching speed of 10 ms/s, raid5-chunk's 8 s of warm-up would take 13 minutes to watch.
    /// Each job section's fio figures, for A and B: a row per job where there are several.
    #[prop_or_default]
    pub jobs: Vec<blksim::tools::fio_report::JobFigures>,
    #[prop_or_default]
    pub b_jobs: Option<Vec<blksim::tools::fio_report::JobFigures>>,
    #[prop_or_default]
    pub on_skip_warmup: Option<Callback<MouseEvent>>,
}

/// What span of simulated time a run's numbers cover.
fn span_label(iv: &IntervalReport, partial: bool, whole: bool) -> String {
    if whole {
        format!(
            "the whole run, to its end at {}: averages since the start (iostat's first report)",
            format::sim_time((iv.end_s * 1e9).round() as u64)
        )
    } else if partial {
        format!("so far: the first {:.0} ms (iostat and vmstat report each simulated second)", iv.end_s * 1e3)
    } else if iv.span_s < 0.999 {
        format!("the run's last {:.0} ms, to its end at {} simulated", iv.span_s * 1e3, format::sim_time((iv.end_s * 1e9).round() as u64))
    } else {
        format!("the second ending at {:.0} s simulated", iv.end_s)
    }
}

/// One big number, with B and the ratio B/A beside it in the A/B view. `b` carries, when the
/// two cover different kinds of span (a ratio of a whole run to one second means nothing),
/// what differs, shown where the ratio would be.
/// What the fairness figure is, on hover.
const FAIRNESS_TITLE: &str = "Jain's index of what each disk moved: 1 when all moved alike, 1/n when one moved everything. \
    Over the disks that had work (a request queued or in flight, or data moved): a disk no job uses is idle, not starved.";

fn big(key: &str, label: &str, a: f64, b: Option<(f64, Option<&str>)>, fmt: fn(f64) -> String) -> Html {
    big_titled(key, label, a, b, fmt, None)
}

/// A big number with what it is on hover.
fn big_titled(key: &str, label: &str, a: f64, b: Option<(f64, Option<&str>)>, fmt: fn(f64) -> String, title: Option<&'static str>) -> Html {
    html! {
        <div class="big-num" data-counter={key.to_string()} title={title}>
            <span class="v" data-run={b.is_some().then_some("A")}>{ fmt(a) }</span>
            if let Some((b, differ)) = b {
                <span class="v b" data-run="B" data-counter-b={key.to_string()}>{ fmt(b) }</span>
                if let Some(why) = differ {
                    <span class="ratio" data-ratio={key.to_string()} title="A and B cover different spans, so no ratio: see the line below">{ format!("B/A – ({why})") }</span>
                } else {
                    <span class="ratio" data-ratio={key.to_string()} title="B/A">{ format!("B/A {}", format::ratio(b, a)) }</span>
                }
            }
            <span class="k">{ label }</span>
        </div>
    }
}

fn meminfo(run: &str, iv: &IntervalReport) -> String {
    format!("{run}meminfo Dirty {:.1} MB, Writeback {:.1} MB", iv.dirty_mb, iv.writeback_mb)
}

/// One `vmstat 1` line (procs, io, system, cpu; no memory or swap columns). As procps
/// vmstat does, `sy` includes softirq time; top's `%Cpu(s)` line (`cpu_line`) splits it out.
fn vmstat_row(run: &str, iv: &IntervalReport) -> Html {
    let c = &iv.cpu;
    html! {
        <tr>
            <td class="l">{ run }</td>
            <td>{ iv.running }</td><td>{ iv.blocked }</td>
            <td>{ format!("{:.0}", iv.bi) }</td><td>{ format!("{:.0}", iv.bo) }</td>
            <td>{ format!("{:.0}", iv.intr_per_s) }</td><td data-counter={format!("vmstat-cs{}", if run == "B" { "-b" } else { "" })}>{ format!("{:.0}", iv.cs_per_s) }</td>
            <td>{ format!("{:.0}", c.user_pct) }</td><td>{ format!("{:.0}", c.sys_pct + c.softirq_pct) }</td>
            <td>{ format!("{:.0}", c.idle_pct) }</td><td>{ format!("{:.0}", c.iowait_pct) }</td>
        </tr>
    }
}

/// top's summary line, where softirq time has its own column (`si`).
fn cpu_line(run: &str, iv: &IntervalReport) -> String {
    let c = &iv.cpu;
    format!(
        "{run}%Cpu(s): {:.1} us, {:.1} sy, {:.1} id, {:.1} wa, {:.1} si",
        c.user_pct, c.sys_pct, c.idle_pct, c.iowait_pct, c.softirq_pct
    )
}

/// iostat's number, one decimal, or none from 1000 on (so that a busy device's line fits).
fn num(x: f64) -> String {
    if x >= 1000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// What each iostat -x column counts, on hover, in `IOSTAT_COLS` order (as sysstat's iostat(1)
/// explains them, for the interval shown).
const IOSTAT_TITLES: [&str; 10] = [
    "read requests merged per second into requests already queued for the device",
    "write requests merged per second into requests already queued for the device",
    "read requests completed per second (after merging)",
    "write requests completed per second (after merging)",
    "KiB read from the device per second",
    "KiB written to the device per second",
    "the average size of the requests issued to the device, in 512-byte sectors",
    "the average number of requests queued to the device or being served by it",
    "the average time, in ms, from a request's queueing to its completion: the wait in the queue and the service",
    "the share of the interval during which the device had at least one request in flight (not a measure of its capacity for a device that serves several at once)",
];

/// One device's iostat -x line, as text, in `IOSTAT_COLS` order.
fn iostat_cells(d: &blksim::tools::stats::Iostat) -> [String; 10] {
    [
        num(d.rrqm_s),
        num(d.wrqm_s),
        num(d.r_s),
        num(d.w_s),
        format!("{:.0}", d.rkb_s),
        format!("{:.0}", d.wkb_s),
        num(d.avgrq_sz),
        num(d.avgqu_sz),
        num(d.await_ms),
        format!("{:.0}", d.util_pct),
    ]
}

/// The table's look: which rows and columns, and the button for the rest.
#[derive(Clone, Copy)]
struct IostatLook<'a> {
    max: usize,
    rows: IostatRows,
    cols: Option<&'a [String]>,
    all: bool,
}

fn iostat_table(caption: String, iv: &IntervalReport, look: IostatLook, toggle: Callback<MouseEvent>) -> Html {
    let IostatLook { max, rows, cols, all } = look;
    let mut devs = iv.devices.clone();
    // iostat -x: the stacking devices (dm-*, md*) first, since a stacked lesson is about them,
    // then the busiest (by %util, then throughput); ties keep kernel order. A step about how
    // evenly the disks are served orders them by what they moved (a starved disk can read
    // 100 %util with its requests waiting in the elevator).
    let stacking = |n: &str| n.starts_with("dm-") || n.starts_with("md");
    let moved = |d: &blksim::tools::stats::Iostat| d.rkb_s + d.wkb_s;
    crate::sort::stable_by(&mut devs, |a, b| {
        let by_util = b.util_pct.total_cmp(&a.util_pct);
        let by_moved = moved(b).total_cmp(&moved(a));
        stacking(&b.name).cmp(&stacking(&a.name)).then(if rows == IostatRows::Spread {
            by_moved.then(by_util)
        } else {
            by_util.then(by_moved)
        })
    });
    let hidden = devs.len().saturating_sub(max);
    // A step about how evenly disks are served keeps both ends of the list: the least served
    // are the starved ones, and they are what the step asks to compare.
    let split = if rows == IostatRows::Spread && hidden > 0 && max >= 2 {
        let tail = max / 2;
        devs.drain(max - tail..devs.len() - tail);
        Some(max - tail)
    } else {
        devs.truncate(max);
        None
    };
    // The columns shown, in iostat's order: all of them, or the ones presenter mode keeps.
    let shown: Vec<usize> = (0..IOSTAT_COLS.len()).filter(|&i| cols.is_none_or(|c| c.iter().any(|n| n == IOSTAT_COLS[i]))).collect();
    let row = |d: &blksim::tools::stats::Iostat| {
        let cells = iostat_cells(d);
        html! {
            <tr data-device={d.name.clone()}>
                <td class="l">{ &d.name }</td>
                { for shown.iter().map(|&i| html! { <td data-col={IOSTAT_COLS[i]}>{ cells[i].clone() }</td> }) }
            </tr>
        }
    };
    let span = (shown.len() + 1).to_string();
    html! {
        <>
        <table class="iostat" aria-label={caption.clone()} data-rows={if split.is_some() { "spread" } else { "busiest" }} data-cols={shown.len().to_string()}>
            <caption>{ caption }</caption>
            <thead><tr>
                <th class="l">{"Device"}</th>
                { for shown.iter().map(|&i| html! { <th data-col={IOSTAT_COLS[i]} title={IOSTAT_TITLES[i]}>{ IOSTAT_COLS[i] }</th> }) }
            </tr></thead>
            <tbody>
                if let Some(at) = split {
                    { for devs[..at].iter().map(row) }
                    <tr class="between"><td class="l" colspan={span}>{ format!("… {hidden} devices between") }<span class="why">{ ": the busiest above, the least served below" }</span></td></tr>
                    { for devs[at..].iter().map(row) }
                } else {
                    { for devs.iter().map(row) }
                }
            </tbody>
        </table>
        if hidden > 0 {
            <button class="more" onclick={toggle}>{ format!("+{hidden} more devices") }</button>
        } else if all {
            <button class="more" onclick={toggle}>{ "only the busiest devices" }</button>
        }
        </>
    }
}

/// What reached the disks in the interval, MB/s from iostat: with buffered I/O, not what the
/// jobs did. Summed from +0.0, so no disk traffic reads "0.0", never "-0.0".
pub fn disks_mb_s(iv: &IntervalReport) -> f64 {
    iv.devices.iter().filter(|d| d.is_disk()).fold(0.0, |sum, d| sum + (d.rkb_s + d.wkb_s) * 1024.0 / 1e6)
}

/// Before the first report: why there are no numbers yet.
fn waiting(p: &CountersProps) -> Html {
    html! {
        <section class="counters">
            <p class="waiting">{ match p.jumping_to_s {
                // The numbers wait for the jump (in the A/B view B may be there already, A on its way).
                Some(t) => format!("Running to t = {} without animating: the numbers show when the run gets there.", format::sim_time((t * 1e9).round() as u64)),
                None => "The first simulated second has not passed yet: iostat and vmstat report once per second.".to_string(),
            } }</p>
        </section>
    }
}

/// What the delayed-run count is, on hover.
const DELAY_RUNS_TITLE: &str = "calls a second of blk_mq_delay_run_hw_queues, as bcc's funccount counts them: a hardware queue's run found the elevator with work and got no request, put the dispatch budget back and re-armed a 3 ms run of the queues";

/// The big numbers: completion, throughput (the jobs' and the disks'), IOPS, context switches
/// and fairness, with B's and the ratio in the A/B view. `cmp`: which run is not a current
/// second, where the spans differ.
fn big_numbers(p: &CountersProps, iv: &IntervalReport, b: Option<&IntervalReport>, cmp: Option<&str>) -> Html {
    let disks = || big("disks", "to/from the disks", disks_mb_s(iv), b.map(|b| (disks_mb_s(b), cmp)), format::throughput);
    html! {
        <div class="big">
            if let Some(done) = p.done_s.filter(|_| p.whole) {
                { big(
                    "completion",
                    "the jobs' completion time",
                    done,
                    b.map(|_| match p.b_done_s.filter(|_| p.b_whole) {
                        Some(x) => (x, None),
                        None => (f64::NAN, Some("B: still running")),
                    }),
                    |s| if s.is_nan() { "–".to_string() } else { format::sim_time((s * 1e9).round() as u64) },
                ) }
            }
            if p.buffered_writes {
                { disks() }
            }
            { big("throughput", "throughput (the jobs')", iv.throughput_mb_s, b.map(|b| (b.throughput_mb_s, cmp)), format::throughput) }
            // Buffered I/O: what the jobs see and what reaches the disks differ (page cache,
            // readahead, writeback after the last write()); show both when they do.
            if p.page_cache && !p.buffered_writes {
                { disks() }
            }
            { big("iops", "IOPS (the jobs')", iv.iops, b.map(|b| (b.iops, cmp)), format::rate) }
            { big("cs", "context switches /s", iv.cs_per_s, b.map(|b| (b.cs_per_s, cmp)), format::rate) }
            // blk-mq's 3 ms re-runs after an elevator had work and gave none (bcc's funccount):
            // shown once either run has called it.
            if iv.blk_mq_delay_run_hw_queues_per_s > 0.0 || b.is_some_and(|b| b.blk_mq_delay_run_hw_queues_per_s > 0.0) {
                { big_titled(
                    "delay-runs",
                    "blk_mq_delay_run_hw_queues /s",
                    iv.blk_mq_delay_run_hw_queues_per_s,
                    b.map(|b| (b.blk_mq_delay_run_hw_queues_per_s, cmp)),
                    format::rate,
                    Some(DELAY_RUNS_TITLE),
                ) }
            }
            // Across disks: a single disk under LVM or dm is not a spread.
            if iv.devices.iter().filter(|d| d.is_disk()).count() > 1 {
                { big_titled("fairness", "fairness across disks (Jain)", iv.fairness, b.map(|b| (b.fairness, cmp)), |f| format!("{f:.2}"), Some(FAIRNESS_TITLE)) }
            }
        </div>
    }
}

/// What span the numbers cover (each run's, where A's and B's differ), and the warm-up banner.
fn interval_lines(p: &CountersProps, iv: &IntervalReport, b: Option<&IntervalReport>) -> Html {
    html! {
        <>
            <p class="interval" data-testid="interval">{
                match b {
                    Some(b) if p.whole != p.b_whole || p.partial != p.b_partial || (iv.end_s - b.end_s).abs() > 1e-9 => format!(
                        "A: {} · B: {}",
                        span_label(iv, p.partial, p.whole),
                        span_label(b, p.b_partial, p.b_whole)
                    ),
                    _ => span_label(iv, p.partial, p.whole),
                }
            }</p>
            if let Some(w) = p.warmup_s.filter(|w| iv.end_s < *w && !p.whole) {
                <p class="warming" data-testid="warming">
                    { format!("Warming up until t = {w} s: the caches and the page cache have not reached their steady state, so these numbers are not yet the ones to compare.") }
                    if let (Some(cb), None) = (p.on_skip_warmup.clone(), p.jumping_to_s) {
                        { " " }
                        <button class="skip-warmup" data-testid="skip-warmup" title="Runs to the end of the warm-up without animating, then goes on as before" onclick={cb}>{ format!("Skip to t = {w} s ⇥") }</button>
                    }
                </p>
            }
        </>
    }
}

/// vmstat, A's line and B's, and what the jobs wrote that the disks have not (meminfo).
fn vmstat_lines(iv: &IntervalReport, b: Option<&IntervalReport>) -> Html {
    let ab = b.is_some();
    html! {
        <>
            <table class="vmstat" aria-label="vmstat">
                <caption>{ "vmstat" }</caption>
                <thead><tr><th class="l">{ if ab { "run" } else { "" } }</th><th title="runnable, at the moment shown: vmstat samples r and b, it does not average them (blksim run's vmstat r is the mean of its per-second samples)">{"r"}</th><th title="in uninterruptible sleep, at the moment shown: sampled, as r is">{"b"}</th><th title="KiB/s read through submit_bio (pgpgin)">{"bi"}</th><th title="KiB/s written through submit_bio (pgpgout)">{"bo"}</th><th title="HBA interrupts/s (timer ticks are not modelled)">{"in"}</th><th title="context switches/s">{"cs"}</th><th title="% of CPU time running user code (nice time included)">{"us"}</th><th title="% of CPU time running kernel code, with irq and softirq time, as vmstat counts it">{"sy"}</th><th title="% of CPU time idle, not waiting on I/O">{"id"}</th><th title="% of CPU time idle while a task of that CPU waits on I/O">{"wa"}</th></tr></thead>
                <tbody>
                    { vmstat_row(if ab { "A" } else { "" }, iv) }
                    if let Some(b) = b { { vmstat_row("B", b) } }
                </tbody>
            </table>
            // Buffered writes: what the jobs wrote that the disks have not (so the jobs' and the
            // disks' MB/s differ, and an fsync still has work while the jobs' reads 0).
            if iv.dirty_mb + iv.writeback_mb > 0.0 || b.is_some_and(|b| b.dirty_mb + b.writeback_mb > 0.0) {
                <p class="meminfo" data-counter="meminfo" title="/proc/meminfo: written by the jobs, not yet on disk">
                    { meminfo(if ab { "A " } else { "" }, iv) }
                    if let Some(b) = b { { "; " }{ meminfo("B ", b) } }
                </p>
            }
        </>
    }
}

#[component]
pub fn Counters(p: &CountersProps) -> Html {
    // Every device's iostat line, or the busiest few (the default).
    let all_devices = use_state(|| false);
    let Some(iv) = &p.interval else {
        return waiting(p);
    };
    let b = p.b.as_ref();
    let ab = b.is_some();
    // Unlike spans: say which run is not a current second, where the ratio would be.
    let cmp = match (p.whole, p.b_whole, p.partial, p.b_partial) {
        (false, true, _, _) => Some("B: whole run"),
        (true, false, _, _) => Some("A: whole run"),
        (_, _, false, true) => Some("B: so far"),
        (_, _, true, false) => Some("A: so far"),
        _ => None,
    };
    let toggle_all = {
        let all_devices = all_devices.clone();
        Callback::from(move |_: MouseEvent| all_devices.set(!*all_devices))
    };
    let max_a = if *all_devices {
        usize::MAX
    } else if ab {
        p.max_devices.min(6)
    } else {
        p.max_devices
    };
    let max_b = if *all_devices { usize::MAX } else { p.max_devices.min(6) };
    let look = |max| IostatLook { max, rows: p.iostat_rows, cols: p.iostat_cols.as_deref(), all: *all_devices };
    html! {
        <section class="counters">
            { big_numbers(p, iv, b, cmp) }
            { super::job_rows::job_table(&p.jobs, p.b_jobs.as_deref()) }
            { interval_lines(p, iv, b) }
            { vmstat_lines(iv, b) }
            <p class="cpu-line" data-counter="cpu-line">
                { cpu_line(if ab { "A " } else { "" }, iv) }
                if let Some(b) = b { <br/>{ cpu_line("B ", b) } }
            </p>
            <table class="top" aria-label="top">
                <caption>{ if ab { "top (A)" } else { "top" } }</caption>
                <thead><tr><th>{"PID"}</th><th>{"S"}</th><th>{"%CPU"}</th><th class="l">{"COMMAND"}</th></tr></thead>
                <tbody>
                    { for p.top.iter().map(|(name, pid, cpu, st)| html! {
                        <tr><td>{ pid }</td><td>{ st.to_string() }</td><td>{ format!("{cpu:.1}") }</td><td class="l">{ name }</td></tr>
                    }) }
                </tbody>
            </table>
            <div class="iostat-pair">
                <div>{ iostat_table(if ab { "iostat -x (A)".into() } else { "iostat -x".into() }, iv, look(max_a), toggle_all.clone()) }</div>
                if let Some(b) = b { <div>{ iostat_table("iostat -x (B)".into(), b, look(max_b), toggle_all) }</div> }
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::disks_mb_s;
    use blksim::engine::time::SimTime;
    use blksim::tools::report::IntervalReport;

    /// The interval of a sandbox run's first `ms`, with `sets` on top of the sandbox's knobs.
    fn interval(sets: &[(&str, &str)], ms: u64) -> IntervalReport {
        let sets: Vec<(String, String)> = sets.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect();
        let cfg = blksim::course::lessons::find("sandbox").unwrap().config("custom", &sets).unwrap();
        let mut sim = blksim::Sim::new(&cfg, 1);
        sim.run_until(SimTime(ms * 1_000_000));
        let cur = sim.cumulative();
        IntervalReport::between(&sim, &blksim::Interval::zero_for(&cur), &cur)
    }

    #[test]
    fn what_reached_the_disks_counts_nvme_namespaces_and_never_reads_minus_zero() {
        let read = [("workload.direct", "true"), ("workload.bs", "128k")];
        let nvme = interval(&[&read[..], &[("disk.kind", "nvme")]].concat(), 50);
        assert!(nvme.devices.iter().any(|d| d.name == "nvme0n1"));
        assert!(disks_mb_s(&nvme) > 100.0, "an NVMe drive's reads reach it: {}", disks_mb_s(&nvme));
        let hdd = interval(&read, 50);
        assert!(disks_mb_s(&hdd) > 10.0, "{}", disks_mb_s(&hdd));
        // No disk among the devices: 0.0, signed plus (an empty f64 sum is -0.0, "-0.0 MB/s").
        let mut none = nvme.clone();
        none.devices.retain(|d| d.name.starts_with("dm-"));
        assert!(disks_mb_s(&none) == 0.0 && disks_mb_s(&none).is_sign_positive());
    }
}
