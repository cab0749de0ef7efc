//! Lesson Markdown to HTML with pulldown-cmark. Raw HTML in the Markdown is shown as text,
//! never rendered: the output only has the tags pulldown-cmark itself writes.

use pulldown_cmark::{html, Event, Options, Parser};
use yew::prelude::*;

pub fn to_html_string(md: &str) -> String {
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES).map(|ev| match ev {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        e => e,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

pub fn render(md: &str) -> Html {
    Html::from_html_unchecked(AttrValue::from(to_html_string(md)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped_not_rendered() {
        let h = to_html_string("# Title\n\n<script>alert(1)</script> and <b>bold</b>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(h.contains("<h1>Title</h1>"));
        assert!(!h.contains("<script>") && h.contains("&lt;script&gt;"));
        assert!(!h.contains("<b>"));
        assert!(h.contains("<table>"));
    }
}
