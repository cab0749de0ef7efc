//! What a run posts to the page after each frame and command (`RunUpdate`): what it shows
//! (`Shown`, its history sent as the seconds that landed since the last update), what its trace
//! view is handed (`TraceInput`s, in order), where the run stands (`RunState`: playing, speed, a
//! jump's target, the notice, the timeline's reach, the knobs it took live), and whether it is a
//! new run (a restart or a rewind makes a new `Run`).

use super::{Shown, TraceInput};
use blksim::{Interval, SimTime};
use serde::{Deserialize, Serialize};

/// Where a run stands: which run it is, whether it plays and how fast, a jump's target, what
/// the page says about its link, and the timeline's end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub lesson: String,
    pub variant: String,
    pub overrides: Vec<(String, String)>,
    pub seed: u64,
    pub playing: bool,
    pub speed: f64,
    pub achieved_speed: f64,
    pub catch_up_to: Option<SimTime>,
    pub notice: Option<String>,
    pub link_clean: Option<String>,
    /// The timeline's end: the furthest this run has reached.
    pub reached: SimTime,
    /// The knobs this run took live, in order (`live_writes`), and how many of them it stands
    /// past (fewer after a rewind before them: the run makes them again as it passes them).
    pub live_writes: Vec<LiveWrite>,
    pub writes_done: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunUpdate {
    /// A new run (the first update of a `Run`: a new page, a restart, a rewind, a knob that
    /// restarts): the view starts its history and its trace view afresh.
    pub fresh: bool,
    /// What the page shows, without its history (sent in `history_new`).
    pub shown: Shown,
    /// The seconds that landed since the last update, oldest first.
    pub history_new: Vec<Interval>,
    pub trace: Vec<TraceInput>,
    /// Trace inputs wait for the next update (a bounded update: `take_update_bounded`).
    pub backlog: bool,
    /// `shown` carries the scenario, topology and model gaps (else they are as the view has
    /// them: unchanged since the last update), and the second's report (likewise). A frame's
    /// update is otherwise mostly those: 27 of 45 KB on dm-sg-lists' 80 disks.
    pub config_included: bool,
    pub interval_included: bool,
    pub state: RunState,
}

/// One knob applied live: where in the run, and the sysfs writes it made (an elevator switch
/// writes the new elevator's tunables too).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveWrite {
    /// The clock when it was made.
    pub at: SimTime,
    /// The run's event count when it was made: the events before it, which a replay runs
    /// exactly (a write made after → stopped mid-instant comes at the same event).
    pub events: u64,
    /// (knob, value) in the order they were applied; the first is the knob the reader set.
    pub writes: Vec<(String, String)>,
}
