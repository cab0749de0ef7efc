fn main() {
    // A seed sweep's worker (static/sweep-worker.js) loads this same module: no page there.
    if web_sys::window().is_none() {
        return;
    }
    yew::Renderer::<blkviz::app::App>::new().render();
}
