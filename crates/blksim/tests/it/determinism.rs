//! One seed, one run: the same scenario and seed give byte-identical JSON and trace, and the
//! golden run below is what the browser build must reproduce too (tests/web.rs in the app).

use blksim::course::lessons;
use blksim::engine::run_one;
use blksim::tools::report::RunReport;
use blksim::{Sim, SimTime};

/// FNV-1a over the blkparse-style rendering of every trace record: a compact trace hash.
pub fn trace_hash(lesson: &str, variant: &str, seed: u64, until: SimTime) -> (u64, u64) {
    let cfg = lessons::find(lesson).unwrap().config(variant, &[]).unwrap();
    let mut sim = Sim::new(&cfg, seed);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut cursor = 0;
    let mut n = 0;
    while sim.now() < until && sim.step() {
        let (recs, dropped) = sim.trace().since(cursor);
        assert_eq!(dropped, 0);
        for r in recs {
            for b in format!("{:?}\n", r).bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x100_0000_01b3);
            }
            cursor = r.seq + 1;
            n += 1;
        }
    }
    (h, n)
}

#[test]
fn the_same_seed_gives_identical_json() {
    let l = lessons::find("scsi-starved").unwrap();
    let cfg = l.config("before", &[]).unwrap();
    let json = |seed| {
        let mut sim = run_one(&cfg, seed, Some(2.0));
        serde_json::to_string(&RunReport::from_sim(&mut sim, "scsi-starved", "before")).unwrap()
    };
    let a = json(7);
    assert_eq!(a, json(7), "seed 7 gave two different runs");
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(v["events"].as_u64().unwrap() > 10_000, "the foundation slice must process > 10,000 events in 2 s");
    assert_ne!(a, json(8), "different seeds should differ (rotational phase, fork times)");
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let t = SimTime(200_000_000);
    assert_eq!(trace_hash("nr-requests", "regressed", 3, t), trace_hash("nr-requests", "regressed", 3, t));
}

/// The golden run: if the model changes on purpose, run with BLESS=1 to rewrite it (and the
/// browser test reads the same file).
#[test]
fn the_golden_run_is_unchanged() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/scsi-starved-before-seed7-0.5s.json");
    let l = lessons::find("scsi-starved").unwrap();
    let cfg = l.config("before", &[]).unwrap();
    let mut sim = run_one(&cfg, 7, Some(0.5));
    let got = serde_json::to_string_pretty(&RunReport::from_sim(&mut sim, "scsi-starved", "before")).unwrap() + "\n";
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file; run with BLESS=1 to create it");
    assert_eq!(got, want, "the model's output changed; if on purpose, rerun with BLESS=1");
}

/// With the trace off, a readahead window's page bios go through the block layer as runs
/// (`Bio::pages`); with it on, one by one, so that the trace shows each. Both must give the
/// same run, counter for counter: through dm-multipath, straight on the disks, with 2.6.2's
/// plugging (merges into the elevator instead of the plug), and with small requests.
#[test]
fn readahead_runs_give_the_same_run_as_bios_one_by_one() {
    let l = lessons::find("dm-sg-lists").unwrap();
    for (variant, sets) in [
        ("regressed", vec![]),
        ("workaround", vec![]),
        ("fixed", vec![("queue.plugging", "2.6.2")]),
        ("workaround", vec![("stack", "direct"), ("disk.max_sectors_kb", "16")]),
        ("workaround", vec![("stack", "direct"), ("queue.plugging", "2.6.2"), ("workload.rw", "randread")]),
    ] {
        let sets: Vec<(String, String)> = sets.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect();
        let cfg = l.config(variant, &sets).unwrap();
        let report = |trace: bool| {
            let mut sim = Sim::new(&cfg, 3);
            sim.set_trace(trace);
            sim.run_until(SimTime(200_000_000));
            if trace {
                let (mut recs, _) = sim.trace().since(0);
                assert!(
                    recs.any(|r| r.action == blksim::kernel::trace::blktrace::Action::Q && r.bytes == 4096),
                    "the trace shows page bios"
                );
            }
            serde_json::to_string(&RunReport::from_sim(&mut sim, "dm-sg-lists", variant)).unwrap()
        };
        let runs = report(false);
        assert!(runs.contains("\"throughput_mb_s\""));
        assert_eq!(runs, report(true), "{variant} {sets:?}: runs and one-by-one bios differ");
    }
}

/// The UI advances a run a frame's budget of events at a time, and a link carries the clock
/// where it paused. Replaying the link runs every event up to that time, so a frame must never
/// stop halfway through the events of one instant.
#[test]
fn a_run_paused_after_any_frame_replays_to_the_same_state() {
    let cfg = lessons::find("scsi-starved").unwrap().config("regressed", &[]).unwrap();
    let mut framed = Sim::new(&cfg, 9);
    // The replay only ever runs whole instants, so advancing it is the same as starting over.
    let mut replay = Sim::new(&cfg, 9);
    let until = SimTime(300_000_000);
    let states = |s: &Sim| s.threads_view().iter().map(|t| format!("{} {}", t.name, t.state)).collect::<Vec<_>>();
    for budget in [1u64, 2, 3, 5, 8, 13].into_iter().cycle().take(20_000) {
        framed.run_until_bounded(until, budget);
        replay.run_until(framed.now());
        assert_eq!(replay.totals().events, framed.totals().events, "at {:?}", framed.now());
        assert_eq!(states(&replay), states(&framed), "at {:?}", framed.now());
    }
}

/// A snapshot (what the page's timeline rewinds to) runs on exactly as the run it was taken
/// from: the same per-second reports, the same trace from there on, on a lesson with the page
/// cache, readahead and md (raid5-chunk) and one with the trace's bios gathered differently.
#[test]
fn a_snapshot_runs_on_exactly_as_the_run_it_came_from() {
    for (lesson, variant) in [("raid5-chunk", "regressed"), ("scsi-starved", "regressed")] {
        let cfg = lessons::find(lesson).unwrap().config(variant, &[]).unwrap();
        let mut sim = Sim::new(&cfg, 5);
        sim.set_trace(true);
        sim.run_until(SimTime(1_300_000_000));
        let mut copy = sim.checkpoint();
        let from = sim.trace().next_seq();
        assert_eq!(copy.trace().len(), 0, "the snapshot holds no trace records");
        let records = |s: &mut Sim| {
            let mut out = Vec::new();
            let mut cursor = from;
            while s.now() < SimTime(1_500_000_000) && s.step() {
                let (recs, dropped) = s.trace().since(cursor);
                assert_eq!(dropped, 0);
                for r in recs {
                    out.push(format!("{r:?}"));
                    cursor = r.seq + 1;
                }
            }
            out
        };
        let (a, b) = (records(&mut sim), records(&mut copy));
        assert!(a.len() > 1000, "{lesson}: {} records", a.len());
        assert_eq!(a, b, "{lesson}: the trace after the snapshot");
        sim.run_until(SimTime(3_000_000_000));
        copy.run_until(SimTime(3_000_000_000));
        let json = |s: &mut Sim| serde_json::to_string(&RunReport::from_sim(s, lesson, variant)).unwrap();
        assert_eq!(json(&mut sim), json(&mut copy), "{lesson}: the report at 3 s");
    }
}
