//! Speaker notes, in a second window opened from the presenter view. The lesson page posts the
//! current step on a BroadcastChannel; this page asks for it when it opens.

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

pub const CHANNEL: &str = "blkviz-notes";

#[derive(Properties, PartialEq)]
pub struct NotesProps {
    pub id: String,
}

#[component]
pub fn Notes(p: &NotesProps) -> Html {
    // None until the lesson page says which step shows: none, or one of them.
    let step = use_state(|| None::<usize>);
    {
        let (step, id) = (step.clone(), p.id.clone());
        use_effect_with(p.id.clone(), move |_| {
            let channel = web_sys::BroadcastChannel::new(CHANNEL).ok();
            let listener = channel.as_ref().map(|ch| {
                let id = id.clone();
                EventListener::new(ch, "message", move |e| {
                    let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() else { return };
                    let Some(text) = e.data().as_string() else { return };
                    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return };
                    if v["lesson"] == id.as_str() {
                        step.set(v["step"].as_u64().map(|n| n as usize));
                    }
                })
            });
            if let Some(ch) = &channel {
                let _ = ch.post_message(&serde_json::json!({"hello": id}).to_string().into());
            }
            move || {
                drop(listener);
                if let Some(ch) = channel {
                    ch.close();
                }
            }
        });
    }
    let Ok(lesson) = blksim::lessons::find(&p.id) else {
        return html! { <p class="notice">{ format!("No lesson '{}'.", blksim::scenario::clip(&p.id)) }</p> };
    };
    let n = lesson.steps.len();
    let Some(i) = step.map(|i| i.min(n.saturating_sub(1))) else {
        // No step shown yet: say what the first PageDown brings rather than claim step 1.
        return html! {
            <div class="notes-page" data-step="none">
                <h1>{ format!("Speaker notes · {}", lesson.title) }</h1>
                <h2 data-testid="notes-title">{ format!("Before the steps (0 of {n})") }</h2>
                <p class="notes-text" data-testid="notes-text">
                    { "The lesson's scenario runs as it opens. PageDown (→ in presenter mode) starts step 1." }
                </p>
                if let Some(first) = lesson.steps.first() {
                    <p class="dim">{ format!("Next: {}", first.title) }</p>
                }
            </div>
        };
    };
    html! {
        <div class="notes-page" data-step={i.to_string()}>
            <h1>{ format!("Speaker notes · {}", lesson.title) }</h1>
            if let Some(st) = lesson.steps.get(i) {
                <h2 data-testid="notes-title">{ format!("Step {} of {}: {}", i + 1, n, st.title) }</h2>
                <p class="notes-text" data-testid="notes-text">{ &st.notes }</p>
                if let Some(next) = lesson.steps.get(i + 1) {
                    <p class="dim">{ format!("Next: {}", next.title) }</p>
                }
            }
        </div>
    }
}
