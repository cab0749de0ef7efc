//! Compiles the lessons in: each `lessons/*.md` is TOML front matter between `+++` lines and a
//! Markdown body. The front matter becomes one JSON array in OUT_DIR, sorted by "order", so the
//! core needs serde_json only (the app renders the body; the core has no use for it). A
//! malformed lesson fails the build with the file name and the TOML error.

use std::path::Path;

fn main() {
    // Read at run time: a build script compiled once may run for another checkout of the crate.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("../../lessons");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("lessons/ exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut lessons = Vec::new();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("readable lesson");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let rest = text.strip_prefix("+++\n").unwrap_or_else(|| panic!("{name}: must start with a +++ line (TOML front matter)"));
        let (front, _body) = rest.split_once("\n+++\n").unwrap_or_else(|| panic!("{name}: front matter has no closing +++ line"));
        let value: toml::Value = toml::from_str(front).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json = serde_json::to_value(value).expect("TOML converts to JSON");
        assert!(json.is_object(), "{name}: front matter is not a table");
        lessons.push(json);
    }
    lessons.sort_by_key(|l| l.get("order").and_then(|o| o.as_u64()).unwrap_or(u64::MAX));
    let out_dir = std::env::var("OUT_DIR").unwrap();
    std::fs::write(Path::new(&out_dir).join("lessons.json"), serde_json::to_string(&lessons).unwrap()).unwrap();
    // The devices-and-layers section of the scoreboard: rows of sandbox setups (TOML).
    let devices = dir.join("devices.toml");
    println!("cargo:rerun-if-changed={}", devices.display());
    let text = std::fs::read_to_string(&devices).unwrap_or_else(|_| "title = \"Devices and layers\"\nfidelity = []\n".into());
    let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("devices.toml: {e}"));
    std::fs::write(Path::new(&out_dir).join("devices.json"), serde_json::to_string(&value).unwrap()).unwrap();
    // The fidelity scoreboard as last measured (`blksim fidelity --json`, scripts/fidelity).
    // A checkout without one yet builds with an empty board.
    let board = dir.join("fidelity.json");
    println!("cargo:rerun-if-changed={}", board.display());
    let text = std::fs::read_to_string(&board).unwrap_or_else(|_| "{\"lessons\": []}".into());
    std::fs::write(Path::new(&out_dir).join("fidelity.json"), compact_json(&text)).unwrap();
    // The lessons' cues as last measured (`blksim fidelity --cues --json`).
    let cues = dir.join("cues.json");
    println!("cargo:rerun-if-changed={}", cues.display());
    let text = std::fs::read_to_string(&cues).unwrap_or_else(|_| "{\"lessons\": []}".into());
    std::fs::write(Path::new(&out_dir).join("cues.json"), compact_json(&text)).unwrap();
}

/// The committed JSON files are pretty-printed for review; the library embeds them without the
/// whitespace between tokens (the page downloads them). Only whitespace outside strings goes,
/// so every value, number text and key order stays as committed.
fn compact_json(text: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::with_capacity(text.len()), false, false);
    for c in text.chars() {
        if in_string {
            (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
        } else if c.is_ascii_whitespace() {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}
