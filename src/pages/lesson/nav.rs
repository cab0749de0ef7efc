//! Moving between lessons: the lesson picker and the prev/next links.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// The lesson picker: the lessons, then the sandbox.
pub(super) fn lesson_picker(lesson_id: &str) -> Html {
    let on_lesson = Callback::from(move |e: Event| {
        if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
            // A new lesson is a new route: the router mounts a fresh page for it.
            if let Some(w) = web_sys::window() {
                let hash = if sel.value() == "sandbox" { "/sandbox?v=1".to_string() } else { format!("/lesson/{}?v=1", sel.value()) };
                let _ = w.location().set_hash(&hash);
            }
        }
    });
    html! {
        <label class="lesson-pick">
            <span class="sr-only">{ "Lesson" }</span>
            <select aria-label="Lesson" onchange={on_lesson}>
                { for blksim::course::lessons::all().iter().map(|l| html! {
                    <option value={l.id.clone()} selected={l.id == lesson_id}>{ &l.title }</option>
                }) }
                <option value="sandbox" selected={lesson_id == "sandbox"}>{ "Sandbox: any knobs or a fio job file" }</option>
            </select>
        </label>
    }
}

/// The links to the previous and the next lesson: the sandbox follows the last lesson.
pub(super) fn prev_next_links(lesson_id: &str) -> Html {
    let all = blksim::course::lessons::all();
    let pos = all.iter().position(|l| l.id == lesson_id);
    // In the home page's order: the lessons, then the sandbox.
    let link = |l: &blksim::course::lessons::Lesson| (format!("#/lesson/{}?v=1", l.id), l.title.clone());
    let sandbox_link = || ("#/sandbox?v=1".to_string(), "Sandbox".to_string());
    let prev = match pos {
        Some(i) => i.checked_sub(1).and_then(|i| all.get(i)).map(link),
        None => all.last().map(link),
    };
    let next = match pos {
        Some(i) => all.get(i + 1).map(link).or_else(|| Some(sandbox_link())),
        None => None,
    };
    html! {
        <nav class="prev-next" aria-label="Lessons">
            if let Some((href, title)) = prev { <a {href} {title}>{ "‹ prev" }</a> }
            if let Some((href, title)) = next { <a {href} {title}>{ "next ›" }</a> }
        </nav>
    }
}
