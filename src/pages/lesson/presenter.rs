//! Presenter mode's buttons and its speaker notes: the notes window and which step it shows.

use super::state::{PageAction, PageDispatch};
use crate::pages::notes::CHANNEL;
use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Tells the speaker-notes window which step is showing (`None`: none yet, the lesson's
/// scenario as it opens).
pub(super) fn post_step(lesson: &str, step: Option<usize>) {
    if let Ok(ch) = web_sys::BroadcastChannel::new(CHANNEL) {
        use crate::json::J;
        let step = step.map_or(J::Null, |k| J::Int(k as u64));
        let _ = ch.post_message(&crate::json::object(vec![("lesson", J::Str(lesson.to_string())), ("step", step)]).into());
        ch.close();
    }
}

/// The presenter toggle and, in presenter mode, the button that opens the speaker notes.
pub(super) fn presenter_buttons(presenter: bool, page: &PageDispatch, id: &str, step: Option<usize>) -> Html {
    let on_presenter = {
        let page = page.clone();
        Callback::from(move |_: MouseEvent| page.dispatch(PageAction::SetPresenter(!presenter)))
    };
    let on_notes = {
        let id = id.to_string();
        Callback::from(move |_: MouseEvent| {
            if let Some(w) = web_sys::window() {
                let _ = w.open_with_url_and_target(&format!("#/notes/{id}"), "blkviz-notes");
            }
            post_step(&id, step);
        })
    };
    html! {
        <>
            <button class="presenter-toggle toggle" aria-pressed={presenter.to_string()} title="P: the prose hides, the stack and numbers fill the screen; PageDown/PageUp move through the steps" onclick={on_presenter}>{ "Presenter" }</button>
            if presenter { <button onclick={on_notes} title="Opens the speaker notes in a second window">{ "Speaker notes" }</button> }
        </>
    }
}

/// The notes window asks for the current step when it opens.
#[hook]
pub(super) fn use_notes_reply(id: String, step: Option<usize>) {
    use_effect_with((id.clone(), step), move |_| {
        // Every change of stop, however it came (PageDown, a pasted link, a reload, another
        // lesson): a notes window already open follows it.
        post_step(&id, step);
        let channel = web_sys::BroadcastChannel::new(CHANNEL).ok();
        let listener = channel.as_ref().map(|ch| {
            let id = id.clone();
            EventListener::new(ch, "message", move |e| {
                let hello =
                    e.dyn_ref::<web_sys::MessageEvent>().and_then(|m| m.data().as_string()).is_some_and(|t| t.contains("\"hello\""));
                if hello {
                    post_step(&id, step);
                }
            })
        });
        move || {
            drop(listener);
            if let Some(ch) = channel {
                ch.close();
            }
        }
    });
}
