//! Downloads made in the page: a PNG of a chart, CSV series, blkparse text, Perfetto JSON.

use blksim::ids::ThreadId;
use blksim::tools::trace::{Action, TraceRecord};
use wasm_bindgen::JsCast;

/// Starts a download of `text` as `filename`.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    let r = click_link(filename, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
    r
}

/// Starts a download of a canvas as PNG.
pub fn download_canvas_png(filename: &str, canvas: &web_sys::HtmlCanvasElement) -> Result<(), String> {
    let url = canvas.to_data_url_with_type("image/png").map_err(|e| format!("{e:?}"))?;
    click_link(filename, &url)
}

fn click_link(filename: &str, url: &str) -> Result<(), String> {
    let doc = gloo::utils::document();
    let a = doc.create_element("a").map_err(|e| format!("{e:?}"))?.dyn_into::<web_sys::HtmlAnchorElement>().map_err(|_| "not an anchor")?;
    a.set_href(url);
    a.set_download(filename);
    doc.body().ok_or("no body")?.append_child(&a).map_err(|e| format!("{e:?}"))?;
    a.click();
    a.remove();
    Ok(())
}

/// What the log needs to know about a record's device and thread.
pub struct Names<'a> {
    /// (name, major, minor) per device id.
    pub devices: &'a [(String, u32, u32)],
    /// (pid, comm) per thread id.
    pub threads: &'a dyn Fn(u32) -> (u32, String),
}

/// The pid and command a record names; an interrupt on an idle CPU names its idle task.
fn process(r: &TraceRecord, n: &Names) -> (u32, String) {
    if r.thread == ThreadId::SWAPPER {
        // 2.6-era name (the idle tasks were all "swapper" until 3.x), as kblockd/N is.
        (0, "swapper".to_string())
    } else {
        (n.threads)(r.thread.0)
    }
}

/// One line in `blkparse`'s default format:
/// `8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]`.
pub fn blkparse_line(r: &TraceRecord, n: &Names) -> String {
    let (_, maj, min) = n.devices.get(r.dev.0 as usize).cloned().unwrap_or_default();
    let (pid, comm) = process(r, n);
    // Plug and unplug carry no data: blkparse shows N for their rwbs.
    let rwbs = match r.action {
        Action::P | Action::U => "N",
        _ if r.write => "W",
        _ => "R",
    };
    let secs = r.time.ns() / 1_000_000_000;
    let nsecs = r.time.ns() % 1_000_000_000;
    let tail = match (r.action, r.from) {
        (Action::C, _) => format!("{} + {} [0]", r.sector, r.bytes / 512),
        (Action::P, _) => format!("[{comm}]"),
        (Action::U, _) => format!("[{comm}] {}", r.related),
        (Action::X, Some((_, rest_at))) => format!("{} / {rest_at} [{comm}]", r.sector),
        (Action::A, Some((from, from_sector))) => {
            let (_, fmaj, fmin) = n.devices.get(from.0 as usize).cloned().unwrap_or_default();
            format!("{} + {} <- ({fmaj},{fmin}) {from_sector}", r.sector, r.bytes / 512)
        }
        _ => format!("{} + {} [{comm}]", r.sector, r.bytes / 512),
    };
    format!("{maj:>3},{min:<3} {:>2} {:>8} {secs:>5}.{nsecs:09} {pid:>5} {:>2} {rwbs:>3} {tail}", r.cpu, r.seq + 1, r.action.code())
}

/// Chrome/Perfetto trace JSON: each request's time in the device (D→C) as a slice on its
/// device's track, and every other action as an instant. Opens in ui.perfetto.dev.
pub fn perfetto_json(records: &[TraceRecord], n: &Names) -> String {
    use std::collections::BTreeMap;
    let mut events = Vec::new();
    for (i, (name, _, _)) in n.devices.iter().enumerate() {
        events.push(serde_json::json!({"ph": "M", "name": "process_name", "pid": i + 1, "args": {"name": name}}));
    }
    let mut issued: BTreeMap<u32, &TraceRecord> = BTreeMap::new();
    let us = |ns: u64| ns as f64 / 1000.0;
    for r in records {
        let pid = r.dev.0 as u32 + 1;
        match r.action {
            Action::D => {
                issued.insert(r.token, r);
            }
            Action::C => {
                if let Some(d) = issued.remove(&r.token) {
                    events.push(serde_json::json!({
                        "ph": "X", "pid": pid, "tid": 1, "ts": us(d.time.ns()), "dur": us(r.time.ns() - d.time.ns()),
                        "name": format!("{} {}+{}", if r.write { "W" } else { "R" }, r.sector, r.bytes / 512),
                        "args": {"sector": r.sector, "bytes": r.bytes}
                    }));
                }
            }
            a => {
                let (proc_pid, comm) = process(r, n);
                events.push(serde_json::json!({
                    "ph": "i", "s": "t", "pid": pid, "tid": 2, "ts": us(r.time.ns()),
                    "name": format!("{} {}", a.code(), if r.write { "W" } else { "R" }),
                    "args": {"sector": r.sector, "bytes": r.bytes, "pid": proc_pid, "comm": comm}
                }));
            }
        }
    }
    serde_json::json!({"traceEvents": events, "displayTimeUnit": "ns"}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::ids::{DevId, ThreadId};
    use blksim::SimTime;

    fn rec(action: Action, t: u64) -> TraceRecord {
        TraceRecord {
            seq: 0,
            time: SimTime(t),
            dev: DevId(0),
            cpu: 3,
            action,
            write: false,
            sector: 223490,
            bytes: 4096,
            thread: ThreadId(0),
            token: 7,
            related: 0,
            from: None,
        }
    }

    /// `r` as a blkparse line, on sda (8,0) below dm-0 (253,0), every thread `dd` with pid 697.
    fn line(r: &TraceRecord) -> String {
        let devices = vec![("sda".to_string(), 8, 0), ("dm-0".to_string(), 253, 0)];
        let threads = |_| (697, "dd".to_string());
        blkparse_line(r, &Names { devices: &devices, threads: &threads })
    }

    #[test]
    fn a_line_reads_like_blkparse() {
        assert_eq!(line(&rec(Action::Q, 12_000)), "  8,0    3        1     0.000012000   697  Q   R 223490 + 8 [dd]");
    }

    #[test]
    fn plug_unplug_and_remap_lines_read_like_blkparse() {
        assert_eq!(line(&rec(Action::P, 0)), "  8,0    3        1     0.000000000   697  P   N [dd]");
        let unplug = TraceRecord { related: 3, ..rec(Action::U, 0) };
        assert_eq!(line(&unplug), "  8,0    3        1     0.000000000   697  U   N [dd] 3");
        let remap = TraceRecord { from: Some((DevId(1), 223490)), ..rec(Action::A, 0) };
        assert_eq!(line(&remap), "  8,0    3        1     0.000000000   697  A   R 223490 + 8 <- (253,0) 223490");
    }

    #[test]
    fn splits_and_the_idle_task_read_like_blkparse() {
        let split = TraceRecord { from: Some((DevId(0), 223746)), ..rec(Action::X, 0) };
        assert_eq!(line(&split), "  8,0    3        1     0.000000000   697  X   R 223490 / 223746 [dd]");
        let idle = TraceRecord { thread: ThreadId::SWAPPER, ..rec(Action::D, 0) };
        assert_eq!(line(&idle), "  8,0    3        1     0.000000000     0  D   R 223490 + 8 [swapper]");
    }

    #[test]
    fn perfetto_pairs_issue_and_completion() {
        let devices = vec![("sda".to_string(), 8, 0)];
        let threads = |_| (697, "dd".to_string());
        let n = Names { devices: &devices, threads: &threads };
        let v: serde_json::Value =
            serde_json::from_str(&perfetto_json(&[rec(Action::Q, 1000), rec(Action::D, 2000), rec(Action::C, 5000)], &n)).unwrap();
        let slices: Vec<_> = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(slices.len(), 1);
        assert_eq!(slices[0]["dur"], 3.0);
    }
}
