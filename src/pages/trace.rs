//! The trace page (`#/trace`): a real trace opened in the browser, as `blksim replay` reads it:
//! blktrace's per-CPU files, a `blkparse -d` dump or blkparse's text. It shows btt's phases,
//! iostat per device, the offsets of issued requests over time (seekwatcher's plot) and the log.
//! The files are read in the browser, by the trace reader's worker (`protocol::reader`, a wasm
//! of its own that only this page loads); nothing is uploaded. Beside it, a lesson's run traced
//! in the page (`record_trace`, exported as a `blkparse -d` dump and read back by the same
//! reader), so that a real box's figures and the model's can be read side by side.

use crate::components::charts::draw_offsets;
use crate::components::latency_heat::draw_latency_heat;
use crate::protocol::reader::{ReaderFile, TraceReader};
use blksim::engine::time::SimTime;
use blksim::engine::Sim;
use blksim::kernel::trace::blktrace::record_trace;
use blksim::tools::blkparse::Names;
use blksim::tools::blktrace_api::encode_dump;
use blksim::tools::btt::ALL_PHASES;
use blksim::tools::iostat::IostatSecond;
use blksim::tools::trace_figures::{TraceFigures, LOG_LINES_MAX};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlInputElement};
use yew::prelude::*;

/// The most bytes read from one file (as `blksim replay`).
const FILE_BYTES_MAX: f64 = 512.0 * 1024.0 * 1024.0;
/// The most records a run beside the trace keeps (about 60 MB of them; a run that makes more is
/// cut short and says so).
const RUN_RECORDS_MAX: u64 = 1_000_000;
/// How long a run beside the trace may be traced, in simulated seconds.
const RUN_SECONDS_MAX: f64 = 10.0;

/// A lesson's run, seed 1, traced for `seconds` from its first steady second (`warmup_s`), and
/// written out as a `blkparse -d` dump for the reader to read back as a trace: what the page
/// shows beside a real one. Returns its title and the dump (named).
fn run_lesson(id: &str, variant: &str, seconds: f64) -> Result<(String, ReaderFile), String> {
    if !(seconds > 0.0 && seconds <= RUN_SECONDS_MAX) {
        return Err(format!("seconds to trace: {seconds} is not allowed; expected more than 0 and at most {RUN_SECONDS_MAX}"));
    }
    let lesson = blksim::course::lessons::find(id).map_err(|e| e.to_string())?;
    let cfg = lesson.config(variant, &[]).map_err(|e| e.to_string())?;
    let mut sim = Sim::new(&cfg, 1);
    let from = lesson.warmup_s.unwrap_or(0.0);
    sim.run_until(SimTime::from_secs_f64(from));
    let (records, cut) = record_trace(&mut sim, SimTime::from_secs_f64(from + seconds), RUN_RECORDS_MAX);
    if records.is_empty() {
        return Err(format!("{id} / {variant} made no trace records from {from} s on"));
    }
    let devices = sim.device_names();
    let threads = |t: u32| sim.pid_comm(t);
    let dump = encode_dump(&records, &Names { devices: &devices, threads: &threads });
    let cut = if cut { format!(", cut at {RUN_RECORDS_MAX} records") } else { String::new() };
    let title = format!("{id} / {variant}, seed 1, traced from t = {from} s for {seconds} s{cut}");
    Ok((title, ReaderFile { name: format!("{id}.{variant}.dump"), data: js_sys::Uint8Array::from(dump.as_slice()).into() }))
}

/// Seconds to the nanosecond, as btt prints them.
fn secs(ns: u64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

/// A trace opened from files, or why it could not be (None: none opened yet).
type Opened = UseStateHandle<Option<Rc<Result<TraceFigures, String>>>>;
/// A lesson's run traced beside it, with its title.
type Beside = UseStateHandle<Option<Rc<Result<(String, TraceFigures), String>>>>;

/// The trace reader, and which of the page's columns waits for which of its answers.
struct Reading {
    reader: Result<TraceReader, String>,
    /// The answer the trace's column waits for.
    trace: Option<u32>,
    /// The answer the run's column waits for, with the run's title.
    run: Option<(u32, String)>,
}

/// The page's trace reader while the page is open.
type ReaderSlot = Rc<RefCell<Option<Reading>>>;

/// The column an answer goes to: the trace opened, or the lesson's run (with its title).
enum Column {
    Trace,
    Run(String),
}

/// Starts the trace reader when the page opens (its wasm downloads while the user picks a
/// file) and stops it when the page closes; its answers go to the column that waits for them
/// (an answer a newer post has overtaken goes nowhere).
#[hook]
fn use_trace_reader(state: &Opened, beside: &Beside, reading: &UseStateHandle<bool>) -> ReaderSlot {
    let slot: ReaderSlot = use_mut_ref(|| None);
    let (held, state, beside, reading) = (slot.clone(), state.clone(), beside.clone(), reading.clone());
    use_effect_with((), move |_| {
        let weak = Rc::downgrade(&held);
        let on_reply = Rc::new(move |seq: u32, figures: Result<TraceFigures, String>| {
            let Some(slot) = weak.upgrade() else { return };
            let mut slot = slot.borrow_mut();
            let Some(r) = slot.as_mut() else { return };
            if r.trace == Some(seq) {
                r.trace = None;
                state.set(Some(Rc::new(figures)));
            } else if let Some((_, title)) = r.run.take_if(|(s, _)| *s == seq) {
                beside.set(Some(Rc::new(figures.map(|f| (title, f)))));
            }
            reading.set(r.trace.is_some() || r.run.is_some());
        });
        *held.borrow_mut() = Some(Reading { reader: TraceReader::start(on_reply), trace: None, run: None });
        move || drop(held.borrow_mut().take())
    });
    slot
}

/// Posts files to the reader for `column`. A column given an error instead (which this
/// returns) no longer waits for an answer posted before.
fn submit(slot: &ReaderSlot, reading: &UseStateHandle<bool>, files: Result<Vec<ReaderFile>, String>, column: Column) -> Result<(), String> {
    let mut slot = slot.borrow_mut();
    let Some(r) = slot.as_mut() else { return Err("the trace reader did not start".to_string()) };
    let posted = files.and_then(|f| r.reader.as_ref().map_err(Clone::clone)?.post(f));
    match column {
        Column::Trace => r.trace = posted.as_ref().ok().copied(),
        Column::Run(title) => r.run = posted.as_ref().ok().map(|&seq| (seq, title)),
    }
    reading.set(r.trace.is_some() || r.run.is_some());
    posted.map(|_| ())
}

/// Posts the files chosen to the reader, as one trace, for the trace's column.
fn on_files(state: &Opened, reading: &UseStateHandle<bool>, slot: &ReaderSlot) -> Callback<Event> {
    let (state, reading, slot) = (state.clone(), reading.clone(), slot.clone());
    Callback::from(move |e: Event| {
        let Some(list) = e.target_dyn_into::<HtmlInputElement>().and_then(|i| i.files()) else { return };
        let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
        if files.is_empty() {
            return;
        }
        let files = match files.iter().find(|f| f.size() > FILE_BYTES_MAX) {
            Some(big) => Err(format!("{}: {} bytes; at most {} are read", big.name(), big.size() as u64, FILE_BYTES_MAX as u64)),
            None => Ok(files.into_iter().map(|f| ReaderFile { name: f.name(), data: f.into() }).collect()),
        };
        if let Err(e) = submit(&slot, &reading, files, Column::Trace) {
            state.set(Some(Rc::new(Err(e))));
        }
    })
}

/// Draws a trace's two charts: the offsets, and D2C over time.
fn draw_trace_charts(l: &TraceFigures, (offsets, heat): &(NodeRef, NodeRef)) {
    if let Some(canvas) = offsets.cast::<HtmlCanvasElement>() {
        if let Err(e) = draw_offsets(&canvas, &l.offsets, false) {
            gloo::console::warn!(format!("offset chart: {e}"));
        }
    }
    if let Some(canvas) = heat.cast::<HtmlCanvasElement>() {
        if let Err(e) =
            draw_latency_heat(&canvas, &[("All devices", &l.d2c)], "D2C, issue to completion", &span_label(l.d2c_span_ns), false)
        {
            gloo::console::warn!(format!("D2C heat map: {e}"));
        }
    }
}

/// The charts of the trace opened and of the run beside it, drawn when either changes.
#[hook]
fn use_trace_charts(state: &Opened, beside: &Beside, chart: &(NodeRef, NodeRef), run_chart: &(NodeRef, NodeRef)) {
    let (chart, run_chart) = (chart.clone(), run_chart.clone());
    use_effect_with((state.clone(), beside.clone()), move |(s, b)| {
        if let Some(Ok(l)) = s.as_deref() {
            draw_trace_charts(l, &chart);
        }
        if let Some(Ok((_, l))) = b.as_deref() {
            draw_trace_charts(l, &run_chart);
        }
    });
}

/// The value of the `<select>` or `<input>` an event came from, into `to`.
fn set_from<E: JsCast + AsRef<web_sys::EventTarget> + 'static>(to: &UseStateHandle<String>, value: fn(&E) -> String) -> Callback<Event> {
    let to = to.clone();
    Callback::from(move |e: Event| {
        if let Some(el) = e.target_dyn_into::<E>() {
            to.set(value(&el));
        }
    })
}

/// The lesson's run to trace beside the file: the lesson, its variant and the seconds to trace.
struct RunChoice {
    lesson_id: UseStateHandle<String>,
    variant: UseStateHandle<String>,
    seconds: UseStateHandle<String>,
}

/// The picker of a lesson's run to trace beside the file: its variants follow the lesson chosen.
fn run_picker(
    lessons: &[blksim::course::lessons::Lesson],
    run: &RunChoice,
    beside: &Beside,
    slot: &ReaderSlot,
    reading: &UseStateHandle<bool>,
) -> Html {
    let chosen = lessons.iter().find(|l| l.id == *run.lesson_id).or(lessons.first());
    let variants: Vec<String> = chosen.map(|l| l.variants.iter().map(|v| v.name.clone()).collect()).unwrap_or_default();
    let variant = if variants.contains(&*run.variant) { (*run.variant).clone() } else { variants.first().cloned().unwrap_or_default() };
    let on_lesson = set_from(&run.lesson_id, web_sys::HtmlSelectElement::value);
    let on_variant = set_from(&run.variant, web_sys::HtmlSelectElement::value);
    let on_seconds = set_from(&run.seconds, HtmlInputElement::value);
    let on_run = {
        let (beside, slot, reading) = (beside.clone(), slot.clone(), reading.clone());
        let (id, variant, seconds) = (chosen.map(|l| l.id.clone()).unwrap_or_default(), variant.clone(), (*run.seconds).clone());
        Callback::from(move |_: MouseEvent| {
            let result = match blksim::float_parse::parse_f64(seconds.trim()) {
                Some(s) => run_lesson(&id, &variant, s),
                None => Err(format!(
                    "seconds to trace: '{}' is not a number; expected more than 0 and at most {RUN_SECONDS_MAX}",
                    seconds.trim()
                )),
            };
            let (dump, title) = match result {
                Ok((title, dump)) => (Ok(vec![dump]), title),
                Err(e) => (Err(e), String::new()),
            };
            if let Err(e) = submit(&slot, &reading, dump, Column::Run(title)) {
                beside.set(Some(Rc::new(Err(e))));
            }
        })
    };
    let lesson_opts =
        lessons.iter().map(|l| html! { <option value={l.id.clone()} selected={chosen.is_some_and(|c| c.id == l.id)}>{ &l.id }</option> });
    let variant_opts = variants.iter().map(|v| html! { <option value={v.clone()} selected={*v == variant}>{ v }</option> });
    html! {
        <div class="trace-beside" role="group" aria-label="A lesson's run beside the trace">
            <span>{ "Beside it, a lesson's run: " }</span>
            <select aria-label="Lesson" data-testid="run-lesson" onchange={on_lesson}>{ for lesson_opts }</select>
            <select aria-label="Variant" data-testid="run-variant" onchange={on_variant}>{ for variant_opts }</select>
            <label>{ "seconds " }<input type="number" min="0.1" max={RUN_SECONDS_MAX.to_string()} step="0.1" value={(*run.seconds).clone()}
                aria-label="Seconds to trace" data-testid="run-seconds" onchange={on_seconds} /></label>
            <button onclick={on_run} data-testid="run-beside"
                title="runs the lesson here (seed 1) with the trace on, from its first steady second, and reads its trace as this page reads yours">{ "Trace the run" }</button>
        </div>
    }
}

#[component]
pub fn TracePage() -> Html {
    let state = use_state(|| None::<Rc<Result<TraceFigures, String>>>);
    let reading = use_state(|| false);
    // Each column's two charts: the offsets, and D2C over time.
    let chart = (use_node_ref(), use_node_ref());
    let run_chart = (use_node_ref(), use_node_ref());
    let beside = use_state(|| None::<Rc<Result<(String, TraceFigures), String>>>);
    let slot = use_trace_reader(&state, &beside, &reading);
    let lessons = use_memo((), |_| blksim::course::lessons::all());
    let run = RunChoice {
        lesson_id: use_state(|| "nr-requests".to_string()),
        variant: use_state(String::new),
        seconds: use_state(|| "1".to_string()),
    };
    let onchange = on_files(&state, &reading, &slot);
    use_trace_charts(&state, &beside, &chart, &run_chart);
    let trace_col = match state.as_deref() {
        None => html! {},
        Some(Err(e)) => html! { <p class="error" role="alert" data-testid="trace-error">{ e }</p> },
        Some(Ok(l)) => column(l, &chart, "trace", None, beside.is_some().then_some("The trace")),
    };
    let run_col = match beside.as_deref() {
        None => None,
        Some(Err(e)) => Some(html! { <p class="error" role="alert" data-testid="run-error">{ e }</p> }),
        Some(Ok((title, l))) => Some(column(l, &run_chart, "run", Some(title), Some("The lesson's run"))),
    };
    let log = match state.as_deref() {
        Some(Ok(l)) => log_view(l),
        _ => html! {},
    };
    html! {
        <div class="home" data-theme="auto">
            <header class="bar"><h1><a href="#/">{ "blkviz" }</a>{ " · read a trace" }</h1></header>
            <main class="home-main trace-page">
                <p class="lead">{ "Open a real trace: blktrace's per-CPU files (" }<code>{ "sda.blktrace.0" }</code>{ ", … — choose them all), a " }
                    <code>{ "blkparse -d" }</code>{ " dump, or blkparse's text output. blkviz reads it as blkparse does and shows what btt and iostat would. The files are read here, in this page: nothing is uploaded. The command line does the same: " }<code>{ "blksim replay FILE…" }</code>{ "." }</p>
                <label class="trace-open">{ "Trace files: " }<input type="file" multiple=true data-testid="trace-files" {onchange} /></label>
                { run_picker(&lessons, &run, &beside, &slot, &reading) }
                if *reading { <p aria-live="polite">{ "reading…" }</p> }
                <div class={classes!("trace-cols", run_col.is_some().then_some("pair"))}>
                    <section aria-label="The trace">{ trace_col }</section>
                    if let Some(r) = run_col { <section aria-label="The lesson's run">{ r }</section> }
                </div>
                { log }
            </main>
        </div>
    }
}

/// One trace's figures: its summary, btt, iostat and offsets. `id` prefixes the test ids
/// ("trace" for the file opened, "run" for the lesson's run beside it).
fn column(l: &TraceFigures, (chart, heat): &(NodeRef, NodeRef), id: &str, title: Option<&String>, heading: Option<&str>) -> Html {
    let span = l.last_ns;
    let dev = |d: (u32, u32)| format!("{},{}", d.0, d.1);
    let tid = |what: &str| format!("{id}-{what}");
    let source = title.cloned().unwrap_or_else(|| l.names.join(", "));
    html! {
        <>
            if let Some(h) = heading { <h2 class="col-title">{ h }</h2> }
            <p data-testid={tid("summary")}>{ format!("{} records from {source} over {:.6} s", l.records, span as f64 / 1e9) }
                { if l.skipped > 0 { format!(" ({} of kinds not shown)", l.skipped) } else { String::new() } }</p>
            { for l.cut.iter().map(|c| html! { <p class="dim" data-testid={tid("cut")}>{ c }</p> }) }
            if let Some(note) = &l.splits_note {
                <p class="dim" data-testid={tid("splits")}>{ note }</p>
            }
            <h2>{ "btt: the phases per I/O (All Devices)" }</h2>
            <table class="btt" data-testid={tid("btt")}>
                <thead><tr><th>{ "ALL" }</th><th>{ "MIN" }</th><th>{ "AVG" }</th><th>{ "MAX" }</th><th>{ "N" }</th></tr></thead>
                <tbody>{ for ALL_PHASES.iter().zip(&l.all).filter(|(_, p)| p.n > 0).map(|(name, p)| html! {
                    <tr><td>{ *name }</td><td>{ secs(p.min_ns) }</td><td>{ format!("{:.9}", p.avg_s()) }</td><td>{ secs(p.max_ns) }</td><td>{ p.n }</td></tr>
                }) }</tbody>
            </table>
            <h2>{ "iostat -x: per device, over the trace (as iostat's first report)" }</h2>
            <div class="table-scroll">
            <table class="iostat" data-testid={tid("iostat")}>
                <thead><tr><th>{ "Device" }</th><th>{ "r/s" }</th><th>{ "w/s" }</th><th>{ "rkB/s" }</th><th>{ "wkB/s" }</th><th>{ "rrqm/s" }</th><th>{ "wrqm/s" }</th><th>{ "%util" }</th><th>{ "f/s" }</th><th>{ "d/s" }</th><th>{ "#Q" }</th><th>{ "#D" }</th></tr></thead>
                <tbody>{ for l.devices.iter().map(|d| {
                    let m = l.iostat.iter().find(|(k, _)| *k == (d.major, d.minor)).map(|(_, m)| *m).unwrap_or_default();
                    // `+ 0.0`: a cell never reads -0.0.
                    let mean = |f: fn(&IostatSecond) -> f64| format!("{:.1}", f(&m) + 0.0);
                    html! { <tr><td>{ dev((d.major, d.minor)) }</td><td>{ mean(|x| x.r_s) }</td><td>{ mean(|x| x.w_s) }</td><td>{ mean(|x| x.rkb_s) }</td>
                        <td>{ mean(|x| x.wkb_s) }</td><td>{ mean(|x| x.rrqm_s) }</td><td>{ mean(|x| x.wrqm_s) }</td><td>{ mean(|x| x.util_pct) }</td>
                        <td>{ mean(|x| x.f_s) }</td><td>{ mean(|x| x.d_s) }</td><td>{ d.queued }</td><td>{ d.issued }</td></tr> }
                }) }</tbody>
            </table>
            </div>
            <h2>{ "Offsets: the sector of each issued request over time" }</h2>
            <canvas ref={chart.clone()} class="chart offsets" data-testid={tid("offsets")} role="img"
                aria-label={format!("sector of each issued request over time, {} devices", l.offsets.len())}></canvas>
            { for l.thinned.iter().map(|t| html! { <p class="dim" data-testid={tid("thinned")}>{ t }</p> }) }
            <h2>{ format!("D2C over time: the completions of each {} by how long they took on the device", span_label(l.d2c_span_ns)) }</h2>
            <canvas ref={heat.clone()} class="chart d2c-heat" data-testid={tid("d2c-heat")} role="img"
                aria-label={format!("D2C heat map: {} columns across, issue-to-completion time up in powers of two, pale yellow for few requests to deep red for many; {} requests paired", l.d2c.len(), l.d2c.iter().map(|c| c.1.iter().sum::<u64>()).sum::<u64>())}></canvas>
        </>
    }
}

/// A column span as people write it: "second", "0.1 ms", "10 µs".
fn span_label(ns: u64) -> String {
    match ns {
        1_000_000_000 => "second".to_string(),
        n if n > 1_000_000_000 => format!("{} s", n / 1_000_000_000),
        n if n >= 1_000_000 => format!("{} ms", crate::components::charts::tidy(n as f64 / 1e6)),
        n => format!("{} µs", crate::components::charts::tidy(n as f64 / 1e3)),
    }
}

/// The opened trace's log, as blkparse prints it.
fn log_view(l: &TraceFigures) -> Html {
    html! {
        <>
            <h2>{ "The log, as blkparse prints it" }</h2>
            <pre class="trace-log" data-testid="trace-log">{ for l.log.iter().map(|line| format!("{line}\n")) }</pre>
            if l.records > u64::from(LOG_LINES_MAX) {
                <p class="dim">{ format!("the first {LOG_LINES_MAX} of {} records; the figures above use them all", l.records) }</p>
            }
        </>
    }
}
