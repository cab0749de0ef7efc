//! The event log: the trace as `blkparse` prints it, for one device or all, filtered by action,
//! with pause-to-inspect; the btt breakdown per device; exports as blkparse text, a binary
//! blktrace dump (for btt) and Perfetto JSON.

use crate::export::{blkparse_line, download_bytes, download_text, perfetto_json, Names};
use crate::view::Btt;
use blksim::kernel::trace::blktrace::TraceRecord;
use std::rc::Rc;
use yew::prelude::*;

/// blktrace's action codes, as the filter takes them.
const ACTION_CODES: &str = "QGSPUIMFDCXA";

/// Lines shown at once (the newest); the export has the whole log.
pub const LINES_SHOWN: usize = 300;

#[derive(Properties, PartialEq)]
pub struct EventLogProps {
    pub records: Rc<Vec<TraceRecord>>,
    /// (name, major, minor) per device id.
    pub devices: Rc<Vec<(String, u32, u32)>>,
    /// (pid, comm) per thread id.
    pub threads: Rc<Vec<(u32, String)>>,
    pub btt: Rc<Vec<(String, Btt)>>,
    /// Spans of simulated time run without the trace (ns): marked between the lines.
    #[prop_or_default]
    pub gaps: Rc<Vec<(u64, u64, u64)>>,
    pub paused: bool,
    pub dropped: u64,
    pub on_pause: Callback<()>,
    /// In the A/B view: which run this log is (it traces run A only).
    #[prop_or_default]
    pub run: Option<AttrValue>,
    /// The exports' file name without extension, naming the run (`export::file_stem`).
    #[prop_or(AttrValue::from("blkviz"))]
    pub file_stem: AttrValue,
}

/// blkparse lines, with a marker where a skip or a link's catch-up ran without the trace:
/// between two lines, before the first (`prev` is the time of the line before them, if any),
/// or after the newest, until lines come after it.
fn blkparse_text(records: &[&TraceRecord], mut prev: Option<u64>, gaps: &[(u64, u64, u64)], names: &Names) -> String {
    let marker =
        |(from, to, _): (u64, u64, u64)| format!("--- {:.6} s to {:.6} s not traced (skipped) ---\n", from as f64 / 1e9, to as f64 / 1e9);
    let mut text = String::new();
    for r in records {
        let t = r.time.ns();
        for &gap in gaps.iter().filter(|&&(from, to, _)| prev.is_none_or(|pt| pt <= from) && t >= to) {
            text += &marker(gap);
        }
        prev = Some(t);
        text += &(blkparse_line(r, names) + "\n");
    }
    for &gap in gaps.iter().filter(|&&(from, _, _)| prev.is_some_and(|pt| pt <= from)) {
        text += &marker(gap);
    }
    text
}

/// The view follows the newest line, as `tail -f` does, until the reader scrolls up: the
/// `<pre>`'s ref and its scroll handler.
#[hook]
fn use_tail_follow() -> (NodeRef, Callback<Event>) {
    let pre = use_node_ref();
    let follow = use_mut_ref(|| true);
    {
        let (pre, follow) = (pre.clone(), follow.clone());
        use_effect(move || {
            if *follow.borrow() {
                if let Some(el) = pre.cast::<web_sys::HtmlElement>() {
                    el.set_scroll_top(el.scroll_height());
                }
            }
        });
    }
    let on_scroll = {
        let (pre, follow) = (pre.clone(), follow.clone());
        Callback::from(move |_: Event| {
            if let Some(el) = pre.cast::<web_sys::HtmlElement>() {
                *follow.borrow_mut() = el.scroll_top() + el.client_height() >= el.scroll_height() - 24;
            }
        })
    };
    (pre, on_scroll)
}

/// A button's callback that writes one of the log's exports with the run's names.
fn on_export(p: &EventLogProps, write: impl Fn(&[TraceRecord], &Names, &[(u64, u64, u64)], &str) + 'static) -> Callback<MouseEvent> {
    let (records, devices, threads, gaps) = (p.records.clone(), p.devices.clone(), p.threads.clone(), p.gaps.clone());
    let stem = p.file_stem.clone();
    Callback::from(move |_| {
        let lookup = |t: u32| threads.get(t as usize).cloned().unwrap_or((0, "?".into()));
        let n = Names { devices: &devices, threads: &lookup };
        write(&records, &n, &gaps, &stem);
    })
}

/// Records in time order, as blkparse prints them (the sequence number breaks ties). One
/// function for both of the log's sorts, so the page carries one copy of the sort for them.
fn by_time(a: &&TraceRecord, b: &&TraceRecord) -> std::cmp::Ordering {
    (a.time, a.seq).cmp(&(b.time, b.seq))
}

/// The log's exports: blkparse text, a binary blktrace dump (for btt) and Perfetto JSON.
fn export_buttons(p: &EventLogProps) -> Html {
    let export_blkparse = on_export(p, |records, n, gaps, stem| {
        let mut sorted: Vec<&TraceRecord> = records.iter().collect();
        sorted.sort_by(by_time);
        let numbered = crate::export::per_stream_numbers(&sorted);
        let text = blkparse_text(&numbered.iter().collect::<Vec<_>>(), None, gaps, n);
        let _ = download_text(&format!("{stem}.blkparse.txt"), "text/plain", &text);
    });
    let export_blktrace = on_export(p, |records, n, _, stem| {
        let bytes = blksim::tools::blktrace_api::encode_dump(records, n);
        let _ = download_bytes(&format!("{stem}.blktrace.dump"), "application/octet-stream", &bytes);
    });
    let export_perfetto = on_export(p, |records, n, _, stem| {
        let _ = download_text(&format!("{stem}.perfetto.json"), "application/json", &perfetto_json(records, n));
    });
    html! {
        <>
            <button onclick={export_blkparse}>{ "Export blkparse" }</button>
            <button onclick={export_blktrace} title="the records as blktrace's binary, one stream in time order as blkparse -d dumps it: btt -i reads it">{ "Export blktrace" }</button>
            <button onclick={export_perfetto}>{ "Export Perfetto JSON" }</button>
        </>
    }
}

/// "N of M records", the stretch of the run they cover and its untraced holes, and the drops.
fn span_text(p: &EventLogProps, shown: usize) -> String {
    // The ring keeps the newest records: say which stretch of the run they cover.
    let stretch = match (p.records.first(), p.records.last()) {
        (Some(a), Some(b)) => {
            // Skips ran untraced: say how many holes the stretch has. A gap counts if the lines
            // jump there: before one of them (the first included: a jump's traced tail starts
            // where its gap ends) or after the newest.
            let holes = p.gaps.iter().filter(|&&(_, _, after)| after >= a.seq && after <= b.seq + 1).count();
            let holes = match holes {
                0 => String::new(),
                1 => " with a skipped, untraced stretch".to_string(),
                n => format!(" with {n} skipped, untraced stretches"),
            };
            format!(", {:.6}–{:.6} s{holes}", a.time.as_secs_f64(), b.time.as_secs_f64())
        }
        _ => String::new(),
    };
    let dropped = if p.dropped > 0 { format!("; {} dropped at high speed", p.dropped) } else { String::new() };
    format!("{} of {} records{}{}", shown, p.records.len(), stretch, dropped)
}

/// The btt breakdown per device, and why it may be empty or differ from the real btt's.
fn btt_section(p: &EventLogProps) -> Html {
    let no_btt = p.btt.iter().all(|(_, b)| b.requests == 0);
    html! {
        <>
            <table class="btt" aria-label="btt breakdown">
                <caption>{ "btt: average ms per phase, over the requests (on a bio-based dm or md device, the bios) seen whole in the trace" }</caption>
                <thead><tr><th class="l">{"Device"}</th><th>{"requests"}</th><th>{"Q2G"}</th><th>{"G2I"}</th><th>{"I2D"}</th><th>{"D2C"}</th><th>{"Q2C"}</th></tr></thead>
                <tbody>
                    { for p.btt.iter().map(|(name, b)| html! {
                        <tr>
                            <td class="l">{ name }</td><td>{ b.requests }</td>
                            // A bio-based device traces no G, I or D: only its Q2C is known.
                            if b.bio_level {
                                <td title="a bio-based device: no requests, only Q and C">{"—"}</td><td>{"—"}</td><td>{"—"}</td><td>{"—"}</td>
                            } else {
                                <td>{ format!("{:.3}", b.avg_ms(b.q2g_ns)) }</td><td>{ format!("{:.3}", b.avg_ms(b.g2i_ns)) }</td>
                                <td>{ format!("{:.3}", b.avg_ms(b.i2d_ns)) }</td><td>{ format!("{:.3}", b.avg_ms(b.d2c_ns)) }</td>
                            }
                            <td>{ format!("{:.3}", b.avg_ms(b.q2c_ns)) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            if p.records.iter().any(|r| r.action == blksim::kernel::trace::blktrace::Action::X) {
                <p class="dim btt-note" data-testid="btt-splits">{ "This run splits bios (X): the real btt, given its export, does not follow a split bio to its pieces' requests, so its Q2G, G2I, I2D and D2C differ from these, which match each piece by its start sector (blksim replay and the trace page do the same)." }</p>
            }
            if no_btt {
                <p class="dim btt-note">{ "None yet: a request counts once its bio's Q, then its G, I, D and C are all in the log. A skip or a link's replay traces only its last half second, so requests queued before that are not seen whole, nor are request-based dm's clones (A, I, D, C: no bio of their own is queued)." }</p>
            }
        </>
    }
}

#[component]
pub fn EventLog(p: &EventLogProps) -> Html {
    let device = use_state(|| None::<u16>);
    let (pre, on_scroll) = use_tail_follow();
    let actions = use_state(String::new);
    let threads = p.threads.clone();
    let lookup = move |t: u32| threads.get(t as usize).cloned().unwrap_or((0, "?".into()));
    let names = Names { devices: &p.devices, threads: &lookup };
    let wanted: Vec<char> = actions.chars().filter(|c| c.is_ascii_alphabetic()).map(|c| c.to_ascii_uppercase()).collect();
    let keep = |r: &&TraceRecord| device.is_none_or(|d| r.dev.0 == d) && (wanted.is_empty() || wanted.contains(&r.action.code()));
    // In time order, as blkparse prints them: a work item's records are stamped within it, so
    // another CPU's record made earlier can carry a later time.
    let mut filtered: Vec<&TraceRecord> = p.records.iter().filter(keep).collect();
    filtered.sort_by(by_time);
    let first_shown = filtered.len().saturating_sub(LINES_SHOWN);
    let prev = first_shown.checked_sub(1).map(|i| filtered[i].time.ns());
    let text = blkparse_text(&filtered[first_shown..], prev, &p.gaps, &names);
    // Letters that are no blktrace action: say which, rather than show an empty log.
    let unknown: String = wanted.iter().filter(|c| !ACTION_CODES.contains(**c)).collect();
    let on_device = {
        let device = device.clone();
        Callback::from(move |e: Event| {
            if let Some(sel) = e.target_dyn_into::<web_sys::HtmlSelectElement>() {
                device.set(sel.value().parse::<u16>().ok());
            }
        })
    };
    let on_actions = {
        let actions = actions.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                actions.set(i.value().chars().take(16).collect());
            }
        })
    };
    let on_pause = {
        let cb = p.on_pause.clone();
        Callback::from(move |_| cb.emit(()))
    };
    html! {
        <section class="event-log" aria-label="Event log">
            <div class="log-controls">
                if let Some(run) = &p.run {
                    <strong class="log-run" data-testid="log-run">{ run.clone() }</strong>
                }
                <label>{ "device " }
                    <select aria-label="Device to show" onchange={on_device}>
                        <option value="all" selected={device.is_none()}>{ "all" }</option>
                        { for p.devices.iter().enumerate().map(|(i, (name, _, _))| html! {
                            <option value={i.to_string()} selected={*device == Some(i as u16)}>{ name }</option>
                        }) }
                    </select>
                </label>
                <label>{ "actions " }
                    <input type="text" size="8" placeholder="e.g. QGDC" aria-label="Actions to show (blktrace codes)" aria-invalid={(!unknown.is_empty()).to_string()} value={(*actions).clone()} oninput={on_actions} />
                </label>
                <button onclick={on_pause} aria-pressed={p.paused.to_string()}>{ if p.paused { "Resume log" } else { "Pause log" } }</button>
                { export_buttons(p) }
                <span class="dim" data-testid="log-span">{ span_text(p, filtered.len() - first_shown) }</span>
                if !unknown.is_empty() {
                    <span class="log-hint" role="status">{ format!("not blktrace actions: {unknown}; the codes are {}", ACTION_CODES.chars().map(String::from).collect::<Vec<_>>().join(" ")) }</span>
                }
            </div>
            <pre class="blkparse" data-testid="blkparse" tabindex="0" ref={pre} onscroll={on_scroll}>{ text }</pre>
            { btt_section(p) }
        </section>
    }
}
