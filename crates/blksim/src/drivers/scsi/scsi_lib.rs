//! `drivers/scsi/scsi_lib.c`: `scsi_request_fn`, `scsi_run_queue` and the host's starved list,
//! `scsi_lld_busy`, and the HBA's completion interrupt (`scsi_done`).

use crate::calib::DISPATCH_NS;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::scenario::RunQueueMode;

impl Sim {
    /// `scsi_lld_busy`: the device has no free tag or the host is full. Request-based dm asks
    /// it of the path (`multipath_busy`) before taking a request off its own queue.
    pub(crate) fn lld_busy(&self, dev: DevId) -> bool {
        let (_, h) = self.devs[dev].sd();
        self.devs[dev].queue.tags.is_full() || self.hosts[h].is_busy()
    }

    /// The leaf queue's request_fn (`scsi_request_fn`).
    pub(crate) fn scsi_request_fn(&mut self, dev: DevId) {
        let now = self.now();
        let di = dev.idx();
        while let Some(rq) = self.devs[di].queue.elevator.next(now) {
            // blk-mq requests got their tag when they were allocated.
            let has_tag = self.reqs.get(rq.0).tag.is_some();
            if !has_tag && self.devs[di].queue.tags.is_full() {
                break;
            }
            let (_, h) = self.devs[di].sd();
            if !self.hosts[h].try_get(dev) {
                // not_ready → out_delay: with nothing of its own in flight no completion
                // will run this queue, so it polls from kblockd every SCSI_QUEUE_DELAY.
                if self.devs[di].queue.tags.busy() == 0 {
                    self.delay_queue(dev);
                }
                break;
            }
            self.devs[di].queue.elevator.dispatched(rq);
            let tag = match self.reqs.get(rq.0).tag {
                Some(t) => t,
                None => self.devs[di].queue.tags.get().expect("checked not full"),
            };
            self.reqs.get_mut(rq.0).tag = Some(tag);
            // blk_peek_request and blk_start_request, under the queue lock.
            self.spin_lock_queue(dev, crate::calib::QUEUE_LOCK_START_NS);
            self.start_command(dev, rq);
        }
    }

    /// `scsi_dispatch_cmd`: the command goes to the target (D in the trace).
    pub(crate) fn start_command(&mut self, dev: DevId, rq: ReqId) {
        let (disk, _) = self.devs[dev].sd();
        // The request_fn's prep and the driver's queuecommand, traced as the command goes out.
        self.drive_submit(dev, disk, rq, DISPATCH_NS);
    }

    pub(crate) fn on_disk_done(&mut self, disk: DiskId, slot: u16) {
        let now = self.now();
        let mut started = std::mem::take(&mut self.disks[disk].started);
        let cmd = self.disks[disk].complete(now, slot, &mut started);
        for (slot, done) in started.drain(..) {
            self.events.schedule(done, Event::DiskDone { disk, slot });
        }
        self.disks[disk].started = started;
        // A RAID controller's own stripe operation ended: no host command completes.
        let Some(cmd) = cmd else { return };
        let dev = self.reqs.get(cmd.req.0).dev;
        if self.devs[dev].is_nvme() {
            return self.nvme_irq(cmd.req);
        }
        let (_, host) = self.devs[dev].sd();
        // Every hardware queue's completions interrupt the host's CPU: each SRP channel has its
        // own completion vector, but with the affinity the era's defaults gave them (all CPUs,
        // delivered to the first) they land on one CPU (INFERRED).
        // The data crosses the HBA's link before the reply comes (`host.link_mb_s`).
        let h = &mut self.hosts[host];
        let through = h.link_through_at(now, cmd.bytes);
        if through == now && h.link_queue.is_empty() {
            return self.host_interrupt(host, cmd.req);
        }
        assert!(h.link_queue.len() < h.busy_max() as usize, "link queue over the host's commands");
        h.link_queue.push_back((through, cmd.req));
        if h.link_queue.len() == 1 {
            self.events.schedule(through, Event::HostLink { host });
        }
    }

    /// The command at the head of `host`'s link queue is through: its interrupt is raised.
    pub(crate) fn host_link_through(&mut self, host: HostId) {
        let (_, rq) = self.hosts[host].link_queue.pop_front().expect("a link event has a command");
        if let Some(&(next, _)) = self.hosts[host].link_queue.front() {
            self.events.schedule(next, Event::HostLink { host });
        }
        self.host_interrupt(host, rq);
    }

    /// The HBA's completion interrupt for `rq`, on the CPU its vector is routed to; the block
    /// softirq runs where `rq_affinity` places it.
    fn host_interrupt(&mut self, host: HostId, rq: ReqId) {
        let irq_cpu = self.irq_cpu_of(host, rq);
        let cpu = self.completion_cpu(irq_cpu, self.reqs.get(rq.0).cpu);
        if cpu != irq_cpu {
            // The IPI (`__smp_call_function_single` → `trigger_softirq`) is an interrupt of
            // its own on the target CPU: /proc/stat's intr, vmstat's in, count it.
            self.acct.totals.interrupts += 1;
        }
        self.raise_irq(cpu, rq);
    }

    /// The CPU taking `rq`'s completion interrupt: the HBA's, or with `host.irq_per_hw_queue` the
    /// first CPU of the blk-mq hardware queue `rq` went out on (ib_srp: that channel's own
    /// completion vector; the CPU it is routed to is INFERRED). Completions on one CPU are
    /// handled one after another, as `srp_recv_completion` polls its queue until it is empty.
    pub(crate) fn irq_cpu_of(&self, host: HostId, rq: ReqId) -> CoreId {
        let r = self.reqs.get(rq.0);
        match &self.devs[r.dev].queue.mq {
            Some(m) if self.cfg.scenario.host.irq_per_hw_queue => CoreId(m.hctx[r.hctx as usize].first_cpu),
            _ => self.hosts[host].irq_cpu,
        }
    }

    /// `__blk_complete_request` (2.6.28-3.x): where the block softirq of a request runs.
    /// - `rq_affinity` 1: if the interrupted CPU is in the submitter's cache group, there;
    ///   otherwise, by IPI, on the group's first CPU (`req->cpu = blk_cpu_to_group(cpu)` at
    ///   `__make_request`, `cpumask_first(cpu_coregroup_mask)`), the same CPU for every
    ///   submitter of that socket.
    /// - `rq_affinity` 2 (3.1): on the submitting CPU itself unless the interrupt came in there.
    /// - 0, or a request with no `req->cpu`: where the interrupt came in.
    pub(crate) fn completion_cpu(&self, irq_cpu: CoreId, req_cpu: Option<CoreId>) -> CoreId {
        let s = &self.cfg.scenario;
        let per_socket = (s.cpu.cores / s.cpu.sockets) as u16;
        let group = |c: CoreId| CoreId(c.0 / per_socket * per_socket);
        match (s.queue.rq_affinity, req_cpu) {
            (1, Some(c)) if group(c) != group(irq_cpu) => group(c),
            (2, Some(c)) => c,
            _ => irq_cpu,
        }
    }

    /// `scsi_device_unbusy` (2.6.x-4.x `scsi_finish_command`, before `scsi_io_completion` ends
    /// the request's bios): the host slot is free from the start of the completion's softirq
    /// work, so a queue run on another CPU meanwhile can take it before this device's own run
    /// at the end of that work.
    pub(crate) fn scsi_device_unbusy(&mut self, rq: ReqId) {
        let r = self.reqs.get_mut(rq.0);
        if r.host_freed || self.devs[r.dev].is_nvme() {
            return;
        }
        r.host_freed = true;
        let (_, h) = self.devs[r.dev].sd();
        self.hosts[h].put();
    }

    /// `scsi_run_queue`, called on every command completion: run the devices the host starved,
    /// in list order, while the host has room; put the rest back at the head of the list; then
    /// run this device's own queue.
    /// - `direct` (before c21e6beb) and `fixed` (9937a5e2 + 466c08c7) run them here, so the
    ///   first one to dispatch fills the host and the loop stops with the rest still listed.
    /// - `kblockd` (c21e6beb) only punts each run to kblockd: nothing dispatches during the loop,
    ///   so every starved device is taken off the list and punted, and this device's own queue,
    ///   run synchronously, takes the free slot first. Each kblockd run then finds the host busy
    ///   and re-adds its device in the order kblockd ran them.
    pub(crate) fn scsi_run_queue(&mut self, dev: DevId) {
        if self.devs[dev].queue.mq_sched.is_some() {
            // scsi-mq (5.x `scsi_end_request`): run every hardware queue of this LUN from
            // kblockd (`blk_mq_run_hw_queues(q, true)`).
            self.blk_mq_run_hw_queues(dev);
            return;
        }
        if self.devs[dev].queue.mq.is_some() {
            // scsi-mq (4.0 `scsi_end_request`): restart this LUN's STOPPED hardware queues.
            // Its starved-list branch (several LUNs on a busy host) is not modelled.
            self.blk_mq_start_stopped_hw_queues(dev);
            return;
        }
        let (_, h) = self.devs[dev].sd();
        let mut starved = self.hosts[h].take_starved();
        while !self.hosts[h].is_busy() {
            let Some(sdev) = starved.pop_front() else { break };
            match self.cfg.scenario.scsi.run_queue {
                RunQueueMode::Direct | RunQueueMode::Fixed => self.run_queue(sdev),
                RunQueueMode::Kblockd => {
                    let cpu = CoreId(self.current.cpu);
                    self.run_queue_async(sdev, cpu);
                }
            }
        }
        self.hosts[h].splice_back(starved);
        // blk_run_queue: removes the plug (2.6.20 plugging) and runs the queue.
        self.remove_plug(dev);
        self.run_queue(dev);
    }
}

/// The 5.x scsi-mq dispatch (`blk_mq.dispatch = 5.0`; read in v5.8 drivers/scsi/scsi_lib.c).
impl Sim {
    /// `scsi_mq_get_budget` (4.15+): `scsi_dev_queue_ready`, the LUN's `queue_depth` admitted
    /// before a request is taken from the elevator or a software queue.
    pub(crate) fn scsi_mq_get_budget(&mut self, dev: DevId) -> bool {
        let m = self.mq_mut(dev);
        if m.device_busy >= m.device_depth {
            return false;
        }
        m.device_busy += 1;
        true
    }

    /// `scsi_mq_put_budget`: a budget taken and not used.
    pub(crate) fn scsi_mq_put_budget(&mut self, dev: DevId) {
        let m = self.mq_mut(dev);
        assert!(m.device_busy > 0, "budget put without one taken");
        m.device_busy -= 1;
    }

    /// `scsi_queue_rq` (5.x), with the budget and the driver tag already held: the host's
    /// admission (`scsi_host_queue_ready`), which since 5.5 (6eb045e092ef) does not refuse at
    /// `can_queue` (the tag set's tags bound the host); refused, the budget goes back and the
    /// answer says whether a completion of this LUN will run the queue
    /// (`BLK_STS_DEV_RESOURCE`) or not. 4.15-5.4 still refused at `can_queue` (`host_busy`):
    /// not modelled, which differs only for a host of several hardware queues.
    pub(crate) fn scsi_mq_queue_rq(&mut self, dev: DevId, _h: u16, rq: ReqId) -> crate::block::blk_mq_sched::QueueRq {
        use crate::block::blk_mq_sched::QueueRq;
        let (_, host) = self.devs[dev].sd();
        if !self.hosts[host].try_set_inflight(dev) {
            self.scsi_mq_put_budget(dev);
            return if self.mq(dev).device_busy > 0 { QueueRq::DevResource } else { QueueRq::Resource };
        }
        self.blk_add_timer(dev);
        self.start_command(dev, rq);
        QueueRq::Ok
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::ids::CoreId;
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    #[test]
    fn rq_affinity_completes_on_the_first_cpu_of_the_submitters_socket() {
        let sim = |affinity: &str| {
            let mut s = Scenario::default();
            for (k, v) in [("cpu.cores", "8"), ("cpu.sockets", "2"), ("queue.rq_affinity", affinity)] {
                set_knob(&mut s, k, v).unwrap();
            }
            Sim::new(&s.validate().unwrap(), 1)
        };
        let on = sim("1");
        // Interrupt on CPU 0: a request from CPU 5 (socket 1) moves to CPU 4 by IPI; one from
        // CPU 2 (socket 0, the interrupted CPU's) and one with no req->cpu stay on CPU 0.
        assert_eq!(on.completion_cpu(CoreId(0), Some(CoreId(5))), CoreId(4));
        assert_eq!(on.completion_cpu(CoreId(0), Some(CoreId(2))), CoreId(0));
        assert_eq!(on.completion_cpu(CoreId(1), Some(CoreId(0))), CoreId(1));
        assert_eq!(on.completion_cpu(CoreId(0), None), CoreId(0));
        assert_eq!(sim("0").completion_cpu(CoreId(0), Some(CoreId(5))), CoreId(0));
        // The old boolean spelling still reads.
        assert_eq!(sim("true").completion_cpu(CoreId(0), Some(CoreId(5))), CoreId(4));
        assert_eq!(sim("false").completion_cpu(CoreId(0), Some(CoreId(5))), CoreId(0));
    }

    #[test]
    fn rq_affinity_2_completes_on_the_submitting_cpu_itself() {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", "8"), ("cpu.sockets", "2"), ("queue.rq_affinity", "2")] {
            set_knob(&mut s, k, v).unwrap();
        }
        let sim = Sim::new(&s.validate().unwrap(), 1);
        // From outside the group: the submitter (CPU 5), not its leader (CPU 4); from inside
        // the group too (CPU 2 while CPU 0 took the interrupt); from the interrupted CPU itself,
        // there.
        assert_eq!(sim.completion_cpu(CoreId(0), Some(CoreId(5))), CoreId(5));
        assert_eq!(sim.completion_cpu(CoreId(0), Some(CoreId(2))), CoreId(2));
        assert_eq!(sim.completion_cpu(CoreId(4), Some(CoreId(4))), CoreId(4));
        assert_eq!(sim.completion_cpu(CoreId(4), None), CoreId(4));
    }
}
