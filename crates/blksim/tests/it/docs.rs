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
