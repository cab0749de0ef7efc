//! `block/blk-sysfs.c`: the queue knobs a sysfs write changes on a running system
//! (`queue_requests_store` and friends).

use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::sched::Step;

impl Sim {
    /// Applies a knob to the running simulation where the kernel applies it live (a sysfs
    /// write to `nr_requests`, `queue_depth` or `max_sectors_kb`). Returns Ok(false) when the
    /// knob cannot change under a running stack and the run must restart with it.
    pub fn apply_live(&mut self, key: &str, value: &str) -> Result<bool, crate::scenario::ScenarioError> {
        let mut s = self.cfg.scenario.clone();
        crate::scenario::set_knob(&mut s, key, value)?;
        let cfg = s.validate()?;
        match key {
            "queue.nr_requests" => {
                for d in 0..self.devs.len() {
                    self.devs[d].queue.nr_requests = s.queue.nr_requests;
                    let q = &mut self.devs[d].queue;
                    q.draining = q.pool_count.iter().any(|&c| c > q.nr_requests);
                    // queue_requests_store: a larger pool wakes the sleepers it now has room for.
                    for dir in 0..2 {
                        if self.devs[d].queue.pool_count[dir] < s.queue.nr_requests {
                            if let Some(w) = self.devs[d].queue.waiters[dir].pop_front() {
                                self.wake(w, Step::RetryGetRequest);
                            }
                        }
                    }
                }
            }
            "queue.depth" => {
                for d in 0..self.devs.len() {
                    if self.devs[d].is_leaf() {
                        self.devs[d].queue.tags.set_depth(crate::block::tag_depth(&s));
                        self.run_queue(DevId(d as u16));
                    }
                }
            }
            "queue.scheduler" => {
                for d in &mut self.devs {
                    d.queue.elevator.set_kind(crate::block::elevator_kind(s.queue.scheduler));
                }
            }
            // iosched_store: the elevator reads its tunables at its next decision.
            k if k.starts_with("iosched.") => {
                let tun = crate::block::elevator::tunables(&s.queue.iosched);
                for d in &mut self.devs {
                    d.queue.elevator.set_tunables(tun);
                }
            }
            "disk.max_sectors_kb" => {
                // The disks' queues, and LVM's volumes built with their limit; md and dm
                // multipath keep their own.
                for d in &mut self.devs {
                    if d.is_leaf() || matches!(d.kind, crate::block::DevKind::DmLinear { .. }) {
                        d.queue.max_sectors_bytes = s.disk.max_sectors_kb as u64 * 1024;
                    }
                }
            }
            // Live in the kernel, and nothing in the running model caches them: the new value
            // is simply in force from now on (mechanisms not modelled yet show as model gaps).
            _ if crate::scenario::knob_spec(key).is_some_and(|k| k.live) => {}
            _ => return Ok(false),
        }
        self.cfg = cfg;
        Ok(true)
    }
}
