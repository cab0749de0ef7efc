//! Renders the lessons' Markdown (the body and each step's text) to HTML at build time with
//! pulldown-cmark, so the page ships HTML instead of a Markdown parser. Raw HTML in the Markdown
//! is turned into text, never rendered. A lesson without text fails the build.

use pulldown_cmark::{html, Event, Options, Parser};
use std::path::Path;

fn to_html(md: &str) -> String {
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES).map(|ev| match ev {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        e => e,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

/// A prose line wrapped so that the next line starts with "1. " (or "1) ") would, in
/// CommonMark, start a numbered list in the middle of a paragraph ("... on socket" / "1. Neither
/// ..." rendered as a list). Refuses it, naming the line; a list meant to follow a line of text
/// ends that line with ':'.
fn check_no_wrapped_list(name: &str, text: &str, first_line: usize) {
    let lines: Vec<&str> = text.lines().collect();
    for (i, pair) in lines.windows(2).enumerate() {
        let (prev, line) = (pair[0].trim_end(), pair[1]);
        let starts_list = line.starts_with("1. ") || line.starts_with("1) ");
        let digits = prev.len() - prev.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let prev_is_item = digits > 0 && (prev[digits..].starts_with(". ") || prev[digits..].starts_with(") "));
        let prev_is_prose = !prev.is_empty() && !prev.ends_with(':') && !prev_is_item && !prev.starts_with([' ', '-', '*', '#', '|', '>']);
        assert!(
            !(starts_list && prev_is_prose),
            "{name}:{}: this line starts with \"1.\" right after a line of prose, so Markdown renders it as a numbered list; rewrap the paragraph (or end the line before with ':' if a list is meant)",
            first_line + i + 1
        );
    }
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("lessons/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// (lesson id, body HTML, step texts as HTML), rendered by build.rs.\npub const LESSON_HTML: &[(&str, &str, &[&str])] = &[\n",
    );
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("readable lesson");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let rest = text.strip_prefix("+++\n").unwrap_or_else(|| panic!("{name}: no front matter"));
        let (front, body) = rest.split_once("\n+++\n").unwrap_or_else(|| panic!("{name}: front matter not closed"));
        let v: toml::Value = toml::from_str(front).unwrap_or_else(|e| panic!("{name}: {e}"));
        let id = v.get("id").and_then(|i| i.as_str()).unwrap_or_else(|| panic!("{name}: no id"));
        assert!(body.trim().len() > 100, "{name}: the lesson has no text");
        check_no_wrapped_list(&name, body, front.lines().count() + 3);
        let steps: Vec<String> = v
            .get("steps")
            .and_then(|s| s.as_array())
            .map_or(Vec::new(), |a| a.iter().map(|s| to_html(s.get("text").and_then(|t| t.as_str()).unwrap_or(""))).collect());
        out.push_str(&format!(
            "    ({id:?}, {:?}, &[{}]),\n",
            to_html(body),
            steps.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
        ));
    }
    out.push_str("];\n");
    // The sandbox's text: what the model has (docs/model.md).
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/model.md");
    println!("cargo:rerun-if-changed={}", model.display());
    let text = std::fs::read_to_string(&model).expect("docs/model.md");
    check_no_wrapped_list("docs/model.md", &text, 1);
    out.push_str(&format!("/// docs/model.md, the sandbox's text.\npub const SANDBOX_HTML: &str = {:?};\n", to_html(&text)));
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("lesson_html.rs"), out).unwrap();
}
