//! Display preferences kept for the browser tab (presenter, large type, theme), and the theme buttons.

use super::state::{PageAction, PageDispatch};
use super::SharedSession;
use yew::prelude::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Theme {
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub(super) const ALL: [Theme; 3] = [Theme::Auto, Theme::Light, Theme::Dark];

    /// Its name: the button's label, `data-theme` and the stored preference.
    pub(super) fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// A display preference kept in the tab's sessionStorage (`blkviz.<key>`), if any.
pub(super) fn pref(key: &str) -> Option<String> {
    use gloo::storage::{SessionStorage, Storage};
    SessionStorage::get::<String>(format!("blkviz.{key}")).ok()
}

pub(super) fn set_pref(key: &str, value: &str) {
    use gloo::storage::{SessionStorage, Storage};
    // A browser without storage (private mode quotas) just forgets the preference.
    let _ = SessionStorage::set(format!("blkviz.{key}"), value);
}

/// The page's motion setting: the system's (`prefers-reduced-motion`) until the Motion toggle
/// says otherwise.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Motion {
    System,
    Full,
    Reduced,
}

impl Motion {
    /// Its `data-motion` value and stored preference.
    pub(super) fn name(self) -> &'static str {
        match self {
            Motion::System => "system",
            Motion::Full => "full",
            Motion::Reduced => "reduced",
        }
    }

    pub(super) fn stored() -> Motion {
        match pref("motion").as_deref() {
            Some("full") => Motion::Full,
            Some("reduced") => Motion::Reduced,
            _ => Motion::System,
        }
    }

    /// Whether motion is reduced now.
    pub(super) fn reduced(self) -> bool {
        match self {
            Motion::Full => false,
            Motion::Reduced => true,
            Motion::System => web_sys::window()
                .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
                .is_some_and(|m| m.matches()),
        }
    }
}

/// The Motion toggle: pressed means requests move between stages.
pub(super) fn motion_button(motion: Motion, page: &PageDispatch) -> Html {
    let reduced = motion.reduced();
    let onclick = {
        let page = page.clone();
        Callback::from(move |_: MouseEvent| {
            let m = if motion.reduced() { Motion::Full } else { Motion::Reduced };
            set_pref("motion", m.name());
            page.dispatch(PageAction::SetMotion(m));
        })
    };
    html! {
        <button class="toggle motion-toggle" aria-pressed={(!reduced).to_string()} title="Motion: requests move between the stages of the stack; off, each is drawn where it is (follows the system's reduced-motion setting until you choose)" {onclick}>{ "Motion" }</button>
    }
}

/// Stores the display preferences each time one changes.
#[hook]
pub(super) fn use_stored_prefs(presenter: bool, large: bool, theme: Theme) {
    use_effect_with((presenter, large, theme), |&(presenter, large, theme)| {
        set_pref("presenter", if presenter { "1" } else { "0" });
        set_pref("large", if large { "1" } else { "0" });
        set_pref("theme", theme.name());
    });
}

/// The theme buttons. A theme redraws the charts: their colours follow it.
pub(super) fn theme_buttons(theme: Theme, page: &PageDispatch, session: &SharedSession) -> Html {
    let set_theme = |t: Theme| {
        let (page, session) = (page.clone(), session.clone());
        Callback::from(move |_: MouseEvent| {
            page.dispatch(PageAction::SetTheme(t));
            session.borrow_mut().charts_dirty = true;
        })
    };
    html! {
        <div class="themes" role="group" aria-label="Theme">
            { for Theme::ALL.into_iter().map(|t| html! {
                <button aria-pressed={(theme == t).to_string()} onclick={set_theme(t)}>{ t.name() }</button>
            }) }
        </div>
    }
}
