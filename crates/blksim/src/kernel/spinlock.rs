//! `kernel/spinlock.c` (`kernel/locking/spinlock.c` from 3.16) over x86's fair locks: the
//! ticket spinlock (2.6.25-4.1, `arch/x86/include/asm/spinlock.h`) and the queued spinlock
//! (4.2+, `kernel/locking/qspinlock.c`), both of which hand the lock to its waiters in the
//! order they came. A CPU that finds the lock held spins, busy and in the kernel, until the
//! CPUs ahead of it have held it and let it go.
//!
//! The model's CPU work is a piece of work of known cost whose effects apply at its end. A
//! lock's critical sections are recorded where the kernel path takes the lock, during that
//! work, and placed on the lock's timeline when the work ends (in the order the sections
//! asked for the lock, not the order works end, see `SpinLock::acquire`):
//! - sections whose time is in the work's cost (its path charges it, as `queue_lock`'s parts
//!   of `__make_request` are in `BIO_SUBMIT_NS`) lie within the work: a lock taken n times
//!   is held n times, spread evenly over the work, each at the end of its share (INFERRED
//!   placement: the locked parts of these paths come after the bio or request is built);
//! - sections whose time the work's cost does not have (an elevator's hooks under its own
//!   lock, `BFQ_LOCKED_NS`) follow it.
//!
//! A section that finds another CPU's span in its way waits for that span's end, and the
//! work's later sections with it; the CPU stays busy that much longer (with the sections' own
//! time, for the second kind): the spin shows as system (or softirq) time in vmstat and top,
//! under the thread whose work it is, and delays what the CPU runs next. The work's own
//! effects have landed by then (INFERRED simplification: which locks a work takes is known
//! only once its path has run). A section placed later that asked first holds the lock first:
//! the CPU whose section it pushes back spun in its past, and stays busy that much longer at
//! the end of its next work (INFERRED simplification, the same one). On one CPU nothing
//! spins: its works do not overlap.
//!
//! Not modelled: the cache line's transfer to each new holder (the lock's and the data it
//! guards), whose cost grows with the distance between CPUs; a lock taken outside a CPU's
//! work (a timer's).

use crate::engine::ids::DevId;
use crate::engine::time::SimTime;
use crate::engine::Sim;

/// Which lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockId {
    /// A legacy request queue's `q->queue_lock` (a SCSI disk's request_fn queue, or
    /// request-based dm's own, 2.6.31-4.x).
    Queue(DevId),
    /// A blk-mq elevator's queue-wide lock: bfq's `bfqd->lock`, mq-deadline's `dd->lock`.
    Elevator(DevId),
}

/// One span the lock is held over: when its CPU asked for it, got it and let it go, and which
/// CPU that is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    asked: SimTime,
    start: SimTime,
    end: SimTime,
    cpu: u16,
}

/// One spinlock: the spans it is held over, recent and to come, in the order they were asked
/// for (which is the order they hold it in); and what it cost.
#[derive(Debug, Default)]
pub struct SpinLock {
    /// The spans from `gone` on; those before it are forgotten, and go in bulk (a lock is
    /// taken millions of times a run: one by one, from the front of a ring, they cost more
    /// than the rest of the placing).
    held: Vec<Span>,
    gone: usize,
    /// Times it was taken, times a CPU found it held, and the time CPUs spun on it.
    pub acquired: u64,
    pub contended: u64,
    pub spin_ns: u64,
}

/// A copy (a timeline's checkpoint) carries the spans kept, not those forgotten.
impl Clone for SpinLock {
    fn clone(&self) -> Self {
        SpinLock {
            held: self.held[self.gone..].to_vec(),
            gone: 0,
            acquired: self.acquired,
            contended: self.contended,
            spin_ns: self.spin_ns,
        }
    }
}

impl SpinLock {
    /// How far back a work's sections can lie: spans that ended longer ago are forgotten. The
    /// longest softirq run (`SOFTIRQ_BUDGET_NS`); a longer work's first sections may overlap
    /// a forgotten span unseen.
    const HISTORY_NS: u64 = crate::calib::SOFTIRQ_BUDGET_NS;
    /// Spans kept at once: a lock taken every 30 ns over the history, with room, and the
    /// sections booked ahead of it in a lock storm. Each CPU books at most its last work's
    /// (its next work starts after that one's spins): 256 CPUs, the most `cpu.cores` allows,
    /// whose works each take the lock a few thousand times (a queue run over a deep pool).
    const HELD_MAX: usize = 65_536 + 256 * 4_096;
    /// Forgotten spans left at the front before they go (when they also outnumber the kept).
    const GONE_MIN: usize = 1_024;

    /// Forgets the spans that ended longer than the history before `now` (their ends rise
    /// in the order kept).
    #[inline]
    fn forget(&mut self, now: SimTime) {
        let gone = self.gone + self.held[self.gone..].iter().take_while(|h| h.end.0 + Self::HISTORY_NS < now.0).count();
        let kept = self.held.len() - gone;
        if gone >= Self::GONE_MIN.max(kept) {
            self.held.drain(..gone);
            self.gone = 0;
        } else {
            self.gone = gone;
        }
    }

    /// CPU `cpu` asks for the lock at `at` to hold it `hold_ns`, `now` being the simulation's
    /// time. Works place their sections when they end, not in the order the sections asked,
    /// so the lock is handed out here in the order asked, as a ticket lock's: after the spans
    /// asked for before `at`, and before those asked for later, which wait longer (each
    /// later span that now overlaps the one before it moves back). Returns how long `cpu`
    /// spins first; the spin it adds to other CPUs' spans, per CPU, goes to `moved`.
    #[inline]
    pub fn acquire(&mut self, now: SimTime, at: SimTime, hold_ns: u64, cpu: u16, moved: &mut Vec<(u16, u64)>) -> u64 {
        self.forget(now);
        assert!(self.held.len() - self.gone < Self::HELD_MAX, "a lock's spans over their limit");
        // Most sections ask after every span kept (a work's sections come in the order asked):
        // they go at the back, with no search and no later span to move.
        match self.held[self.gone..].last() {
            Some(h) if h.asked > at => self.acquire_before(at, hold_ns, cpu, moved),
            _ => self.append(at, hold_ns, cpu),
        }
    }

    /// `acquire` of a section asked after every span kept.
    #[inline]
    fn append(&mut self, at: SimTime, hold_ns: u64, cpu: u16) -> u64 {
        let start = self.held[self.gone..].last().map_or(at, |h| at.max(h.end));
        self.held.push(Span { asked: at, start, end: start + hold_ns, cpu });
        self.count(start - at)
    }

    /// `n` sections of `hold_ns` each, asked by `cpu` at `first` and every `step` ns after
    /// it, each later by the spins before it (a work's sections of one lock, in the order
    /// asked): `acquire` of each in turn. Returns the spins in all.
    #[allow(clippy::too_many_arguments)]
    pub fn acquire_run(
        &mut self,
        now: SimTime,
        first: SimTime,
        step: u64,
        hold_ns: u64,
        n: u64,
        cpu: u16,
        moved: &mut Vec<(u16, u64)>,
    ) -> u64 {
        assert!(hold_ns <= step || n <= 1, "a run's sections do not overlap");
        let mut spun = 0;
        for k in 0..n {
            let at = SimTime(first.0 + spun + k * step);
            self.forget(now);
            assert!(self.held.len() - self.gone < Self::HELD_MAX, "a lock's spans over their limit");
            if self.held[self.gone..].last().is_some_and(|h| h.asked > at) {
                spun += self.acquire_before(at, hold_ns, cpu, moved);
                continue;
            }
            spun += self.append(at, hold_ns, cpu);
            // The rest go at the back too, and spin nothing: each asks after the one before,
            // which let go `step - hold_ns` before it asked.
            let next = SimTime(first.0 + spun + (k + 1) * step);
            self.append_unspun(now, next, step, hold_ns, n - k - 1, cpu);
            break;
        }
        spun
    }

    /// `n` sections asked at `first` and every `step` after it, each after every span kept
    /// and after the one before had let go: `append` of each in turn, with no spin.
    fn append_unspun(&mut self, now: SimTime, first: SimTime, step: u64, hold_ns: u64, n: u64, cpu: u16) {
        let section = |k: u64| {
            let at = SimTime(first.0 + k * step);
            Span { asked: at, start: at, end: at + hold_ns, cpu }
        };
        // A kept front stays kept through the run (spans go at the back), so there is nothing
        // to forget on the way: the sections go in at once, under the limit each `append`
        // asserts. A front forgotten already (a work longer than the history whose sections
        // are the only ones kept) is forgotten before each, as `acquire` does.
        if self.held.get(self.gone).is_some_and(|h| h.end.0 + Self::HISTORY_NS >= now.0) {
            assert!(self.held.len() - self.gone + n as usize <= Self::HELD_MAX, "a lock's spans over their limit");
            self.held.extend((0..n).map(section));
        } else {
            for k in 0..n {
                self.forget(now);
                assert!(self.held.len() - self.gone < Self::HELD_MAX, "a lock's spans over their limit");
                self.held.push(section(k));
            }
        }
        self.acquired += n;
    }

    /// Counts one acquisition that spun `spin` ns first, and returns `spin`.
    #[inline]
    fn count(&mut self, spin: u64) -> u64 {
        self.acquired += 1;
        if spin > 0 {
            self.contended += 1;
            self.spin_ns += spin;
        }
        spin
    }

    /// `acquire` of a section asked before the last span kept: it goes before the spans
    /// asked later, which move back as far as it pushes them.
    #[inline(never)]
    fn acquire_before(&mut self, at: SimTime, hold_ns: u64, cpu: u16, moved: &mut Vec<(u16, u64)>) -> u64 {
        let i = self.gone + self.held[self.gone..].partition_point(|h| h.asked <= at);
        let start = if i == self.gone { at } else { at.max(self.held[i - 1].end) };
        self.held.insert(i, Span { asked: at, start, end: start + hold_ns, cpu });
        let spin = self.count(start - at);
        for j in i + 1..self.held.len() {
            let before = self.held[j - 1].end;
            let h = &mut self.held[j];
            if h.start >= before {
                break;
            }
            let more = before - h.start;
            if h.start == h.asked {
                self.contended += 1;
            }
            h.start = before;
            h.end = h.end + more;
            self.spin_ns += more;
            match moved.iter_mut().find(|m| m.0 == h.cpu) {
                Some(m) => m.1 += more,
                None => moved.push((h.cpu, more)),
            }
        }
        spin
    }
}

/// A lock the running work took: the lock, how many times and for how long in all, and
/// whether that time is beyond the work's cost (run after it).
#[derive(Clone, Copy, Debug)]
struct Section {
    lock: LockId,
    hold_ns: u64,
    times: u64,
    after: bool,
}

/// The sections of the work running now (one work at a time applies its effects).
#[derive(Clone, Debug, Default)]
pub(crate) struct Locking {
    sections: Vec<Section>,
    /// The spin its sections add to other CPUs' spans, per CPU (reused between works).
    moved: Vec<(u16, u64)>,
}

impl Locking {
    /// Sections one work can record: each device has two locks (its queue's and its
    /// elevator's), each taken within the work's cost or beyond it, and a lock taken again
    /// adds to its section. A work can reach every device (md's raid5d over an array's
    /// members, a flush over every disk).
    const SECTIONS_PER_DEV: usize = 4;
}

impl Sim {
    /// The running work takes `lock` `times` times, each for `hold_ns` of the time its path
    /// charges (a run of bios that each take the lock adds to its section in one go, as the
    /// calls one by one would); outside a CPU's work (a timer's), nothing.
    pub(crate) fn spin_lock_times(&mut self, lock: LockId, hold_ns: u64, times: u64) {
        self.lock_section(lock, hold_ns, times, false);
    }

    /// The running work takes `lock` for `hold_ns` more than its cost: a hook whose time only
    /// the lock's section charges.
    pub(crate) fn spin_lock_more(&mut self, lock: LockId, hold_ns: u64) {
        self.lock_section(lock, hold_ns, 1, true);
    }

    /// The running work takes `lock` `times` times, each for `hold_ns`.
    fn lock_section(&mut self, lock: LockId, hold_ns: u64, times: u64, after: bool) {
        if !self.in_work() || hold_ns == 0 || times == 0 {
            return;
        }

        let limit = Locking::SECTIONS_PER_DEV * self.devs.len();
        let sections = &mut self.locking.sections;
        if let Some(s) = sections.iter_mut().find(|s| s.lock == lock && s.after == after) {
            s.hold_ns += hold_ns * times;
            s.times += times;
            return;
        }
        assert!(sections.len() < limit, "a work took more locks than its devices have");
        sections.push(Section { lock, hold_ns: hold_ns * times, times, after });
    }

    fn lock_mut(&mut self, lock: LockId) -> &mut SpinLock {
        match lock {
            LockId::Queue(dev) => &mut self.devs[dev].queue.queue_lock,
            LockId::Elevator(dev) => &mut self.devs[dev].queue.elevator_lock,
        }
    }

    /// The work that began at `start` ends now: each lock it took n times it held as n equal
    /// sections (the kernel drops it between requests). Sections of the work's own time are
    /// spread evenly over it, each at the end of its share; sections beyond its cost follow
    /// it back to back. A section that finds the lock held waits, and so do the work's later
    /// ones. Returns how much longer the CPU stays busy: the spins, and the sections beyond
    /// its cost.
    pub(crate) fn spin_unlock_work(&mut self, start: SimTime) -> u64 {
        if self.locking.sections.is_empty() {
            return 0;
        }
        let now = self.now();
        let cpu = self.current.cpu;
        let mut moved = std::mem::take(&mut self.locking.moved);
        let mut more = 0;
        for i in 0..self.locking.sections.len() {
            let s = self.locking.sections[i];
            let share = if s.after { s.hold_ns / s.times } else { (now - start) / s.times };
            let hold = (s.hold_ns / s.times).min(share);
            if hold == 0 {
                continue;
            }
            // The first section's time; each later one comes `share` after it (`hold`, beyond
            // the work's cost), and after the spins before it.
            let (first, step) = if s.after { (now + more, hold) } else { (SimTime(start.0 + more + share - hold), share) };
            more += self.lock_mut(s.lock).acquire_run(now, first, step, hold, s.times, cpu, &mut moved);
            if s.after {
                more += s.times * hold;
            }
        }
        self.locking.sections.clear();
        assert!(moved.len() <= self.cores.len(), "one entry per CPU");
        for (c, ns) in moved.drain(..) {
            self.cores[c as usize].spin_owed_ns += ns;
        }
        self.locking.moved = moved;
        more
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::NS_PER_MS;
    use crate::scenario::{set_knob, Scenario};

    /// `n` CPUs each take the lock at the same instant for `hold` ns: the time they spin in all.
    fn spun_together(n: u16, hold: u64) -> u64 {
        let (mut l, mut moved) = (SpinLock::default(), Vec::new());
        let spun: u64 = (0..n).map(|c| l.acquire(SimTime(1_000), SimTime(1_000), hold, c, &mut moved)).sum();
        assert!(moved.is_empty(), "no one asked before another that got it first");
        spun
    }

    #[test]
    fn cpus_taking_a_lock_at_once_spin_in_turn_and_a_waiter_waits_only_for_the_section_in_its_way() {
        assert_eq!(spun_together(1, 500), 0);
        // The second waits one hold, the third two: 0 + 1 + 2 + ... holds.
        assert_eq!(spun_together(2, 500), 500);
        assert_eq!(spun_together(4, 500), 500 * (1 + 2 + 3));
        assert!(spun_together(8, 500) > spun_together(4, 500));
        // A work on CPU 0 that took the lock four times over 4 µs, in sections of 100 ns at the
        // end of each microsecond: another CPU waits for the one it runs into, and not between
        // them.
        let (mut l, mut moved) = (SpinLock::default(), Vec::new());
        for k in 1..=4 {
            assert_eq!(l.acquire(SimTime(4_000), SimTime(k * 1_000 - 100), 100, 0, &mut moved), 0);
        }
        assert_eq!(l.acquire(SimTime(4_000), SimTime(1_950), 100, 1, &mut moved), 50);
        assert_eq!(l.acquire(SimTime(4_000), SimTime(1_200), 100, 2, &mut moved), 0);
        assert!(moved.is_empty());
        // A section placed later but asked for first holds the lock first: CPU 0's section
        // asked for at 2 900 waits for it to 3 000, and the one at 3 900 does not.
        assert_eq!(l.acquire(SimTime(4_000), SimTime(2_100), 900, 2, &mut moved), 0);
        assert_eq!(moved, vec![(0, 100)]);
        // One asked for at 3 850 goes before CPU 0's at 3 900, which waits 50 ns.
        assert_eq!(l.acquire(SimTime(4_000), SimTime(3_850), 100, 1, &mut moved), 0);
        assert_eq!(moved, vec![(0, 150)]);
        assert_eq!((l.contended, l.spin_ns), (3, 50 + 100 + 50));
        // A CPU arriving after the holders let go does not spin.
        assert_eq!(l.acquire(SimTime(9_000), SimTime(9_000), 1_000, 1, &mut moved), 0);
    }

    /// A run of sections placed in one call lands as the same sections placed one by one:
    /// the same spins, the same spins moved onto other CPUs, the same spans kept, on locks
    /// with other CPUs' sections before, among and after the run's, some long gone.
    #[test]
    fn a_run_of_sections_placed_at_once_is_placed_as_one_by_one() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rand = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..2_000 {
            let mut lock = SpinLock::default();
            let mut moved = Vec::new();
            let now = SimTime(5 * NS_PER_MS + rand(NS_PER_MS));
            for _ in 0..rand(40) {
                let at = SimTime(now.0 - rand(4 * NS_PER_MS));
                let cpu = 1 + rand(3) as u16;
                lock.acquire(now, at, 1 + rand(3_000), cpu, &mut moved);
            }
            let (mut one_by_one, mut moved_one) = (lock.clone(), moved.clone());
            let n = 1 + rand(20);
            let step = 1 + rand(2_000);
            let hold = 1 + rand(step);
            let first = SimTime(now.0 - rand(3 * NS_PER_MS));
            let spun = lock.acquire_run(now, first, step, hold, n, 0, &mut moved);
            let mut spun_one = 0;
            for k in 0..n {
                spun_one += one_by_one.acquire(now, SimTime(first.0 + spun_one + k * step), hold, 0, &mut moved_one);
            }
            assert_eq!((spun, &moved), (spun_one, &moved_one), "case {case}");
            assert_eq!((lock.acquired, lock.contended, lock.spin_ns), (one_by_one.acquired, one_by_one.contended, one_by_one.spin_ns));
            assert_eq!(lock.held[lock.gone..], one_by_one.held[one_by_one.gone..], "case {case}");
        }
    }

    /// 20 ms of the scenario that `sets` (in order) make of the default one, with the knobs
    /// the lock tests share: 4 KiB random O_DIRECT libaio reads at QD32 on a RAM LUN.
    fn run_20ms(sets: &[(&str, &str)]) -> Sim {
        let common = [
            ("disk.kind", "ramlun"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "32"),
            ("workload.direct", "true"),
        ];
        let mut s = Scenario::default();
        for (k, v) in sets.iter().chain(&common) {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        sim.run_until(SimTime(20 * NS_PER_MS));
        sim
    }

    /// One job per CPU under `scheduler`: the LUN queue's locks (its `queue_lock`, its
    /// elevator's).
    fn run(cores: u32, scheduler: &str) -> (SpinLock, SpinLock) {
        let n = cores.to_string();
        let mut sets = if scheduler == "deadline" { vec![] } else { vec![("blk_mq.dispatch", "5.0")] };
        sets.extend([("queue.scheduler", scheduler), ("cpu.cores", &n), ("host.nr_hw_queues", &n), ("workload.numjobs", &n)]);
        let sim = run_20ms(&sets);
        let q = &sim.devs[DevId(0)].queue;
        (q.queue_lock.clone(), q.elevator_lock.clone())
    }

    #[test]
    fn the_legacy_queue_lock_is_spun_on_from_two_cpus_and_never_from_one() {
        let (one, _) = run(1, "deadline");
        assert!(one.acquired > 1000, "the queue lock is taken ({})", one.acquired);
        assert_eq!((one.contended, one.spin_ns), (0, 0), "one CPU never spins");
        // The submitter and the CPU completing its requests take it at once now and then.
        let (two, _) = run(2, "deadline");
        assert!(two.contended > 0 && two.spin_ns > 0, "two CPUs contend");
    }

    #[test]
    fn bfq_and_mq_deadline_take_their_own_lock_and_none_takes_none() {
        let (queue, bfq) = run(4, "bfq");
        assert_eq!(queue.acquired, 0, "blk-mq has no queue_lock in its request path");
        assert!(bfq.spin_ns > 0, "bfqd->lock, from four CPUs");
        let (_, dd) = run(4, "mq-deadline");
        assert!(dd.acquired > 0 && dd.spin_ns > 0, "dd->lock");
        // bfq's hooks hold their lock longer than mq-deadline's: more spinning per acquisition.
        assert!(bfq.spin_ns * dd.acquired > dd.spin_ns * bfq.acquired);
        let (q, e) = run(4, "none");
        assert_eq!((q.acquired, e.acquired), (0, 0));
    }

    /// Old request-based dm-multipath over one legacy path, two CPUs: dm's own queue's lock
    /// and the path's, by device.
    fn dm_locks(mpath: &str) -> (SpinLock, SpinLock) {
        let sim = run_20ms(&[("kernel", "3.10"), ("stack", "dm"), ("dm.mpath", mpath), ("cpu.cores", "2"), ("workload.numjobs", "2")]);
        let dm = sim.devs.iter().position(|d| matches!(d.kind, crate::block::DevKind::DmMpath { .. })).expect("a dm device");
        (sim.devs[dm].queue.queue_lock.clone(), sim.devs[DevId(0)].queue.queue_lock.clone())
    }

    #[test]
    fn request_based_dm_takes_its_own_queue_lock_per_request_and_bio_based_dm_none() {
        let (dm, path) = dm_locks("request");
        // blk_queue_bio's merge look and insert, dm_request_fn's peek, prep and start, and
        // blk_finish_request: four sections a 4 KiB read, beside the path's own.
        assert!(path.acquired > 1000, "the path's lock ({})", path.acquired);
        assert!(dm.acquired * 10 >= path.acquired * 9, "dm's lock about as often as the path's: {} vs {}", dm.acquired, path.acquired);
        assert!(dm.contended > 0 && dm.spin_ns > 0, "two CPUs meet on dm's lock");
        let (dm, path) = dm_locks("bio");
        assert_eq!(dm.acquired, 0, "bio-based dm has no request queue of its own");
        assert!(path.acquired > 1000);
    }
}
