//! "Run N seeds": a seed sweep in the page (`crate::sweep::Sweep`), for effects that are a
//! distribution over seeds (mq-clone-stall's stall): progress while it runs, then each
//! variant's distribution (`components::sweep_chart`), its percentiles, and its fastest and
//! slowest seeds as links that open those runs.

use super::state::{PageAction, PageDispatch, PageState};
use super::SharedSession;
use crate::runs::SPEED_MAX;
use crate::sweep::{best_and_worst, quantile, SeedRun, Sweep, SWEEP_SEEDS_MAX};
use crate::view::SessionView;
use web_sys::HtmlInputElement;
use yew::prelude::*;

fn num(x: Option<f64>) -> String {
    x.map_or("—".into(), blksim::tools::report::fmt_num)
}

/// A run's longest stall in words, as the links and the line under the table give it.
fn stall_words(r: &SeedRun) -> String {
    format!("{} s without a job's read or write completing", num(Some(r.stall_ns as f64 / 1e9)))
}

/// The seeds box and Run (or Cancel while the sweep runs), and why a count was refused.
fn seed_controls(session: &SharedSession, page: &PageDispatch, ui: &PageState, running: bool) -> Html {
    let (seeds, msg) = (&ui.sweep_seeds, &ui.sweep_msg);
    let start = {
        let (session, page, count) = (session.clone(), page.clone(), seeds.1);
        Callback::from(move |_: MouseEvent| {
            let Some(n) = count else { return };
            let r = session.borrow_mut().start_sweep(n);
            page.dispatch(PageAction::SetSweepMsg(r.err()));
            page.dispatch(PageAction::SessionChanged);
        })
    };
    let cancel = {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |_: MouseEvent| {
            session.borrow_mut().sweep = None;
            page.dispatch(PageAction::SessionChanged);
        })
    };
    let oninput = {
        let page = page.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            match input.value().trim().parse::<u64>() {
                Ok(n) if (1..=SWEEP_SEEDS_MAX).contains(&n) => {
                    page.dispatch(PageAction::SetSweepSeeds { text: input.value(), count: Some(n), msg: None });
                }
                _ => {
                    // The box keeps what was typed, and Run waits for a count it can take:
                    // Run never runs another count than the box shows.
                    let msg = format!("'{}' is not allowed; expected a whole number from 1 to {SWEEP_SEEDS_MAX}", input.value());
                    page.dispatch(PageAction::SetSweepSeeds { text: input.value(), count: None, msg: Some(msg) });
                }
            }
        })
    };
    html! {
        <div class="sweep-controls">
            <label>{ "Seeds " }<input type="number" min="1" max={SWEEP_SEEDS_MAX.to_string()} value={seeds.0.clone()} aria-label="Seeds" {oninput} disabled={running} /></label>
            if running {
                <button onclick={cancel}>{ "Cancel" }</button>
            } else {
                <button onclick={start} data-testid="run-seeds" disabled={seeds.1.is_none()}>{ seeds.1.map_or_else(|| "Run seeds".to_string(), |n| format!("Run {n} seeds")) }</button>
            }
            if let Some(m) = msg { <span class="error" role="alert">{ m }</span> }
        </div>
    }
}

/// The sweep's progress while it runs.
fn sweep_progress(sw: &Sweep) -> Html {
    html! {
        // A div, not a p: Yew can reuse a p for the line under the finished table, and a
        // reader holding this element (a test's handle) would find that line's text in it.
        <div class="sweep-progress" data-testid="sweep-progress" data-workers={sw.workers.as_ref().map_or(0, |w| w.count()).to_string()}>
            <progress max={sw.total().to_string()} value={sw.runs.len().to_string()}></progress>
            { format!(" {} of {} runs ({} seeds × {})", sw.runs.len(), sw.total(), sw.seeds, sw.variant_names().join(", ")) }
            { match &sw.workers {
                Some(w) => format!(", on {} workers", w.count()),
                None => ", on this page's thread".to_string(),
            } }
        </div>
    }
}

/// A run opens in the diagram at the top of the page; the table is below the charts, so a link
/// to a run takes the reader back up: to the page's top, where the run's controls are too (it
/// opens paused, and Play is out of view).
fn to_top() -> Callback<MouseEvent> {
    Callback::from(|_: MouseEvent| gloo::utils::window().scroll_to_with_x_and_y(0.0, 0.0))
}

/// A seed's run as a link: a run that stood still for most of it opens where its longest stall
/// begins, at the fastest pace (1 s/s), as at the default 50 ms/s a stall of minutes would take
/// an hour to watch.
fn run_href(s: &SessionView, variant: &str, seed: u64, t: Option<f64>) -> String {
    s.a.fragment_for(variant, None, seed, t, t.map(|_| SPEED_MAX))
}

/// One variant's row of the finished sweep (its percentiles and its fastest and slowest runs),
/// what its figure is, and its slowest run's stall for the line under the table.
fn variant_row(s: &SessionView, sw: &Sweep, v: &str) -> (Html, String, Option<Html>) {
    let (what, unit, vals) = sw.figure(v);
    let (fast, slow) = best_and_worst(unit, &vals);
    let caption = format!("{what} ({unit}) of each run, over {} seeds", sw.seeds);
    let q = |p| quantile(&vals, p);
    let run_link = |&(x, seed): &(f64, u64), testid: &'static str| {
        let run = sw.run(v, seed);
        let t = run.and_then(|r| r.stall_t());
        let title = match (run, t) {
            (Some(r), Some(t)) => format!("Opens at {} s, where its longest stall ({}) begins, at 1 s/s", num(Some(t)), stall_words(r)),
            _ => "Opens the run from its start".to_string(),
        };
        html! { <a href={run_href(s, v, seed, t)} data-testid={testid} {title} onclick={to_top()}>{ format!("seed\u{a0}{seed} ({})", num(Some(x))) }</a> }
    };
    // The seed is a link here too: on a phone the table's last column is off to the side.
    let stall = slow.and_then(|(_, seed)| sw.run(v, seed)).and_then(|r| {
        r.stall_t().map(|t| {
            html! { <>
                { format!("{v}'s ") }
                <a href={run_href(s, v, r.seed, Some(t))} onclick={to_top()}>{ format!("seed {}", r.seed) }</a>
                { format!(" at {} s ({})", num(Some(t)), stall_words(r)) }
            </> }
        })
    });
    let row = html! {
        <tr data-variant={v.to_string()}>
            <td class="l" title={format!("{what} ({unit})")}>{ v }</td>
            <td>{ num(q(0.5)) }</td><td>{ num(q(0.9)) }</td><td>{ num(q(0.99)) }</td>
            <td class="run">{ for fast.map(|x| run_link(&x, "fastest")) }</td>
            <td class="run">{ for slow.map(|x| run_link(&x, "slowest")) }</td>
        </tr>
    };
    (row, caption, stall)
}

/// The finished sweep: its chart, each variant's percentiles and fastest and slowest seeds, and
/// where the slowest runs stall.
fn sweep_results(s: &SessionView, sw: &Sweep) -> Html {
    let mut stalls: Vec<Html> = Vec::new();
    // What each variant's figure is (completion time, or throughput when some runs do not
    // complete), said once above the table rather than in a wide column.
    let mut captions: Vec<(String, String)> = Vec::new();
    let mut rows = Vec::new();
    for v in sw.variant_names() {
        let (row, caption, stall) = variant_row(s, sw, &v);
        rows.push(row);
        stalls.extend(stall);
        captions.push((v, caption));
    }
    let caption = if captions.windows(2).all(|w| w[0].1 == w[1].1) {
        captions.first().map(|c| c.1.clone()).unwrap_or_default()
    } else {
        captions.iter().map(|(v, c)| format!("{v}: {c}")).collect::<Vec<_>>().join("; ")
    };
    let mut on_screen = vec![s.a.variant.clone()];
    on_screen.extend(s.b.as_ref().map(|b| b.variant.clone()));
    let stale = sw.stale_for(&on_screen, &s.a.overrides);
    html! {
        <>
        if let Some(why) = stale {
            <p class="warn" data-testid="sweep-stale">{ format!("Not the runs on screen: {why}. Run the seeds again for them.") }</p>
        }
        <canvas class="sweep-chart" role="img" aria-label={format!("The distribution over {} seeds of each variant's figure", sw.seeds)}></canvas>
        <table class="sweep-table" aria-label="Seed sweep">
            <caption>{ caption }</caption>
            <thead><tr><th class="l">{"variant"}</th><th>{"p50"}</th><th>{"p90"}</th><th>{"p99"}</th><th>{"best run"}</th><th>{"worst run"}</th></tr></thead>
            <tbody>{ rows.into_iter().collect::<Html>() }</tbody>
        </table>
        if !stalls.is_empty() {
            <p class="dim" data-testid="sweep-stalls">
                { "The slowest runs open where their longest stall begins: " }
                { for stalls.into_iter().enumerate().map(|(i, h)| html! { <>{ if i > 0 { "; " } else { "" } }{ h }</> }) }
                { "." }
            </p>
        }
        </>
    }
}

pub(super) fn sweep_panel(session: &SharedSession, page: &PageDispatch, ui: &PageState) -> Html {
    let s = session.borrow();
    let running = s.sweep.as_ref().is_some_and(|sw| !sw.is_done());
    let body = match &s.sweep {
        None => html! {},
        Some(sw) if !sw.is_done() => sweep_progress(sw),
        Some(sw) => sweep_results(&s, sw),
    };
    html! {
        <details class="sweep" open={s.sweep.is_some()}>
            <summary>{ "Run many seeds" }</summary>
            <p class="dim">{ "The same run with other seeds (the CLI's blksim sweep): what varies is chance (rotational phase, which CPU a thread starts on, timer phases). A's variant, and B's in the A/B view; the runs on screen pause meanwhile." }</p>
            { seed_controls(session, page, ui, running) }
            { body }
        </details>
    }
}
