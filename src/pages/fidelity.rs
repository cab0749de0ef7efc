//! The Fidelity page (`#/fidelity`): every regression lesson's figures beside the report's,
//! from the committed scoreboard.

use crate::components::fidelity::FidelityTable;
use yew::prelude::*;

#[component]
pub fn FidelityPage() -> Html {
    let board = blksim::fidelity::committed();
    html! {
        <div class="home" data-theme="auto">
            <header class="bar"><h1><a href="#/">{ "blkviz" }</a>{ " · fidelity" }</h1></header>
            <main class="home-main fidelity-page">
                <p class="lead">{ "Every figure each seed report gives, the band around it, and what blkviz measures for it, produced by running the model (" }<code>{ "blksim fidelity" }</code>{ "), never typed. A lesson reproduces its report when every predicted row holds; a row marked fitted had a constant in calib.rs fitted to it." }</p>
                { for board.iter().map(|l| html! {
                    <section class="fidelity-lesson" aria-label={l.title.clone()}>
                        <h2><a href={format!("#/lesson/{}?v=1", l.lesson)}>{ &l.title }</a></h2>
                        <FidelityTable lesson={l.clone()} />
                    </section>
                }) }
            </main>
        </div>
    }
}
