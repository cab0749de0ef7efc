//! Simulated time: integer nanoseconds. The clock only ever jumps to the next event.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;

/// `a * b / c` without overflow, rounded down: in u64 when the product fits (a 128-bit
/// division is a library call, and in WebAssembly a slow one), else in u128. The same result
/// either way.
#[inline]
pub fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => (a as u128 * b as u128 / c as u128) as u64,
    }
}

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn from_secs_f64(secs: f64) -> SimTime {
        SimTime((secs * NS_PER_S as f64).round() as u64)
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }

    pub fn ns(self) -> u64 {
        self.0
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    fn add(self, ns: u64) -> SimTime {
        SimTime(self.0.checked_add(ns).expect("simulated time overflow"))
    }
}

impl Sub for SimTime {
    type Output = u64;
    fn sub(self, earlier: SimTime) -> u64 {
        self.0.checked_sub(earlier.0).expect("time went backwards")
    }
}

impl fmt::Display for SimTime {
    /// blkparse prints seconds with nine decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.0 / NS_PER_S, self.0 % NS_PER_S)
    }
}

/// A kernel timer with one event in the queue at a time (a `timer_list`, as a queue's
/// `delay_work` and `unplug_timer` are): arming it while its event is queued only moves the
/// deadline, a cancelled one's event lapses, and an event that finds a later deadline waits
/// for it. It remembers the CPU that armed it, whose kblockd its work goes to.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneShotTimer {
    armed: Option<(SimTime, crate::engine::ids::CoreId)>,
    queued: bool,
}

/// What a timer's event finds (`OneShotTimer::fire`).
pub enum Fired {
    /// Cancelled since: nothing to do.
    Lapsed,
    /// Re-armed for later: its event goes back in the queue for that deadline.
    Later(SimTime),
    /// Due: the timer function runs, on behalf of the CPU that armed it.
    Due(crate::engine::ids::CoreId),
}

impl OneShotTimer {
    /// When it fires, if armed.
    pub fn due(&self) -> Option<SimTime> {
        self.armed.map(|(due, _)| due)
    }

    pub fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// Arms it for `due` on `cpu`. Returns whether its event must be scheduled (none is
    /// queued); the caller schedules it, so that the event takes its place in the order.
    #[must_use]
    pub fn arm(&mut self, due: SimTime, cpu: crate::engine::ids::CoreId) -> bool {
        self.armed = Some((due, cpu));
        !std::mem::replace(&mut self.queued, true)
    }

    /// `del_timer`: its queued event, if any, lapses.
    pub fn cancel(&mut self) {
        self.armed = None;
    }

    /// Its event has come at `now`.
    pub fn fire(&mut self, now: SimTime) -> Fired {
        self.queued = false;
        match self.armed {
            None => Fired::Lapsed,
            Some((due, _)) if due > now => {
                self.queued = true;
                Fired::Later(due)
            }
            Some((_, cpu)) => {
                self.armed = None;
                Fired::Due(cpu)
            }
        }
    }
}
