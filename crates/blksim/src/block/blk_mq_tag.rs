//! blk-mq's tag wait (3.18-4.0 `block/blk-mq-tag.c`): the rule by which a task sleeping in
//! `bt_get` for a tag is woken (5.x's `blk_mq_get_tag` keeps it, over the scheduler tags or the
//! driver tags). The tags themselves are the queue's `TagMap`.
//!
//! - 8 wait queues (`BT_WAIT_QUEUES`); a sleeper goes on queue `wait_index`, which then moves on.
//! - Each freed tag is charged to the first non-empty wait queue at or after `wake_index`;
//!   when that queue has been charged `wake_cnt = min(8, max(1, depth / 8))` frees, all of its
//!   sleepers are woken and `wake_index` moves on. A free while nobody sleeps is not credited.

use crate::engine::ids::{DevId, ThreadId};
use crate::engine::Sim;
use std::collections::VecDeque;

impl Sim {
    /// `bt_get` (4.0, with b32232073e) for `tid` on hardware queue `h` of `dev`: a free tag,
    /// else run that queue from here (`blk_mq_run_hw_queue(hctx, false)`) and try again, else
    /// sleep on the map's next wait queue (None: the caller sleeps). Woken, the caller comes
    /// back here with the hardware queue of the CPU it then runs on.
    pub(crate) fn bt_get(&mut self, dev: DevId, h: u16, tid: ThreadId) -> Option<u16> {
        self.blk_mq_get_tag(dev, h, tid, false)
    }

    /// `blk_mq_get_tag` (5.x): the same rule on the map `blk_mq_tags_from_data` picks, the
    /// hardware queue's scheduler tags (`sched`) or its driver tags.
    pub(crate) fn blk_mq_get_tag(&mut self, dev: DevId, h: u16, tid: ThreadId, sched: bool) -> Option<u16> {
        if let Some(t) = self.tags_of(dev, h, sched).0.get() {
            return Some(t);
        }
        self.blk_mq_run_hw_queue(dev, h, false);
        let (tags, wait) = self.tags_of(dev, h, sched);
        if let Some(t) = tags.get() {
            return Some(t);
        }
        wait.sleep(tid);
        None
    }

    /// A hardware queue's scheduler tags (`sched`) or driver tags, with their wait queues.
    fn tags_of(&mut self, dev: DevId, h: u16, sched: bool) -> (&mut crate::block::TagMap, &mut TagWait) {
        if sched {
            let q = &mut self.mq_sched_mut(dev).hctx[h as usize];
            (&mut q.sched_tags, &mut q.sched_wait)
        } else {
            let q = &mut self.mq_mut(dev).hctx[h as usize];
            (&mut q.tags, &mut q.wait)
        }
    }
}

pub const BT_WAIT_QUEUES: usize = 8;

#[derive(Debug, Default, Clone)]
struct BtWaitState {
    wait_cnt: u32,
    waiters: VecDeque<ThreadId>,
}

#[derive(Debug, Clone)]
pub struct TagWait {
    bs: Vec<BtWaitState>,
    wake_cnt: u32,
    wait_index: usize,
    wake_index: usize,
}

impl TagWait {
    pub fn new(depth: u32) -> TagWait {
        let wake_cnt = (depth / BT_WAIT_QUEUES as u32).clamp(1, BT_WAIT_QUEUES as u32);
        TagWait {
            bs: vec![BtWaitState { wait_cnt: wake_cnt, waiters: VecDeque::new() }; BT_WAIT_QUEUES],
            wake_cnt,
            wait_index: 0,
            wake_index: 0,
        }
    }

    pub fn wake_cnt(&self) -> u32 {
        self.wake_cnt
    }

    /// `bt_wait_ptr` + `prepare_to_wait`: `tid` sleeps on the next wait queue.
    pub fn sleep(&mut self, tid: ThreadId) {
        self.bs[self.wait_index].waiters.push_back(tid);
        self.wait_index = (self.wait_index + 1) % BT_WAIT_QUEUES;
    }

    /// `bt_clear_tag`'s wakeup part: charge one free; returns the sleepers it wakes.
    pub fn tag_freed(&mut self) -> Vec<ThreadId> {
        let Some(i) = (0..BT_WAIT_QUEUES).map(|k| (self.wake_index + k) % BT_WAIT_QUEUES).find(|&i| !self.bs[i].waiters.is_empty()) else {
            return Vec::new();
        };
        self.wake_index = i;
        let bs = &mut self.bs[i];
        bs.wait_cnt -= 1;
        if bs.wait_cnt > 0 {
            return Vec::new();
        }
        bs.wait_cnt = self.wake_cnt;
        self.wake_index = (i + 1) % BT_WAIT_QUEUES;
        bs.waiters.drain(..).collect()
    }

    /// `blk_mq_tag_wakeup_all`: every sleeper, on every wait queue.
    pub fn wake_all(&mut self) -> Vec<ThreadId> {
        self.bs.iter_mut().flat_map(|b| b.waiters.drain(..)).collect()
    }

    pub fn sleepers(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.bs.iter().flat_map(|b| b.waiters.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeper_needs_wake_cnt_frees_after_it_slept() {
        // depth 64: wake_cnt 8. Frees before anyone sleeps are not credited.
        let mut w = TagWait::new(64);
        assert_eq!(w.wake_cnt(), 8);
        for _ in 0..20 {
            assert!(w.tag_freed().is_empty());
        }
        w.sleep(ThreadId(7));
        for _ in 0..7 {
            assert!(w.tag_freed().is_empty());
        }
        assert_eq!(w.tag_freed(), vec![ThreadId(7)]);
        // A small tag set wakes on every free.
        let mut small = TagWait::new(8);
        small.sleep(ThreadId(1));
        small.sleep(ThreadId(2));
        assert_eq!(small.tag_freed(), vec![ThreadId(1)]);
        assert_eq!(small.tag_freed(), vec![ThreadId(2)]);
    }
}
