//! `mm/backing-dev.c` (2.6.32; `ll_rw_blk.c` in 2.6.2): `bdi_write_congested` down the stack
//! and `congestion_wait`.

use crate::block::DevKind;
use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::Wait;

impl Sim {
    /// `bdi_write_congested`: is the device writeback would write to congested? A request
    /// queue reports its own pool; dm reports its members' only with a congestion callout
    /// (`dm_any_congested`, 2.6.6+; before that a dm device was never congested); md asks its
    /// members (`md_congested`).
    pub(crate) fn bdi_write_congested(&self, dev: DevId) -> bool {
        let d = &self.devs[dev];
        let callout = self.cfg.scenario.dm.congestion_callout;
        match &d.kind {
            DevKind::Sd { .. } => d.queue.congested[1],
            DevKind::DmMpath { paths } => d.queue.congested[1] || (callout && paths.iter().any(|&p| self.bdi_write_congested(p))),
            DevKind::DmLinear { lower } => callout && self.bdi_write_congested(*lower),
            DevKind::Md { members } => members.iter().any(|&m| self.bdi_write_congested(m)),
        }
    }

    /// `blk_congestion_wait(WRITE, HZ/10)`: sleep until some queue leaves write congestion
    /// (`clear_queue_congested` wakes every waiter), or for 100 ms.
    pub(crate) fn congestion_wait(&mut self, tid: ThreadId) -> Next {
        let at = self.now() + CONGESTION_WAIT_NS;
        let th = &mut self.threads[tid];
        th.congestion_until = Some(at);
        if !th.congestion_timer_armed {
            th.congestion_timer_armed = true;
            self.events.schedule(at, Event::Timeout { thread: tid });
        }
        self.congestion_waiters.push(tid);
        Next::Sleep(Wait::Congestion)
    }
}
