//! Downloads made in the page: a PNG of a chart, CSV series, blkparse text, a binary blktrace
//! dump, Perfetto JSON.

use blksim::kernel::trace::blktrace::{Action, TraceRecord};
use blksim::tools::blkparse::process;
pub use blksim::tools::blkparse::{blkparse_line, Names};
use wasm_bindgen::JsCast;

/// A download's file name without its extension, naming its run, so that exports in one
/// downloads folder say which is which: `blkviz-scsi-starved-regressed-vs-fixed-seed1`.
pub fn file_stem(lesson: &str, variant: &str, b: Option<&str>, seed: u64) -> String {
    let safe = |v: &str| v.replace(|ch: char| !ch.is_ascii_alphanumeric(), "_");
    match b {
        Some(b) => format!("blkviz-{lesson}-{}-vs-{}-seed{seed}", safe(variant), safe(b)),
        None => format!("blkviz-{lesson}-{}-seed{seed}", safe(variant)),
    }
}

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

/// Starts a download of a canvas as PNG with `caption` under it (what the chart is of, and
/// the link that reproduces it), in the chart's colours: a PNG pasted into a bug thread says
/// what it shows. Lines too wide for the image wrap (a link breaks between characters).
pub fn download_canvas_png_captioned(
    filename: &str,
    canvas: &web_sys::HtmlCanvasElement,
    caption: &[String],
    dark: bool,
) -> Result<(), String> {
    // The caption in CSS pixels, scaled as the chart was (a bitmap of device pixels: hidpi.rs).
    let (w, h) = (canvas.width(), canvas.height());
    let scale = crate::components::hidpi::device_pixel_ratio();
    let (line_px, pad_px) = (16.0 * scale, 6.0 * scale);
    let doc = gloo::utils::document();
    let out =
        doc.create_element("canvas").map_err(|e| format!("{e:?}"))?.dyn_into::<web_sys::HtmlCanvasElement>().map_err(|_| "not a canvas")?;
    let ctx2d = |c: &web_sys::HtmlCanvasElement| {
        c.get_context("2d").ok().flatten().and_then(|x| x.dyn_into::<web_sys::CanvasRenderingContext2d>().ok()).ok_or("no 2d context")
    };
    let font = format!("{}px sans-serif", (12.0 * scale).round());
    let max_w = f64::from(w) - 2.0 * pad_px;
    let ctx = ctx2d(&out)?;
    ctx.set_font(&font);
    let fits = |t: &str| ctx.measure_text(t).is_ok_and(|m| m.width() <= max_w);
    let mut lines: Vec<String> = Vec::new();
    for line in caption {
        let mut cur = String::new();
        for piece in break_pieces(line) {
            if cur.is_empty() || fits(&format!("{cur}{piece}")) {
                cur.push_str(piece);
                continue;
            }
            lines.push(std::mem::take(&mut cur).trim_end().to_string());
            // A piece wider than the image by itself (a long knob value) is cut where it must.
            for ch in piece.chars() {
                cur.push(ch);
                if !fits(&cur) && cur.chars().count() > 1 {
                    cur.pop();
                    lines.push(std::mem::take(&mut cur));
                    cur.push(ch);
                }
            }
        }
        lines.push(cur);
    }
    let band = (lines.len() as f64 * line_px + 2.0 * pad_px).ceil() as u32;
    out.set_width(w);
    out.set_height(h + band);
    // Resizing a canvas resets its context's state.
    let ctx = ctx2d(&out)?;
    let (bg, fg) = if dark { ("#1b2026", "#e9edf1") } else { ("#ffffff", "#1d232b") };
    ctx.set_fill_style_str(bg);
    ctx.fill_rect(0.0, 0.0, f64::from(w), f64::from(h + band));
    ctx.draw_image_with_html_canvas_element(canvas, 0.0, 0.0).map_err(|e| format!("{e:?}"))?;
    ctx.set_font(&font);
    ctx.set_fill_style_str(fg);
    ctx.set_text_baseline("middle");
    for (i, l) in lines.iter().enumerate() {
        let _ = ctx.fill_text(l, pad_px, f64::from(h) + pad_px + line_px * (i as f64 + 0.5));
    }
    download_canvas_png(filename, &out)
}

/// A caption line cut where a line may break: after a space, and in a link after `?`, `&`
/// or `/`, so words and the link's parameters stay whole.
fn break_pieces(line: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for (i, ch) in line.char_indices() {
        if matches!(ch, ' ' | '?' | '&' | '/') {
            pieces.push(&line[from..i + ch.len_utf8()]);
            from = i + ch.len_utf8();
        }
    }
    if from < line.len() {
        pieces.push(&line[from..]);
    }
    pieces
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
/// device's track, and every other action as an instant. Opens in ui.perfetto.dev. Written by
/// `crate::json` (the page carries no JSON library), as serde_json would write it.
pub fn perfetto_json(records: &[TraceRecord], n: &Names) -> String {
    use crate::json::{object, J};
    use std::collections::BTreeMap;
    let mut events = Vec::new();
    for (i, (name, _, _)) in n.devices.iter().enumerate() {
        let args = object(vec![("name", J::Str(name.clone()))]);
        events.push(J::Raw(object(vec![
            ("args", J::Raw(args)),
            ("name", J::Str("process_name".into())),
            ("ph", J::Str("M".into())),
            ("pid", J::Int(i as u64 + 1)),
        ])));
    }
    let mut issued: BTreeMap<u32, &TraceRecord> = BTreeMap::new();
    let us = |ns: u64| J::Num(ns as f64 / 1000.0);
    for r in records {
        let pid = J::Int(u64::from(r.dev.0) + 1);
        let rw = if r.write { "W" } else { "R" };
        match r.action {
            Action::D => {
                issued.insert(r.token, r);
            }
            Action::C => {
                if let Some(d) = issued.remove(&r.token) {
                    let args = object(vec![("bytes", J::Int(u64::from(r.bytes))), ("sector", J::Int(r.sector))]);
                    events.push(J::Raw(object(vec![
                        ("args", J::Raw(args)),
                        ("dur", us(r.time.ns() - d.time.ns())),
                        ("name", J::Str(format!("{rw} {}+{}", r.sector, r.bytes / 512))),
                        ("ph", J::Str("X".into())),
                        ("pid", pid),
                        ("tid", J::Int(1)),
                        ("ts", us(d.time.ns())),
                    ])));
                }
            }
            a => {
                let (proc_pid, comm) = process(r, n);
                let args = object(vec![
                    ("bytes", J::Int(u64::from(r.bytes))),
                    ("comm", J::Str(comm)),
                    ("pid", J::Int(u64::from(proc_pid))),
                    ("sector", J::Int(r.sector)),
                ]);
                events.push(J::Raw(object(vec![
                    ("args", J::Raw(args)),
                    ("name", J::Str(format!("{} {rw}", a.code()))),
                    ("ph", J::Str("i".into())),
                    ("pid", pid),
                    ("s", J::Str("t".into())),
                    ("tid", J::Int(2)),
                    ("ts", us(r.time.ns())),
                ])));
            }
        }
    }
    object(vec![("displayTimeUnit", J::Str("ns".into())), ("traceEvents", J::Raw(crate::json::array(events)))])
}

/// The records (in time order) with blkparse's sequence numbers: counted per device and CPU,
/// as the kernel counts each relay stream, from the first exported one (as `blksim trace`
/// numbers its span). The page's own log keeps the run-wide number, which does not change as
/// its window moves.
pub fn per_stream_numbers(records: &[&TraceRecord]) -> Vec<TraceRecord> {
    let mut next: std::collections::BTreeMap<(u16, u16), u64> = std::collections::BTreeMap::new();
    records
        .iter()
        .map(|r| {
            let n = next.entry((r.dev.0, r.cpu)).or_default();
            let numbered = TraceRecord { seq: *n, ..**r };
            *n += 1;
            numbered
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exports_name_says_which_run_it_is() {
        assert_eq!(file_stem("scsi-starved", "before", None, 1), "blkviz-scsi-starved-before-seed1");
        assert_eq!(
            file_stem("dm-sg-lists", "2 sockets, rq_affinity 1", Some("fixed"), 7),
            "blkviz-dm-sg-lists-2_sockets__rq_affinity_1-vs-fixed-seed7"
        );
    }

    use super::*;
    use blksim::ids::{DevId, ThreadId};
    use blksim::SimTime;

    #[test]
    fn a_caption_breaks_between_words_and_a_links_parameters() {
        assert_eq!(break_pieces("blkviz · raid5 regressed"), ["blkviz ", "· ", "raid5 ", "regressed"]);
        assert_eq!(break_pieces("http://h/#/lesson/x?v=1&seed=2"), ["http:/", "/", "h/", "#/", "lesson/", "x?", "v=1&", "seed=2"]);
        assert_eq!(break_pieces("").len(), 0);
    }

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
    fn an_export_numbers_each_device_and_cpu_from_1_as_blkparse_does() {
        let mut rs = [rec(Action::Q, 1), rec(Action::Q, 2), rec(Action::Q, 3), rec(Action::Q, 4)];
        rs[1].dev = DevId(1);
        rs[2].cpu = 0;
        for (i, r) in rs.iter_mut().enumerate() {
            r.seq = 100 + i as u64;
        }
        let refs: Vec<&TraceRecord> = rs.iter().collect();
        let seqs: Vec<u64> = per_stream_numbers(&refs).iter().map(|r| r.seq).collect();
        // (dev 0, cpu 3) twice, (dev 1, cpu 3) once, (dev 0, cpu 0) once.
        assert_eq!(seqs, [0, 0, 0, 1]);
    }

    /// The export is byte for byte what serde_json wrote: a slice, instants with a process's
    /// name that needs escaping, two devices, times from 1 ns to hours.
    #[test]
    fn perfetto_is_serde_jsons() {
        let devices = vec![("sda".to_string(), 8, 0), ("md0".to_string(), 9, 0)];
        let threads = |_| (697, "dd \"x\"\\y".to_string());
        let n = Names { devices: &devices, threads: &threads };
        let mut rs = vec![rec(Action::Q, 1), rec(Action::D, 2000), rec(Action::C, 5_123_457), rec(Action::G, 7_200_000_000_123)];
        rs[3].dev = DevId(1);
        rs[3].write = true;
        assert_eq!(perfetto_json(&rs, &n), perfetto_json_serde(&rs, &n));
    }

    /// The reference: the export as serde_json writes it, which the page's own writer matches
    /// byte for byte.
    fn perfetto_json_serde(records: &[TraceRecord], n: &Names) -> String {
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
