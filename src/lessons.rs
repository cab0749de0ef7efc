//! The lessons' front matter, compiled in as build.rs makes it: blksim's lessons (read from
//! their JSON at build time) in bincode, the form the workers' messages already use, so the page
//! keeps no JSON reader of the lesson types. What the page never reads is left out: each
//! lesson's `fidelity` rows are empty (the page shows the measured scoreboard, fetched) and each
//! step's `text` (its Markdown; the page shows its HTML, fetched). blksim reads lessons from what `install` hands it;
//! every entry point of this module calls it before anything reads a lesson: the page's start
//! (`main`), the runs' worker's messages, the sweep's batches and the bench.

/// The lessons in bincode (build.rs, `write_lessons_bin`).
const LESSONS_BIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/lessons.bin"));

/// Reads the compiled-in lessons and hands them to blksim, once (later calls only check that
/// they are there). The error names what did not read.
pub fn install() -> Result<(), String> {
    if blksim::course::lessons::loaded().is_ok() {
        return Ok(());
    }
    let lessons = crate::protocol::decode(LESSONS_BIN).map_err(|e| format!("the compiled-in lessons do not read: {e}"))?;
    blksim::course::lessons::install(lessons);
    Ok(())
}

#[cfg(test)]
mod tests {
    use blksim::course::lessons::{self, Lesson};

    /// The compiled-in form reads back as the lessons blksim reads from its JSON (the native
    /// tests take blksim with `lessons-json`), every lesson of `lessons/`, less the fidelity
    /// rows and the steps' Markdown.
    #[test]
    fn the_compiled_in_lessons_read_as_the_json_does() {
        let bin: Vec<Lesson> = crate::protocol::decode(super::LESSONS_BIN).unwrap();
        let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/lessons"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "md"))
            .count();
        assert_eq!(bin.len(), files);
        let mut json = lessons::from_json();
        for l in &mut json {
            l.fidelity.clear();
            for st in &mut l.steps {
                st.text.clear();
            }
        }
        assert!(bin == json, "the bincode lessons differ from the JSON's");
        assert!(bin.iter().all(|l| l.steps.iter().all(|st| !st.title.is_empty())));
        super::install().unwrap();
    }
}
