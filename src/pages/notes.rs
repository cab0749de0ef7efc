//! Speaker notes, in a second window opened from the presenter view. The lesson page posts the
//! current step on a BroadcastChannel; this page asks for it when it opens.

use blksim::course::lessons::{Lesson, Stop};
use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

pub const CHANNEL: &str = "blkviz-notes";

#[derive(Properties, PartialEq)]
pub struct NotesProps {
    pub id: String,
}

/// The step the lesson page says shows (None until it says), from the notes channel; asks for
/// it on opening, and follows the presenter to another lesson.
#[hook]
fn use_presenters_step(id: &str) -> UseStateHandle<Option<usize>> {
    let step = use_state(|| None::<usize>);
    {
        let (step, id) = (step.clone(), id.to_string());
        use_effect_with(id.clone(), move |_| {
            let channel = web_sys::BroadcastChannel::new(CHANNEL).ok();
            let listener = channel.as_ref().map(|ch| {
                let id = id.clone();
                EventListener::new(ch, "message", move |e| {
                    let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() else { return };
                    let Some(text) = e.data().as_string() else { return };
                    let Ok(v) = js_sys::JSON::parse(&text) else { return };
                    let field = |k: &str| js_sys::Reflect::get(&v, &k.into()).unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
                    let (lesson, at) = (field("lesson").as_string(), field("step"));
                    if lesson.as_deref() == Some(id.as_str()) {
                        step.set(at.as_f64().filter(|n| *n >= 0.0 && n.fract() == 0.0).map(|n| n as usize));
                    } else if let (Some(other), true) = (lesson.as_deref(), !at.is_undefined()) {
                        // The presenter moved to another lesson: the notes follow it.
                        if blksim::course::lessons::find(other).is_ok() {
                            let _ = gloo::utils::window().location().set_hash(&format!("/notes/{other}"));
                        }
                    }
                })
            });
            if let Some(ch) = &channel {
                let _ = ch.post_message(&crate::json::object(vec![("hello", crate::json::J::Str(id.clone()))]).into());
            }
            move || {
                drop(listener);
                if let Some(ch) = channel {
                    ch.close();
                }
            }
        });
    }
    step
}

/// The notes for stop `i` of `total`: a step's, or the prediction's question with its answer.
fn stop_notes(lesson: &Lesson, i: usize, total: usize) -> Html {
    match (lesson.stop(i), &lesson.predict) {
        (Some(Stop::Step(k)), _) => html! {
            <>
                <h2 data-testid="notes-title">{ format!("Step {} of {}: {}", i + 1, total, lesson.steps[k].title) }</h2>
                <p class="notes-text" data-testid="notes-text">{ &lesson.steps[k].notes }</p>
            </>
        },
        // The prediction: the question the room answers, and for the presenter only,
        // the answer and why (the page reveals it once the room has run it).
        (Some(Stop::Predict), Some(pr)) => html! {
            <>
                <h2 data-testid="notes-title">{ format!("Step {} of {}: predict, then reveal", i + 1, total) }</h2>
                <p class="notes-text" data-testid="notes-text">{ format!("Poll the room: {}", pr.question) }</p>
                <p class="notes-answer" data-testid="notes-answer"><strong>{ "Answer: " }</strong>{ &pr.options[pr.answer] }{ ". " }{ &pr.explanation }</p>
                // The room will see the model's run, not the report's: say before the
                // reveal where the two differ (lessons/cues.json, as the reveal does).
                if crate::content::cues_for(&lesson.id).is_some_and(|c| !c.answer_shown()) {
                    <p class="notes-uncal" data-testid="notes-uncal">{ "The run will not show this answer in full: the reveal gives each of its figures as the model measures it beside the report's." }</p>
                }
                <p class="dim">{ "Then Run it, and Reveal." }</p>
            </>
        },
        _ => html! {},
    }
}

#[component]
pub fn Notes(p: &NotesProps) -> Html {
    let step = use_presenters_step(&p.id);
    let Ok(lesson) = blksim::course::lessons::find(&p.id) else {
        return html! { <p class="notice">{ format!("No lesson '{}'.", blksim::scenario::clip(&p.id)) }</p> };
    };
    let total = lesson.stops();
    let title_of = |i: usize| lesson.stop_title(i).unwrap_or_default().to_string();
    let Some(i) = step.map(|i| i.min(total.saturating_sub(1))) else {
        // No step shown yet: say what the first PageDown brings rather than claim step 1.
        return html! {
            <div class="notes-page" data-step="none">
                <h1>{ format!("Speaker notes · {}", lesson.title) }</h1>
                <h2 data-testid="notes-title">{ format!("Before the steps (0 of {total})") }</h2>
                <p class="notes-text" data-testid="notes-text">
                    { "The lesson's scenario runs as it opens. PageDown (→ in presenter mode) starts step 1." }
                </p>
                if total > 0 {
                    <p class="dim">{ format!("Next: {}", title_of(0)) }</p>
                }
            </div>
        };
    };
    let next = (i + 1 < total).then(|| title_of(i + 1));
    html! {
        <div class="notes-page" data-step={i.to_string()}>
            <h1>{ format!("Speaker notes · {}", lesson.title) }</h1>
            { stop_notes(&lesson, i, total) }
            if let Some(next) = next {
                <p class="dim">{ format!("Next: {next}") }</p>
            }
        </div>
    }
}
