//! Lesson text as HTML: build.rs renders each lesson's Markdown with pulldown-cmark at build
//! time (raw HTML in the Markdown becomes text, never markup), so the page ships no parser.

use yew::prelude::*;

include!(concat!(env!("OUT_DIR"), "/lesson_html.rs"));

/// The lesson's text; for the sandbox, what the model has.
pub fn lesson_body(id: &str) -> Html {
    if id == blksim::lessons::SANDBOX {
        return Html::from_html_unchecked(AttrValue::Static(SANDBOX_HTML));
    }
    LESSON_HTML
        .iter()
        .find(|(i, _, _)| *i == id)
        .map_or_else(Html::default, |(_, body, _)| Html::from_html_unchecked(AttrValue::Static(body)))
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
        assert_eq!(LESSON_HTML.len(), blksim::lessons::all().len());
        for (id, body, steps) in LESSON_HTML {
            assert!(body.contains("<h1>"), "{id}: no title");
            assert!(!body.contains("<script") && !body.contains("<div"), "{id}: raw HTML got through");
            let l = blksim::lessons::find(id).unwrap();
            assert_eq!(steps.len(), l.steps.len(), "{id}");
        }
        assert!(SANDBOX_HTML.contains("<h1>") && !SANDBOX_HTML.contains("<script"));
    }
}
