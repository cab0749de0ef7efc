//! `block/deadline-iosched.c` (2.6): per-direction sector order and FIFO expiry, batches of
//! `fifo_batch`, reads preferred unless writes starved `writes_starved` times.

use super::Elevator;
use crate::engine::ids::ReqId;
use crate::engine::time::SimTime;

impl Elevator {
    /// The oldest waiting request of a direction, and whether its deadline has passed.
    pub(super) fn fifo_head(&self, write: bool, now: SimTime) -> Option<(ReqId, bool)> {
        self.iter_with_deadlines().find(|(rq, _)| self.entries[rq].write == write).map(|(rq, t)| (rq, now >= t))
    }

    pub(super) fn deadline_next(&self, now: SimTime) -> Option<ReqId> {
        // Continue the batch in sector order while it lasts.
        if let Some((write, end)) = self.last {
            if self.batch < self.tun.deadline_fifo_batch {
                if let Some((&(_, rq), _)) = self.sorted[write as usize].range((end, ReqId(0))..).next() {
                    return Some(rq);
                }
            }
        }
        // A new batch: reads first, unless writes have been passed over writes_starved times.
        let reads = !self.sorted[0].is_empty();
        let writes = !self.sorted[1].is_empty();
        let write = match (reads, writes) {
            (false, false) => return None,
            (true, true) => self.writes_starved >= self.tun.deadline_writes_starved,
            (r, _) => !r,
        };
        // Start from the FIFO head if it expired, else from where the last batch of this
        // direction left off (wrapping to the lowest sector).
        let (head, expired) = self.fifo_head(write, now).expect("direction has requests");
        if expired {
            return Some(head);
        }
        let from = match self.last {
            Some((w, end)) if w == write => end,
            _ => 0,
        };
        let dir = &self.sorted[write as usize];
        dir.range((from, ReqId(0))..).next().or_else(|| dir.iter().next()).map(|(&(_, rq), _)| rq)
    }

    /// deadline's part of a dispatch: out of its direction's sector order, and the batch and
    /// `writes_starved` bookkeeping.
    pub(super) fn deadline_dispatched(&mut self, rq: ReqId, write: bool, start: u64, end: u64) {
        self.sorted[write as usize].remove(&(start, rq));
        let continues = self.last.is_some_and(|(w, e)| w == write && start >= e) && self.batch < self.tun.deadline_fifo_batch;
        if continues {
            self.batch += 1;
        } else {
            // A new batch: count a read batch chosen while writes waited.
            self.batch = 1;
            if write {
                self.writes_starved = 0;
            } else if !self.sorted[1].is_empty() {
                self.writes_starved += 1;
            }
        }
        self.last = Some((write, end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{Elevator, ElevatorKind, Owner};

    const O: Owner = Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM };

    #[test]
    fn deadline_dispatches_in_sector_order_prefers_reads_and_honours_expiry() {
        let mut e = Elevator::new(ElevatorKind::Deadline);
        let t0 = SimTime::ZERO;
        e.add(ReqId(1), true, 900, 908, t0, O);
        e.add(ReqId(2), false, 500, 508, t0, O);
        e.add(ReqId(3), false, 100, 108, t0, O);
        e.add(ReqId(4), false, 300, 308, t0, O);
        // Reads first, in sector order from the lowest.
        for want in [3, 4, 2] {
            let rq = e.next(t0).unwrap();
            assert_eq!(rq, ReqId(want));
            e.dispatched(rq);
        }
        assert_eq!(e.next(t0), Some(ReqId(1)));
        e.dispatched(ReqId(1));
        // An expired read goes first even when sector order would pick another.
        e.add(ReqId(5), false, 700, 708, t0, O);
        e.add(ReqId(6), false, 50, 58, SimTime(400_000_000), O);
        let late = SimTime(600_000_000);
        assert_eq!(e.next(late), Some(ReqId(5)), "the oldest read has expired");
    }
}
