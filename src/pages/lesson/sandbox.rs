//! The sandbox's fio job file box (editing a job, applying it, and what applying it did) and
//! its knob panel, which in the A/B view sets both runs or run B alone.

use super::link::sync_fragment;
use super::state::{PageAction, PageDispatch, PageState};
use super::SharedSession;
use crate::components::knobs::KnobPanel;
use crate::protocol::{Command, Reply};
use crate::view::RunView;
use crate::view::SessionView;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// The job file box: the running workload as a job file, or the text being edited (`fio_text`),
/// and what the last apply did (`fio_msg`).
pub(super) fn job_file_box(session: &SharedSession, page: &PageDispatch, d: &RunView, ui: &PageState) -> Html {
    let (fio_text, fio_msg) = (&ui.fio_text, &ui.fio_msg);
    // The job applies when asked (the button, or Ctrl+Enter in the box), not when the box
    // loses focus: a click elsewhere must do what it says, not restart the run first.
    let apply_fio = {
        let (session, page, fio_text) = (session.clone(), page.clone(), fio_text.clone());
        Callback::from(move |()| {
            let Some(text) = fio_text.clone() else { return };
            let (session, page) = (session.clone(), page.clone());
            crate::protocol::fio::parse(&text, move |job| apply_job(&session, &page, job));
        })
    };
    let on_fio_input = {
        let page = page.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(t) = e.target_dyn_into::<web_sys::HtmlTextAreaElement>() {
                page.dispatch(PageAction::SetFioText(Some(t.value())));
            }
        })
    };
    let on_fio_key = {
        let apply_fio = apply_fio.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" && (e.ctrl_key() || e.meta_key()) {
                e.prevent_default();
                apply_fio.emit(());
            }
        })
    };
    html! {
        <section class="sandbox">
            <h3>{ "fio job file" }</h3>
            <p class="dim">{ "Paste a job file: [global] and one or more job sections, which run together on the same stack. rw (with rwmixread), bs, numjobs, ioengine, iodepth, direct (or buffered), size, offset, end_fsync, filename, runtime, time_based, startdelay, ramp_time, thinktime, rate_iops, stonewall and wait_for apply; the stack is in the Knobs tab. The link keeps it all." }</p>
            <textarea aria-label="fio job file" rows="10" cols="48" oninput={on_fio_input} onkeydown={on_fio_key}
                value={fio_text.clone().unwrap_or_else(|| blksim::fio::job_file(&d.shown.scenario))} />
            <p class="fio-actions">
                <button data-testid="apply-fio" disabled={fio_text.is_none()} onclick={{ let apply_fio = apply_fio.clone(); Callback::from(move |_: MouseEvent| apply_fio.emit(())) }}>{ "Apply job" }</button>
                <span class="dim">{ if fio_text.is_some() { " edited, not applied yet (Ctrl+Enter applies)" } else { " the running workload, as a job file" } }</span>
            </p>
            if let Some(m) = fio_msg { <p class="knob-msg" role="status">{ m }</p> }
        </section>
    }
}

/// A job file read (by the reader's worker: `protocol::fio`), applied to the runs: its knobs,
/// fitted to the stack's devices, restart them; what it did goes under the box.
fn apply_job(session: &SharedSession, page: &PageDispatch, job: Result<blksim::fio::FioJob, String>) {
    let mut s = session.borrow_mut();
    match job {
        Err(e) => page.dispatch(PageAction::SetFioMsg(Some(format!("not applied: {e}")))),
        Ok(mut job) => {
            job.fit_devices(&s.a.shown.scenario);
            let outcome = page.clone();
            s.act_then(Command::ApplyMany(job.knobs.clone()), move |_, r| {
                let mut msg = Vec::new();
                if let Reply::Refused(e) = r {
                    msg.push(format!("not applied: {e}"));
                } else {
                    msg.push(format!(
                        "applied the job ({} setting{} from the file, fio's defaults for the rest); the run restarted",
                        job.from_file,
                        if job.from_file == 1 { "" } else { "s" }
                    ));
                    if let Some(notes) = job.notes() {
                        msg.push(notes);
                    }
                    outcome.dispatch(PageAction::SetFioText(None));
                }
                outcome.dispatch(PageAction::SetFioMsg(Some(msg.join("; "))));
            });
            sync_fragment(&mut s);
        }
    }
    drop(s);
    page.dispatch(PageAction::SessionChanged);
}

/// In the A/B view, what the knob panel sets: both runs, or run B alone (two setups side by
/// side: B starts as a copy of A, and its own knobs are what the two compare).
pub(super) fn knobs_of(page: &PageDispatch, s: &SessionView, of_b: bool) -> Html {
    if s.b.is_none() {
        return Html::default();
    }
    let pick = |b: bool| {
        let page = page.clone();
        Callback::from(move |_: MouseEvent| page.dispatch(PageAction::SetKnobsOfB(b)))
    };
    let own = s.b_own();
    html! {
        <div class="knobs-of" role="group" aria-label="Knobs of">
            <span>{ "Knobs of: " }</span>
            <button aria-pressed={(!of_b).to_string()} data-testid="knobs-of-both" onclick={pick(false)}>{ "A and B" }</button>
            <button aria-pressed={of_b.to_string()} data-testid="knobs-of-b" onclick={pick(true)}>{ "B only" }</button>
            <p class="dim" data-testid="b-own">{
                if own.is_empty() {
                    "B is a copy of A: pick \"B only\" and change the knobs the two should differ in.".to_string()
                } else {
                    format!("B differs in {}.", own.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
                }
            }</p>
        </div>
    }
}

/// The knob panel: run A's knobs (a change goes to both runs), or run B's alone.
pub(super) fn knob_panel(s: &SessionView, ui: &PageState, on_apply: Callback<(String, String)>) -> Html {
    let a = &s.a;
    let (shown, other, label) = match &s.b {
        Some(b) if ui.knobs_of_b => (b, Some(a), "A"),
        Some(b) => (a, Some(b), "B"),
        None => (a, None, "B"),
    };
    html! {
        <KnobPanel scenario={shown.shown.scenario.clone()} also={other.map(|o| o.shown.scenario.clone())} also_label={label} on_apply={on_apply}
            message={super::tabs::KnobMessage::for_run(&ui.knob_msg, a)} rejected={ui.knob_rejected.clone()} live_writes={super::tabs::live_write_lines(shown)} />
    }
}
