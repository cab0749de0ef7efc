//! Component tests in headless Chromium (wasm-bindgen-test). Run by scripts/test with
//! `cargo test --target wasm32-unknown-unknown --test web`.
#![cfg(target_arch = "wasm32")]

use blksim::engine::run_one;
use blksim::tools::report::{IntervalReport, RunReport};
use blkviz::components::counters::{Counters, CountersProps};
use blkviz::layout::{columns, Optional, StackLayout, Stage};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Determinism across platforms: the browser build gives byte-identical counters to the
/// native golden run (crates/blksim/tests/it/determinism.rs writes and checks the same file).
#[wasm_bindgen_test]
fn the_browser_reproduces_the_native_golden_run() {
    let golden = include_str!("../crates/blksim/tests/golden/scsi-starved-before-seed7-0.5s.json");
    blkviz::lessons::install().unwrap();
    let cfg = blksim::course::lessons::find("scsi-starved").unwrap().config("before", &[]).unwrap();
    let mut sim = run_one(&cfg, 7, Some(0.5));
    let got = serde_json::to_string_pretty(&RunReport::from_sim(&mut sim, "scsi-starved", "before")).unwrap() + "\n";
    assert_eq!(got, golden);
}

#[wasm_bindgen_test]
fn the_layout_gives_every_disk_its_own_column() {
    for n in [1usize, 12, 16] {
        let l = StackLayout::new(800.0, 600.0, columns(n, None), Optional::ALL);
        let cells: Vec<_> = (0..n).map(|d| l.cell(Stage::Disks, d)).collect();
        assert_eq!(cells.len(), n);
        for w in cells.windows(2) {
            assert!(w[0].x + w[0].w <= w[1].x);
        }
    }
}

fn interval() -> IntervalReport {
    blkviz::lessons::install().unwrap();
    let cfg = blksim::course::lessons::find("scsi-starved").unwrap().config("before", &[]).unwrap();
    let mut sim = run_one(&cfg, 1, Some(1.0));
    let cur = sim.cumulative();
    IntervalReport::between(&sim, &blksim::Interval::zero_for(&cur), &cur)
}

/// A fresh div in the page's body, for a component to render into.
fn mounted_div() -> web_sys::Element {
    let doc = gloo::utils::document();
    let root = doc.create_element("div").unwrap();
    doc.body().unwrap().append_child(&root).unwrap();
    root
}

/// The counters' props with nothing to show: each test sets what it is about.
fn counters_props() -> CountersProps {
    CountersProps {
        interval: None,
        partial: false,
        top: vec![],
        max_devices: 12,
        b: None,
        b_top: vec![],
        whole: false,
        b_partial: false,
        b_whole: false,
        warmup_s: None,
        page_cache: false,
        buffered_writes: false,
        iostat_rows: Default::default(),
        iostat_cols: None,
        jumping_to_s: None,
        done_s: None,
        b_done_s: None,
        jobs: vec![],
        b_jobs: None,
        on_skip_warmup: None,
    }
}

/// A job's figures: `mb` MB/s of reads (`read`) or writes, at 4 KiB each.
fn job(name: &str, read: bool, mb: u64) -> blksim::tools::fio_report::JobFigures {
    use blksim::tools::fio_report::{JobDirFigures, JobFigures};
    let d = JobDirFigures { bw_bytes: mb * 1_000_000, iops: (mb * 1_000_000 / 4096) as f64, total_ios: 100, p99_ns: 2_000_000 };
    let (r, w) = if read { (d, JobDirFigures::default()) } else { (JobDirFigures::default(), d) };
    JobFigures { jobname: name.into(), jobs: 1, read: r, write: w, clat_buckets: vec![] }
}

/// A run of one job section shows no job rows (its figures are the big numbers); two show a
/// row each, named, in their colours; A/B puts each job's B row under its A row, with B/A.
#[wasm_bindgen_test]
async fn the_counters_show_a_row_per_job_and_compare_them_job_by_job_in_a_b() {
    let root = mounted_div();
    let one = CountersProps { interval: Some(interval()), jobs: vec![job("fio", true, 10)], ..counters_props() };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), one).render();
    yew::scheduler::flush().await;
    assert!(root.query_selector("table.jobs").unwrap().is_none());
    handle.destroy();
    let two = vec![job("reader", true, 30), job("writer", false, 90)];
    let props = CountersProps { interval: Some(interval()), jobs: two.clone(), ..counters_props() };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let rows = root.query_selector_all("table.jobs tbody tr").unwrap();
    let row = |i: u32| rows.get(i).unwrap().dyn_into::<web_sys::Element>().unwrap();
    assert_eq!(rows.length(), 2);
    assert_eq!((row(0).get_attribute("data-job").unwrap(), row(0).get_attribute("data-dir").unwrap()), ("reader".into(), "read".into()));
    assert_eq!((row(1).get_attribute("data-job").unwrap(), row(1).get_attribute("data-dir").unwrap()), ("writer".into(), "write".into()));
    let text = row(1).text_content().unwrap();
    assert!(text.starts_with("writer") && text.contains("90.0 MB/s") && text.contains("2ms"), "{text}");
    let swatch = |i: u32| row(i).query_selector(".job-swatch").unwrap().unwrap().get_attribute("data-colour").unwrap();
    assert_eq!((swatch(0), swatch(1)), ("#E69F00".to_string(), "#0072B2".to_string()));
    handle.destroy();
    let b = vec![job("reader", true, 60), job("writer", false, 45)];
    let props = CountersProps { interval: Some(interval()), b: Some(interval()), jobs: two, b_jobs: Some(b), ..counters_props() };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let rows = root.query_selector_all("table.jobs tbody tr").unwrap();
    let got: Vec<String> = (0..rows.length())
        .map(|i| {
            let r = rows.get(i).unwrap().dyn_into::<web_sys::Element>().unwrap();
            let ratio = r.query_selector("[data-col=ratio]").unwrap().unwrap().text_content().unwrap();
            format!("{} {} {ratio}", r.get_attribute("data-job").unwrap(), r.get_attribute("data-run").unwrap())
        })
        .collect();
    assert_eq!(got, ["reader A ", "reader B ×2.00", "writer A ", "writer B ×0.50"]);
    handle.destroy();
}

/// A run whose jobs all finished shows their completion time first, with B's and B/A; while
/// B still runs, its place says so rather than a ratio of a finished run to a running one.
#[wasm_bindgen_test]
async fn a_finished_burst_shows_its_completion_time_first() {
    let root = mounted_div();
    let iv = interval();
    let both = CountersProps {
        interval: Some(iv.clone()),
        whole: true,
        done_s: Some(0.044335),
        b: Some(iv.clone()),
        b_whole: true,
        b_done_s: Some(0.042117),
        ..counters_props()
    };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), both).render();
    yew::scheduler::flush().await;
    let first = root.query_selector(".big .big-num").unwrap().unwrap();
    assert_eq!(first.get_attribute("data-counter").as_deref(), Some("completion"));
    let text = first.text_content().unwrap();
    assert!(text.starts_with("44.335 ms42.117 msB/A ×0.95"), "{text}");
    handle.destroy();
    let b_running = CountersProps { interval: Some(iv.clone()), whole: true, done_s: Some(0.044335), b: Some(iv), ..counters_props() };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), b_running).render();
    yew::scheduler::flush().await;
    let text = root.query_selector("[data-counter=completion]").unwrap().unwrap().text_content().unwrap();
    assert!(text.contains("B/A – (B: still running)"), "{text}");
    handle.destroy();
}

#[wasm_bindgen_test]
async fn the_counters_render_iostat_and_vmstat_as_tables() {
    let root = mounted_div();
    let iv = interval();
    let props = CountersProps {
        interval: Some(iv.clone()),
        top: vec![("fio".into(), 1000, 1.5, 'D')],
        max_devices: 8,
        page_cache: true,
        ..counters_props()
    };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    assert!(root.text_content().unwrap().contains("to/from the disks"), "page-cache jobs show the disks' MB/s too");
    let rows = root.query_selector_all("table.iostat tbody tr").unwrap();
    assert_eq!(rows.length(), 8, "busiest 8 of 12 devices");
    let text = root.text_content().unwrap();
    assert!(text.contains("+4 more devices"), "{text}");
    assert!(text.contains("MB/s") || text.contains("GB/s"), "{text}");
    let vmstat_cs = root.query_selector("[data-counter=vmstat-cs]").unwrap().unwrap().text_content().unwrap();
    assert_eq!(vmstat_cs, format!("{:.0}", iv.cs_per_s));
    handle.destroy();
}

/// A job writing through the page cache: the disks' MB/s leads the big numbers, the jobs' (the
/// page cache's speed) follows; a reader through it keeps the jobs' first.
#[wasm_bindgen_test]
async fn buffered_writes_lead_with_the_disks_mb_s() {
    for (buffered_writes, first) in [(true, "disks"), (false, "throughput")] {
        let root = mounted_div();
        let props = CountersProps { interval: Some(interval()), page_cache: true, buffered_writes, ..counters_props() };
        let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
        yew::scheduler::flush().await;
        let lead = root.query_selector(".big .big-num").unwrap().unwrap().get_attribute("data-counter").unwrap();
        assert_eq!(lead, first, "buffered_writes {buffered_writes}");
        assert_eq!(root.query_selector_all("[data-counter=disks]").unwrap().length(), 1, "the disks' figure once");
        handle.destroy();
    }
}

/// Presenter mode shows the device and the columns a step names, in iostat's order, and the
/// line between a spread's ends spans them.
#[wasm_bindgen_test]
async fn the_iostat_table_shows_the_columns_a_step_names() {
    let root = mounted_div();
    let props = CountersProps {
        interval: Some(interval()),
        max_devices: 4,
        iostat_rows: blksim::course::lessons::IostatRows::Spread,
        iostat_cols: Some(vec!["%util".into(), "w/s".into()]),
        ..counters_props()
    };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let heads: Vec<String> = (0..3)
        .map(|i| {
            let ths = root.query_selector_all("table.iostat thead th").unwrap();
            assert_eq!(ths.length(), 3, "Device and the two named columns");
            ths.item(i).unwrap().text_content().unwrap()
        })
        .collect();
    assert_eq!(heads, ["Device", "w/s", "%util"]);
    let first = root.query_selector("table.iostat tbody tr[data-device]").unwrap().unwrap();
    assert_eq!(first.query_selector_all("td").unwrap().length(), 3);
    let span = root.query_selector("tr.between td").unwrap().unwrap().get_attribute("colspan");
    assert_eq!(span.as_deref(), Some("3"));
    handle.destroy();
}

/// A step about the spread across disks keeps both ends of iostat: the busiest and the least
/// served, with a line for those between (scsi-starved's 12 disks, 4 rows).
#[wasm_bindgen_test]
async fn a_spread_step_keeps_the_least_served_disks_in_iostat() {
    let root = mounted_div();
    let props = CountersProps {
        interval: Some(interval()),
        max_devices: 4,
        iostat_rows: blksim::course::lessons::IostatRows::Spread,
        ..counters_props()
    };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let rows = root.query_selector_all("table.iostat[data-rows=spread] tbody tr").unwrap();
    assert_eq!(rows.length(), 5, "2 busiest, the line between, 2 least served");
    let between = root.query_selector("tr.between").unwrap().unwrap().text_content().unwrap();
    assert!(between.contains("8 devices between"), "{between}");
    // Served = moved: the rows go from the most written to the least (wkB/s, the 7th column).
    let wkb = |i: u32| -> f64 {
        let tr = rows.item(i).unwrap().dyn_into::<web_sys::Element>().unwrap();
        tr.query_selector("td:nth-child(7)").unwrap().unwrap().text_content().unwrap().parse().unwrap()
    };
    assert!(wkb(0) >= wkb(1) && wkb(1) >= wkb(3) && wkb(3) >= wkb(4), "{} {} {} {}", wkb(0), wkb(1), wkb(3), wkb(4));
    handle.destroy();
}

#[wasm_bindgen_test]
async fn a_finished_run_shows_whole_run_numbers_and_says_so() {
    let root = mounted_div();
    let props = CountersProps { interval: Some(interval()), whole: true, ..counters_props() };
    let handle = yew::Renderer::<Counters>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let label = root.query_selector("[data-testid=interval]").unwrap().unwrap().text_content().unwrap();
    assert!(label.starts_with("the whole run, to its end at"), "{label}");
    handle.destroy();
}

#[wasm_bindgen_test]
async fn before_the_first_second_the_counters_say_so() {
    // With no second yet: that no second has passed; during a jump, where the run is going.
    for (jumping_to_s, says, not) in
        [(None, "first simulated second", "Running to"), (Some(9.0), "Running to t = 9.000 s without animating", "first simulated second")]
    {
        let root = mounted_div();
        let handle =
            yew::Renderer::<Counters>::with_root_and_props(root.clone(), CountersProps { jumping_to_s, ..counters_props() }).render();
        yew::scheduler::flush().await;
        let text = root.text_content().unwrap();
        assert!(text.contains(says) && !text.contains(not), "{jumping_to_s:?}: {text}");
        handle.destroy();
    }
}

#[wasm_bindgen_test]
fn counters_format_the_same_in_the_browser() {
    use blkviz::format;
    assert_eq!(format::throughput(2810.0), "2.81 GB/s");
    assert_eq!(format::throughput(43.1), "43.1 MB/s");
    assert_eq!(format::rate(21_900.0), "21.9k");
    assert_eq!(format::ratio(3.0, 2.0), "×1.50");
    assert_eq!(format::speed(1e-6), "1 µs/s");
}

#[wasm_bindgen_test]
fn a_large_array_collapses_into_groups_in_the_browser_too() {
    let cols = blkviz::layout::columns(80, None);
    assert_eq!(cols.len(), 10);
    assert_eq!(blkviz::layout::columns(80, Some(0)).len(), 8 + 9);
}

/// btt in the page, on a bio-based device (nr-requests' dm-linear): its bios have only Q and C,
/// so only Q2C is summed, and it covers the disk's requests below it (a bio is queued on dm-0
/// before its sda request and ends after it). Request ids and bio ids are separate numberings,
/// and a bio's C on dm-0 once closed an sda request of the same number.
#[wasm_bindgen_test]
fn btt_of_a_bio_based_device_is_q2c_only_and_covers_the_disk_below() {
    blkviz::lessons::install().unwrap();
    let mut runs = blkviz::runs::Run::new("nr-requests", Some("regressed"), Vec::new(), 1).expect("the lesson runs");
    // The page's view of the run, kept by its updates.
    let mut d = blkviz::view::RunView::new(runs.take_update());
    runs.fast_forward(3.0);
    d.apply(runs.take_update());
    let names: Vec<String> = d.shown.topology.devices.iter().chain(d.shown.topology.upper.iter()).map(|v| v.name.clone()).collect();
    let row = |name: &str| {
        let i = names.iter().position(|n| n == name).expect("the device exists") as u16;
        *d.trace.btt.get(&i).expect("btt has the device")
    };
    let (dm, sda) = (row("dm-0"), row("sda"));
    assert!(dm.bio_level && !sda.bio_level);
    assert!(dm.requests > 0 && sda.requests > 0);
    assert_eq!((dm.q2g_ns, dm.g2i_ns, dm.i2d_ns, dm.d2c_ns), (0, 0, 0, 0));
    assert!(dm.avg_ms(dm.q2c_ns) >= sda.avg_ms(sda.q2c_ns), "dm-0 Q2C {} < sda Q2C {}", dm.avg_ms(dm.q2c_ns), sda.avg_ms(sda.q2c_ns));
}

/// A seed sweep's tail stays visible: one stalled seed among 199 fast ones is a bar of a few
/// pixels at the right of the histogram (with its count above it), not a sliver under one
/// pixel. Read back from the canvas: some column in the chart's lower right holds at least 3
/// pixels of the bar's colour (the legend's swatch is in the upper right).
#[wasm_bindgen_test]
fn a_sweep_histogram_shows_a_single_outlier() {
    let doc = gloo::utils::document();
    let canvas: web_sys::HtmlCanvasElement = doc.create_element("canvas").unwrap().dyn_into().unwrap();
    canvas.set_attribute("style", "width: 480px; height: 160px; display: block").unwrap();
    doc.body().unwrap().append_child(&canvas).unwrap();
    let mut values = vec![0.044; 199];
    values.push(192.0);
    blkviz::components::sweep_chart::draw_sweep(&canvas, "completion time", "s", &[("regressed".into(), values)], false).unwrap();
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").unwrap().unwrap().dyn_into().unwrap();
    let (w, h) = (canvas.width(), canvas.height());
    let img = ctx.get_image_data(0.0, 0.0, f64::from(w), f64::from(h)).unwrap().data();
    // The bars are COLOUR_A (0, 0x72, 0xB2) at 85% over white: about (38, 135, 189).
    let bar_coloured = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        img[i] < 80 && img[i + 2] > 150 && img[i + 1] > 90
    };
    let tallest_in_right_half = (w / 2..w).map(|x| (h / 2..h).filter(|&y| bar_coloured(x, y)).count()).max().unwrap();
    assert!(tallest_in_right_half >= 3, "the outlier's bar is {tallest_in_right_half} px tall");
    canvas.remove();
}
