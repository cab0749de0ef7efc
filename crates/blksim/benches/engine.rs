//! Engine speed: events per second on the lessons, and a bare BinaryHeap push/pop loop on the
//! same machine in the same run as the yardstick. `cargo bench -p blksim` prints both
//! (divan's "items/s" column is events/s; simulated-seconds per wall-second is printed too).

use blksim::course::lessons;
use blksim::engine::event::heap_yardstick;
use blksim::engine::run_one;
use divan::counter::ItemsCount;
use divan::Bencher;

fn main() {
    // Each lesson runs its simulated seconds three times; the fastest run counts. Its events/s
    // is set against the yardstick (#4: dm-sg-lists workaround at >= 25%): a bare BinaryHeap
    // push/pop loop holding as many events as the engine's queue held on average in that
    // lesson (a deeper heap is slower, so a yardstick at another population would flatter or
    // wrong the engine), also the fastest of three, timed here in the same run.
    for (id, variant, secs) in [
        ("anatomy-of-a-request", "small-pool", 5.0),
        ("scsi-starved", "before", 5.0),
        ("nr-requests", "regressed", 5.0),
        ("dm-sg-lists", "workaround", 5.0),
        ("dm-sg-lists", "regressed", 5.0),
        ("raid5-chunk", "regressed", 5.0),
        ("mq-clone-stall", "regressed", 1.0),
    ] {
        let cfg = lessons::find(id).unwrap().config(variant, &[]).unwrap();
        let (wall, sim) = (0..3)
            .map(|_| {
                let t0 = std::time::Instant::now();
                let sim = run_one(&cfg, 1, Some(secs));
                (t0.elapsed().as_secs_f64(), sim)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        let simulated = sim.now().as_secs_f64();
        let t = sim.totals();
        let population = (t.events_pending_sum / t.events.max(1)).max(1);
        let heap_rate = (0..3)
            .map(|_| {
                let t0 = std::time::Instant::now();
                divan::black_box(heap_yardstick(HEAP_EVENTS, population));
                HEAP_EVENTS as f64 / t0.elapsed().as_secs_f64()
            })
            .fold(0.0, f64::max);
        // An event can carry many bios (a 512 KiB readahead window is 128 page bios, all
        // submitted in one step), so bios per second is printed beside events per second.
        println!(
            "{id}/{variant}: {} events, {} bios, {simulated:.2} s simulated in {wall:.3} s wall = {:.0}x real time, {:.2} M events/s = {:.1}% of the heap loop at its mean queue length of {population} ({:.2} M events/s), {:.2} M bios/s",
            t.events,
            t.bios_submitted,
            simulated / wall,
            t.events as f64 / wall / 1e6,
            100.0 * t.events as f64 / wall / heap_rate,
            heap_rate / 1e6,
            t.bios_submitted as f64 / wall / 1e6
        );
    }
    divan::main();
}

const LESSONS: &[(&str, &str)] = &[
    ("anatomy-of-a-request", "small-pool"),
    ("scsi-starved", "before"),
    ("nr-requests", "regressed"),
    ("dm-sg-lists", "workaround"),
    ("raid5-chunk", "regressed"),
];

#[divan::bench(args = LESSONS, sample_count = 10)]
fn lesson_one_second(b: Bencher, (id, variant): (&str, &str)) {
    let cfg = lessons::find(id).unwrap().config(variant, &[]).unwrap();
    let events = run_one(&cfg, 1, Some(1.0)).totals().events;
    b.counter(ItemsCount::new(events)).bench(|| run_one(divan::black_box(&cfg), 1, Some(1.0)).totals().events);
}

/// The yardstick (`heap_yardstick`): a BinaryHeap of (time, seq) with one pop and one push per
/// "event", at a steady population (the engine's queue holds about 10-20 events in the lessons).
#[divan::bench(args = [16, 512], sample_count = 10)]
fn bare_binary_heap(b: Bencher, population: u64) {
    b.counter(ItemsCount::new(HEAP_EVENTS)).bench(|| heap_yardstick(HEAP_EVENTS, population));
}

const HEAP_EVENTS: u64 = 1_000_000;

/// The page's timeline copies the whole simulation (`Sim::checkpoint`) every second at first,
/// then ever more rarely (at most 12 kept): what one copy costs, a simulated second into each
/// lesson (with the history the copy carries: the per-second snapshots so far).
#[divan::bench(args = LESSONS, sample_count = 20)]
fn checkpoint(b: Bencher, (id, variant): (&str, &str)) {
    let cfg = lessons::find(id).unwrap().config(variant, &[]).unwrap();
    let mut sim = run_one(&cfg, 1, Some(1.0));
    b.bench_local(|| divan::black_box(sim.checkpoint()).now());
}
