//! In-browser speed measurement, called from `e2e/bench.mjs` through `window.wasmBindings`:
//! how fast the core runs in WebAssembly with the animation off.

use wasm_bindgen::prelude::*;

/// Runs `lesson`/`variant` for `seconds` of simulated time with no trace and no drawing.
/// Returns JSON: {"events", "sim_s", "wall_ms", "x_real_time", "events_per_s", "queue_len_mean"}
/// (the engine's mean event-queue length, at which `bench_heap` runs its yardstick).
#[wasm_bindgen]
pub fn bench_sim(lesson: &str, variant: &str, seconds: f64) -> Result<String, JsValue> {
    crate::lessons::install().map_err(|e| JsValue::from_str(&e))?;
    let l = blksim::course::lessons::find(lesson).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let cfg = l.config(variant, &[]).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let perf = web_sys::window().and_then(|w| w.performance()).ok_or("no performance clock")?;
    let t0 = perf.now();
    let sim = blksim::engine::run_one(&cfg, 1, Some(seconds));
    let wall_ms = perf.now() - t0;
    let sim_s = sim.now().as_secs_f64();
    let t = sim.totals();
    let events = t.events;
    use crate::json::J;
    Ok(crate::json::object(vec![
        ("events", J::Int(events)),
        ("events_per_s", J::Num(events as f64 / (wall_ms / 1000.0))),
        ("queue_len_mean", J::Int((t.events_pending_sum / events.max(1)).max(1))),
        ("sim_s", J::Num(sim_s)),
        ("wall_ms", J::Num(wall_ms)),
        ("x_real_time", J::Num(sim_s / (wall_ms / 1000.0))),
    ]))
}

/// The yardstick in WebAssembly: `events` pops and pushes of a bare `BinaryHeap` holding
/// `population` events (`blksim::engine::event::heap_yardstick`, the loop `cargo bench` times
/// natively). Returns the events per second, so a lesson's rate can be read as a share of
/// what this host's browser does with a bare heap.
#[wasm_bindgen]
pub fn bench_heap(population: u32, events: u32) -> Result<f64, JsValue> {
    let perf = web_sys::window().and_then(|w| w.performance()).ok_or("no performance clock")?;
    let t0 = perf.now();
    let len = blksim::engine::event::heap_yardstick(u64::from(events), u64::from(population));
    let wall_ms = perf.now() - t0;
    if len != u64::from(population) {
        return Err(JsValue::from_str("the yardstick's heap lost events"));
    }
    Ok(f64::from(events) / (wall_ms.max(0.001) / 1000.0))
}

thread_local! {
    /// Work time of the last frames (ms): simulation step, trace absorption and drawing.
    static FRAME_WORK_MS: std::cell::RefCell<std::collections::VecDeque<f64>> = Default::default();
}

/// Frames kept for `frame_work_ms`.
const FRAMES_KEPT: usize = 2000;

/// Called by the page's frame loop with how long the frame's work took.
pub fn record_frame_work(ms: f64) {
    FRAME_WORK_MS.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() == FRAMES_KEPT {
            f.pop_front();
        }
        f.push_back(ms);
    });
}

/// The recorded frame work times as a JSON array (ms), oldest first; clears them.
#[wasm_bindgen]
pub fn frame_work_ms() -> String {
    FRAME_WORK_MS.with(|f| {
        let v: Vec<f64> = f.borrow_mut().drain(..).collect();
        crate::json::array(v.into_iter().map(crate::json::J::Num))
    })
}
