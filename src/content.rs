//! The text the page fetches as files instead of carrying it in its wasm: each lesson's text
//! (`content/lesson-<id>.json`), the sandbox's (`content/sandbox.html`, docs/model.md), and the
//! scoreboard (`content/fidelity.json`, and each lesson's rows in `content/fidelity-<id>.json`).
//! The root `build.rs` writes them, Trunk's `post_build` hook (`scripts/stage-content.mjs`)
//! copies them into the app, and the service worker precaches every file `content/index.json`
//! names, so they open offline after one visit. A lesson link's first frame waits for none of
//! them: a file is fetched once per page load, when a component first shows it, and each
//! component that shows it renders again when it arrives. Only each lesson's scoreboard counts
//! are compiled in, for the home page's badges and the lesson page's note.

use blksim::course::cues::{CuesFile, LessonCues};
use blksim::course::fidelity::LessonResult;
use serde::Deserialize;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// A lesson's text as build.rs renders it: the body and each step's text, as HTML.
pub struct LessonText {
    pub body: AttrValue,
    pub steps: Vec<AttrValue>,
}

/// The scoreboard as `lessons/fidelity.json` keeps it: the lessons, and the sections beside
/// them (the devices and layers).
#[derive(Deserialize)]
pub struct Scoreboard {
    pub lessons: Vec<LessonResult>,
    #[serde(default)]
    pub sections: Vec<LessonResult>,
}

/// What a fetched file's text is read into.
pub trait Fetchable: Sized + 'static {
    fn read(text: String) -> Result<Self, String>;
}

/// An HTML file, taken as it is (build.rs rendered it; raw HTML in the Markdown became text).
impl Fetchable for AttrValue {
    fn read(text: String) -> Result<Self, String> {
        Ok(AttrValue::from(text))
    }
}

impl Fetchable for LessonText {
    fn read(text: String) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct File {
            body: String,
            steps: Vec<String>,
        }
        let f: File = crate::json::read(&text)?;
        Ok(LessonText { body: f.body.into(), steps: f.steps.into_iter().map(AttrValue::from).collect() })
    }
}

impl Fetchable for LessonResult {
    fn read(text: String) -> Result<Self, String> {
        crate::json::read(&text)
    }
}

impl Fetchable for Scoreboard {
    fn read(text: String) -> Result<Self, String> {
        crate::json::read(&text)
    }
}

/// A file as a component sees it.
pub enum Fetched<T> {
    Loading,
    Ready(Rc<T>),
    /// Why it is not there: the status, the network's failure, or what in the file is wrong.
    Failed(Rc<str>),
}

/// The path of lesson `id`'s text.
pub fn lesson_path(id: &str) -> String {
    format!("content/lesson-{id}.json")
}

/// The path of lesson `id`'s scoreboard rows.
pub fn board_path(id: &str) -> String {
    format!("content/fidelity-{id}.json")
}

/// The sandbox's text.
pub const SANDBOX_PATH: &str = "content/sandbox.html";

/// The whole scoreboard, for the Fidelity page.
pub const SCOREBOARD_PATH: &str = "content/fidelity.json";

/// Lesson `id`'s scoreboard counts, if it has a scoreboard: compiled in, with only the rows
/// that carry a caveat (which its badge's text counts), never its other rows.
pub fn board_summary(id: &str) -> Option<LessonResult> {
    const SUMMARY: &str = include_str!(concat!(env!("OUT_DIR"), "/fidelity_summary.json"));
    static PARSED: std::sync::OnceLock<Vec<LessonResult>> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| crate::json::read(SUMMARY).unwrap_or_else(|e| panic!("lessons/fidelity.json: {e}")))
        .iter()
        .find(|r| r.lesson == id)
        .cloned()
}

/// Lesson `id`'s cues as last measured (`lessons/cues.json`, compiled into blksim): each step's
/// figures and the prediction's. The page reads them with the browser's JSON parser.
pub fn cues_for(id: &str) -> Option<LessonCues> {
    static PARSED: std::sync::OnceLock<Vec<LessonCues>> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            crate::json::read::<CuesFile>(blksim::course::cues::COMMITTED_JSON)
                .map(|f| f.lessons)
                .unwrap_or_else(|e| panic!("lessons/cues.json: {e}"))
        })
        .iter()
        .find(|c| c.lesson == id)
        .cloned()
}

enum State {
    Loading,
    Ready(Rc<dyn Any>),
    Failed(Rc<str>),
}

/// A file of this page load: where its fetch is, and the components waiting for it.
struct Entry {
    state: State,
    /// By id, in the order they came (ids rise): a `Vec`, not a map, so the page keeps no
    /// `BTreeMap` code for it.
    waiters: Vec<(u32, Callback<()>)>,
}

thread_local! {
    static FILES: RefCell<BTreeMap<String, Entry>> = const { RefCell::new(BTreeMap::new()) };
    static NEXT_WAITER: Cell<u32> = const { Cell::new(0) };
}

/// The file at `path` as it stands; the first call starts its fetch.
pub fn fetched<T: Fetchable>(path: &str) -> Fetched<T> {
    let start = FILES.with(|f| {
        let mut f = f.borrow_mut();
        if f.contains_key(path) {
            return false;
        }
        f.insert(path.to_string(), Entry { state: State::Loading, waiters: Vec::new() });
        true
    });
    if start {
        let path = path.to_string();
        wasm_bindgen_futures::spawn_local(async move {
            let state = match fetch_text(&path).await.and_then(T::read) {
                Ok(v) => State::Ready(Rc::new(v)),
                Err(why) => State::Failed(why.into()),
            };
            arrived(&path, state);
        });
    }
    FILES.with(|f| match f.borrow().get(path).map(|e| &e.state) {
        Some(State::Ready(v)) => v.clone().downcast::<T>().map_or_else(|_| Fetched::Failed("read as another type".into()), Fetched::Ready),
        Some(State::Failed(why)) => Fetched::Failed(why.clone()),
        Some(State::Loading) | None => Fetched::Loading,
    })
}

/// A fetch ended: keep what it brought and wake the components waiting for it.
fn arrived(path: &str, state: State) {
    let waiters = FILES.with(|f| {
        let mut f = f.borrow_mut();
        let e = f.entry(path.to_string()).or_insert(Entry { state: State::Loading, waiters: Vec::new() });
        e.state = state;
        e.waiters.iter().map(|(_, w)| w.clone()).collect::<Vec<_>>()
    });
    for w in waiters {
        w.emit(());
    }
}

async fn fetch_text(path: &str) -> Result<String, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("no window")?;
    let res = JsFuture::from(window.fetch_with_str(path)).await.map_err(|_| "the network did not answer".to_string())?;
    let res: web_sys::Response = res.dyn_into().map_err(|_| "not a response".to_string())?;
    if !res.ok() {
        return Err(format!("HTTP {}", res.status()));
    }
    let text = res.text().map_err(|_| "its body is unreadable".to_string())?;
    let text = JsFuture::from(text).await.map_err(|_| "its body did not arrive".to_string())?;
    text.as_string().ok_or_else(|| "its body is not text".to_string())
}

/// The file at `path` for a component, which renders again when the file arrives (or fails).
#[hook]
pub fn use_fetched<T: Fetchable>(path: String) -> Fetched<T> {
    let update = use_force_update();
    let now = fetched::<T>(&path);
    let loading = matches!(now, Fetched::Loading);
    use_effect_with(path, move |path| {
        let id = NEXT_WAITER.with(|n| {
            let id = n.get();
            n.set(id.wrapping_add(1));
            id
        });
        let arrived_since = FILES.with(|f| {
            let mut f = f.borrow_mut();
            let e = f.get_mut(path.as_str())?;
            e.waiters.push((id, Callback::from(move |()| update.force_update())));
            Some(!matches!(e.state, State::Loading))
        });
        // The file arrived between the render and this effect: render it now.
        if loading && arrived_since == Some(true) {
            FILES
                .with(|f| f.borrow().get(path.as_str()).and_then(|e| e.waiters.iter().find(|(i, _)| *i == id).map(|(_, w)| w.clone())))
                .inspect(|w| w.emit(()));
        }
        let path = path.clone();
        move || {
            FILES.with(|f| {
                if let Some(e) = f.borrow_mut().get_mut(path.as_str()) {
                    e.waiters.retain(|(i, _)| *i != id);
                }
            });
        }
    });
    now
}

/// The one line a page shows where a file did not arrive.
pub fn failed_line(what: &str, path: &str, why: &str) -> Html {
    html! {
        <p class="fetch-failed" role="alert" data-testid="fetch-failed">
            { format!("{what} did not load ({path}: {why}). Reload the page to try again.") }
        </p>
    }
}
