fn main() {
    yew::Renderer::<blkviz::app::App>::new().render();
}
