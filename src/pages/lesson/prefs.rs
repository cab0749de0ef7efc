//! Display preferences kept for the browser tab (presenter, large type, theme), and the theme buttons.

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

fn set_pref(key: &str, value: &str) {
    use gloo::storage::{SessionStorage, Storage};
    // A browser without storage (private mode quotas) just forgets the preference.
    let _ = SessionStorage::set(format!("blkviz.{key}"), value);
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
pub(super) fn theme_buttons(theme: &UseStateHandle<Theme>, session: &SharedSession) -> Html {
    let set_theme = |t: Theme| {
        let (theme, session) = (theme.clone(), session.clone());
        Callback::from(move |_: MouseEvent| {
            theme.set(t);
            session.borrow_mut().charts_dirty = true;
        })
    };
    html! {
        <div class="themes" role="group" aria-label="Theme">
            { for Theme::ALL.into_iter().map(|t| html! {
                <button aria-pressed={(**theme == t).to_string()} onclick={set_theme(t)}>{ t.name() }</button>
            }) }
        </div>
    }
}
