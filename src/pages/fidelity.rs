//! The Fidelity page (`#/fidelity`): every regression lesson's figures beside the report's,
//! and the devices-and-layers section (each device model and layer against a published
//! measurement, each row a sandbox setup), from the committed scoreboard (fetched as a file,
//! `crate::content`).

use crate::components::fidelity::{DeviceTable, FidelityTable};
use crate::content::{failed_line, use_fetched, Fetched, Scoreboard, SCOREBOARD_PATH};
use yew::prelude::*;

#[component]
pub fn FidelityPage() -> Html {
    let file = use_fetched::<Scoreboard>(SCOREBOARD_PATH.to_string());
    let (board, sections, status) = match &file {
        Fetched::Ready(f) => (f.lessons.as_slice(), f.sections.as_slice(), Html::default()),
        Fetched::Loading => (&[][..], &[][..], html! { <p class="dim fetch-loading">{ "Loading the scoreboard…" }</p> }),
        Fetched::Failed(why) => (&[][..], &[][..], failed_line("The scoreboard", SCOREBOARD_PATH, why)),
    };
    html! {
        <div class="home" data-theme="auto">
            <header class="bar"><h1><a href="#/">{ "blkviz" }</a>{ " · fidelity" }</h1></header>
            <main class="home-main fidelity-page">
                <p class="lead">{ "Every figure each seed report gives, the band around it, and what blkviz measures for it, produced by running the model (" }<code>{ "blksim fidelity" }</code>{ "), never typed. A lesson reproduces its report when every predicted row holds; a row marked fitted had a constant in calib.rs fitted to it." }</p>
                { status }
                { for board.iter().map(|l| html! {
                    <section class="fidelity-lesson" aria-label={l.title.clone()}>
                        <h2><a href={format!("#/lesson/{}?v=1", l.lesson)}>{ &l.title }</a></h2>
                        <FidelityTable lesson={l.clone()} />
                    </section>
                }) }
                { for sections.iter().map(|s| html! {
                    <section class="fidelity-section" data-testid="fidelity-devices" aria-label={s.title.clone()}>
                        <h2>{ &s.title }</h2>
                        <p>{ "Each device model and each layer users turn, checked against a published measurement it was not built for. Every row is a sandbox setup: its link opens it (a ratio has a link for each side). The source and what in the setup matches it are under each row." }</p>
                        <DeviceTable lesson={s.clone()} />
                        <p class="fidelity-gaps">{ "What the device models cannot show yet: an SSD's state (a used drive's random writes; the FTL takes them at the spec's rate), the overlap that lets 4 KiB readahead reach 123 MB/s on it, a RAID controller's own read-ahead, old request-based dm's queue_lock contention, buffer-head (soft block) sizes, a drive letting reads pass its cached writes, and cfq's cooperating-queue merge (2.6.32)." }</p>
                    </section>
                }) }
            </main>
        </div>
    }
}
