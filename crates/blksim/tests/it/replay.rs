//! Reading traces back: a run encoded as blktrace's binary reads back to the same records, and
//! no file, however cut or garbled, makes the readers panic or hang.

use blksim::engine::time::SimTime;
use blksim::engine::Sim;
use blksim::tools::blkparse::{blkparse_line, Names};
use blksim::tools::blkparse_input::{merge, read_any, read_binary, ReadNotes};
use blksim::tools::blktrace_api::encode;
use proptest::prelude::*;

/// A short run of a lesson with the trace on: its records and their blktrace files.
fn traced(lesson: &str, variant: &str, ms: u64) -> (Vec<String>, Vec<(String, Vec<u8>)>) {
    let l = blksim::lessons::find(lesson).unwrap();
    let cfg = l.config(variant, &[]).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.set_trace(true);
    sim.run_until(SimTime(ms * 1_000_000));
    let (records, dropped) = sim.trace().since(0);
    assert_eq!(dropped, 0);
    let records: Vec<_> = records.copied().collect();
    let devices = sim.device_names();
    let threads = |t: u32| sim.pid_comm(t);
    let names = Names { devices: &devices, threads: &threads };
    let mut lines: Vec<String> = records.iter().map(|r| blkparse_line(r, &names)).collect();
    lines.sort();
    (lines, encode(&records, &names, cfg.scenario.cpu.cores as u16))
}

#[test]
fn a_run_encoded_as_blktrace_reads_back_to_the_same_records() {
    let (lines, files) = traced("scsi-starved", "regressed", 20);
    assert!(lines.len() > 1000, "only {} records", lines.len());
    let mut back = Vec::new();
    let mut notes = ReadNotes::default();
    for (name, bytes) in &files {
        read_binary(name, bytes, &mut back, &mut notes).unwrap();
    }
    assert_eq!(notes.skipped, 0);
    // Times as the run has them (no rebasing); sequence numbers are blktrace's (per device and
    // CPU), so compare every field but that one.
    back.sort_by_key(|r| (r.time_ns, r.major, r.minor, r.cpu, r.seq));
    let strip = |l: &str| {
        let mut w: Vec<&str> = l.split_whitespace().collect();
        w.remove(2);
        w.join(" ")
    };
    let mut ours: Vec<String> = lines.iter().map(|l| strip(l)).collect();
    let mut theirs: Vec<String> = back.iter().map(|r| strip(&blksim::tools::blkparse_input::blkparse_line(r))).collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// A valid trace cut anywhere and with bytes overwritten anywhere: the reader returns
    /// records or one message, never panics.
    #[test]
    fn cut_and_garbled_binary_never_panics(cut in 0usize..20_000, flips in proptest::collection::vec((0usize..20_000, any::<u8>()), 0..8)) {
        static FILE: std::sync::OnceLock<(String, Vec<u8>)> = std::sync::OnceLock::new();
        let (name, bytes) = FILE.get_or_init(|| {
            let (_, files) = traced("scsi-starved", "regressed", 20);
            files.into_iter().max_by_key(|(_, b)| b.len()).unwrap()
        });
        prop_assert!(bytes.len() > 10_000);
        let mut b = bytes[..cut.min(bytes.len())].to_vec();
        for (at, v) in flips {
            if !b.is_empty() {
                let i = at % b.len();
                b[i] = v;
            }
        }
        let mut out = Vec::new();
        let r = read_any(name, &b, &mut out, &mut ReadNotes::default());
        if let Err(e) = r {
            prop_assert!(e.0.contains(name.as_str()) && !e.0.contains('\n'), "{}", e.0);
        }
        merge(&mut out);
    }

    /// Random bytes and random text lines that look like blkparse's.
    #[test]
    fn random_bytes_and_lines_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                          words in proptest::collection::vec("[0-9,.+<>()\\[\\]A-Z ]{0,12}", 0..12)) {
        let mut out = Vec::new();
        let _ = read_any("random.bin", &bytes, &mut out, &mut ReadNotes::default());
        let line = format!("  8,0 {}\n", words.join(" "));
        let _ = read_any("random.txt", line.as_bytes(), &mut out, &mut ReadNotes::default());
        let _ = blksim::tools::btt::btt(&out);
        let _ = blksim::tools::btt::iostat(&out);
    }
}

#[test]
fn the_page_dump_holds_the_same_records_as_the_per_cpu_files() {
    let l = blksim::lessons::find("scsi-starved").unwrap();
    let cfg = l.config("regressed", &[]).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.set_trace(true);
    sim.run_until(SimTime(20 * 1_000_000));
    let records: Vec<_> = sim.trace().since(0).0.copied().collect();
    assert!(records.len() > 1000, "only {} records", records.len());
    let devices = sim.device_names();
    let threads = |t: u32| sim.pid_comm(t);
    let names = Names { devices: &devices, threads: &threads };
    let lines = |files: Vec<(String, Vec<u8>)>| {
        let mut out = Vec::new();
        let mut notes = ReadNotes::default();
        for (name, bytes) in &files {
            read_binary(name, bytes, &mut out, &mut notes).unwrap();
        }
        let mut v: Vec<String> = out.iter().map(blksim::tools::blkparse_input::blkparse_line).collect();
        v.sort();
        v
    };
    let dump = blksim::tools::blktrace_api::encode_dump(&records, &names);
    assert_eq!(lines(vec![("dump".into(), dump)]), lines(encode(&records, &names, cfg.scenario.cpu.cores as u16)));
}
