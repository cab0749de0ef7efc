//! The event queue: ordered by (time, sequence number). Ties are broken by insertion order,
//! and scheduling into the past is a bug.

use crate::engine::ids::{CoreId, DevId, DiskId, HostId, JobId, ThreadId};
use crate::engine::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Every event the engine knows. Closed on purpose: a new mechanism adds a variant here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The work item running on a core (a thread step or softirq work) has finished.
    CoreDone { core: CoreId },
    /// A disk has finished the media part of a command.
    DiskDone { disk: DiskId, slot: u16 },
    /// A job's process is forked and starts issuing I/O.
    JobStart { job: JobId },
    /// The one-second statistics tick (iostat and vmstat intervals).
    StatsTick,
    /// The scheduler tick of every CPU (`scheduler_tick`, each jiffy), with `cpu.load_balance`.
    SchedTick,
    /// A sleeping thread's timeout (`io_schedule_timeout`) expires.
    Timeout { thread: ThreadId },
    /// cfq's idle window on a queue of `dev` ends (`cfq_idle_slice_timer`), or bfq's
    /// (`bfq_idle_slice_timer`).
    ElevatorTimer { dev: DevId },
    /// `blk_delay_queue`'s timer on `dev`'s `delay_work` fires: the queue run goes to the
    /// kblockd worker of the CPU that armed it.
    DelayWork { dev: DevId },
    /// A blk-mq BUSY run on `cpu` reaches its splice of the leftovers onto `hctx->dispatch`.
    MqSplice { dev: DevId, hctx: u16, cpu: CoreId },
    /// A hardware queue's `delay_work` (`blk_mq_delay_queue`) fires.
    MqDelayRun { dev: DevId, hctx: u16 },
    /// The blk-mq queue's timeout timer (`blk_mq_rq_timer`).
    MqTimer { dev: DevId },
    /// kyber's timer (`kyber_timer_fn`) on `dev`'s queue.
    KyberTimer { dev: DevId },
    /// multipathd's path checker reads from the path `dev`.
    PathCheck { dev: DevId },
    /// `dev`'s plug timer (`q->unplug_timer`, 2.6.20 plugging) fires: `blk_unplug_timeout`
    /// hands the unplug to kblockd.
    UnplugTimer { dev: DevId },
    /// The data of the command at the head of `host`'s link queue has crossed the HBA's link:
    /// its completion interrupt is raised.
    HostLink { host: HostId },
}

/// A queued event and its place in the order: (time, seq) packed into one integer, time in the
/// high half, so that the heap's sifts compare one `u128` instead of a pair.
#[derive(Clone, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    fn new(at: SimTime, seq: u64, event: Event) -> Entry {
        Entry { key: (u128::from(at.0) << 64) | u128::from(seq), event }
    }

    fn at(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    // The heap's sifts ask `<=`: answered straight from the keys (reversed for the max-heap),
    // with no `Ordering` between.
    fn le(&self, other: &Self) -> bool {
        self.key >= other.key
    }
    fn lt(&self, other: &Self) -> bool {
        self.key > other.key
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) pops first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A bounded priority queue of future events.
#[derive(Clone, Debug)]
pub struct EventQueue {
    /// The earliest event, when it was scheduled earlier than everything queued then and
    /// nothing earlier came since: it pops without a sift. Most events are a core's next work
    /// item, scheduled a few microseconds ahead of everything else and popped next.
    front: Option<Entry>,
    heap: BinaryHeap<Entry>,
    now: SimTime,
    next_seq: u64,
    limit: usize,
}

impl EventQueue {
    pub fn new(limit: usize) -> Self {
        EventQueue { front: None, heap: BinaryHeap::with_capacity(limit.min(1 << 16)), now: SimTime::ZERO, next_seq: 0, limit }
    }

    /// Sets the limit, once the machine is built and each subsystem's share is known.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.heap.reserve(limit.min(1 << 16));
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.front.is_some() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
    }

    /// Schedules `event` at `at`. Panics if `at` is in the past or the queue is over its limit:
    /// both are model bugs, never input errors.
    pub fn schedule(&mut self, at: SimTime, event: Event) {
        assert!(at >= self.now, "event {event:?} scheduled in the past: {at} < {}", self.now);
        assert!(self.len() < self.limit, "event queue over its limit of {}", self.limit);
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry::new(at, seq, event);
        // (time, seq) is a total order and `seq` grows: the front stays the earliest entry.
        match &self.front {
            Some(f) if e.key < f.key => {
                let f = self.front.replace(e).expect("checked");
                self.heap.push(f);
            }
            Some(_) => self.heap.push(e),
            None if self.heap.peek().is_none_or(|h| e.key < h.key) => self.front = Some(e),
            None => self.heap.push(e),
        }
    }

    /// The next event, without taking it.
    pub fn peek_event(&self) -> Option<Event> {
        self.front.as_ref().or(self.heap.peek()).map(|e| e.event)
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.front.as_ref().or(self.heap.peek()).map(Entry::at)
    }

    /// Pops the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = match self.front.take() {
            Some(e) => e,
            None => self.heap.pop()?,
        };
        let at = e.at();
        debug_assert!(at >= self.now);
        self.now = at;
        Some((at, e.event))
    }

    /// Moves the clock forward with no event (for `run_until` past the last event).
    pub fn advance_to(&mut self, at: SimTime) {
        assert!(at >= self.now, "time went backwards");
        if let Some(next) = self.peek_time() {
            assert!(at <= next, "advance_to would skip an event");
        }
        self.now = at;
    }
}

/// The speed benches' yardstick: a bare `BinaryHeap` of (time, seq) with one pop and one push
/// per "event" at a steady `population`, for `n` events. The engine's events per second are
/// set against it, run on the same host in the same session (natively in `cargo bench`, in
/// WebAssembly by `e2e/bench.mjs`), so figures from hosts of different speeds compare.
/// Returns the heap's final length (`population`), so the loop cannot be optimised away.
pub fn heap_yardstick(n: u64, population: u64) -> u64 {
    use std::cmp::Reverse;
    let mut heap = BinaryHeap::with_capacity(population.min(1 << 16) as usize + 1);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for seq in 0..population {
        heap.push(Reverse((seq * 1000, seq)));
    }
    for seq in population..n + population {
        let Some(Reverse((t, _))) = heap.pop() else { break };
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        heap.push(Reverse((t + (x % 100_000), seq)));
    }
    heap.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_yardstick_keeps_its_population_and_stops_on_an_empty_heap() {
        assert_eq!(heap_yardstick(10_000, 16), 16);
        assert_eq!(heap_yardstick(10_000, 0), 0);
    }

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new(16);
        q.schedule(SimTime(5), Event::JobStart { job: JobId(2) });
        q.schedule(SimTime(5), Event::JobStart { job: JobId(1) });
        q.schedule(SimTime(3), Event::StatsTick);
        assert_eq!(q.pop(), Some((SimTime(3), Event::StatsTick)));
        assert_eq!(q.pop(), Some((SimTime(5), Event::JobStart { job: JobId(2) })));
        assert_eq!(q.pop(), Some((SimTime(5), Event::JobStart { job: JobId(1) })));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pops_in_time_then_seq_order_as_a_plain_heap_would() {
        // Schedules and pops interleaved, times drawn near the clock (many ties, many events
        // earlier than all queued): the front slot must never change the order.
        use std::cmp::Reverse;
        let (mut q, mut reference) = (EventQueue::new(64), BinaryHeap::new());
        let (mut x, mut seq) = (0x9E37_79B9_7F4A_7C15u64, 0u64);
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 != 0 && q.len() < 60 {
                let at = SimTime(q.now().0 + x % 7);
                q.schedule(at, Event::JobStart { job: JobId(seq as u32) });
                reference.push(Reverse((at, seq)));
                seq += 1;
            } else {
                let want = reference.pop().map(|Reverse((at, seq))| (at, Event::JobStart { job: JobId(seq as u32) }));
                assert_eq!(q.peek_time(), want.map(|w| w.0));
                assert_eq!(q.pop(), want);
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_into_the_past_panics() {
        let mut q = EventQueue::new(16);
        q.schedule(SimTime(10), Event::StatsTick);
        q.pop();
        q.schedule(SimTime(9), Event::StatsTick);
    }

    #[test]
    #[should_panic(expected = "over its limit")]
    fn the_queue_is_bounded() {
        let mut q = EventQueue::new(2);
        for _ in 0..3 {
            q.schedule(SimTime(1), Event::StatsTick);
        }
    }
}
