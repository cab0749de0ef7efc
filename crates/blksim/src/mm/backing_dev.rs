//! `mm/backing-dev.c` (2.6.32; `ll_rw_blk.c` in 2.6.2): `bdi_write_congested` down the stack
//! and `congestion_wait`.

use crate::block::DevKind;
use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::Wait;

/// `struct backing_dev_info`, in its request queue as 2.6 keeps it: the device's page
/// completions (`bdi->completions`), its flusher thread (top-level devices only: the bdi jobs
/// write to), and where that thread's round of files stands (file, bytes left).
#[derive(Clone, Debug)]
pub struct BackingDevInfo {
    pub completions: crate::mm::page_writeback::PropLocal,
    pub flusher: Option<ThreadId>,
    pub flush_cursor: (usize, u64),
}

impl Default for BackingDevInfo {
    fn default() -> Self {
        BackingDevInfo { completions: Default::default(), flusher: None, flush_cursor: (0, MAX_WRITEBACK_BYTES) }
    }
}

impl Sim {
    /// `bdi_write_congested`: is the device writeback would write to congested? A request
    /// queue reports its own pool; dm reports its members' only with a congestion callout
    /// (`dm_any_congested`, 2.6.6+; before that a dm device was never congested); md asks its
    /// members (`md_congested`).
    pub(crate) fn bdi_write_congested(&self, dev: DevId) -> bool {
        let d = &self.devs[dev];
        let callout = self.cfg.scenario.dm.congestion_callout;
        match &d.kind {
            DevKind::Sd { .. } | DevKind::Nvme { .. } => d.queue.congested[1],
            DevKind::DmMpath { paths, .. } => d.queue.congested[1] || (callout && paths.iter().any(|&p| self.bdi_write_congested(p))),
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
        self.vm.congestion_waiters.push(tid);
        Next::Sleep(Wait::Congestion)
    }
}

impl Sim {
    /// One writeback thread per top-level block device, as 2.6.32+ has (flush-MAJ:MIN); before
    /// 2.6.32, background writeback is a pdflush thread's.
    pub(crate) fn bdi_start_flushers(&mut self, top: &[DevId]) {
        let s = &self.cfg.scenario;
        for (i, &dev) in top.iter().enumerate() {
            self.devs[dev].queue.bdi.flusher = Some(ThreadId(self.threads.len() as u32));
            let home = CoreId((i as u32 % s.cpu.cores) as u16);
            let d = &self.devs[dev];
            let name = match s.vm.writeback {
                crate::scenario::Writeback::PerBdi => format!("flush-{}:{}", d.major, d.minor),
                crate::scenario::Writeback::Pdflush => "pdflush".to_string(),
            };
            let kind = crate::kernel::sched::ThreadKind::Flusher(dev);
            self.threads.push(crate::kernel::sched::Thread::kernel(name, kind, home, 400 + i as u32));
        }
    }
}
