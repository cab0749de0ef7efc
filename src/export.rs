//! Downloads made in the page: a PNG of a chart, CSV series, blkparse text, a binary blktrace
//! dump, Perfetto JSON.

use blksim::tools::blkparse::process;
pub use blksim::tools::blkparse::{blkparse_line, Names};
use blksim::tools::trace::{Action, TraceRecord};
use wasm_bindgen::JsCast;

/// Starts a download of `text` as `filename`.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    download_blob(filename, mime, &wasm_bindgen::JsValue::from_str(text))
}

/// Starts a download of `bytes` as `filename` (binary, e.g. a blktrace dump).
pub fn download_bytes(filename: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    download_blob(filename, mime, &js_sys::Uint8Array::from(bytes))
}

/// A Blob of one part (a string or a byte array), downloaded through a temporary object URL.
/// (web-sys names `new Blob(parts, options)` by its parts' type; the JS constructor takes both.)
fn download_blob(filename: &str, mime: &str, part: &wasm_bindgen::JsValue) -> Result<(), String> {
    let parts = js_sys::Array::of1(part);
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).map_err(|e| format!("{e:?}"))?;
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
