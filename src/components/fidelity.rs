//! A lesson's fidelity table: every figure its report gives, the band, what blkviz measures and
//! whether it holds. Read from the committed scoreboard (`lessons/fidelity.json`, which a test
//! regenerates), so the page never shows a typed number.

use blksim::course::fidelity::{LessonResult, RowResult};
use blksim::tools::report::fmt_num;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct FidelityTableProps {
    pub lesson: LessonResult,
}

fn verdict(r: &RowResult) -> Html {
    let (class, text) = match (r.holds, r.fitted) {
        (true, false) if !r.caveat.is_empty() => ("holds", "holds (caveat)"),
        (true, false) => ("holds", "holds"),
        (true, true) => ("fitted", "fitted"),
        (false, true) => ("misses", "misses (fitted)"),
        (false, false) => ("misses", "misses"),
    };
    html! { <span class={classes!("verdict", class)}>{ text }</span> }
}

/// The badge a lesson gets: "reproduces its report" or "reproduces N of M figures".
#[component]
pub fn FidelityBadge(props: &FidelityTableProps) -> Html {
    let l = &props.lesson;
    html! {
        <span class={classes!("fidelity-badge", if l.reproduced { "reproduced" } else { "partial" })} data-testid="fidelity-badge">
            { l.status() }
        </span>
    }
}

#[component]
pub fn FidelityTable(props: &FidelityTableProps) -> Html {
    let l = &props.lesson;
    html! {
        <div class="fidelity" data-testid="fidelity-table">
            <p class="fidelity-summary"><FidelityBadge lesson={l.clone()} />
                { " · measured by " }<code>{ format!("blksim fidelity {}", l.lesson) }</code>
                { " · a fitted row shows a fit, not a prediction; a caveat names a simplification the figure rests on" }</p>
            <table class="fidelity-rows">
                <thead><tr><th>{ "figure" }</th><th>{ "report" }</th><th>{ "band" }</th><th>{ "blkviz" }</th><th>{ "" }</th></tr></thead>
                <tbody>
                    { for l.rows.iter().map(|r| row(r, false)) }
                </tbody>
            </table>
        </div>
    }
}

/// One figure's lines: the row (with sandbox links for a device row), then for a device row
/// its source and setup, and the reason under a miss.
fn row(r: &blksim::course::fidelity::RowResult, device: bool) -> Html {
    html! {
        <>
            <tr class={classes!(if r.holds { "row-holds" } else { "row-misses" })} title={r.how.clone()}>
                <td>{ &r.name }
                    if let Some(a) = r.link.as_ref().filter(|_| device) { { " " }<a class="sandbox-link" href={a.clone()}>{ "open" }</a> }
                    if let Some(b) = r.link_over.as_ref().filter(|_| device) { { " ÷ " }<a class="sandbox-link" href={b.clone()}>{ "open" }</a> }
                </td>
                <td class="num">{ r.report.map_or("—".to_string(), |x| format!("{} {}", fmt_num(x), r.unit)) }</td>
                <td class="num">{ format!("{}–{}", fmt_num(r.band.lo), fmt_num(r.band.hi)) }</td>
                <td class="num">{ format!("{} {}", fmt_num(r.measured), r.unit) }</td>
                <td>{ verdict(r) }</td>
            </tr>
            if device {
                <tr class="why source"><td colspan="5">{ "source: " }{ &r.source }<br />{ "setup: " }{ &r.setup }</td></tr>
            }
            if !r.holds && !r.why_missed.is_empty() {
                <tr class="why"><td colspan="5">{ "why: " }{ &r.why_missed }</td></tr>
            }
            if !r.caveat.is_empty() {
                <tr class="why caveat" data-testid="caveat"><td colspan="5">{ "caveat: " }{ r.caveat_line() }</td></tr>
            }
        </>
    }
}

/// The devices-and-layers section's table: as a lesson's, and under each row its source, what
/// in the setup matches it, and sandbox links to the runs.
#[component]
pub fn DeviceTable(props: &FidelityTableProps) -> Html {
    let l = &props.lesson;
    html! {
        <div class="fidelity" data-testid="fidelity-table">
            <p class="fidelity-summary"><FidelityBadge lesson={l.clone()} />
                { " · measured by " }<code>{ format!("blksim fidelity {}", l.lesson) }</code></p>
            <table class="fidelity-rows">
                <thead><tr><th>{ "figure" }</th><th>{ "report" }</th><th>{ "band" }</th><th>{ "blkviz" }</th><th>{ "" }</th></tr></thead>
                <tbody>
                    { for l.rows.iter().map(|r| row(r, true)) }
                </tbody>
            </table>
        </div>
    }
}
