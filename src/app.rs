//! The router: the home page, a page per lesson, the sandbox, the fidelity scoreboard, a real
//! trace read in the page, and the
//! speaker-notes window. State
//! lives in the URL fragment (`#/lesson/<id>?v=1&…`), so a link reproduces a run.

use crate::pages::fidelity::FidelityPage;
use crate::pages::home::Home;
use crate::pages::lesson::LessonPage;
use crate::pages::notes::Notes;
use crate::pages::trace::TracePage;
use yew::prelude::*;
use yew_router::prelude::*;

#[derive(Clone, Routable, PartialEq)]
pub enum Route {
    #[at("/")]
    Home,
    #[at("/lesson/:id")]
    Lesson { id: String },
    #[at("/sandbox")]
    Sandbox,
    #[at("/fidelity")]
    Fidelity,
    #[at("/trace")]
    Trace,
    #[at("/notes/:id")]
    Notes { id: String },
    #[not_found]
    #[at("/404")]
    NotFound,
}

fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <Home /> },
        // Keyed by id: another lesson mounts a fresh page (and a fresh simulation).
        Route::Lesson { id } => {
            let key = id.clone();
            html! { <LessonPage {key} {id} /> }
        }
        Route::Sandbox => html! { <LessonPage key="sandbox" id={blksim::lessons::SANDBOX.to_string()} /> },
        Route::Notes { id } => html! { <Notes {id} /> },
        Route::Fidelity => html! { <FidelityPage /> },
        Route::Trace => html! { <TracePage /> },
        Route::NotFound => html! {
            <div class="app"><p class="notice" role="alert">{ "There is no page at this address. " }<a href="#/">{ "All lessons" }</a></p></div>
        },
    }
}

#[component]
pub fn App() -> Html {
    html! {
        <HashRouter>
            <Switch<Route> render={switch} />
        </HashRouter>
    }
}
