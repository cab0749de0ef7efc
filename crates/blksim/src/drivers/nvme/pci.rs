//! `drivers/nvme/host/pci.c` as v5.4 has it (4.4 moved the driver here from
//! `drivers/block/nvme-core.c`, blk-mq since 3.19; 5.16 on ends the reaped requests in a batch,
//! `nvme_poll_cq`, with the same CPUs and queues): an I/O queue pair per CPU, each blk-mq's
//! hardware queue of that CPU with `io_queue_depth - 1` tags (`nvme_dev_add`); `nvme_queue_rq`
//! puts the command in the submission queue and rings its doorbell; the drive's completion
//! raises the queue's own MSI-X vector, bound to that queue's CPU (`pci_alloc_irq_vectors_affinity`
//! spreads them, one per CPU when there are as many queues), where `nvme_irq` reaps the
//! completion queue (`nvme_process_cq`, which writes the head doorbell) and ends each entry's
//! request (`nvme_complete_cqes` → `nvme_handle_cqe` → `nvme_end_request` →
//! `blk_mq_complete_request`): on the CPU that submitted it, with no IPI and no SCSI host
//! between.
//!
//! The blk-mq under it is the model's (`block/blk_mq.rs`). The drive is `hw::flash::Nand` with
//! its own figures (`calib::NVME_970_EVO_PLUS`).

use crate::block::blk_mq::BlkMq;
use crate::calib::{NVME_IO_QUEUE_DEPTH, NVME_QUEUE_RQ_NS};
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::scenario::Scenario;

/// `BLOCK_EXT_MAJOR`: NVMe namespaces take dynamic minors of the extended major.
pub const BLOCK_EXT_MAJOR: u32 = 259;

/// `nvme%dn%d`: namespace 1 of controller `index`; the extended major's minors are handed out
/// in order (INFERRED: no partitions, so controller N's namespace is minor N).
pub fn nvme_name(index: u32) -> (String, u32, u32) {
    (format!("nvme{index}n1"), BLOCK_EXT_MAJOR, index)
}

/// The tags of one hardware queue: one fewer than the queue pair's entries (a full
/// submission queue would look empty to the drive).
pub const fn nvme_queue_tags() -> u32 {
    NVME_IO_QUEUE_DEPTH - 1
}

/// `nvme_dev_add`'s tag set: a hardware queue per CPU (`nvme_setup_io_queues` asks for
/// `num_possible_cpus()` queues; the drive is INFERRED to grant them), each with its tags.
/// The driver has no per-device limit beyond the tags (`device_depth` counts them all).
pub fn nvme_blk_mq(s: &Scenario) -> BlkMq {
    let cores = s.cpu.cores;
    BlkMq::new(cores, nvme_queue_tags(), cores * nvme_queue_tags(), cores)
}

/// Its 5.x scheduling (`blk_mq.dispatch = 5.0`): a hardware queue per CPU over the queue
/// pairs' tags; mq-deadline, when chosen, one instance over all of them.
pub fn nvme_mq_sched(s: &Scenario) -> Option<crate::block::blk_mq_sched::MqSched> {
    crate::block::blk_mq_sched::mq_sched_for(s, s.cpu.cores as usize, nvme_queue_tags())
}

/// How many hardware queues a leaf device of the scenario has.
pub fn nr_hw_queues(s: &Scenario) -> u32 {
    if s.disk.kind == crate::scenario::DiskKind::Nvme {
        s.cpu.cores
    } else {
        s.host.nr_hw_queues
    }
}

impl Sim {
    /// `nvme_queue_rq`: `blk_mq_start_request` (the request started, its timeout armed), then
    /// `nvme_setup_cmd`, `nvme_map_data` and `nvme_submit_cmd`, which writes the submission
    /// queue's tail doorbell: the drive has the command (D in the trace). It never answers
    /// BUSY: the queue pair has an entry for every tag.
    pub(crate) fn nvme_queue_rq(&mut self, dev: DevId, h: u16, rq: ReqId) {
        assert!(self.reqs.get(rq.0).tag.is_some(), "an NVMe request has its hardware queue's tag");
        assert_eq!(self.reqs.get(rq.0).hctx, h, "a request goes out on its own queue pair");
        let m = self.mq_mut(dev);
        m.device_busy += 1;
        assert!(m.device_busy <= m.device_depth, "more commands started than tags");
        self.blk_add_timer(dev);
        let Some(disk) = self.devs[dev].disk() else { unreachable!("an NVMe namespace has a drive") };
        self.drive_submit(dev, disk, rq, NVME_QUEUE_RQ_NS);
    }

    /// The drive posted `rq`'s completion entry: its queue's vector interrupts that queue's
    /// CPU (the submitter's), where `nvme_irq` reaps it and completes the request in place.
    pub(crate) fn nvme_irq(&mut self, rq: ReqId) {
        let r = self.reqs.get(rq.0);
        let cpu = CoreId(self.mq(r.dev).hctx[r.hctx as usize].first_cpu);
        self.raise_irq(cpu, rq);
    }
}
