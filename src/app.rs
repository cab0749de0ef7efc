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

/// The tab's title for a route: what the page is, so a row of tabs, a bookmark or the
/// history names the lesson rather than saying "blkviz" six times.
pub fn page_title(route: &Route) -> String {
    const APP: &str = "blkviz";
    let home = format!("{APP} — the Linux block stack, animated");
    // An unknown lesson opens another with a notice: the address's id is not what shows.
    let lesson = |id: &str, what: &str| blksim::course::lessons::find(id).map_or(home.clone(), |l| format!("{what}{} · {APP}", l.title));
    match route {
        Route::Home | Route::NotFound => home.clone(),
        Route::Lesson { id } => lesson(id, ""),
        Route::Sandbox => format!("sandbox · {APP}"),
        Route::Fidelity => format!("fidelity · {APP}"),
        Route::Trace => format!("read a trace · {APP}"),
        Route::Notes { id } => lesson(id, "speaker notes: "),
    }
}

fn switch(route: Route) -> Html {
    gloo::utils::document().set_title(&page_title(&route));
    match route {
        Route::Home => html! { <Home /> },
        // Keyed by id: another lesson mounts a fresh page (and a fresh simulation).
        Route::Lesson { id } => {
            let key = id.clone();
            html! { <LessonPage {key} {id} /> }
        }
        Route::Sandbox => html! { <LessonPage key="sandbox" id={blksim::course::lessons::SANDBOX.to_string()} /> },
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
