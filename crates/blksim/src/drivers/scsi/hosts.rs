//! The SCSI host (HBA): `host_busy` against `can_queue`, and the host's `starved_list` of
//! devices that had requests but found the host busy.

use crate::engine::ids::{CoreId, DevId, ReqId};
use crate::engine::time::SimTime;
use std::collections::VecDeque;

impl Host {
    /// The events a host can have queued at once: its link's next transfer.
    pub(crate) const EVENTS_MAX: usize = 1;
}

/// The HBAs, each interrupting the CPU `cpu.irq_cpus` names (round robin without it).
pub(crate) fn scsi_init_hosts(s: &crate::scenario::Scenario) -> crate::engine::ids::IdVec<crate::engine::ids::HostId, Host> {
    (0..s.hbas)
        .map(|h| {
            let irq_cpu = if s.cpu.irq_cpus.is_empty() { h % s.cpu.cores } else { s.cpu.irq_cpus[h as usize] };
            let link = if s.host.link_mb_s == 0 { u64::MAX } else { s.host.link_mb_s as u64 * 1_000_000 };
            Host::with_link(s.host.can_queue, CoreId(irq_cpu as u16), link)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_host_lists_a_device_once_at_the_tail_and_a_dispatch_unlists_it() {
        let mut h = Host::new(1, CoreId(0));
        assert!(h.try_get(DevId(0)));
        assert!(!h.try_get(DevId(1)));
        assert!(!h.try_get(DevId(2)));
        assert!(!h.try_get(DevId(1)));
        assert_eq!(h.starved().collect::<Vec<_>>(), [DevId(1), DevId(2)]);
        h.put();
        assert!(h.try_get(DevId(2)));
        assert_eq!(h.starved().collect::<Vec<_>>(), [DevId(1)]);
    }

    #[test]
    fn the_link_delays_a_command_only_while_the_ones_before_keep_it_busy() {
        // 1000 MB/s: 1 MB takes 1 ms. Alone, a command is through when the disk is done; two
        // at once, the second waits for the first's megabyte; after a pause, none waits.
        let mut h = Host::with_link(4, CoreId(0), 1_000_000_000);
        let ms = 1_000_000;
        assert_eq!(h.link_through_at(SimTime(10 * ms), 1_000_000), SimTime(10 * ms));
        assert_eq!(h.link_through_at(SimTime(10 * ms), 1_000_000), SimTime(11 * ms));
        assert_eq!(h.link_through_at(SimTime(10 * ms + ms / 2), 1_000_000), SimTime(12 * ms));
        assert_eq!(h.link_through_at(SimTime(20 * ms), 1_000_000), SimTime(20 * ms));
    }

    #[test]
    fn leftovers_go_back_ahead_of_a_device_that_re_added_itself() {
        // scsi_run_queue: sdev1 ran, refilled the host and re-added itself to the empty list;
        // sdev2 and sdev3 were not reached and are spliced back at the head.
        let mut h = Host::new(1, CoreId(0));
        h.busy = 1;
        assert!(!h.try_get(DevId(1)));
        let left: VecDeque<DevId> = [DevId(2), DevId(3)].into_iter().collect();
        h.splice_back(left);
        assert_eq!(h.starved().collect::<Vec<_>>(), [DevId(2), DevId(3), DevId(1)]);
    }
}

#[derive(Clone, Debug)]
pub struct Host {
    can_queue: u32,
    busy: u32,
    /// What `busy` can reach: `can_queue`, or on blk-mq's 5.x dispatch, which admits by the
    /// tag set's driver tags alone, every tag of the host's set.
    busy_max: u32,
    /// The CPU its interrupt is routed to.
    pub irq_cpu: CoreId,
    starved: VecDeque<DevId>,
    /// What its link (PCIe slot or SAS port, the narrower) moves per second, and when the data
    /// already given to it will have crossed.
    link_bytes_per_s: u64,
    link_free_at: SimTime,
    /// Finished commands whose data is still crossing the link, in order, with when each is
    /// through (at most `can_queue`: each holds a host slot).
    pub link_queue: VecDeque<(SimTime, ReqId)>,
}

impl Host {
    pub fn new(can_queue: u32, irq_cpu: CoreId) -> Host {
        Host::with_link(can_queue, irq_cpu, u64::MAX)
    }

    pub fn with_link(can_queue: u32, irq_cpu: CoreId, link_bytes_per_s: u64) -> Host {
        Host {
            can_queue,
            busy: 0,
            busy_max: can_queue,
            irq_cpu,
            starved: VecDeque::new(),
            link_bytes_per_s,
            link_free_at: SimTime::ZERO,
            link_queue: VecDeque::new(),
        }
    }

    /// A disk finished a command of `bytes` at `now`: when its data is through the host's
    /// link. The link carries the data while the disk's own link does (cut-through), so a
    /// command waits only when the commands before it keep the link busy: as a fluid queue,
    /// through at `max(now, link_free_at + bytes / rate)`.
    pub fn link_through_at(&mut self, now: SimTime, bytes: u64) -> SimTime {
        let on_link = if self.link_bytes_per_s == u64::MAX { 0 } else { crate::hw::transfer_ns(bytes, self.link_bytes_per_s) };
        let through = now.max(SimTime(self.link_free_at.0 + on_link));
        self.link_free_at = through;
        through
    }

    pub fn can_queue(&self) -> u32 {
        self.can_queue
    }

    pub fn busy(&self) -> u32 {
        self.busy
    }

    pub fn busy_max(&self) -> u32 {
        self.busy_max
    }

    /// The host's blk-mq tag set holds `depth` driver tags in all.
    pub fn bound_busy_by_tags(&mut self, depth: u32) {
        self.busy_max = self.can_queue.max(depth);
    }

    /// `scsi_host_queue_ready` on 5.5+ scsi-mq (6eb045e092ef; read in v5.8 and v5.10): the
    /// command is counted busy (`SCMD_STATE_INFLIGHT`, which `scsi_host_busy` counts over the
    /// tag set), not refused for `can_queue`: the driver tag it holds already bounds the host.
    /// Refused (and the device listed starved) only with every tag of the set busy, which a
    /// unit test arranges by hand.
    pub fn try_set_inflight(&mut self, dev: DevId) -> bool {
        if self.busy >= self.busy_max {
            if !self.starved.contains(&dev) {
                self.starved.push_back(dev);
            }
            return false;
        }
        self.busy += 1;
        true
    }

    pub fn is_busy(&self) -> bool {
        self.busy >= self.can_queue
    }

    /// `scsi_host_queue_ready` (2.6.38): if the host is busy, put the device at the tail of
    /// the starved list (unless it is listed already) and refuse; otherwise take a host slot and,
    /// since the device is dispatching, take it off the starved list.
    pub fn try_get(&mut self, dev: DevId) -> bool {
        if self.is_busy() {
            if !self.starved.contains(&dev) {
                self.starved.push_back(dev);
            }
            return false;
        }
        self.busy += 1;
        if let Some(i) = self.starved.iter().position(|&d| d == dev) {
            self.starved.remove(i);
        }
        true
    }

    pub fn put(&mut self) {
        assert!(self.busy > 0, "host_busy underflow");
        self.busy -= 1;
    }

    /// `list_splice_init(&shost->starved_list, &starved_list)`.
    pub fn take_starved(&mut self) -> VecDeque<DevId> {
        std::mem::take(&mut self.starved)
    }

    /// `list_splice(&starved_list, &shost->starved_list)`: the devices not run go back at the
    /// head, in their order, ahead of any device that re-added itself meanwhile.
    pub fn splice_back(&mut self, mut left: VecDeque<DevId>) {
        left.retain(|d| !self.starved.contains(d));
        left.extend(self.starved.drain(..));
        self.starved = left;
    }

    pub fn starved(&self) -> impl Iterator<Item = DevId> + '_ {
        self.starved.iter().copied()
    }
}
