//! The page's own state beside the runs (which `SessionView` keeps): what the reader chose on
//! the page and the messages its boxes show, as one value that `reduce` changes, an action at a
//! time. The session changing is an action too: `SessionChanged` redraws the page from it.

use super::prefs::{self, Motion, Theme};
use super::steps::Prediction;
use super::tabs::{self, KnobMessage, Tab};
use blksim::course::link::LinkState;
use std::rc::Rc;
use yew::prelude::*;

/// The page's state: its handle reads it as of the last render and dispatches actions.
pub(super) type Page = UseReducerHandle<PageState>;
/// Dispatches the page's actions from handlers that outlive a render (listeners, the frame loop).
pub(super) type PageDispatch = UseReducerDispatcher<PageState>;

#[derive(Clone, PartialEq)]
pub(super) struct PageState {
    pub tab: Tab,
    pub presenter: bool,
    pub step: Option<usize>,
    /// The lesson text answers the prediction: it is held back until the answer is revealed,
    /// or the reader asks for it (remembered for the browser tab, per lesson).
    pub text_shown: bool,
    /// The last copied link, with the state it was copied in: it hides once the state changes.
    pub copied: Option<(String, String)>,
    pub fio_msg: Option<String>,
    /// The sandbox's job file as the user is editing it; None shows the run's own workload.
    pub fio_text: Option<String>,
    pub theme: Theme,
    pub large: bool,
    pub motion: Motion,
    /// The last knob change: its key, and what it did or why it was refused.
    pub knob_msg: Option<KnobMessage>,
    pub knob_rejected: Option<(String, String)>,
    /// In the sandbox's A/B view, the knob panel sets run B alone (else both runs).
    pub knobs_of_b: bool,
    /// "Run many seeds": the box's text and the count it holds (None: not one the sweep
    /// takes), and why a count was refused.
    pub sweep_seeds: (String, Option<u64>),
    pub sweep_msg: Option<String>,
    pub shortcuts_open: bool,
    pub legend_open: bool,
    /// The reader's prediction: the option picked, whether its run started, whether the
    /// answer shows.
    pub prediction: Prediction,
    /// Bumped each time the session changes: the page renders again from it.
    pub generation: u64,
}

/// What the page does to its own state.
pub(super) enum PageAction {
    /// The runs' client changed (a command, a frame): render again.
    SessionChanged,
    SetTab(Tab),
    SetPresenter(bool),
    SetStep(Option<usize>),
    /// The reader asked for the lesson text before revealing the prediction's answer.
    ShowText,
    SetCopied(Option<(String, String)>),
    SetFioText(Option<String>),
    SetFioMsg(Option<String>),
    SetKnobsOfB(bool),
    SetTheme(Theme),
    SetLarge(bool),
    SetMotion(Motion),
    /// A knob change's outcome: what it did, and the setting refused, if it was.
    KnobApplied {
        msg: KnobMessage,
        rejected: Option<(String, String)>,
    },
    /// The seeds box: its text, the count it holds, and why a count was refused.
    SetSweepSeeds {
        text: String,
        count: Option<u64>,
        msg: Option<String>,
    },
    SetSweepMsg(Option<String>),
    SetShortcutsOpen(bool),
    SetLegendOpen(bool),
    /// The prediction's option picked.
    Predict(usize),
    /// The prediction's comparison started (its A/B runs, or its sweep).
    PredictRan,
    /// The prediction's answer shows.
    Reveal,
}

impl PageState {
    /// The page's state, as a link (`view`) or the stored preferences start it.
    ///
    /// Display preferences (presenter, large type, theme) last for the browser tab: an
    /// instructor moving to the next lesson, or reloading, keeps them. A link may carry them
    /// (and the step): it wins over the stored preference. Leniently: a link wrong in one part
    /// (a typo in its seed) keeps its step, presenter mode and Large type, as it keeps its
    /// variant.
    pub(super) fn new(id: &str, view: &Option<LinkState>) -> PageState {
        let presenter = view.as_ref().and_then(|v| v.presenter).unwrap_or_else(|| prefs::pref("presenter").as_deref() == Some("1"));
        // The legend shows by itself where a reader meets the diagram first: the sandbox and
        // the primers (not in presenter mode, where it lies over the diagrams); elsewhere the
        // Legend toggle opens it.
        let legend_open =
            !presenter && (id == blksim::course::lessons::SANDBOX || blksim::course::lessons::find(id).is_ok_and(|l| l.kind == "primer"));
        PageState {
            tab: Tab::Lesson,
            presenter,
            step: view.as_ref().and_then(|v| v.step).map(|n| n as usize - 1),
            text_shown: prefs::pref(&tabs::text_shown_key(id)).is_some(),
            copied: None,
            fio_msg: None,
            fio_text: None,
            theme: prefs::pref("theme").and_then(|p| Theme::ALL.into_iter().find(|t| t.name() == p)).unwrap_or(Theme::Auto),
            large: view.as_ref().and_then(|v| v.large).unwrap_or_else(|| prefs::pref("large").as_deref() == Some("1")),
            motion: Motion::stored(),
            knob_msg: None,
            knob_rejected: None,
            knobs_of_b: false,
            sweep_seeds: ("50".to_string(), Some(50u64)),
            sweep_msg: None,
            shortcuts_open: false,
            legend_open,
            prediction: Prediction::default(),
            generation: 0,
        }
    }
}

impl Reducible for PageState {
    type Action = PageAction;

    fn reduce(self: Rc<Self>, action: PageAction) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            PageAction::SessionChanged => s.generation = s.generation.wrapping_add(1),
            PageAction::SetTab(tab) => s.tab = tab,
            PageAction::SetPresenter(on) => s.presenter = on,
            PageAction::SetStep(step) => s.step = step,
            PageAction::ShowText => s.text_shown = true,
            PageAction::SetCopied(copied) => s.copied = copied,
            PageAction::SetFioText(text) => s.fio_text = text,
            PageAction::SetFioMsg(msg) => s.fio_msg = msg,
            PageAction::SetKnobsOfB(on) => s.knobs_of_b = on,
            PageAction::SetTheme(theme) => s.theme = theme,
            PageAction::SetLarge(on) => s.large = on,
            PageAction::SetMotion(motion) => s.motion = motion,
            PageAction::KnobApplied { msg, rejected } => {
                s.knob_msg = Some(msg);
                s.knob_rejected = rejected;
            }
            PageAction::SetSweepSeeds { text, count, msg } => {
                s.sweep_seeds = (text, count);
                s.sweep_msg = msg;
            }
            PageAction::SetSweepMsg(msg) => s.sweep_msg = msg,
            PageAction::SetShortcutsOpen(open) => s.shortcuts_open = open,
            PageAction::SetLegendOpen(open) => s.legend_open = open,
            PageAction::Predict(i) => s.prediction.predicted = Some(i),
            PageAction::PredictRan => s.prediction.predict_ran = true,
            PageAction::Reveal => s.prediction.revealed = true,
        }
        Rc::new(s)
    }
}
