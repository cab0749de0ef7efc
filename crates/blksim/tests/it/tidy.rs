//! Repository checks run as ordinary tests (rust-analyzer's tidy): the core stays pure.

#[test]
fn the_core_depends_on_no_web_crate_and_no_clock() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    let names: Vec<&str> =
        deps.lines().filter_map(|l| l.split('=').next()).map(str::trim).filter(|n| !n.is_empty() && !n.starts_with('#')).collect();
    assert_eq!(
        names,
        ["serde", "serde_json", "rand_core", "rand_pcg", "clap"],
        "blksim may depend on std, serde and a seeded PRNG only (and clap for its binary)"
    );
    // clap is the binary's alone: optional in the core, and the app takes the core without it.
    let clap = deps.lines().find(|l| l.starts_with("clap")).unwrap();
    assert!(clap.contains("optional = true"), "clap must stay optional: {clap}");
    let app = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml")).unwrap();
    let dep = app.lines().find(|l| l.starts_with("blksim")).unwrap();
    assert!(dep.contains("default-features = false"), "the app must take blksim without the cli feature: {dep}");
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    // rand_core without default features must not pull in getrandom.
    let rand_core = lock.split("[[package]]").find(|p| p.contains("name = \"rand_core\"")).unwrap();
    assert!(!rand_core.contains("getrandom"), "rand_core pulls in getrandom");
}

#[test]
fn the_core_never_reads_the_clock_or_iterates_a_hash_map() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut stack = vec![std::path::PathBuf::from(src)];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for banned in ["SystemTime", "Instant::now", "HashMap", "HashSet", "thread_rng", "getrandom"] {
                assert!(!text.contains(banned), "{} uses {banned}", path.display());
            }
        }
    }
}

fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every folder holding Rust source under `root/dir`, as a path relative to `dir` ("" for `dir`).
fn rust_folders(root: &std::path::Path, dir: &str) -> Vec<String> {
    let base = root.join(dir);
    let mut folders: Vec<String> =
        rust_files(&base).iter().map(|f| f.parent().unwrap().strip_prefix(&base).unwrap().to_string_lossy().replace('\\', "/")).collect();
    folders.sort();
    folders.dedup();
    folders
}

#[test]
fn every_source_folder_is_in_the_codemap_and_every_file_under_800_lines() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    for dir in ["crates/blksim/src", "src"] {
        assert!(map.contains(&format!("`{dir}/")), "ARCHITECTURE.md does not name `{dir}/`");
        // A folder is named by its path under `dir`, as `block/elevator/` or `src/pages/lesson/`.
        for folder in rust_folders(root, dir).into_iter().filter(|f| !f.is_empty()) {
            let named = map.contains(&format!("`{folder}/")) || map.contains(&format!("/{folder}/"));
            assert!(named, "{dir}/{folder}/ is not in ARCHITECTURE.md's codemap");
        }
        for path in rust_files(&root.join(dir)) {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            assert!(lines <= 800, "{}: {lines} lines (the limit is 800: split it where it has a seam)", path.display());
        }
    }
}
