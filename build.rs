//! Renders the lessons' Markdown (the body and each step's text) to HTML at build time with
//! pulldown-cmark, so the page ships HTML instead of a Markdown parser. Raw HTML in the Markdown
//! is turned into text, never rendered. A lesson without text fails the build.
//!
//! The text is not compiled into the page: it goes into `OUT_DIR/content/` as files the page
//! fetches when it shows them (`src/content.rs`), with the scoreboard split per lesson, and
//! `content/index.json` naming every file for the service worker to precache. Trunk's
//! `post_build` hook (`scripts/stage-content.mjs`) copies that folder into the app. Only each
//! lesson's scoreboard summary (its counts, no rows: the home page's badges) is compiled in.

use pulldown_cmark::{html, Event, Options, Parser, Tag};
use serde_json::{json, Value};
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
/// ends that line with ':'. The lists are found by pulldown-cmark's own parse (the one `to_html`
/// renders), so a "1." inside a code block or a list that follows a blank line is never flagged.
fn check_no_wrapped_list(name: &str, text: &str, first_line: usize) {
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter();
    for (ev, range) in parser {
        if !matches!(ev, Event::Start(Tag::List(Some(_)))) {
            continue;
        }
        let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
        let prev_raw = text[..line_start.saturating_sub(1)].rsplit('\n').next().unwrap_or("");
        let prev = prev_raw.trim();
        // A list right under a line of text (no blank line between) is one that interrupts
        // its paragraph: meant only when that line announces it.
        let interrupts = line_start > 0 && !prev.is_empty() && !prev.ends_with(':');
        // Items nested in a list item (an indented line), or a list after a heading, quote,
        // table row or code fence, do not.
        let after_block = prev_raw.starts_with([' ', '\t'])
            || prev.starts_with(['-', '*', '#', '|', '>', '`', '~'])
            || prev.split_once(". ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
        assert!(
            !interrupts || after_block,
            "{name}:{}: this line starts a numbered list right after a line of prose, so Markdown renders it as a list; rewrap the paragraph (or end the line before with ':' if a list is meant)",
            first_line + text[..line_start].matches('\n').count()
        );
    }
}

/// The lessons' front matter as the page compiles it in (`src/lessons.rs`): blksim's lessons,
/// read from its JSON (the knobs each front matter sets marked, its era applied), in bincode,
/// without what the page never reads (`page_form`). Read back before it is written: a type
/// whose bincode does not read back (a field skipped when serialized) fails the build, not the
/// page.
fn write_lessons_bin(out: &Path) {
    let mut lessons = blksim::course::lessons::all();
    assert!(!lessons.is_empty(), "lessons/: no lesson");
    page_form(&mut lessons);
    let bin = bincode::serialize(&lessons).expect("the lessons in bincode");
    let back: Vec<blksim::course::lessons::Lesson> = bincode::deserialize(&bin).expect("the lessons read back from bincode");
    assert!(back == lessons, "the lessons read back from bincode differ from blksim's");
    std::fs::write(out.join("lessons.bin"), bin).expect("OUT_DIR/lessons.bin");
}

/// What the page never reads stays out of its form (`src/lessons.rs`'s test makes the same
/// cut): the scoreboard's rows (the page shows them as measured, from the fetched
/// `fidelity-<id>.json`, and only the CLI measures them) and the steps' Markdown (the page shows
/// their HTML, from the fetched `lesson-<id>.json`).
fn page_form(lessons: &mut [blksim::course::lessons::Lesson]) {
    for l in lessons {
        l.fidelity.clear();
        for st in &mut l.steps {
            st.text.clear();
        }
    }
}

fn main() {
    let root = manifest_dir();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let content = out.join("content");
    // Written afresh each run, so a lesson removed from lessons/ leaves no file behind.
    let _ = std::fs::remove_dir_all(&content);
    std::fs::create_dir_all(&content).expect("OUT_DIR/content");
    let mut files = Vec::new();
    let mut write = |name: String, text: &str| {
        std::fs::write(content.join(&name), text).unwrap_or_else(|e| panic!("OUT_DIR/content/{name}: {e}"));
        files.push(name);
    };
    for (id, text) in lesson_texts(&Path::new(&root).join("lessons")) {
        write(format!("lesson-{id}.json"), &text);
    }
    // The sandbox's text: what the model has (docs/model.md).
    let model = Path::new(&root).join("docs/model.md");
    println!("cargo:rerun-if-changed={}", model.display());
    let text = std::fs::read_to_string(&model).expect("docs/model.md");
    check_no_wrapped_list("docs/model.md", &text, 1);
    write("sandbox.html".into(), &to_html(&text));
    // The scoreboard as last measured: whole for the Fidelity page, each lesson's for its
    // "Status in blkviz" section, and its counts alone compiled in (for the badges).
    let board_path = Path::new(&root).join("lessons/fidelity.json");
    println!("cargo:rerun-if-changed={}", board_path.display());
    let board: Value = std::fs::read_to_string(&board_path)
        .map_or_else(|_| json!({ "lessons": [] }), |t| serde_json::from_str(&t).expect("lessons/fidelity.json"));
    write("fidelity.json".into(), &board.to_string());
    let mut summary = Vec::new();
    for lesson in board["lessons"].as_array().expect("lessons/fidelity.json: lessons") {
        let id = lesson["lesson"].as_str().expect("lessons/fidelity.json: a lesson's id");
        write(format!("fidelity-{id}.json"), &lesson.to_string());
        // The badge's text counts the holding rows with a caveat, so the rows with one stay.
        let mut counts = lesson.clone();
        let rows = lesson["rows"].as_array().expect("lessons/fidelity.json: rows");
        counts["rows"] = rows.iter().filter(|r| r["caveat"].as_str().is_some_and(|c| !c.is_empty())).cloned().collect();
        summary.push(counts);
    }
    std::fs::write(out.join("fidelity_summary.json"), Value::Array(summary).to_string()).unwrap();
    files.sort();
    let index = json!({ "files": files.iter().map(|f| format!("content/{f}")).collect::<Vec<_>>() });
    std::fs::write(content.join("index.json"), index.to_string()).unwrap();
    write_lessons_bin(&out);
    // Which checkout these files are of: the hook copies only its own checkout's.
    std::fs::write(out.join("content-source.txt"), &root).unwrap();
}

/// Each lesson's id and its text as the page fetches it: `{"body": HTML, "steps": [HTML, ...]}`.
fn lesson_texts(dir: &Path) -> Vec<(String, String)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("lessons/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut texts = Vec::new();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("readable lesson");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let rest = text.strip_prefix("+++\n").unwrap_or_else(|| panic!("{name}: no front matter"));
        let (front, body) = rest.split_once("\n+++\n").unwrap_or_else(|| panic!("{name}: front matter not closed"));
        let v: toml::Value = toml::from_str(front).unwrap_or_else(|e| panic!("{name}: {e}"));
        let id = v.get("id").and_then(|i| i.as_str()).unwrap_or_else(|| panic!("{name}: no id"));
        assert!(
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{name}: the id {id:?} names a file; lowercase letters, digits and '-' only"
        );
        assert!(body.trim().len() > 100, "{name}: the lesson has no text");
        check_no_wrapped_list(&name, body, front.lines().count() + 3);
        let steps: Vec<String> = v.get("steps").and_then(|s| s.as_array()).map_or(Vec::new(), |a| {
            a.iter()
                .enumerate()
                .map(|(i, s)| {
                    let text = s.get("text").and_then(|t| t.as_str()).unwrap_or("");
                    check_no_wrapped_list(&format!("{name}, step {} text, line", i + 1), text, 1);
                    to_html(text)
                })
                .collect()
        });
        texts.push((id.to_string(), json!({ "body": to_html(body), "steps": steps }).to_string()));
    }
    texts
}

/// Read at run time: a build script compiled once may run for another checkout of the crate.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
}
