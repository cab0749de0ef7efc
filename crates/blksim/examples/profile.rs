//! Where a lesson's run time goes by event kind: each event is labelled before it runs
//! (`Sim::next_event_label`: its kind, and for a core's work item the step it ran) and timed
//! with the wall clock, which only this example reads.
//!
//! `cargo run --release -p blksim --example profile -- raid5-chunk regressed 5`

use blksim::course::lessons;
use blksim::engine::run_one;
use blksim::{Sim, SimTime};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (id, variant) = (args.first().map_or("raid5-chunk", |s| s), args.get(1).map_or("regressed", |s| s));
    let secs: f64 = args.get(2).map_or(5.0, |s| s.parse().expect("seconds"));
    let cfg = lessons::find(id).expect("lesson").config(variant, &[]).expect("variant");
    let t0 = Instant::now();
    let plain = run_one(&cfg, 1, Some(secs));
    let plain_s = t0.elapsed().as_secs_f64();
    let mut sim = Sim::new(&cfg, 1);
    sim.set_trace(false);
    let end = SimTime::from_secs_f64(secs);
    let mut by: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    let mut timer_ns = 0.0;
    while sim.next_event_time().is_some_and(|t| t <= end) && !sim.is_finished() {
        let label = sim.next_event_label().expect("an event is queued");
        let a = Instant::now();
        let b = Instant::now();
        sim.step();
        let c = Instant::now();
        timer_ns += (b - a).as_nanos() as f64;
        let e = by.entry(label).or_default();
        e.0 += 1;
        e.1 += (c - b).as_nanos() as f64;
    }
    let n: u64 = by.values().map(|v| v.0).sum();
    let timer = timer_ns / n as f64;
    let total: f64 = by.values().map(|v| v.1 - timer * v.0 as f64).sum();
    println!(
        "{id}/{variant}, {secs} s: {n} events; plain run {:.3} s; timed run {:.3} s less {timer:.0} ns a reading",
        plain_s,
        total / 1e9
    );
    let mut rows: Vec<_> = by.into_iter().collect();
    rows.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
    println!("| event (step) | events | share of events | ns/event | share of time |");
    println!("| --- | --- | --- | --- | --- |");
    for (label, (count, ns)) in rows {
        let ns = ns - timer * count as f64;
        println!("| {label} | {count} | {:.1}% | {:.0} | {:.1}% |", 100.0 * count as f64 / n as f64, ns / count as f64, 100.0 * ns / total);
    }
    assert_eq!(sim.totals().events, plain.totals().events, "the timed run is the plain run");
    hot_struct_sizes();
}

/// The bytes of the structs the hot paths touch for every event (a cache line is 64).
fn hot_struct_sizes() {
    use std::mem::size_of;
    let sizes = [
        ("Thread", size_of::<blksim::kernel::sched::Thread>()),
        ("Core", size_of::<blksim::kernel::sched::Core>()),
        ("BlockDev", size_of::<blksim::block::genhd::BlockDev>()),
        ("Request", size_of::<blksim::block::blkdev::Request>()),
        ("Bio", size_of::<blksim::block::Bio>()),
        ("Io", size_of::<blksim::fio::job::Io>()),
        ("Disk", size_of::<blksim::hw::Disk>()),
        ("StripeHead", size_of::<blksim::drivers::md::raid5::StripeHead>()),
        ("Event", size_of::<blksim::engine::event::Event>()),
    ];
    let list: Vec<String> = sizes.iter().map(|(name, n)| format!("{name} {n}")).collect();
    println!("struct sizes (bytes): {}", list.join(", "));
}
