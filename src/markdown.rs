//! Lesson text as HTML: build.rs renders each lesson's Markdown with pulldown-cmark at build
//! time (raw HTML in the Markdown becomes text, never markup), so the page ships no parser. The
//! HTML is not in the wasm: each piece is a component that shows its lesson's file
//! (`content/lesson-<id>.json`, fetched by `crate::content`) once it has arrived.

use crate::components::fidelity::FidelityTable;
use crate::content::{self, failed_line, use_fetched, Fetched, LessonText};
use blksim::course::fidelity::LessonResult;
use yew::prelude::*;

/// The heading under which a lesson's fidelity table goes.
const STATUS_HEADING: &str = "<h2>Status in blkviz</h2>\n";

/// The heading of the section a lesson's text gate shows before the prediction.
const WATCH_HEADING: &str = "<h2>What to watch</h2>\n";

#[derive(Properties, PartialEq)]
pub struct TextProps {
    pub id: AttrValue,
}

#[derive(Properties, PartialEq)]
pub struct StepProps {
    pub id: AttrValue,
    pub n: usize,
}

/// The lesson's text; for the sandbox, what the model has. A regression lesson's "Status in
/// blkviz" section opens with its measured fidelity table.
pub fn lesson_body(id: &str) -> Html {
    if id == blksim::course::lessons::SANDBOX {
        return html! { <SandboxText /> };
    }
    html! { <LessonBody id={AttrValue::from(id.to_string())} /> }
}

/// The lesson text's title alone (its `<h1>`): what shows above the text while it is held back
/// until the prediction is answered.
pub fn lesson_heading(id: &str) -> Html {
    html! { <LessonHeading id={AttrValue::from(id.to_string())} /> }
}

/// The lesson text's "What to watch" section, from its heading to the next one: the terms,
/// lanes and columns to look at. It names no outcome, so a student has it while the rest of the
/// text waits for the prediction. Nothing where the lesson has no such section.
pub fn what_to_watch(id: &str) -> Html {
    html! { <WhatToWatch id={AttrValue::from(id.to_string())} /> }
}

/// Step `n`'s text.
pub fn step_text(id: &str, n: usize) -> Html {
    html! { <StepText id={AttrValue::from(id.to_string())} {n} /> }
}

fn raw(html: &str) -> Html {
    Html::from_html_unchecked(AttrValue::from(html.to_string()))
}

#[component]
fn SandboxText() -> Html {
    match use_fetched::<AttrValue>(content::SANDBOX_PATH.to_string()) {
        Fetched::Ready(text) => Html::from_html_unchecked((*text).clone()),
        Fetched::Loading => html! { <p class="dim fetch-loading">{ "Loading the sandbox's text…" }</p> },
        Fetched::Failed(why) => failed_line("The sandbox's text", content::SANDBOX_PATH, &why),
    }
}

#[component]
fn LessonBody(props: &TextProps) -> Html {
    let path = content::lesson_path(&props.id);
    let text = match use_fetched::<LessonText>(path.clone()) {
        Fetched::Ready(text) => text,
        Fetched::Loading => return html! { <p class="dim fetch-loading">{ "Loading the lesson text…" }</p> },
        Fetched::Failed(why) => return failed_line("The lesson text", &path, &why),
    };
    let body = text.body.as_str();
    match body.find(STATUS_HEADING).filter(|_| content::board_summary(&props.id).is_some()) {
        Some(at) => {
            let (before, after) = body.split_at(at + STATUS_HEADING.len());
            html! {
                <>
                    { raw(before) }
                    <StatusTable id={props.id.clone()} />
                    { raw(after) }
                </>
            }
        }
        None => Html::from_html_unchecked(text.body.clone()),
    }
}

/// The lesson's measured fidelity table (`content/fidelity-<id>.json`).
#[component]
fn StatusTable(props: &TextProps) -> Html {
    let path = content::board_path(&props.id);
    match use_fetched::<LessonResult>(path.clone()) {
        Fetched::Ready(board) => html! { <FidelityTable lesson={(*board).clone()} /> },
        Fetched::Loading => html! { <p class="dim fetch-loading">{ "Loading the scoreboard…" }</p> },
        Fetched::Failed(why) => failed_line("The scoreboard", &path, &why),
    }
}

#[component]
fn LessonHeading(props: &TextProps) -> Html {
    let path = content::lesson_path(&props.id);
    match use_fetched::<LessonText>(path.clone()) {
        Fetched::Ready(text) => heading_of(&text.body).map_or_else(Html::default, raw),
        Fetched::Loading => Html::default(),
        Fetched::Failed(why) => failed_line("The lesson text", &path, &why),
    }
}

#[component]
fn WhatToWatch(props: &TextProps) -> Html {
    match use_fetched::<LessonText>(content::lesson_path(&props.id)) {
        Fetched::Ready(text) => {
            watch_of(&text.body).map_or_else(Html::default, |w| html! { <section class="watch" data-testid="watch">{ raw(w) }</section> })
        }
        Fetched::Loading | Fetched::Failed(_) => Html::default(),
    }
}

#[component]
fn StepText(props: &StepProps) -> Html {
    let path = content::lesson_path(&props.id);
    match use_fetched::<LessonText>(path.clone()) {
        Fetched::Ready(text) => text.steps.get(props.n).map_or_else(Html::default, |s| Html::from_html_unchecked(s.clone())),
        Fetched::Loading => Html::default(),
        Fetched::Failed(why) => failed_line("The step's text", &path, &why),
    }
}

/// The body's title, its `<h1>`.
fn heading_of(body: &str) -> Option<&str> {
    body.find("</h1>").map(|end| &body[..end + "</h1>".len()])
}

/// The body's "What to watch" section, from its heading to the next one.
fn watch_of(body: &str) -> Option<&str> {
    let at = body.find(WATCH_HEADING)?;
    let rest = &body[at + WATCH_HEADING.len()..];
    let end = rest.find("<h2>").map_or(body.len(), |e| at + WATCH_HEADING.len() + e);
    Some(&body[at..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Fetchable;

    /// A file build.rs wrote for the page to fetch, as the page reads it.
    fn generated(path: &str) -> String {
        let file = std::path::Path::new(env!("OUT_DIR")).join(path);
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    }

    fn lesson_text(id: &str) -> LessonText {
        LessonText::read(generated(&content::lesson_path(id))).unwrap_or_else(|e| panic!("{id}: {e}"))
    }

    #[test]
    fn every_lesson_has_text_and_no_raw_html() {
        let index: serde_json::Value = serde_json::from_str(&generated("content/index.json")).unwrap();
        let listed: Vec<&str> = index["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        for l in blksim::course::lessons::all() {
            let path = content::lesson_path(&l.id);
            assert!(listed.contains(&path.as_str()), "{path}: not in content/index.json, so not precached");
            let LessonText { body, steps } = lesson_text(&l.id);
            assert!(body.starts_with("<h1>") && body.contains("</h1>"), "{}: the text does not open with its title", l.id);
            assert!(!body.contains("<script") && !body.contains("<div"), "{}: raw HTML got through", l.id);
            assert_eq!(steps.len(), l.steps.len(), "{}", l.id);
            // Held back until its prediction: the one section the gate shows meanwhile.
            if l.predict.is_some() {
                assert_eq!(body.matches(WATCH_HEADING).count(), 1, "{}: one \"What to watch\" section for the gate", l.id);
                assert!(watch_of(&body).is_some_and(|w| w.len() > WATCH_HEADING.len()), "{}", l.id);
            }
            assert!(heading_of(&body).is_some(), "{}", l.id);
        }
        assert!(listed.contains(&content::SANDBOX_PATH));
        let sandbox = generated(content::SANDBOX_PATH);
        assert!(sandbox.contains("<h1>") && !sandbox.contains("<script"));
        // Every lesson with a scoreboard has the section its table goes in, its rows in a file of
        // their own, and its counts compiled in.
        for board in blksim::course::fidelity::committed() {
            let body = lesson_text(&board.lesson).body;
            assert!(body.contains(STATUS_HEADING), "{}: no \"Status in blkviz\" section for its fidelity table", board.lesson);
            let path = content::board_path(&board.lesson);
            assert!(listed.contains(&path.as_str()), "{path}: not precached");
            let rows = LessonResult::read(generated(&path)).unwrap();
            assert_eq!(rows.rows.len(), board.rows.len(), "{}", board.lesson);
            let summary = content::board_summary(&board.lesson).expect("its counts compiled in");
            assert_eq!((summary.status(), summary.reproduced), (board.status(), board.reproduced), "{}", board.lesson);
            assert!(summary.rows.iter().all(|r| !r.caveat.is_empty()), "{}: only the rows the badge counts", board.lesson);
        }
        assert!(listed.contains(&content::SCOREBOARD_PATH));
        let whole = crate::content::Scoreboard::read(generated(content::SCOREBOARD_PATH)).unwrap();
        assert_eq!(whole.lessons.len(), blksim::course::fidelity::committed().len());
        assert_eq!(whole.sections.len(), blksim::course::fidelity::committed_sections().len());
        // Every file the index names is there.
        for f in listed {
            generated(f);
        }
    }
}
