//! `kernel/trace/blktrace.c`: the blktrace-style records (Q G S P U I M F D C X A) in a bounded
//! ring, and `emit`, which names the CPU and process a record belongs to. What the UI animates,
//! and nothing else.

use crate::engine::ids::{DevId, ThreadId};
use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::kernel::sched::ThreadState;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// blktrace action codes (`blkparse(1)`, "ACTION IDENTIFIERS").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// Q: a bio is queued (`generic_make_request`).
    Q,
    /// G: a request is allocated (`get_request`).
    G,
    /// S: request allocation slept (`get_request_wait`): the pool was full.
    S,
    /// P: the queue is plugged.
    P,
    /// U: the queue is unplugged.
    U,
    /// I: a request is inserted into the elevator.
    I,
    /// M: a bio is back-merged into a waiting request.
    M,
    /// F: a bio is front-merged into a waiting request.
    F,
    /// D: a request is issued to the driver.
    D,
    /// C: a request completes.
    C,
    /// X: a bio is split.
    X,
    /// A: a bio is remapped to another device.
    A,
}

impl Action {
    pub fn code(self) -> char {
        match self {
            Action::Q => 'Q',
            Action::G => 'G',
            Action::S => 'S',
            Action::P => 'P',
            Action::U => 'U',
            Action::I => 'I',
            Action::M => 'M',
            Action::F => 'F',
            Action::D => 'D',
            Action::C => 'C',
            Action::X => 'X',
            Action::A => 'A',
        }
    }
}

/// One trace record. `token` ties the records of one bio (Q, M, F, X, S) or one request
/// (G, I, D, C) together: bios and requests have separate token spaces, told apart by the action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Position in the whole run's trace (the UI uses it to notice dropped records).
    pub seq: u64,
    pub time: SimTime,
    pub dev: DevId,
    pub cpu: u16,
    pub action: Action,
    pub write: bool,
    pub sector: u64,
    pub bytes: u32,
    /// The process blkparse names: the thread running on `cpu` when it happened. The
    /// submitter for Q..I; for D whoever ran the queue (the submitter, `kblockd/N`,
    /// `kdmwork`); for C the completing context (`ksoftirqd/N`, or in interrupt context the
    /// thread the interrupt found running, or [`ThreadId::SWAPPER`] on an idle CPU).
    pub thread: ThreadId,
    pub token: u32,
    /// For M and F: the request the bio merged into. For A: the parent bio (for a dm clone,
    /// the original request). For U: how many requests the unplug let go. Else 0.
    pub related: u32,
    /// For A: where it was remapped from, the upper device and its sector (blkparse's
    /// `<- (253,0) 232448`). For X: the device and the sector where the rest of the split bio
    /// starts (blkparse's `0 / 256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<(DevId, u64)>,
}

/// A bounded ring of the most recent records. Older ones are dropped, and counted.
#[derive(Clone, Debug)]
pub struct TraceRing {
    buf: VecDeque<TraceRecord>,
    capacity: usize,
    next_seq: u64,
    enabled: bool,
    /// The records' stamps (kept whether recording is on or not).
    pub(crate) clock: TraceClock,
}

impl TraceRing {
    pub fn new(capacity: usize) -> Self {
        TraceRing {
            buf: VecDeque::with_capacity(capacity.min(1 << 16)),
            capacity,
            next_seq: 0,
            enabled: capacity > 0,
            clock: TraceClock::default(),
        }
    }

    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on && self.capacity > 0;
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Appends a record (its `seq` is assigned here).
    #[inline]
    pub fn push(&mut self, mut r: TraceRecord) {
        if !self.enabled {
            return;
        }
        r.seq = self.next_seq;
        self.next_seq += 1;
        if self.buf.len() == self.capacity {
            self.buf.pop_front();
        }
        self.buf.push_back(r);
    }

    /// Records with `seq >= from`, oldest first, plus how many in that range were already
    /// dropped from the ring.
    pub fn since(&self, from: u64) -> (impl Iterator<Item = &TraceRecord>, u64) {
        let first = self.buf.front().map_or(self.next_seq, |r| r.seq);
        let dropped = first.saturating_sub(from);
        let skip = from.saturating_sub(first) as usize;
        (self.buf.iter().skip(skip), dropped)
    }

    /// A ring like this one (capacity, on or off, the next `seq`) holding no records.
    pub fn empty_copy(&self) -> TraceRing {
        TraceRing {
            buf: VecDeque::new(),
            capacity: self.capacity,
            next_seq: self.next_seq,
            enabled: self.enabled,
            clock: self.clock.clone(),
        }
    }

    /// The `seq` the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// Runs `sim` with the trace on until `end` (or its jobs' end) and returns every record made
/// meanwhile, in time order as blkparse prints them (a work item's records are stamped within
/// it, so another CPU's record made earlier can carry a later time), and whether it stopped at
/// `max` records. What `blksim trace` writes and the trace page runs beside a real trace.
pub fn record_trace(sim: &mut Sim, end: SimTime, max: u64) -> (Vec<TraceRecord>, bool) {
    sim.set_trace(true);
    // The ring holds the newest records only: take them every simulated millisecond, well
    // before it could wrap (a millisecond of the busiest lesson is a few thousand records).
    let mut records = Vec::new();
    let mut next = sim.trace().next_seq();
    let mut t = sim.now();
    let mut cut = false;
    while t < end && !sim.is_finished() {
        t = (t + crate::engine::time::NS_PER_MS).min(end);
        sim.run_until(t);
        let (new, dropped) = sim.trace().since(next);
        assert_eq!(dropped, 0, "the trace ring wrapped between two takes");
        records.extend(new.copied());
        next = sim.trace().next_seq();
        if records.len() as u64 >= max {
            records.truncate(max as usize);
            cut = true;
            break;
        }
    }
    records.sort_by_key(|r| (r.time, r.seq));
    (records, cut)
}

/// When the work a trace record names happened. blktrace stamps each record as its work runs;
/// the engine applies a work item's effects (a thread's step, a completion's softirq work) at
/// the item's end, in one event. So a record made inside a work item is stamped from the
/// item's start plus the calib costs of the work done so far in it (`Sim::charge`, called
/// where the kernel function that costs it runs), never past the item's end (`now`), and
/// never before the device's previous record: each device's records, and so each of
/// blktrace's per-device CPU files, stay in time order, and a request's Q, G, I, D and C in
/// the order they happened. Outside a work item (a timer, a disk's event) a record is stamped
/// `now`. The stamps are kept whether the trace is on or not, so turning it on mid-run (a
/// jump) gives the same records as a run traced throughout.
#[derive(Clone, Debug, Default)]
pub struct TraceClock {
    /// Where the running work item has got to, in ns (None between work items).
    work_ns: Option<u64>,
    /// Per device: its last record's stamp.
    dev_last_ns: Vec<u64>,
}

impl TraceClock {
    /// The stamp of a record of `dev` made now; the work item's clock moves up to it.
    pub fn stamp(&mut self, dev: DevId, now: SimTime) -> SimTime {
        let di = dev.0 as usize;
        if di >= self.dev_last_ns.len() {
            self.dev_last_ns.resize(di + 1, 0);
        }
        let at = self.work_ns.map_or(now.ns(), |w| w.min(now.ns())).max(self.dev_last_ns[di]);
        self.dev_last_ns[di] = at;
        if let Some(w) = self.work_ns.as_mut() {
            *w = (*w).max(at);
        }
        SimTime(at)
    }
}

impl Sim {
    /// A work item starts applying its effects: its records are stamped from `start`.
    pub(crate) fn work_begin(&mut self, start: SimTime) {
        self.trace.clock.work_ns = Some(start.ns());
    }

    /// The work item's effects are applied: records are stamped `now` again.
    pub(crate) fn work_end(&mut self) {
        self.trace.clock.work_ns = None;
    }

    /// Where the running work has got to, for `dev`: the stamp a record of `dev` made now
    /// carries. diskstats accounts a request's start and end at it too (the kernel's
    /// accounting runs in the same code as the tracepoints), so that iostat's await and %util
    /// agree with the trace's G→C: accounted at the work item's end, a raid5d pass's many
    /// requests had their start stamped later than their G, and await read 3-4% under G→C.
    pub(crate) fn stamp_now(&mut self, dev: DevId) -> SimTime {
        let now = self.now();
        self.trace.clock.stamp(dev, now)
    }

    /// Whether a CPU's work item is applying its effects now.
    pub(crate) fn in_work(&self) -> bool {
        self.trace.clock.work_ns.is_some()
    }

    /// The running work item has done `ns` of work (a calib cost, where the kernel function
    /// that costs it runs); outside a work item, nothing.
    #[inline]
    pub(crate) fn charge(&mut self, ns: u64) {
        if let Some(w) = self.trace.clock.work_ns.as_mut() {
            *w += ns;
        }
    }

    /// The process a trace record names for work done now: the thread whose step it is, or in
    /// interrupt context the thread the interrupt found running on this CPU, or the idle task.
    /// Every device's (name, major, minor), in device order: what the trace's tools name.
    pub fn device_names(&self) -> Vec<(String, u32, u32)> {
        self.devs.iter().map(|d| (d.name.clone(), d.major, d.minor)).collect()
    }

    /// A thread's pid and command name, as blkparse prints them.
    pub fn pid_comm(&self, thread: u32) -> (u32, String) {
        self.threads.get(thread as usize).map_or((0, "?".into()), |t| (t.pid, t.name.clone()))
    }

    pub(crate) fn context(&self) -> ThreadId {
        self.current.thread.unwrap_or_else(|| {
            let core = &self.cores[self.current.cpu as usize];
            core.current.filter(|t| self.threads[*t].state == ThreadState::Running).unwrap_or(ThreadId::SWAPPER)
        })
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn emit(
        &mut self,
        dev: DevId,
        action: Action,
        write: bool,
        sector: u64,
        bytes: u32,
        thread: ThreadId,
        token: u32,
        related: u32,
    ) {
        self.emit_from(dev, action, write, sector, bytes, thread, token, related, None);
    }

    /// `emit`, for a remap (A): with the upper device and sector it came from.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit_from(
        &mut self,
        dev: DevId,
        action: Action,
        write: bool,
        sector: u64,
        bytes: u32,
        thread: ThreadId,
        token: u32,
        related: u32,
        from: Option<(DevId, u64)>,
    ) {
        let time = self.trace.clock.stamp(dev, self.now());
        if self.trace.enabled() {
            let rec = TraceRecord { seq: 0, time, dev, cpu: self.current.cpu, action, write, sector, bytes, thread, token, related, from };
            self.trace.push(rec);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sector: u64) -> TraceRecord {
        TraceRecord {
            seq: 0,
            time: SimTime(sector),
            dev: DevId(0),
            cpu: 0,
            action: Action::Q,
            write: false,
            sector,
            bytes: 512,
            thread: ThreadId(0),
            token: 0,
            related: 0,
            from: None,
        }
    }

    #[test]
    fn a_work_items_records_are_stamped_from_its_start_never_past_now_nor_before_their_device() {
        let mut c = TraceClock::default();
        let (a, b) = (DevId(0), DevId(1));
        // Outside a work item: now.
        assert_eq!(c.stamp(a, SimTime(1_000)), SimTime(1_000));
        // A step that started at 500 and ends now, at 2 000: its start plus what it charged.
        c.work_ns = Some(500);
        assert_eq!(c.stamp(b, SimTime(2_000)), SimTime(500));
        c.work_ns = c.work_ns.map(|w| w + 300);
        assert_eq!(c.stamp(b, SimTime(2_000)), SimTime(800));
        // Device a's last record was at 1 000: this step's record of a comes no earlier, and
        // the step's clock moves up with it.
        assert_eq!(c.stamp(a, SimTime(2_000)), SimTime(1_000));
        assert_eq!(c.stamp(b, SimTime(2_000)), SimTime(1_000));
        // Charged past the step's end: the end.
        c.work_ns = c.work_ns.map(|w| w + 5_000);
        assert_eq!(c.stamp(b, SimTime(2_000)), SimTime(2_000));
    }

    #[test]
    fn the_ring_keeps_the_newest_and_counts_what_it_dropped() {
        let mut t = TraceRing::new(3);
        for s in 0..5 {
            t.push(rec(s));
        }
        assert_eq!(t.len(), 3);
        let (it, dropped) = t.since(0);
        assert_eq!(dropped, 2);
        assert_eq!(it.map(|r| r.sector).collect::<Vec<_>>(), vec![2, 3, 4]);
        let (it, dropped) = t.since(4);
        assert_eq!(dropped, 0);
        assert_eq!(it.count(), 1);
    }
}
