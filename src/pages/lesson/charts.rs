//! The page's charts (drawn by components/charts.rs): a run's series, redrawing, PNG and CSV export.

use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use crate::components::charts::{draw_latency, draw_timeseries, RunSeries, CSV_HEADER};
use crate::components::latency_heat::{draw_latency_heat, latency_columns, HeatColumns};
use crate::export::{download_canvas_png_captioned, download_text};
use crate::view::RunView;
use crate::view::SessionView;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

/// A run's chart series: its whole seconds, or before the first, the numbers so far.
pub(super) fn series(d: &RunView) -> RunSeries {
    let so_far = d.shown.interval.as_ref().filter(|_| d.shown.interval_partial);
    RunSeries::from_history(d.shown.history.iter(), d.shown.topology.devices.len()).with_partial(so_far)
}

/// Draws the charts of both runs (A's, and B's in the A/B view) in the theme's colours.
pub(super) fn draw_charts(s: &SessionView, chart: &NodeRef, latency: &NodeRef, dark: bool) {
    let mut runs = vec![(format!("A {}", s.a.variant), series(&s.a))];
    let mut lat = vec![(format!("A {}", s.a.variant), s.a.shown.latency_buckets.clone())];
    if let Some(b) = &s.b {
        runs.push((format!("B {}", b.variant), series(b)));
        lat.push((format!("B {}", b.variant), b.shown.latency_buckets.clone()));
    }
    if let Some(c) = chart.cast::<HtmlCanvasElement>() {
        let r: Vec<(&str, &RunSeries)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
        let _ = draw_timeseries(&c, &r, dark);
    }
    if let Some(c) = latency.cast::<HtmlCanvasElement>() {
        if s.latency_over_time {
            let cols: Vec<(String, HeatColumns)> = std::iter::once(&s.a)
                .chain(s.b.as_ref())
                .zip(["A", "B"])
                .map(|(d, ab)| {
                    let now = &d.shown.latency_log2;
                    (format!("{ab} {}", d.variant), latency_columns(d.shown.history.iter(), Some((d.now().as_secs_f64(), now))))
                })
                .collect();
            let l: Vec<(&str, &HeatColumns)> = cols.iter().map(|(n, c)| (n.as_str(), c)).collect();
            let _ = draw_latency_heat(&c, &l, "the jobs' I/O latency (fio clat)", "second", dark);
        } else {
            // One run of several jobs: a series per job, in the job's colour (the legend
            // beside the chart names them); A/B keeps a series per run.
            let jobs = &s.a.shown.jobs;
            if s.b.is_none() && jobs.len() > 1 {
                let l: Vec<(&str, Vec<(u64, u64)>)> = jobs.iter().map(|j| (j.jobname.as_str(), j.clat_buckets.clone())).collect();
                let colours: Vec<&str> = (0..jobs.len()).map(crate::palette::job_colour).collect();
                let _ = draw_latency(&c, &l, &colours, dark);
            } else {
                let l: Vec<(&str, Vec<(u64, u64)>)> =
                    lat.into_iter().map(|(n, b)| (if n.starts_with('A') { "A" } else { "B" }, b)).collect();
                let _ = draw_latency(&c, &l, &[], dark);
            }
        }
    }
}

/// The latency chart's two views: the run's histogram, or each second's latencies over time.
pub(super) fn latency_view_buttons(session: &SharedSession, page: &PageDispatch, over_time: bool) -> Html {
    let set = |to: bool| {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = session.borrow_mut();
            s.latency_over_time = to;
            s.charts_dirty = true;
            drop(s);
            page.dispatch(PageAction::SessionChanged);
        })
    };
    html! {
        <div class="latency-view" role="group" aria-label="Latency chart">
            <span class="dim">{ "Latency" }</span>
            <button class="toggle" aria-pressed={(!over_time).to_string()} onclick={set(false)} title="How long the jobs' I/Os took, over the whole run">{ "Histogram" }</button>
            <button class="toggle" aria-pressed={over_time.to_string()} onclick={set(true)} title="Each second's latencies: when the slow I/Os happened (a heat map)">{ "Over time" }</button>
        </div>
    }
}

/// Export PNG: the chart over simulated time, as an image, captioned with what it is of (the
/// lesson, the runs, the seed, the time) and the link that opens that run.
pub(super) fn on_png(session: &SharedSession, chart: &NodeRef) -> Callback<MouseEvent> {
    let (session, chart) = (session.clone(), chart.clone());
    Callback::from(move |_: MouseEvent| {
        let Some(c) = chart.cast::<HtmlCanvasElement>() else { return };
        let s = session.borrow();
        let runs = match &s.b {
            Some(b) => format!("A {} and B {}", s.a.variant, b.variant),
            None => s.a.variant.clone(),
        };
        let t = crate::format::sim_time(s.clock().ns());
        let what = format!("blkviz · {} · {runs} · seed {} · t = {t}", s.a.lesson.title, s.a.seed);
        let link = super::link::address_of(&s.fragment());
        let name = format!("{}.png", stem_of(&s));
        let dark = c.closest("[data-theme=dark]").ok().flatten().is_some();
        let _ = download_canvas_png_captioned(&name, &c, &[what, link], dark);
    })
}

/// The exports' file name (without extension): the lesson, A's variant (and B's), A's seed.
fn stem_of(s: &crate::view::SessionView) -> String {
    crate::export::file_stem(&s.a.lesson.id, &s.a.variant, s.b.as_ref().map(|b| b.variant.as_str()), s.a.seed)
}

/// Export CSV: the charts' series of both runs.
pub(super) fn on_csv(session: &SharedSession) -> Callback<MouseEvent> {
    let session = session.clone();
    Callback::from(move |_: MouseEvent| {
        let s = session.borrow();
        // What the charts draw, the numbers so far included.
        let mut csv = CSV_HEADER.to_string();
        csv += &series(&s.a).to_csv(&format!("A:{}", s.a.variant));
        if let Some(b) = &s.b {
            csv += &series(b).to_csv(&format!("B:{}", b.variant));
        }
        let _ = download_text(&format!("{}.csv", stem_of(&s)), "text/csv", &csv);
    })
}
