//! The page's live lines while the runs' worker owes an answer.

use wasm_bindgen::JsCast;

/// A command is on its way to the worker: the live lines say the runs are catching up to what
/// was asked (`data-catching-up`), and the page that it waits for the answer
/// (`data-runs-waiting`), at once, not at the next frame (which sets them again, until the
/// worker has answered), so nothing reads the runs as settled meanwhile.
pub fn mark_catching_up() {
    if !cfg!(target_arch = "wasm32") {
        return;
    }
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    // And the page as waiting for the worker's answer (the frame loop clears it).
    if let Some(app) = doc.query_selector(".app").ok().flatten() {
        let _ = app.set_attribute("data-runs-waiting", "true");
    }
    if let Ok(lines) = doc.query_selector_all("p.live") {
        for i in 0..lines.length() {
            if let Some(el) = lines.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
                let _ = el.set_attribute("data-catching-up", "true");
            }
        }
    }
}
