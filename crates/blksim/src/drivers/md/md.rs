//! md's core (`drivers/md/md.c`): starting an array (`md_run`, which runs its personality's
//! `run`, here RAID5's) and waking its thread (`md_wakeup_thread`).

use super::raid5::Raid5;
use crate::engine::ids::{CoreId, DevId, ThreadId};
use crate::engine::Sim;
use crate::kernel::sched::{Step, ThreadKind};

impl Sim {
    /// `md_run`: each md device's RAID5 array and its raid5d thread.
    pub(crate) fn md_run(&mut self) {
        let s = &self.cfg.scenario;
        for i in 0..self.devs.len() {
            let d = &self.devs[i];
            if let crate::block::DevKind::Md { members } = &d.kind {
                let (dev, tid) = (DevId(i as u16), ThreadId(self.threads.len() as u32));
                let raid = Raid5::new(dev, members.clone(), s.md.chunk_kb, s.md.stripe_cache_size, tid);
                let name = format!("{}_raid5", d.name);
                self.threads.push(crate::kernel::sched::Thread::kernel(name, ThreadKind::Raid5d(dev), CoreId(0), 300 + i as u32));
                self.md.raid5.push(raid);
            }
        }
    }

    /// `md_wakeup_thread(mddev->thread)`: raid5d wakes if it sleeps; if it is running, its
    /// `THREAD_WAKEUP` makes it run another pass.
    pub(crate) fn md_wakeup_thread(&mut self, r: usize) {
        let raid5d = self.md.raid5[r].raid5d;
        if self.threads[raid5d].is_idle_kthread() {
            self.md.raid5[r].wakeup = false;
            self.wake(raid5d, Step::Raid5d);
        } else {
            self.md.raid5[r].wakeup = true;
        }
    }
}
