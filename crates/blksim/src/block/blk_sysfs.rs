//! `block/blk-sysfs.c`: the queue knobs a sysfs write changes on a running system
//! (`queue_requests_store` and friends).

use crate::engine::ids::*;
use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::kernel::sched::Step;
use crate::scenario::{Live, Scenario, ScenarioError, Store};

impl Sim {
    /// Applies a knob to the running simulation where the kernel applies it live (a sysfs
    /// write to `nr_requests`, `queue_depth` or `max_sectors_kb`). Returns Ok(false) when the
    /// knob cannot change under a running stack and the run must restart with it. Which store
    /// a knob makes is its table entry's (`KnobSpec::live`).
    pub fn apply_live(&mut self, key: &str, value: &str) -> Result<bool, ScenarioError> {
        let mut s = self.cfg.scenario.clone();
        crate::scenario::set_knob(&mut s, key, value)?;
        let cfg = s.validate()?;
        let applied = match crate::scenario::knob_spec(key).map_or(Live::Restart, |k| k.live) {
            Live::Restart => false,
            Live::Config => true,
            Live::Store(store) => self.sysfs_store(store, &s),
        };
        if applied {
            self.cfg = cfg;
        }
        Ok(applied)
    }

    /// One live store into the running stack, `s` holding the new value; false when the run
    /// must restart with it instead.
    fn sysfs_store(&mut self, store: Store, s: &Scenario) -> bool {
        match store {
            Store::QueueRequests => self.queue_requests_store(s.queue.nr_requests),
            Store::QueueDepth => self.queue_depth_store(crate::block::tag_depth(s)),
            Store::Elevator => return self.elv_iosched_store(s),
            // iosched_store: the elevator reads its tunables at its next decision.
            Store::IoschedTunable => {
                let tun = crate::block::elevator::tunables(&s.queue.iosched);
                for d in &mut self.devs {
                    d.queue.elevator.set_tunables(tun);
                }
            }
            Store::DmMaxSectors => self.dm_max_sectors_store(crate::block::genhd::dm_mpath_max_sectors_kb(s)),
            Store::MaxSectors => return self.queue_max_sectors_store(s.disk.max_sectors_kb),
            // Not sysfs but the run's own end (fio's runtime): nothing in the model reads it, so
            // a later end lets the run go on; an end the clock has passed restarts it (a run
            // past its duration would report what a replay of the link does not).
            Store::Runtime => return SimTime::from_secs_f64(s.duration_s) >= self.now(),
        }
        true
    }

    /// queue_requests_store: a larger pool wakes the sleepers it now has room for.
    fn queue_requests_store(&mut self, nr_requests: u32) {
        for d in 0..self.devs.len() {
            let q = &mut self.devs[d].queue;
            q.nr_requests = nr_requests;
            q.draining = q.pool_count.iter().any(|&c| c > q.nr_requests);
            for dir in 0..2 {
                if self.devs[d].queue.pool_count[dir] < nr_requests {
                    if let Some(w) = self.devs[d].queue.waiters[dir].pop_front() {
                        self.wake(w, Step::RetryGetRequest);
                    }
                }
            }
        }
    }

    /// sdev_store_queue_depth on every disk: its tags, and a run of its queue for the room.
    fn queue_depth_store(&mut self, depth: u32) {
        for d in 0..self.devs.len() {
            if self.devs[d].is_leaf() {
                self.devs[d].queue.tags.set_depth(depth);
                self.run_queue(DevId(d as u16));
            }
        }
    }

    /// elevator_switch: a legacy queue offers noop, deadline and cfq; blk-mq's are other files
    /// on another queue type (writing "none" to a legacy queue is EINVAL): a change between
    /// the two restarts the run, built the other way.
    fn elv_iosched_store(&mut self, s: &Scenario) -> bool {
        let scheduler = s.queue.scheduler;
        // Another queue type, or another blk-mq dispatch (bfq and kyber bring 5.x's with them
        // where no kernel is set): the run restarts with it.
        if crate::block::is_mq(scheduler) != crate::block::is_mq(self.cfg.scenario.queue.scheduler)
            || s.blk_mq.dispatch != self.cfg.scenario.blk_mq.dispatch
        {
            return false;
        }
        // 5.x's elevator_switch freezes and quiesces the queue and gives it new scheduler
        // tags: the run restarts with the new elevator.
        if self.devs.iter().any(|d| d.queue.mq_sched.is_some()) {
            return false;
        }
        for d in &mut self.devs {
            d.queue.elevator.set_kind(crate::block::elevator_kind(scheduler));
        }
        true
    }

    /// queue_max_sectors_store on dm-N: its own limit, within what its paths take.
    fn dm_max_sectors_store(&mut self, max_sectors_kb: u32) {
        for d in &mut self.devs {
            if matches!(d.kind, crate::block::DevKind::DmMpath { .. }) {
                d.queue.max_sectors_bytes = max_sectors_kb as u64 * 1024;
            }
        }
    }

    /// queue_max_sectors_store on the disks' queues, and LVM's volumes built with their limit;
    /// md keeps its own. Under request-based dm the paths' limits were stacked onto dm-N when
    /// its table was loaded; a lower limit written afterwards would fail dm's larger clones
    /// (blk_rq_check_limits: EIO), which the model does not do: the run restarts, and the
    /// table is loaded with the new limit.
    fn queue_max_sectors_store(&mut self, max_sectors_kb: u32) -> bool {
        if self.devs.iter().any(|d| matches!(d.kind, crate::block::DevKind::DmMpath { .. })) {
            return false;
        }
        for d in &mut self.devs {
            if d.is_leaf() || matches!(d.kind, crate::block::DevKind::DmLinear { .. }) {
                d.queue.max_sectors_bytes = max_sectors_kb as u64 * 1024;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::time::SimTime;
    use crate::engine::Sim;

    fn dm_limits_kb(sim: &Sim) -> Vec<u32> {
        sim.topology().devices.iter().filter(|d| d.name.starts_with("dm-")).map(|d| d.max_sectors_kb).collect()
    }

    /// `echo 128 > /sys/block/dm-N/queue/max_sectors_kb` on a running dm-sg-lists: the dm
    /// devices' limit is 128 KiB from then on, so the throughput becomes the workaround's: the
    /// write reaches the queues, not only the configuration.
    #[test]
    fn a_live_dm_max_sectors_kb_write_limits_the_dm_queues_from_then_on() {
        let l = crate::course::lessons::find("dm-sg-lists").unwrap();
        let mut live = Sim::new(&l.config("regressed", &[]).unwrap(), 1);
        assert!(dm_limits_kb(&live).iter().all(|&k| k == 512));
        assert!(live.apply_live("dm.max_sectors_kb", "128").unwrap());
        assert!(dm_limits_kb(&live).iter().all(|&k| k == 128));
        live.run_until(SimTime::from_secs_f64(0.5));
        let mut fresh = Sim::new(&l.config("workaround", &[]).unwrap(), 1);
        fresh.run_until(SimTime::from_secs_f64(0.5));
        let done = |s: &Sim| s.totals().requests_completed as f64;
        assert!((done(&live) / done(&fresh) - 1.0).abs() < 0.05, "{} live against {} fresh", done(&live), done(&fresh));
        // Over a path's limit it is capped there (the paths' limits stack onto dm-N), and a
        // lower path limit written under a running dm table restarts the run.
        assert!(live.apply_live("dm.max_sectors_kb", "2048").unwrap());
        assert!(dm_limits_kb(&live).iter().all(|&k| k == 512));
        assert!(!live.apply_live("disk.max_sectors_kb", "64").unwrap());
    }

    /// `echo bfq > queue/scheduler` in the sandbox (no kernel) on a blk-mq disk run as 4.0 ran
    /// it: bfq brings 5.x's dispatch, which a running queue cannot change, so the run restarts;
    /// none to mq-deadline under 4.0's dispatch switches live.
    #[test]
    fn an_elevator_that_brings_another_dispatch_restarts_the_run() {
        let l = crate::course::lessons::find(crate::course::lessons::SANDBOX).unwrap();
        let knobs = [("queue.scheduler".to_string(), "none".to_string())];
        let mut live = Sim::new(&l.config(&l.first_variant().name, &knobs).unwrap(), 1);
        live.run_until(SimTime::from_secs_f64(0.01));
        assert!(live.apply_live("queue.scheduler", "mq-deadline").unwrap());
        assert!(!live.apply_live("queue.scheduler", "bfq").unwrap());
        assert!(!live.apply_live("queue.scheduler", "kyber").unwrap());
    }
}
