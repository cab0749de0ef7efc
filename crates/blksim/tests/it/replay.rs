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
    let l = blksim::course::lessons::find(lesson).unwrap();
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

#[test]
fn a_file_cut_inside_a_record_is_read_up_to_the_cut_as_blkparse_reads_it() {
    let (_, files) = traced("scsi-starved", "regressed", 20);
    let (name, bytes) = files.into_iter().max_by_key(|(_, b)| b.len()).unwrap();
    let mut whole = Vec::new();
    read_binary(&name, &bytes, &mut whole, &mut ReadNotes::default()).unwrap();
    // Cut 20 bytes before the end, inside the last record: every record before it is read.
    let mut cut = Vec::new();
    let mut notes = ReadNotes::default();
    let at = bytes.len() - 20;
    read_binary(&name, &bytes[..at], &mut cut, &mut notes).unwrap();
    assert_eq!(notes.cut.len(), 1, "{:?}", notes.cut);
    assert!(
        notes.cut[0].starts_with(&format!("{name}: cut short at byte ")) && notes.cut[0].ends_with("read up to it, as blkparse does"),
        "{}",
        notes.cut[0]
    );
    assert_eq!(cut.len(), whole.len() - 1, "all but the cut record");
    assert_eq!(cut[..], whole[..cut.len()]);
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
        let n = out.len();
        merge(&mut out, &[n]);
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
        let _ = blksim::tools::iostat::iostat(&out);
    }
}

#[test]
fn the_page_dump_holds_the_same_records_as_the_per_cpu_files() {
    let l = blksim::course::lessons::find("scsi-starved").unwrap();
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

/// Each record carries the time its work happened within its CPU step (`TraceClock`), so btt
/// reads the CPU's own time between Q, G, I and D, as the kernel's trace shows it; each
/// device's records (and so each per-CPU file) stay in time order, and a request's records in
/// the order they happened.
#[test]
fn records_carry_the_time_their_work_happened_within_a_step() {
    use blksim::calib::{ADD_REQUEST_NS, ELV_MERGE_NS, GET_REQUEST_NS};
    use blksim::kernel::trace::blktrace::Action;
    use std::collections::BTreeMap;
    let mut out_of_order = 0;
    for (lesson, variant) in [("nr-requests", "regressed"), ("scsi-starved", "before"), ("dm-sg-lists", "workaround")] {
        let l = blksim::course::lessons::find(lesson).unwrap();
        let cfg = l.config(variant, &[]).unwrap();
        let mut sim = Sim::new(&cfg, 1);
        sim.set_trace(true);
        let mut records = Vec::new();
        let mut next = 0;
        for ms in 1..=300 {
            sim.run_until(SimTime(ms * 1_000_000));
            let (new, dropped) = sim.trace().since(next);
            assert_eq!(dropped, 0);
            for r in new {
                assert!(r.time <= sim.now(), "{lesson}: a record stamped after it was made");
                records.push(*r);
            }
            next = sim.trace().next_seq();
        }
        // Per device, in the order the engine made them: never back in time.
        let mut last = BTreeMap::new();
        for r in &records {
            let t = last.entry(r.dev).or_insert(r.time);
            assert!(r.time >= *t, "{lesson}: {:?} went back in time on its device", r.action);
            *t = r.time;
        }
        // Across devices the ring is not in time order where CPUs work side by side: a step's
        // records come after a later-stamped one of another CPU.
        out_of_order += records.windows(2).filter(|w| w[1].time < w[0].time).count();
        // Q2G and G2I of each request that got one.
        let (mut q_at, mut g_at) = (BTreeMap::new(), BTreeMap::new());
        let (mut q2g, mut g2i) = (Vec::new(), Vec::new());
        for r in &records {
            match r.action {
                Action::Q => {
                    q_at.insert((r.dev, r.token), r.time.ns());
                }
                Action::G => {
                    if let Some(q) = q_at.remove(&(r.dev, r.related)) {
                        q2g.push(r.time.ns() - q);
                    }
                    g_at.insert((r.dev, r.token), r.time.ns());
                }
                Action::I => {
                    if let Some(g) = g_at.remove(&(r.dev, r.token)) {
                        g2i.push(r.time.ns() - g);
                    }
                }
                _ => {}
            }
        }
        assert!(q2g.len() > 100 && g2i.len() > 100, "{lesson}: {} Q2G and {} G2I", q2g.len(), g2i.len());
        let share = |v: &[u64], ns: u64| v.iter().filter(|&&x| x == ns).count() as f64 / v.len() as f64;
        match lesson {
            // One writer's steps: G comes the merge look and get_request after Q, I
            // init_request_from_bio and add_request after G (but where the step's end, which
            // bills less than a stacked submit charges, cuts them short).
            "nr-requests" => {
                assert!(share(&q2g, ELV_MERGE_NS + GET_REQUEST_NS) > 0.7, "{lesson}: Q2G {:?}", &q2g[..10]);
                assert!(share(&g2i, ADD_REQUEST_NS) > 0.7, "{lesson}: G2I {:?}", &g2i[..10]);
            }
            // A plugged submitter (2.6.32 as the model runs it): the requests go in, I, when the
            // step's plug is flushed, after the whole readahead window's G.
            "dm-sg-lists" => {
                assert_eq!(share(&q2g, ELV_MERGE_NS + GET_REQUEST_NS), 1.0, "{lesson}: Q2G {:?}", &q2g[..10]);
                assert!(g2i.iter().all(|&x| x > ADD_REQUEST_NS), "{lesson}: G2I {:?}", &g2i[..10]);
            }
            _ => assert!(share(&q2g, ELV_MERGE_NS + GET_REQUEST_NS) > 0.1, "{lesson}: Q2G {:?}", &q2g[..10]),
        }
    }
    assert!(out_of_order > 0, "no step's records carried times within it");
}

/// blkparse's text with its closing summary reads without a word; a line that is neither a
/// record nor that summary is passed over and named, with its line number.
#[test]
fn a_stray_line_in_blkparse_text_is_named_and_the_summary_is_not() {
    let rec = "  8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]\n  8,0    3        2     0.000020000   697  C   R 223490 + 8 [0]\n";
    let summary = "CPU3 (8,0):\n Reads Queued:           1,        4KiB  Writes Queued:           0,        0KiB\nTotal (8,0):\n Reads Queued:           1,        4KiB\n\nThroughput (R/W): 4KiB/s / 0KiB/s\nEvents (8,0): 2 entries\n";
    let mut out = Vec::new();
    let mut notes = ReadNotes::default();
    read_any("clean.txt", format!("{rec}{summary}").as_bytes(), &mut out, &mut notes).unwrap();
    assert_eq!((out.len(), notes.stray.len()), (2, 0), "{:?}", notes.stray);
    let mut out = Vec::new();
    let mut notes = ReadNotes::default();
    read_any("junk.txt", format!("{rec}hello there\n\nmore junk\n{summary}").as_bytes(), &mut out, &mut notes).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        notes.stray,
        vec!["junk.txt: 2 lines neither a record nor blkparse's summary, passed over (the first, line 3: 'hello there')".to_string()]
    );
}

/// blkparse's text as blkparse writes it: a process name with spaces on any action, unplugs
/// (U, UT) too (JVM and Hadoop threads: `[DataXceiver for]`), `#` header lines passed over
/// without a word, and a text cut mid-line read up to the cut with one note.
#[test]
fn blkparse_text_with_spaced_names_comments_and_a_cut_last_line_reads() {
    let text = "#Maj,Mn CPU   SeqNo     Seconds     PID  Evt Typ Sector   +Len Description\n\
                #------ --- ------- --------------- -----|--|---|---------+---\n  \
                8,16   3        1     0.000012000   697  Q   W 223490 + 8 [DataXceiver for]\n  \
                8,16   3        2     0.000013000   697  P   N [DataXceiver for]\n  \
                8,16   3        3     0.000014000   697  U   N [DataXceiver for] 1\n  \
                8,16   3        4     0.000015000   698  UT  N [VM Thread] 2\n  \
                8,16   3        5     0.000016000   697  D   W 223490 + 8 [DataXceiver for]\n  \
                8,16   3        6     0.000020000     0  C   W 223490 + 8 [0]\n  \
                8,16   3        7     0.000030000   697  Q   W 2234";
    let mut out = Vec::new();
    let mut notes = ReadNotes::default();
    read_any("hadoop.txt", text.as_bytes(), &mut out, &mut notes).unwrap();
    assert_eq!(out.len(), 6);
    assert_eq!(
        out.iter().map(|r| r.comm.as_str()).collect::<Vec<_>>(),
        ["DataXceiver for", "DataXceiver for", "DataXceiver for", "VM Thread", "DataXceiver for", ""]
    );
    assert_eq!(out[2].from.map(|f| f.2), Some(1), "the unplug's count after the name");
    assert_eq!(out[3].from.map(|f| f.2), Some(2));
    assert!(notes.stray.is_empty(), "{:?}", notes.stray);
    assert_eq!(notes.cut, ["hadoop.txt: cut short in line 9 (a size in sectors missing): read up to it, as blkparse reads a cut file"]);
    // The same line whole but for its newline is no cut; a bad line before the last is refused.
    let mut notes = ReadNotes::default();
    let bad = text.replace("    0.000016000", "    0.0000x6000");
    let err = read_any("bad.txt", bad.as_bytes(), &mut Vec::new(), &mut notes).unwrap_err();
    assert!(err.0.starts_with("bad.txt: line 7: expected a time as SECONDS.NANOSECONDS"), "{}", err.0);
}
