//! What the page's controls ask of its runs (`Command`), carried out by the worker's
//! `Session::act` (`crate::runs::act`): play and pause, steps, the speed, skips, the timeline,
//! Reset, the seed, the event log's pause and the knobs. The controls change the runs only
//! through these, never by reaching into a run, so the runs can live in a Web Worker that takes
//! them as messages. A command is plain serde data, and so is its `Reply`.

use blksim::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Play or pause (Space, the Play button); B follows A.
    TogglePlay,
    Pause,
    /// One event of run A, paused (→). `now_ms` is the page's wall clock, for the tokens' tweens.
    StepEvent {
        now_ms: f64,
    },
    /// 1 ms of simulated time, paused, B following A (Shift+→).
    StepMs {
        now_ms: f64,
    },
    /// Simulated seconds per wall second (the speed slider).
    SetSpeed(f64),
    /// Both runs `secs` past the clock without animating (Skip 5 s).
    Skip {
        secs: f64,
    },
    /// Both runs again from time 0 (R, Reset).
    Reset,
    /// The timeline: both runs to this time, backwards or forwards within what they reached.
    Seek(SimTime),
    /// Stop a jump where it has got to.
    StopJump,
    /// The reader's seed (the seed field): both runs restart with it.
    ChooseSeed(u64),
    /// Pause or resume the event log's intake (the page's view of run A does it).
    ToggleLogPause,
    /// What the page says about run A (a link's problems, a refused seed); None closes it.
    SetNotice(Option<String>),
    /// The page put the link as applied into its address (`RunState::link_clean`).
    LinkCleanUsed,
    /// A knob (`blksim knobs`' key): to run A, and to B when A took it.
    ApplyKnob {
        key: String,
        value: String,
    },
    /// A knob to run B alone (the sandbox's A/B of two setups): B's own, over A's.
    ApplyKnobB {
        key: String,
        value: String,
    },
    /// Knobs at once (an fio job file in the sandbox): run A restarts with them.
    ApplyMany(Vec<(String, String)>),
    /// The lesson's stop (a step, or the prediction): its variants, seed, speed and time point.
    GoToStop(usize),
    /// A link's step.
    LinkedStep(LinkedStep),
    /// Open or close the A/B view (B: the first variant that is not A's; in the sandbox, which
    /// has one, a copy of A whose knobs the reader then changes).
    ToggleAb,
    /// Run A's variant (the variant buttons).
    PickVariant(String),
    /// Run B's variant (the A/B view's picker).
    PickB(String),
    /// The prediction's Run: the lesson's first two variants side by side from the reader's
    /// seed, past the warm-up, at half a second per second.
    RunComparison,
    /// Both runs to this time and paused there, as a link with `t` opens.
    OpenAt(SimTime),
    /// Both runs to this time, playing on after (Skip the warm-up).
    JumpTo(SimTime),
    /// A link to the run on show that differs only in its B, time point or pace (Back after
    /// opening A/B, a link pasted with another t): B opens or closes, both runs go to the time
    /// point and pause there, and the pace is the link's.
    SameRunLink {
        b: Option<String>,
        /// B's own knobs, over A's.
        b_own: Vec<(String, String)>,
        t: Option<f64>,
        speed: Option<f64>,
    },
    /// A new run from a link (Back and Forward to another run): the session is rebuilt from
    /// it, the lesson's defaults where the link cannot be used. `speed`: the pace the reader
    /// chose, to keep (None when the link names its own).
    OpenLink {
        fragment: String,
        default_lesson: String,
        speed: Option<f64>,
    },
}

/// What of a link's state its step needs (`blksim::course::link::LinkState`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkedStep {
    /// 1-based, as the link writes it.
    pub step: u32,
    pub variant: Option<String>,
    pub b: Option<String>,
    pub seed: u64,
    pub t: Option<f64>,
}

impl LinkedStep {
    /// The link's step, if it names one.
    pub fn of(st: &blksim::course::link::LinkState) -> Option<LinkedStep> {
        Some(LinkedStep { step: st.step.filter(|&n| n >= 1)?, variant: st.variant.clone(), b: st.b.clone(), seed: st.seed, t: st.t })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Done,
    /// What the runs did not take, and why.
    Refused(String),
    /// Whether a stop was set up (a copied link's own run stands instead; a stop the lesson
    /// does not have sets nothing up).
    StepSetUp(bool),
    /// What the knob panel says of a knob: applied how, or why not.
    Knob(Result<String, String>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{decode, encode};

    #[test]
    fn a_command_and_its_reply_cross_a_worker_s_post_message_in_bincode() {
        let cmds = [
            Command::StepMs { now_ms: 12.5 },
            Command::Seek(SimTime(1_700_000_001)),
            Command::ApplyKnob { key: "queue.nr_requests".into(), value: "512".into() },
            Command::ChooseSeed(u64::MAX),
        ];
        for c in cmds {
            assert_eq!(decode::<Command>(&encode(&c).unwrap()).unwrap(), c);
        }
        let r = Reply::Knob(Err("queue.nr_requests: expected 4 to 8192".into()));
        assert_eq!(decode::<Reply>(&encode(&r).unwrap()).unwrap(), r);
    }
}
