//! The home page: every lesson with its one-line question.

use crate::components::fidelity::FidelityBadge;
use yew::prelude::*;

#[component]
pub fn Home() -> Html {
    let lessons = blksim::course::lessons::all();
    html! {
        <div class="home" data-theme="auto">
            <header class="bar"><h1>{ "blkviz" }</h1><span class="dim">{ "the Linux block I/O stack, simulated and animated" }</span></header>
            <main class="home-main">
                <p class="lead">{ "Each lesson runs a deterministic simulation of the block stack and retells a real kernel performance regression: toggle its cause and watch throughput, context switches, iostat and CPU change. Start with the primers. " }
                    <a href="#/fidelity" data-testid="fidelity-link">{ "Fidelity: each report's figures beside the model's" }</a>{ " · " }
                    <a href="#/trace" data-testid="trace-link">{ "Read a real trace (blktrace, blkparse)" }</a></p>
                <ol class="lesson-list">
                    { for lessons.iter().map(|l| html! {
                        <li class={classes!("lesson-card", l.kind.clone())}>
                            <a href={format!("#/lesson/{}?v=1", l.id)}>{ &l.title }</a>
                            <p class="q">{ &l.question }</p>
                            <p class="meta dim">
                                { if l.kind == "primer" { "primer".to_string() } else if l.seed_report == "-" { "regression".to_string() } else { format!("seed report {}", l.seed_report) } }
                                { " · " }{ l.variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(" / ") }
                                if let Some(board) = crate::content::board_summary(&l.id) {
                                    { " · " }<FidelityBadge lesson={board} />
                                }
                            </p>
                        </li>
                    }) }
                    <li class="lesson-card sandbox">
                        <a href="#/sandbox?v=1">{ "Sandbox" }</a>
                        <p class="q">{ "Build any stack the model can: knobs, or a fio job file. It saves to a link." }</p>
                    </li>
                </ol>
            </main>
        </div>
    }
}
