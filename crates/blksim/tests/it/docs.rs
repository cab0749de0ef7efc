//! docs/cli.md is the command line's contract: it names every subcommand, every flag of each
//! (in that subcommand's own section), and every top-level field of `run --json`.

use std::path::Path;

fn cli_md() -> String {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    std::fs::read_to_string(root.join("docs/cli.md")).expect("docs/cli.md")
}

/// The text of a `###` section whose heading starts with `heading`, up to the next heading.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc.find(&format!("\n### {heading}"))? + 1;
    let rest = &doc[start..];
    let end = rest[4..].find("\n#").map_or(rest.len(), |e| e + 4);
    Some(&rest[..end])
}

#[test]
fn cli_md_names_every_subcommand_and_each_of_its_flags() {
    let doc = cli_md();
    let cmd = blksim::cli::command();
    let mut subcommands = 0;
    for sub in cmd.get_subcommands() {
        subcommands += 1;
        let name = sub.get_name();
        let text =
            section(&doc, &format!("`blksim {name}")).unwrap_or_else(|| panic!("docs/cli.md has no section \"### `blksim {name} ...`\""));
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if long == "help" {
                continue;
            }
            assert!(text.contains(&format!("--{long}")), "docs/cli.md's `blksim {name}` section does not name --{long}");
        }
    }
    assert!(subcommands >= 9, "the command line has only {subcommands} subcommands");
}

#[test]
fn cli_md_names_every_field_of_run_json() {
    let doc = cli_md();
    let text = section(&doc, "`run --json`").expect("docs/cli.md has no section \"### `run --json`\"");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "nr-requests", "--duration", "0.2", "--json"])
        .output()
        .expect("run blksim");
    assert!(out.status.success(), "blksim run failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("run --json is JSON");
    let fields = v.as_object().expect("run --json is one object");
    assert!(fields.len() > 20, "run --json has only {} fields", fields.len());
    for key in fields.keys() {
        assert!(text.contains(&format!("| `{key}` |")), "docs/cli.md's `run --json` table has no row for `{key}`");
    }
}

fn root() -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).canonicalize().unwrap()
}

/// Every file and folder of the repository, as paths relative to its root ("a/b.rs", "a/b"),
/// leaving out what git ignores for the build (target, node_modules, dist) and dot-folders.
fn repo_paths() -> Vec<String> {
    let root = root();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || ["target", "node_modules", "dist"].contains(&name.as_str()) {
                continue;
            }
            out.push(path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"));
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out
}

/// The Markdown a reader of the repository meets: the top-level docs and docs/*.md.
fn doc_files() -> Vec<String> {
    let mut docs: Vec<String> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"].map(String::from).to_vec();
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            docs.push(format!("docs/{name}"));
        }
    }
    docs.sort();
    docs
}

const PATH_EXTENSIONS: [&str; 13] = ["rs", "md", "mjs", "js", "json", "toml", "csv", "css", "py", "html", "webmanifest", "png", "svg"];

/// Whether a word in backticks names a repository path: `a/b.rs`, `folder/`, or `file.rs`.
/// Commands, kernel sources (`.c`), sysfs and absolute paths, globs and build outputs are not.
fn looks_like_repo_path(word: &str) -> bool {
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    let generated = ["dist/", "target/", "node_modules/"].iter().any(|g| word.starts_with(g));
    if !plain || generated || word.starts_with(['/', '.']) {
        return false;
    }
    let file = word.rsplit('/').next().unwrap();
    let has_ext = file.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && PATH_EXTENSIONS.contains(&ext));
    has_ext || (word.contains('/') && word.ends_with('/'))
}

/// Inline code spans and link targets of a Markdown text, outside code blocks.
fn spans_and_links(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut spans, mut links) = (Vec::new(), Vec::new());
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        spans.extend(line.split('`').skip(1).step_by(2).map(String::from));
        for part in line.split("](").skip(1) {
            if let Some(target) = part.split(')').next() {
                links.push(target.to_string());
            }
        }
    }
    (spans, links)
}

#[test]
fn the_docs_name_only_paths_that_exist() {
    let root = root();
    let paths = repo_paths();
    let exists = |word: &str| {
        // A path may be written from the repository's root or from a folder the text is about
        // (`tests/it/tidy.rs`, `block/elevator/`); a bare file name may be anywhere.
        let w = word.trim_end_matches('/');
        paths.iter().any(|p| p == w || p.ends_with(&format!("/{w}")))
    };
    let mut missing = Vec::new();
    for doc in doc_files() {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        let (spans, links) = spans_and_links(&text);
        for word in spans.iter().filter(|w| looks_like_repo_path(w)) {
            if !exists(word) {
                missing.push(format!("{doc}: `{word}`"));
            }
        }
        let dir = Path::new(&doc).parent().unwrap();
        for link in links.iter().filter(|l| !l.contains("://") && !l.starts_with('#')) {
            let target = link.split('#').next().unwrap();
            if !root.join(dir).join(target).exists() {
                missing.push(format!("{doc}: link ({link})"));
            }
        }
    }
    assert!(missing.is_empty(), "the docs name paths the repository does not have:\n{}", missing.join("\n"));
}

#[test]
fn nothing_points_outside_the_repository_to_the_design_notes() {
    // Built from parts, so that this file does not match itself.
    let banned = [["..", "/shared"].concat(), ["shared", "/design"].concat()];
    let root = root();
    let mut found = Vec::new();
    for path in repo_paths() {
        let full = root.join(&path);
        let Ok(text) = std::fs::read_to_string(&full) else { continue };
        for (n, line) in text.lines().enumerate() {
            if banned.iter().any(|b| line.contains(b.as_str())) {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the repository must stand alone; these point outside it:\n{}", found.join("\n"));
}
