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
}

impl TraceRing {
    pub fn new(capacity: usize) -> Self {
        TraceRing { buf: VecDeque::with_capacity(capacity.min(1 << 16)), capacity, next_seq: 0, enabled: capacity > 0 }
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
        TraceRing { buf: VecDeque::new(), capacity: self.capacity, next_seq: self.next_seq, enabled: self.enabled }
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

impl Sim {
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
        self.cur_thread.unwrap_or_else(|| {
            let core = &self.cores[self.cur_cpu as usize];
            core.current.filter(|t| self.threads[t.idx()].state == ThreadState::Running).unwrap_or(ThreadId::SWAPPER)
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
        if self.trace.enabled() {
            let rec = TraceRecord {
                seq: 0,
                time: self.now(),
                dev,
                cpu: self.cur_cpu,
                action,
                write,
                sector,
                bytes,
                thread,
                token,
                related,
                from,
            };
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
