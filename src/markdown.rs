//! Lesson text as HTML: build.rs renders each lesson's Markdown with pulldown-cmark at build
//! time (raw HTML in the Markdown becomes text, never markup), so the page ships no parser.

use crate::components::fidelity::FidelityTable;
use yew::prelude::*;

include!(concat!(env!("OUT_DIR"), "/lesson_html.rs"));

/// The heading under which a lesson's fidelity table goes.
const STATUS_HEADING: &str = "<h2>Status in blkviz</h2>\n";

/// The lesson's text; for the sandbox, what the model has. A regression lesson's "Status in
/// blkviz" section opens with its measured fidelity table.
pub fn lesson_body(id: &str) -> Html {
    if id == blksim::course::lessons::SANDBOX {
        return Html::from_html_unchecked(AttrValue::Static(SANDBOX_HTML));
    }
    let Some((_, body, _)) = LESSON_HTML.iter().find(|(i, _, _)| *i == id) else { return Html::default() };
    match (body.find(STATUS_HEADING), blksim::course::fidelity::committed_for(id)) {
        (Some(at), Some(board)) => {
            let (before, after) = body.split_at(at + STATUS_HEADING.len());
            html! {
                <>
                    { Html::from_html_unchecked(AttrValue::Static(before)) }
                    <FidelityTable lesson={board} />
                    { Html::from_html_unchecked(AttrValue::Static(after)) }
                </>
            }
        }
        _ => Html::from_html_unchecked(AttrValue::Static(body)),
    }
}

/// The lesson text's title alone (its `<h1>`): what shows above the text while it is held back
/// until the prediction is answered.
pub fn lesson_heading(id: &str) -> Html {
    LESSON_HTML
        .iter()
        .find(|(i, _, _)| *i == id)
        .and_then(|(_, body, _)| body.find("</h1>").map(|end| &body[..end + "</h1>".len()]))
        .map_or_else(Html::default, |h| Html::from_html_unchecked(AttrValue::Static(h)))
}

/// The heading of the section a lesson's text gate shows before the prediction.
const WATCH_HEADING: &str = "<h2>What to watch</h2>\n";

/// The lesson text's "What to watch" section, from its heading to the next one: the terms,
/// lanes and columns to look at. It names no outcome, so a student has it while the rest of the
/// text waits for the prediction.
pub fn what_to_watch(id: &str) -> Option<Html> {
    let (_, body, _) = LESSON_HTML.iter().find(|(i, _, _)| *i == id)?;
    let at = body.find(WATCH_HEADING)?;
    let rest = &body[at + WATCH_HEADING.len()..];
    let end = rest.find("<h2>").map_or(body.len(), |e| at + WATCH_HEADING.len() + e);
    Some(Html::from_html_unchecked(AttrValue::Static(&body[at..end])))
}

/// Step `n`'s text.
pub fn step_text(id: &str, n: usize) -> Html {
    LESSON_HTML
        .iter()
        .find(|(i, _, _)| *i == id)
        .and_then(|(_, _, steps)| steps.get(n))
        .map_or_else(Html::default, |s| Html::from_html_unchecked(AttrValue::Static(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lesson_has_text_and_no_raw_html() {
        assert_eq!(LESSON_HTML.len(), blksim::course::lessons::all().len());
        for (id, body, steps) in LESSON_HTML {
            assert!(body.starts_with("<h1>") && body.contains("</h1>"), "{id}: the text does not open with its title");
            assert!(!body.contains("<script") && !body.contains("<div"), "{id}: raw HTML got through");
            let l = blksim::course::lessons::find(id).unwrap();
            assert_eq!(steps.len(), l.steps.len(), "{id}");
        }
        assert!(SANDBOX_HTML.contains("<h1>") && !SANDBOX_HTML.contains("<script"));
        // Every lesson held back until its prediction has the one section the gate shows meanwhile.
        for l in blksim::course::lessons::all().iter().filter(|l| l.predict.is_some()) {
            let (_, body, _) = LESSON_HTML.iter().find(|(i, _, _)| *i == l.id).unwrap();
            assert_eq!(body.matches(WATCH_HEADING).count(), 1, "{}: one \"What to watch\" section for the gate", l.id);
            assert!(what_to_watch(&l.id).is_some(), "{}", l.id);
        }
        // Every lesson with a scoreboard has the section its table goes in.
        for board in blksim::course::fidelity::committed() {
            let (_, body, _) = LESSON_HTML.iter().find(|(i, _, _)| *i == board.lesson).unwrap();
            assert!(body.contains(STATUS_HEADING), "{}: no \"Status in blkviz\" section for its fidelity table", board.lesson);
        }
    }
}
