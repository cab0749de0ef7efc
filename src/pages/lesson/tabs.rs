//! The details tabs (lesson text, event log, knobs): their buttons, the event log's data, knob changes.

use super::link::sync_fragment;
use super::state::{Page, PageAction, PageDispatch};
use super::SharedSession;
use crate::components::event_log::EventLog;
use crate::protocol::{Command, Reply};
use crate::view::RunView;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tab {
    Lesson,
    Log,
    Knobs,
}

/// The tab buttons: the lesson text (the sandbox's job file there), the event log, the knobs.
pub(super) fn tab_buttons(page: &Page, is_sandbox: bool) -> Html {
    let to = |t: Tab| {
        let page = page.dispatcher();
        Callback::from(move |_| page.dispatch(PageAction::SetTab(t)))
    };
    html! {
        <nav class="tabs" role="tablist" aria-label="Details">
            <button role="tab" aria-selected={(page.tab == Tab::Lesson).to_string()} onclick={to(Tab::Lesson)}>{ if is_sandbox { "Sandbox" } else { "Lesson" } }</button>
            <button role="tab" aria-selected={(page.tab == Tab::Log).to_string()} onclick={to(Tab::Log)}>{ "Event log (blkparse) · btt" }</button>
            // The sandbox shows its knobs beside the diagram instead.
            if !is_sandbox {
                <button role="tab" aria-selected={(page.tab == Tab::Knobs).to_string()} onclick={to(Tab::Knobs)}>{ "Knobs" }</button>
            }
        </nav>
    }
}

/// The session-storage key that remembers a lesson's text was asked for.
pub(super) fn text_shown_key(lesson_id: &str) -> String {
    format!("text-shown.{lesson_id}")
}

/// In place of the lesson text while its prediction is unanswered: the text tells the report's
/// outcome and its mechanism, which is the prediction's answer. A reader who wants it anyway (a
/// kernel engineer reading the mechanism) gets it in one click.
pub(super) fn text_gate(lesson: &blksim::course::lessons::Lesson, page: &PageDispatch, go: Callback<usize>) -> Html {
    let when = match lesson.predict.as_ref().map_or(0, |p| p.after_step) {
        0 => "asked before the first step".to_string(),
        n => format!("asked after step {n}"),
    };
    let on_show = {
        let (page, id) = (page.clone(), lesson.id.clone());
        Callback::from(move |_: MouseEvent| {
            super::prefs::set_pref(&text_shown_key(&id), "1");
            page.dispatch(PageAction::ShowText);
        })
    };
    let on_predict = {
        let at = lesson.predict_stop();
        Callback::from(move |_: MouseEvent| {
            if let Some(i) = at {
                go.emit(i);
                if let Some(el) = gloo::utils::document().query_selector("[data-testid=step-panel]").ok().flatten() {
                    el.scroll_into_view_with_bool(true);
                }
            }
        })
    };
    let what = if lesson.kind == "primer" {
        "explains how the stack behaves here"
    } else {
        "gives the report's outcome, its cause in the kernel source, the fix, and how blkviz compares with the report"
    };
    html! {
        <>
        <div class="text-gate" data-testid="text-gate">
            <p>{ format!("This text {what}, so it answers the lesson's prediction ({when}). Predict first: the text appears here once you reveal the answer.") }</p>
            <button class="gate-predict" onclick={on_predict}>{ "Go to the prediction" }</button>
            <button class="gate-show" onclick={on_show}>{ "Show the lesson text now" }</button>
        </div>
        // What to look at names no outcome: it is there before the prediction.
        { crate::markdown::what_to_watch(&lesson.id) }
        </>
    }
}

/// The event log tab: run A's trace records as blkparse lines, and btt.
pub(super) fn event_log(session: &SharedSession, page: &PageDispatch, d: &RunView, ab: bool) -> Html {
    let on_log_pause = {
        let (session, page) = (session.clone(), page.clone());
        Callback::from(move |_| {
            session.borrow_mut().act(Command::ToggleLogPause);
            page.dispatch(PageAction::SessionChanged);
        })
    };
    // Copied (up to LOG_MAX records) at each refresh: the page calls this only while the log's
    // tab shows.
    let log_records = Rc::new(d.trace.log.iter().copied().collect::<Vec<_>>());
    // Every device in trace order: the disks, then the stacking devices.
    let all_devs = || d.shown.topology.devices.iter().chain(d.shown.topology.upper.iter());
    let devices = Rc::new(all_devs().map(|v| (v.name.clone(), v.major, v.minor)).collect::<Vec<_>>());
    let threads = Rc::new(d.shown.threads.iter().map(|t| (t.pid, t.name.clone())).collect::<Vec<_>>());
    let btt = Rc::new(
        d.trace.btt.iter().map(|(dev, b)| (all_devs().nth(*dev as usize).map_or("?".into(), |v| v.name.clone()), *b)).collect::<Vec<_>>(),
    );
    html! {
        <EventLog records={log_records} devices={devices} threads={threads} btt={btt} gaps={Rc::new(d.trace.trace_gaps.iter().map(|&(a, b, seq)| (a.ns(), b.ns(), seq)).collect::<Vec<_>>())} paused={d.trace.log_paused} dropped={d.trace.dropped} on_pause={on_log_pause}
            run={ab.then(|| AttrValue::from(format!("run A · {}: the log and btt list run A's records", d.variant)))}
            file_stem={AttrValue::from(crate::export::file_stem(&d.lesson.id, &d.variant, None, d.seed))} />
    }
}

/// What the last knob change did (or why it was refused), for the knob panel.
#[derive(Clone, PartialEq)]
pub(super) struct KnobMessage {
    pub key: String,
    pub text: String,
    /// It was taken live, as the run's `n`th live write.
    pub live_writes: Option<usize>,
}

impl KnobMessage {
    /// The message for the panel, while it still holds for run A: one about a live write goes
    /// once the run no longer has it (Reset, another seed or variant: a new run, with the
    /// setting from t = 0).
    /// While the timeline stands before that write, the message says so: the field beside it
    /// shows the old value.
    pub(super) fn for_run(msg: &Option<KnobMessage>, a: &RunView) -> Option<(String, String)> {
        let m = msg.as_ref().filter(|m| m.live_writes.is_none_or(|n| a.live_writes.len() >= n))?;
        let text = match m.live_writes {
            Some(n) if (a.writes_done as usize) < n => {
                let at = a.live_writes.get(n - 1).map_or(0, |w| w.at.ns());
                format!(
                    "{}. The timeline stands before this write now: the run makes it again at t = {}.",
                    m.text.trim_end_matches('.'),
                    crate::format::sim_time(at)
                )
            }
            _ => m.text.clone(),
        };
        Some((m.key.clone(), text))
    }
}

/// The knobs run A took live, a line each for the knob panel: the writes, when, and whether
/// the timeline stands before it now.
pub(super) fn live_write_lines(a: &RunView) -> Vec<String> {
    a.live_writes
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let (k, v) = w.writes.first().cloned().unwrap_or_default();
            let more = if w.writes.len() > 1 { " (and the new elevator's tunables)" } else { "" };
            let later = if i as u32 >= a.writes_done { ": the timeline stands before it; the run makes it again there" } else { "" };
            format!("{k}={v}{more} at t = {}{later}", crate::format::sim_time(w.at.ns()))
        })
        .collect()
}

/// A job's `bs`: the first job's (`workload.bs`) or a named one's (`job.NAME.bs`).
fn is_bs_key(key: &str) -> bool {
    key == blksim::scenario::knob_table::WORKLOAD_BS.key || key.strip_prefix("job.").is_some_and(|k| k.ends_with(".bs"))
}

/// The knob panel's handler, memoized: the panel's props then only change with the scenario or
/// the message, and the page's refreshes leave what the user is typing.
#[hook]
pub(super) fn use_knob_handler(session: SharedSession, page: PageDispatch, to_b: bool) -> Callback<(String, String)> {
    use_callback(to_b, move |(k, v): (String, String), to_b| {
        let mut s = session.borrow_mut();
        let asked = v.trim().to_string();
        // A `bs` off the 512-byte sector runs rounded up to it (the knob takes whole sectors),
        // and the line beside the box says so: never silently another size.
        let rounded = blksim::scenario::bs_rounded_to_sector(&asked).filter(|_| is_bs_key(&k));
        let v = rounded.map_or_else(|| asked.clone(), |up| up.to_string());
        // A setting may act in A's variant or in B's (the A/B view): both runs take it, unless
        // the sandbox's panel sets B alone.
        let outcome = page.clone();
        let cmd = if *to_b {
            Command::ApplyKnobB { key: k.clone(), value: v.clone() }
        } else {
            Command::ApplyKnob { key: k.clone(), value: v.clone() }
        };
        s.act_then(cmd, move |s, r| {
            let Reply::Knob(r) = r else { return };
            let rejected = r.is_err().then(|| (k.clone(), asked.clone()));
            // Taken live: the message holds while the run has that write (a restart, Reset or
            // another seed, starts a run that has it from t = 0, not "live at t").
            let writes = s.a.live_writes.len();
            let live =
                (r.is_ok() && s.a.live_writes.last().is_some_and(|w| w.writes.first() == Some(&(k.clone(), v.clone())))).then_some(writes);
            let text = match (r, rounded) {
                (Ok(r), Some(up)) => format!("bs={asked} is not a multiple of 512 (the sector), so it runs as bs={up}, rounded up: {r}"),
                (Ok(r), None) => r,
                (Err(e), _) => format!("not applied: {e}"),
            };
            let msg = KnobMessage { key: k, text, live_writes: live };
            outcome.dispatch(PageAction::KnobApplied { msg, rejected });
        });
        sync_fragment(&mut s);
        drop(s);
        page.dispatch(PageAction::SessionChanged);
    })
}
