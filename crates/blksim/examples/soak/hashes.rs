//! Native vs WASM: every lesson and variant for a few simulated seconds with the trace on, the
//! whole trace (every record, drained from the ring before it can wrap) and the run report
//! hashed with FNV-1a over their JSON. The same file is compiled into the browser test
//! (`tests/soak_web.rs`), which computes the lines again in headless Chromium and compares.

use blksim::tools::report::RunReport;
use blksim::SimTime;

/// FNV-1a, 64 bits: byte order and word size do not enter it.
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Simulated seconds each variant runs.
pub const SECONDS: u64 = 5;
/// Events run between looks at the trace ring, and the records at which it is drained.
const RUN_EVENTS: u64 = 16;
const DRAIN_AT_RECORDS: u64 = 8192;

/// One line: `lesson variant events records trace-hash report-hash`.
pub fn variant_line(lesson: &blksim::course::lessons::Lesson, variant: &str, seconds: u64) -> String {
    let cfg = lesson.config(variant, &[]).expect("a lesson's variant validates");
    let mut sim = blksim::Sim::new(&cfg, 1);
    sim.set_trace(true);
    let until = SimTime(seconds * 1_000_000_000);
    let mut trace = Fnv::default();
    let mut next = 0;
    loop {
        let n = sim.run_until_bounded(until, RUN_EVENTS);
        // Drained well before the ring (65536 records) could wrap: one instant's events (an
        // unplug of many requests, a large I/O split) may write thousands.
        if sim.trace().next_seq() - next > DRAIN_AT_RECORDS || n < RUN_EVENTS {
            let (records, dropped) = sim.trace().since(next);
            assert_eq!(dropped, 0, "{} {variant}: the trace ring wrapped between drains", lesson.id);
            for r in records {
                serde_json::to_writer(&mut trace, r).expect("hashing");
            }
            next = sim.trace().next_seq();
        }
        if n < RUN_EVENTS {
            break;
        }
    }
    let mut report = Fnv::default();
    serde_json::to_writer(&mut report, &RunReport::from_sim(&mut sim, &lesson.id, variant)).expect("hashing");
    format!("{} {:?} events={} records={} trace={:016x} report={:016x}", lesson.id, variant, sim.totals().events, next, trace.0, report.0)
}

/// Every lesson's every variant, in the lessons' order.
pub fn all_lines(seconds: u64) -> Vec<String> {
    let mut out = Vec::new();
    for l in blksim::course::lessons::all() {
        for v in &l.variants {
            out.push(variant_line(&l, &v.name, seconds));
        }
    }
    out
}
