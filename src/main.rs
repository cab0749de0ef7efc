fn main() {
    // A seed sweep's worker (static/sweep-worker.js) loads this same module: no page there.
    if web_sys::window().is_none() {
        return;
    }
    // Every page reads the lessons (the home page's list, a lesson, a link's checks).
    if let Err(e) = blkviz::lessons::install() {
        gloo::utils::body().set_text_content(Some(&format!("blkviz cannot start: {e}")));
        return;
    }
    yew::Renderer::<blkviz::app::App>::new().render();
}
