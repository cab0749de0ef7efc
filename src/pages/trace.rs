//! The trace page (`#/trace`): a real trace opened in the browser, as `blksim replay` reads it:
//! blktrace's per-CPU files, a `blkparse -d` dump or blkparse's text. It shows btt's phases,
//! iostat per device, the offsets of issued requests over time (seekwatcher's plot) and the log.
//! The files are read here, in the page; nothing is uploaded.

use crate::components::charts::draw_offsets;
use blksim::tools::blkparse_input::{self, ReadNotes, RealRecord};
use blksim::tools::btt::{self, DeviceBtt, IostatSecond, Phase, ALL_PHASES};
use gloo::file::callbacks::{read_as_bytes, FileReader};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use web_sys::{HtmlCanvasElement, HtmlInputElement};
use yew::prelude::*;

/// The most bytes the page reads from one file (as `blksim replay`).
const FILE_BYTES_MAX: f64 = 512.0 * 1024.0 * 1024.0;
/// Log lines shown (the figures use every record).
const LOG_LINES_SHOWN: usize = 500;

/// A file's name and its bytes.
type NamedBytes = (String, Vec<u8>);

/// A trace read and measured.
#[derive(PartialEq)]
struct Loaded {
    names: Vec<String>,
    records: Vec<RealRecord>,
    skipped: u64,
    all: [Phase; 13],
    devices: Vec<DeviceBtt>,
    iostat: BTreeMap<(u32, u32), Vec<IostatSecond>>,
    offsets: BTreeMap<(u32, u32), Vec<(u64, u64)>>,
}

fn load(files: Vec<(String, Vec<u8>)>) -> Result<Loaded, String> {
    let mut records = Vec::new();
    let mut notes = ReadNotes::default();
    for (name, bytes) in &files {
        blkparse_input::read_any(name, bytes, &mut records, &mut notes).map_err(|e| e.to_string())?;
    }
    if records.is_empty() {
        return Err("no records in these files: expected blktrace's binary records or blkparse's text".into());
    }
    blkparse_input::merge(&mut records, files.len());
    let devices = btt::btt(&records);
    Ok(Loaded {
        names: files.into_iter().map(|(n, _)| n).collect(),
        skipped: notes.skipped,
        all: btt::all_devices(&devices),
        iostat: btt::iostat(&records),
        offsets: btt::offsets(&records, 4000),
        devices,
        records,
    })
}

/// Seconds to the nanosecond, as btt prints them.
fn secs(ns: u64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

#[component]
pub fn TracePage() -> Html {
    let state = use_state(|| None::<Rc<Result<Loaded, String>>>);
    let reading = use_state(|| false);
    let readers = use_mut_ref(Vec::<FileReader>::new);
    let chart = use_node_ref();
    let onchange = {
        let (state, reading, readers) = (state.clone(), reading.clone(), readers.clone());
        Callback::from(move |e: Event| {
            let Some(list) = e.target_dyn_into::<HtmlInputElement>().and_then(|i| i.files()) else { return };
            let files: Vec<gloo::file::File> = (0..list.length()).filter_map(|i| list.get(i)).map(gloo::file::File::from).collect();
            if files.is_empty() {
                return;
            }
            if let Some(big) = files.iter().find(|f| f.size() as f64 > FILE_BYTES_MAX) {
                state.set(Some(Rc::new(Err(format!("{}: {} bytes; at most {} are read", big.name(), big.size(), FILE_BYTES_MAX as u64)))));
                return;
            }
            reading.set(true);
            let got: Rc<RefCell<Vec<Option<NamedBytes>>>> = Rc::new(RefCell::new(vec![None; files.len()]));
            readers.borrow_mut().clear();
            for (i, f) in files.iter().enumerate() {
                let (name, got, state, reading) = (f.name(), got.clone(), state.clone(), reading.clone());
                let reader = read_as_bytes(f, move |res| {
                    let mut g = got.borrow_mut();
                    match res {
                        Ok(bytes) => g[i] = Some((name.clone(), bytes)),
                        Err(e) => {
                            reading.set(false);
                            state.set(Some(Rc::new(Err(format!("{name}: cannot read the file: {e}")))));
                            return;
                        }
                    }
                    if g.iter().all(Option::is_some) {
                        let files: Vec<_> = g.drain(..).flatten().collect();
                        reading.set(false);
                        state.set(Some(Rc::new(load(files))));
                    }
                });
                readers.borrow_mut().push(reader);
            }
        })
    };
    {
        let chart = chart.clone();
        use_effect_with(state.clone(), move |s| {
            if let (Some(Ok(l)), Some(canvas)) = (s.as_deref(), chart.cast::<HtmlCanvasElement>()) {
                if let Err(e) = draw_offsets(&canvas, &l.offsets, false) {
                    gloo::console::warn!(format!("offset chart: {e}"));
                }
            }
        });
    }
    let body = match state.as_deref() {
        None => html! {},
        Some(Err(e)) => html! { <p class="error" role="alert" data-testid="trace-error">{ e }</p> },
        Some(Ok(l)) => view(l, &chart),
    };
    html! {
        <div class="home" data-theme="auto">
            <header class="bar"><h1><a href="#/">{ "blkviz" }</a>{ " · read a trace" }</h1></header>
            <main class="home-main trace-page">
                <p class="lead">{ "Open a real trace: blktrace's per-CPU files (" }<code>{ "sda.blktrace.0" }</code>{ ", … — choose them all), a " }
                    <code>{ "blkparse -d" }</code>{ " dump, or blkparse's text output. blkviz reads it as blkparse does and shows what btt and iostat would. The files are read here, in this page: nothing is uploaded. The command line does the same: " }<code>{ "blksim replay FILE…" }</code>{ "." }</p>
                <label class="trace-open">{ "Trace files: " }<input type="file" multiple=true data-testid="trace-files" {onchange} /></label>
                if *reading { <p aria-live="polite">{ "reading…" }</p> }
                { body }
            </main>
        </div>
    }
}

fn view(l: &Loaded, chart: &NodeRef) -> Html {
    let span = l.records.last().map_or(0, |r| r.time_ns);
    let dev = |d: (u32, u32)| format!("{},{}", d.0, d.1);
    html! {
        <>
            <p data-testid="trace-summary">{ format!("{} records from {} over {:.6} s", l.records.len(), l.names.join(", "), span as f64 / 1e9) }
                { if l.skipped > 0 { format!(" ({} of kinds not shown)", l.skipped) } else { String::new() } }</p>
            <h2>{ "btt: the phases per I/O (All Devices)" }</h2>
            <table class="btt" data-testid="trace-btt">
                <thead><tr><th>{ "ALL" }</th><th>{ "MIN" }</th><th>{ "AVG" }</th><th>{ "MAX" }</th><th>{ "N" }</th></tr></thead>
                <tbody>{ for ALL_PHASES.iter().zip(&l.all).filter(|(_, p)| p.n > 0).map(|(name, p)| html! {
                    <tr><td>{ *name }</td><td>{ secs(p.min_ns) }</td><td>{ format!("{:.9}", p.avg_s()) }</td><td>{ secs(p.max_ns) }</td><td>{ p.n }</td></tr>
                }) }</tbody>
            </table>
            <h2>{ "iostat -x: per device, mean over the trace's seconds" }</h2>
            <table class="iostat" data-testid="trace-iostat">
                <thead><tr><th>{ "Device" }</th><th>{ "r/s" }</th><th>{ "w/s" }</th><th>{ "rkB/s" }</th><th>{ "wkB/s" }</th><th>{ "rrqm/s" }</th><th>{ "wrqm/s" }</th><th>{ "%util" }</th><th>{ "#Q" }</th><th>{ "#D" }</th></tr></thead>
                <tbody>{ for l.devices.iter().map(|d| {
                    let v = l.iostat.get(&(d.major, d.minor)).cloned().unwrap_or_default();
                    let n = v.len().max(1) as f64;
                    let mean = |f: fn(&IostatSecond) -> f64| format!("{:.1}", v.iter().map(f).sum::<f64>() / n);
                    html! { <tr><td>{ dev((d.major, d.minor)) }</td><td>{ mean(|x| x.r_s) }</td><td>{ mean(|x| x.w_s) }</td><td>{ mean(|x| x.rkb_s) }</td>
                        <td>{ mean(|x| x.wkb_s) }</td><td>{ mean(|x| x.rrqm_s) }</td><td>{ mean(|x| x.wrqm_s) }</td><td>{ mean(|x| x.util_pct) }</td>
                        <td>{ d.queued }</td><td>{ d.issued }</td></tr> }
                }) }</tbody>
            </table>
            <h2>{ "Offsets: the sector of each issued request over time" }</h2>
            <canvas ref={chart.clone()} class="chart offsets" data-testid="trace-offsets" role="img"
                aria-label={format!("sector of each issued request over time, {} devices", l.offsets.len())}></canvas>
            <h2>{ "The log, as blkparse prints it" }</h2>
            <pre class="trace-log" data-testid="trace-log">{ for l.records.iter().take(LOG_LINES_SHOWN).map(|r| blkparse_input::blkparse_line(r) + "\n") }</pre>
            if l.records.len() > LOG_LINES_SHOWN {
                <p class="dim">{ format!("the first {LOG_LINES_SHOWN} of {} records; the figures above use them all", l.records.len()) }</p>
            }
        </>
    }
}
