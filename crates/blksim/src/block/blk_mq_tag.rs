//! `block/blk-mq-tag.c` and `blk-mq-tag.h`: a tag set's driver tags (`struct blk_mq_tags`,
//! `struct blk_mq_tag_set`'s `tags[]`), the active queues that share them, and the rule by which
//! a task sleeping for a tag is woken.
//!
//! - The tags are the tag set's, not a request queue's: a SCSI host's set (`shost->tag_set`,
//!   `scsi_mq_setup_tags`: `can_queue` tags per hardware queue) serves every LUN's queue on
//!   that host; an NVMe controller's serves its namespace. Once a second queue uses the set,
//!   every hardware queue of it is marked shared (`BLK_MQ_F_TAG_SHARED`, 4.0;
//!   `BLK_MQ_F_TAG_QUEUE_SHARED`, 5.10; `blk_mq_update_tag_set_depth` /
//!   `blk_mq_update_tag_set_shared`).
//! - Fair sharing (3.16+ "blk-mq: improve support for shared tags maps"; read in v4.0 and
//!   v5.10): on a shared set a hardware queue goes active (`__blk_mq_tag_busy`:
//!   `BLK_MQ_S_TAG_ACTIVE`, `tags->active_queues`) and then may hold at most
//!   `max((depth + users - 1) / users, 4)` driver tags (`hctx_may_queue`); it goes idle again
//!   only when the queue's timeout work finds nothing in flight (`blk_mq_rq_timer` 4.0,
//!   `blk_mq_timeout_work` 5.10 → `blk_mq_tag_idle`), which wakes every waiter on the map.
//! - `host_tagset` (5.10, `BLK_MQ_F_TAG_HCTX_SHARED`): one map for every hardware queue of the
//!   set (`blk_mq_init_shared_sbitmap`), the fair share counted per request queue
//!   (`QUEUE_FLAG_HCTX_ACTIVE`, `set->active_queues_shared_sbitmap`,
//!   `q->nr_active_requests_shared_sbitmap`). The scheduler tags stay per hardware queue in
//!   5.10 (queue-wide ones came with d97e594c5166, v5.14).
//! - The wait (3.18-4.0 `bt_get`, kept by 5.x's `blk_mq_get_tag` over the scheduler tags or the
//!   driver tags): 8 wait queues (`BT_WAIT_QUEUES`); a sleeper goes on queue `wait_index`,
//!   which then moves on. Each freed tag is charged to the first non-empty wait queue at or
//!   after `wake_index`; when that queue has been charged `wake_cnt = min(8, max(1, depth /
//!   8))` frees, all of its sleepers are woken and `wake_index` moves on. A free while nobody
//!   sleeps is not credited.

use crate::block::TagMap;
use crate::engine::ids::{DevId, ThreadId};
use crate::engine::Sim;
use std::collections::VecDeque;

/// `struct blk_mq_tags`: one driver tag map, its wait queues, and how many hardware queues
/// using it are active (`active_queues`).
#[derive(Clone, Debug)]
pub struct BlkMqTags {
    pub map: TagMap,
    pub wait: TagWait,
    pub active_queues: u32,
    /// Hardware queues whose dispatch found no driver tag on a shared set
    /// (`hctx->dispatch_wait` on the map's wait queue, `blk_mq_mark_tag_wait`), each once.
    pub dispatch_wait: Vec<(DevId, u16)>,
}

impl BlkMqTags {
    fn new(depth: u32) -> BlkMqTags {
        BlkMqTags { map: TagMap::new(depth), wait: TagWait::new(depth.max(1)), active_queues: 0, dispatch_wait: Vec::new() }
    }

    /// `add_wait_queue(&ws->wait, &hctx->dispatch_wait)`, unless it is queued already.
    pub fn add_dispatch_wait(&mut self, dev: DevId, h: u16) {
        if !self.dispatch_wait.contains(&(dev, h)) {
            assert!(self.dispatch_wait.len() < crate::scenario::limits::BIOS_LIVE_MAX, "dispatch waiters over their limit");
            self.dispatch_wait.push((dev, h));
        }
    }
}

/// `struct blk_mq_tag_set`: the driver tags of every hardware queue (`tags[hctx_idx]`), or
/// with `host_tagset` one map for them all, and the request queues using it.
#[derive(Clone, Debug)]
pub struct BlkMqTagSet {
    pub tags: Vec<BlkMqTags>,
    /// `BLK_MQ_F_TAG_HCTX_SHARED` (`shost->host_tagset`).
    pub host_tagset: bool,
    /// `set->active_queues_shared_sbitmap`: request queues active on the one map.
    pub active_queues_shared_sbitmap: u32,
    /// The request queues on `set->tag_list`.
    pub nr_queues: u32,
}

impl BlkMqTagSet {
    /// `blk_mq_alloc_tag_set`: `nr_hw` maps of `depth` tags, or one with `host_tagset`.
    pub fn new(nr_hw: u32, depth: u32, host_tagset: bool) -> BlkMqTagSet {
        let maps = if host_tagset { 1 } else { nr_hw.max(1) };
        BlkMqTagSet { tags: (0..maps).map(|_| BlkMqTags::new(depth)).collect(), host_tagset, active_queues_shared_sbitmap: 0, nr_queues: 0 }
    }

    /// The map hardware queue `h` takes its driver tags from (`hctx->tags`).
    pub fn map_of(&self, h: u16) -> usize {
        if self.host_tagset {
            0
        } else {
            h as usize
        }
    }

    /// Every driver tag of the set.
    pub fn depth(&self) -> u32 {
        self.tags.iter().map(|t| t.map.depth()).sum()
    }

    /// Driver tags in use over the set.
    pub fn busy(&self) -> u32 {
        self.tags.iter().map(|t| t.map.busy()).sum()
    }
}

impl Sim {
    /// `bt_get` (4.0, with b32232073e) for `tid` on hardware queue `h` of `dev`: a free tag,
    /// else run that queue from here (`blk_mq_run_hw_queue(hctx, false)`) and try again, else
    /// sleep on the map's next wait queue (None: the caller sleeps). Woken, the caller comes
    /// back here with the hardware queue of the CPU it then runs on.
    pub(crate) fn bt_get(&mut self, dev: DevId, h: u16, tid: ThreadId) -> Option<u16> {
        self.blk_mq_get_tag(dev, h, tid, false)
    }

    /// `blk_mq_get_tag` (5.x): the same rule on the map `blk_mq_tags_from_data` picks, the
    /// hardware queue's scheduler tags (`sched`) or its driver tags (through
    /// `hctx_may_queue`'s fair share).
    pub(crate) fn blk_mq_get_tag(&mut self, dev: DevId, h: u16, tid: ThreadId, sched: bool) -> Option<u16> {
        if let Some(t) = self.get_tag_once(dev, h, sched) {
            return Some(t);
        }
        self.blk_mq_run_hw_queue(dev, h, false);
        if let Some(t) = self.get_tag_once(dev, h, sched) {
            return Some(t);
        }
        if sched {
            self.mq_sched_mut(dev).hctx[h as usize].sched_wait.sleep(tid);
        } else {
            self.hctx_tags_mut(dev, h).wait.sleep(tid);
        }
        None
    }

    fn get_tag_once(&mut self, dev: DevId, h: u16, sched: bool) -> Option<u16> {
        if sched {
            self.mq_sched_mut(dev).hctx[h as usize].sched_tags.get()
        } else {
            self.blk_mq_alloc_driver_tag(dev, h)
        }
    }

    /// The driver tags hardware queue `h` of `dev` takes from.
    pub(crate) fn hctx_tags(&self, dev: DevId, h: u16) -> &BlkMqTags {
        let set = &self.tag_sets[self.mq(dev).set as usize];
        &set.tags[set.map_of(h)]
    }

    pub(crate) fn hctx_tags_mut(&mut self, dev: DevId, h: u16) -> &mut BlkMqTags {
        let set = &mut self.tag_sets[self.devs[dev].queue.mq.as_ref().expect("a blk-mq queue").set as usize];
        let i = set.map_of(h);
        &mut set.tags[i]
    }

    /// A driver tag taken at allocation, without sleeping: 4.0's `__bt_get` (the fair share,
    /// then `__blk_mq_tag_busy` and `nr_active` once it has one, `__blk_mq_alloc_request`);
    /// 5.10's `__blk_mq_get_tag` without an elevator (`blk_mq_tag_busy` first, then the fair
    /// share; `nr_active` counts from the dispatch, `blk_mq_get_driver_tag`).
    pub(crate) fn blk_mq_alloc_driver_tag(&mut self, dev: DevId, h: u16) -> Option<u16> {
        let v5 = self.devs[dev].queue.mq_sched.is_some();
        if v5 {
            self.blk_mq_tag_busy(dev, h);
        }
        if !self.hctx_may_queue(dev, h) {
            return None;
        }
        let t = self.hctx_tags_mut(dev, h).map.get()?;
        self.mq_mut(dev).hctx[h as usize].tags_held += 1;
        if !v5 && self.blk_mq_tag_busy(dev, h) {
            self.blk_mq_inc_active_requests(dev, h, t);
        }
        Some(t)
    }

    /// A driver tag given back (`blk_mq_put_tag`, with `__blk_mq_dec_active_requests` if the
    /// request was counted, `RQF_MQ_INFLIGHT`): returns the sleepers the free wakes.
    pub(crate) fn blk_mq_put_driver_tag(&mut self, dev: DevId, h: u16, tag: u16) -> Vec<ThreadId> {
        let shared_sbitmap = self.tag_sets[self.mq(dev).set as usize].host_tagset;
        let m = self.mq_mut(dev);
        m.hctx[h as usize].tags_held -= 1;
        if m.mq_inflight.remove(&(h, tag)) {
            if shared_sbitmap {
                m.nr_active_shared -= 1;
            } else {
                m.hctx[h as usize].nr_active -= 1;
            }
        }
        let tags = self.hctx_tags_mut(dev, h);
        tags.map.put(tag);
        let woken = tags.wait.tag_freed();
        // blk_mq_dispatch_wake: every hardware queue waiting for a driver tag of this map is
        // run from kblockd (at the first free: INFERRED, the kernel's entry waits on one wait
        // queue for its wake batch).
        for (d, q) in std::mem::take(&mut tags.dispatch_wait) {
            self.blk_mq_run_hw_queue(d, q, true);
        }
        woken
    }

    /// `__blk_mq_inc_active_requests` for the request holding `tag` of hardware queue `h`,
    /// once (`RQF_MQ_INFLIGHT`), on a shared set only: 4.0 at allocation, 5.10 when
    /// `blk_mq_get_driver_tag` hands it to the driver.
    pub(crate) fn blk_mq_inc_active_requests(&mut self, dev: DevId, h: u16, tag: u16) {
        let shared_sbitmap = self.tag_sets[self.mq(dev).set as usize].host_tagset;
        let m = self.mq_mut(dev);
        if !m.shared_tags || !m.mq_inflight.insert((h, tag)) {
            return;
        }
        if shared_sbitmap {
            m.nr_active_shared += 1;
        } else {
            m.hctx[h as usize].nr_active += 1;
        }
    }

    /// `blk_mq_tag_busy` → `__blk_mq_tag_busy`: on a shared set, mark the hardware queue (or
    /// with `host_tagset` the request queue) active and count it among the map's users.
    /// False on an unshared set (4.0's callers count `nr_active` only when it is true).
    pub(crate) fn blk_mq_tag_busy(&mut self, dev: DevId, h: u16) -> bool {
        let m = self.devs[dev].queue.mq.as_mut().expect("a blk-mq queue");
        if !m.shared_tags {
            return false;
        }
        let set = &mut self.tag_sets[m.set as usize];
        if set.host_tagset {
            if !m.hctx_active {
                m.hctx_active = true;
                set.active_queues_shared_sbitmap += 1;
            }
        } else if !m.hctx[h as usize].tag_active {
            m.hctx[h as usize].tag_active = true;
            set.tags[h as usize].active_queues += 1;
        }
        true
    }

    /// `blk_mq_tag_idle` → `__blk_mq_tag_idle` for every hardware queue of `dev`: an active one
    /// is no longer counted, and every waiter on its map is woken to try again
    /// (`blk_mq_tag_wakeup_all`). Returns the woken.
    pub(crate) fn blk_mq_tag_idle(&mut self, dev: DevId) -> Vec<ThreadId> {
        let m = self.devs[dev].queue.mq.as_mut().expect("a blk-mq queue");
        let mut woken = Vec::new();
        if !m.shared_tags {
            return woken;
        }
        let set = &mut self.tag_sets[m.set as usize];
        if set.host_tagset {
            if std::mem::take(&mut m.hctx_active) {
                set.active_queues_shared_sbitmap -= 1;
                woken.extend(set.tags[0].wait.wake_all());
            }
            return woken;
        }
        for (h, q) in m.hctx.iter_mut().enumerate() {
            if std::mem::take(&mut q.tag_active) {
                set.tags[h].active_queues -= 1;
                woken.extend(set.tags[h].wait.wake_all());
            }
        }
        woken
    }

    /// `hctx_may_queue` (v4.0 block/blk-mq-tag.c; v5.10 block/blk-mq.h): on a shared set an
    /// active hardware queue (request queue, with `host_tagset`) may hold
    /// `max(ceil(depth / users), 4)` driver tags; an unshared set, an inactive queue, a map
    /// of one tag or no users: no limit. With `host_tagset` v5.10 itself tests the active bit
    /// in the wrong word (`BLK_MQ_S_TAG_ACTIVE` in `q->queue_flags`, never set, so it never
    /// limits); 2569063c7140 (5.11-rc2, and 5.10's stable releases) tests
    /// `QUEUE_FLAG_HCTX_ACTIVE`, which is the rule here.
    pub(crate) fn hctx_may_queue(&self, dev: DevId, h: u16) -> bool {
        let m = self.mq(dev);
        if !m.shared_tags {
            return true;
        }
        let set = &self.tag_sets[m.set as usize];
        let tags = &set.tags[set.map_of(h)];
        if tags.map.depth() == 1 {
            return true;
        }
        let (active, users, held) = if set.host_tagset {
            (m.hctx_active, set.active_queues_shared_sbitmap, m.nr_active_shared)
        } else {
            (m.hctx[h as usize].tag_active, tags.active_queues, m.hctx[h as usize].nr_active)
        };
        if !active || users == 0 {
            return true;
        }
        held < fair_share(tags.map.depth(), users)
    }
}

impl Sim {
    /// Each map's tags are the tags its hardware queues' requests hold, over every queue of the
    /// set; the active counts are the queues marked active; `nr_active` counts tags held.
    pub(crate) fn check_tag_sets(&self) {
        let mut held: Vec<Vec<u32>> = self.tag_sets.iter().map(|s| vec![0; s.tags.len()]).collect();
        let mut active: Vec<Vec<u32>> = held.clone();
        let mut active_queues = vec![0; self.tag_sets.len()];
        for d in self.devs.iter() {
            let Some(m) = &d.queue.mq else { continue };
            let set = &self.tag_sets[m.set as usize];
            for (h, q) in m.hctx.iter().enumerate() {
                held[m.set as usize][set.map_of(h as u16)] += q.tags_held;
                active[m.set as usize][set.map_of(h as u16)] += q.tag_active as u32;
                assert!(q.nr_active <= q.tags_held, "{} hctx {h}: nr_active over its tags", d.name);
            }
            active_queues[m.set as usize] += m.hctx_active as u32;
            assert!(m.nr_active_shared <= m.tags_busy(), "{}: nr_active_requests_shared_sbitmap over its tags", d.name);
            assert_eq!(
                m.mq_inflight.len() as u32,
                m.nr_active_shared + m.hctx.iter().map(|q| q.nr_active).sum::<u32>(),
                "{}: RQF_MQ_INFLIGHT",
                d.name
            );
        }
        for (i, set) in self.tag_sets.iter().enumerate() {
            assert_eq!(set.active_queues_shared_sbitmap, active_queues[i], "active_queues_shared_sbitmap");
            for (j, t) in set.tags.iter().enumerate() {
                assert!(t.map.busy() <= t.map.depth(), "driver tags over the map's depth");
                assert_eq!(t.map.busy(), held[i][j], "a driver tag without its hardware queue");
                assert_eq!(t.active_queues, active[i][j], "active_queues");
            }
        }
    }
}

/// `hctx_may_queue`'s share: `max((depth + users - 1) / users, 4U)`.
pub fn fair_share(depth: u32, users: u32) -> u32 {
    depth.div_ceil(users).max(4)
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

    /// Two RAM LUNs on one host of 32 tags, `none`, under `kernel`.
    fn two_luns(kernel: &str) -> Sim {
        let mut s = crate::scenario::Scenario::default();
        for (k, v) in [
            ("kernel", kernel),
            ("disk.kind", "ramlun"),
            ("disks", "2"),
            ("hbas", "1"),
            ("host.can_queue", "32"),
            ("queue.depth", "64"),
            ("queue.scheduler", "none"),
        ] {
            crate::scenario::set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn the_fair_share_is_a_ceiling_of_depth_over_users_and_at_least_4() {
        assert_eq!((fair_share(32, 1), fair_share(32, 2), fair_share(32, 3), fair_share(62, 4)), (32, 16, 11, 16));
        assert_eq!(fair_share(32, 16), 4, "allow at least some tags");
        let set = BlkMqTagSet::new(4, 32, true);
        assert_eq!((set.tags.len(), set.depth(), set.map_of(3)), (1, 32, 0), "host_tagset: one map for all four");
        let set = BlkMqTagSet::new(4, 32, false);
        assert_eq!((set.tags.len(), set.depth(), set.map_of(3)), (4, 128, 3));
    }

    #[test]
    fn with_host_tagset_the_share_is_counted_per_request_queue_over_all_its_hardware_queues() {
        let mut s = crate::scenario::Scenario::default();
        for (k, v) in [
            ("kernel", "5.10"),
            ("disk.kind", "ramlun"),
            ("disks", "2"),
            ("hbas", "1"),
            ("cpu.cores", "4"),
            ("host.nr_hw_queues", "4"),
            ("host.can_queue", "32"),
            ("queue.depth", "64"),
            ("queue.scheduler", "none"),
            ("host.host_tagset", "true"),
        ] {
            crate::scenario::set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        let (sda, sdb) = (DevId(0), DevId(1));
        let take = |sim: &mut Sim, dev: DevId, hctxs: &[u16]| {
            let mut n = 0;
            for &h in hctxs.iter().cycle() {
                let Some(t) = sim.blk_mq_alloc_driver_tag(dev, h) else { break };
                sim.blk_mq_inc_active_requests(dev, h, t);
                n += 1;
            }
            n
        };
        // sdb takes one tag on one hardware queue: it is the set's second active queue.
        assert_eq!(sim.blk_mq_alloc_driver_tag(sdb, 0).map(|t| sim.blk_mq_inc_active_requests(sdb, 0, t)), Some(()));
        // sda on three hardware queues holds 16 in all, not 8 a hardware queue: the one map's
        // users are the two request queues (active_queues_shared_sbitmap).
        assert_eq!(take(&mut sim, sda, &[0, 1, 2]), 16);
        assert_eq!(sim.tag_sets[0].active_queues_shared_sbitmap, 2);
        assert_eq!(1 + take(&mut sim, sdb, &[3]), 16, "sdb's share on its one hardware queue");
        assert_eq!(sim.tag_sets[0].busy(), 32);
        sim.check_tag_sets();
    }

    #[test]
    fn a_queue_that_found_the_map_full_counts_as_a_user_from_5_10_not_in_4_0() {
        let (sda, sdb) = (DevId(0), DevId(1));
        for kernel in ["4.0", "5.10"] {
            let mut sim = two_luns(kernel);
            assert!(sim.mq(sda).shared_tags && sim.mq(sda).set == sim.mq(sdb).set, "one set for the host's two LUNs");
            // sda alone takes every tag (each counted active, as dispatch counts it in 5.10).
            let tags: Vec<u16> = (0..32).map(|_| sim.blk_mq_alloc_driver_tag(sda, 0).expect("sda alone has the map")).collect();
            for &t in &tags {
                sim.blk_mq_inc_active_requests(sda, 0, t);
            }
            assert_eq!(sim.blk_mq_alloc_driver_tag(sdb, 0), None, "the map is full");
            sim.blk_mq_put_driver_tag(sda, 0, tags[0]);
            let again = sim.blk_mq_alloc_driver_tag(sda, 0);
            if kernel == "4.0" {
                // __blk_mq_tag_busy only after a tag: sdb is no user, sda keeps the whole map.
                assert_eq!(sim.hctx_tags(sda, 0).active_queues, 1);
                assert!(again.is_some(), "4.0: sda takes the freed tag back");
            } else {
                // blk_mq_tag_busy before the try: sdb counts, sda (31 held) is over 16.
                assert_eq!(sim.hctx_tags(sda, 0).active_queues, 2);
                assert_eq!(again, None, "5.10: sda is held to its share");
                assert!(sim.blk_mq_alloc_driver_tag(sdb, 0).is_some(), "the freed tag is sdb's");
            }
            sim.check_tag_sets();
            // Idle (nothing in flight on sdb): sdb no longer counts.
            sim.blk_mq_tag_idle(sdb);
            assert_eq!(sim.hctx_tags(sda, 0).active_queues, 1);
        }
    }

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
