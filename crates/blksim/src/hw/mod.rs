//! Device models behind the leaf block devices: a 7200 rpm HDD, SATA SSDs, an NVMe SSD (the
//! same flash model, behind PCIe), a RAM-backed LUN and a hardware RAID5 controller over HDDs
//! (`hwraid5`).
//! Which hardware a lesson has is a device model, never a lesson constant.

use crate::calib::*;
use crate::engine::ids::ReqId;
use crate::engine::rng::Stream;
use crate::engine::time::{SimTime, NS_PER_S};
use crate::hw::hwraid5::HwRaid5;
use crate::scenario::{ControllerCache, DiskKind, MemberDrive};
use std::collections::VecDeque;

pub mod flash;
pub mod hdd;
pub(crate) mod hdd_buffer;
pub mod hwraid5;

use flash::{Nand, RamLun};
use hdd::{hdd_pick, hdd_service_ns, Hdd};

/// A command as the drive sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub req: ReqId,
    pub sector: u64,
    pub bytes: u64,
    pub write: bool,
    /// `REQ_FUA` (SCSI WRITE's FUA bit, ATA's WRITE FPDMA QUEUED FUA): the drive writes this
    /// command's data to the media before it reports it done, whatever its write cache.
    pub fua: bool,
    /// When the drive received it (for the drive's own aging of queued commands).
    pub queued_at: SimTime,
}

#[derive(Clone, Debug)]
enum Model {
    Hdd(Hdd),
    Ssd(Nand),
    Ram(RamLun),
    HwRaid5(Box<HwRaid5>),
}

/// The slot a hardware RAID controller's stripe operation completes on: not a host command.
pub const ENGINE_SLOT: u16 = u16::MAX;

/// A disk: its model, its internal queue and its command slots.
#[derive(Clone, Debug)]
pub struct Disk {
    model: Model,
    queue: VecDeque<Cmd>,
    slots: Vec<Option<Cmd>>,
    /// How many slots `slots` may grow to (an NVMe drive's grow as its queues fill; the
    /// others' are all there from the start).
    slot_max: usize,
    capacity_sectors: u64,
    /// Time with at least one command in the drive.
    busy_ns_total: u64,
    busy_since: Option<SimTime>,
    /// Scratch for the commands a submission or completion starts (reused, so a completion
    /// allocates nothing).
    pub(crate) started: Vec<(u16, SimTime)>,
}

/// A device model's capacity, without building it.
pub fn capacity_sectors(kind: DiskKind, member_drive: MemberDrive) -> u64 {
    match kind {
        DiskKind::Hdd => HDD_CAPACITY_SECTORS,
        DiskKind::Ssd => SSD_CAPACITY_SECTORS,
        DiskKind::Ssd830 => SSD830_CAPACITY_SECTORS,
        DiskKind::Nvme => NVME_CAPACITY_SECTORS,
        DiskKind::Ramlun => RAMLUN_CAPACITY_SECTORS,
        DiskKind::Hwraid5 => {
            member_drive.spec().capacity_sectors / HWRAID5_CHUNK_SECTORS * HWRAID5_CHUNK_SECTORS * (HWRAID5_MEMBERS as u64 - 1)
        }
    }
}

impl Disk {
    pub fn new(kind: DiskKind, write_cache: bool, controller_cache: ControllerCache, member_drive: MemberDrive, rng: &mut Stream) -> Disk {
        let (model, slots, capacity_sectors) = match kind {
            DiskKind::Ssd => (Model::Ssd(Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS)), SSD_NCQ_TAGS, SSD_CAPACITY_SECTORS),
            DiskKind::Ssd830 => (Model::Ssd(Nand::new(SSD_830, SSD830_CAPACITY_SECTORS)), SSD_NCQ_TAGS, SSD830_CAPACITY_SECTORS),
            // One queue pair's entries; `set_queue_pairs` gives it as many as the driver makes.
            DiskKind::Nvme => {
                (Model::Ssd(Nand::new(NVME_970_EVO_PLUS, NVME_CAPACITY_SECTORS)), NVME_IO_QUEUE_DEPTH - 1, NVME_CAPACITY_SECTORS)
            }
            DiskKind::Ramlun => (Model::Ram(RamLun::new(RAMLUN_COMMAND_NS, RAMLUN_BYTES_PER_S)), RAMLUN_SLOTS, RAMLUN_CAPACITY_SECTORS),
            DiskKind::Hdd => (Model::Hdd(Hdd::new(HDD_2010, write_cache, HDD_WRITE_CACHE_RPO_WINDOW, rng)), 1, HDD_CAPACITY_SECTORS),
            DiskKind::Hwraid5 => {
                let c = HwRaid5::new(HWRAID5_MEMBERS, member_drive.spec(), write_cache, controller_cache, rng);
                let capacity = c.capacity_sectors();
                // As many host commands as the SCSI layer may send it (tagged queueing).
                (Model::HwRaid5(Box::new(c)), crate::scenario::limits::QUEUE_DEPTH_MAX, capacity)
            }
        };
        Disk {
            model,
            queue: VecDeque::new(),
            slots: vec![None; slots as usize],
            slot_max: slots as usize,
            capacity_sectors,
            busy_ns_total: 0,
            busy_since: None,
            started: Vec::new(),
        }
    }

    /// An NVMe drive holds every command of its `n` I/O queue pairs at once (the blk-mq tags
    /// of each, one fewer than its entries), up to the slots a `u16` names (64 queue pairs'
    /// worth; beyond, commands wait in the drive's queue for a slot). Its slots grow as they
    /// are taken, so memory follows the commands in flight, not the CPUs.
    pub fn set_queue_pairs(&mut self, n: u32) {
        assert!(
            matches!(self.model, Model::Ssd(_)) && self.slot_max == (NVME_IO_QUEUE_DEPTH - 1) as usize,
            "queue pairs are an NVMe drive's"
        );
        assert!((1..=crate::scenario::limits::CORES_MAX).contains(&n), "one queue pair per CPU");
        self.slot_max = (n * (NVME_IO_QUEUE_DEPTH - 1)).min(u32::from(ENGINE_SLOT) - 1) as usize;
    }

    /// `disk.skip_within_track` (an HDD's; other models ignore it).
    pub fn set_skip_within_track(&mut self, on: bool) {
        match &mut self.model {
            Model::Hdd(h) => h.skip_within_track = on,
            Model::HwRaid5(c) => c.set_skip_within_track(on),
            _ => {}
        }
    }

    /// `disk.prefetch` (an HDD's; other models ignore it).
    pub fn set_prefetch(&mut self, p: crate::scenario::Prefetch) {
        match &mut self.model {
            Model::Hdd(h) => h.prefetch = p,
            Model::HwRaid5(c) => c.set_prefetch(p),
            _ => {}
        }
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    /// How many commands the drive works on at once (its completions pending at most, plus a
    /// RAID controller's stripe operation).
    pub fn slot_count(&self) -> usize {
        self.slot_max
    }

    /// Commands queued inside the drive plus those on the media.
    pub fn outstanding(&self) -> usize {
        self.queue.len() + self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Where the head is, as a fraction of the stroke (0 = outer edge). SSDs report 0.
    pub fn head_position(&self) -> f64 {
        match &self.model {
            Model::Hdd(h) => h.head_sector() as f64 / self.capacity_sectors as f64,
            Model::Ssd(_) | Model::Ram(_) => 0.0,
            Model::HwRaid5(c) => c.head_position(),
        }
    }

    pub fn check_invariants(&self) {
        if let Model::HwRaid5(c) = &self.model {
            c.check_invariants();
        }
    }

    /// A hardware RAID controller's stripe operations so far (None for other devices).
    pub fn stripe_ops(&self) -> Option<crate::hw::hwraid5::StripeOps> {
        match &self.model {
            Model::HwRaid5(c) => Some(c.ops),
            _ => None,
        }
    }

    /// Takes a command. Pushes the (slot, completion time) of what starts now onto `started`.
    pub fn submit(&mut self, now: SimTime, cmd: Cmd, started: &mut Vec<(u16, SimTime)>) {
        assert!(cmd.sector + cmd.bytes / 512 <= self.capacity_sectors, "command beyond the end of the disk");
        self.queue.push_back(cmd);
        self.start(now, true, started);
    }

    /// The command in `slot` finished (None: it was a RAID controller's stripe operation).
    /// Pushes what starts next onto `started`.
    pub fn complete(&mut self, now: SimTime, slot: u16, started: &mut Vec<(u16, SimTime)>) -> Option<Cmd> {
        let cmd = if slot == ENGINE_SLOT {
            let Model::HwRaid5(c) = &mut self.model else { unreachable!("a stripe operation on a plain disk") };
            c.destage_done();
            None
        } else {
            Some(self.slots[slot as usize].take().expect("completion for an empty slot"))
        };
        let engine_busy = matches!(&self.model, Model::HwRaid5(c) if c.destaging());
        if !engine_busy && self.slots.iter().all(|s| s.is_none()) {
            if let Some(since) = self.busy_since.take() {
                self.busy_ns_total += now - since;
            }
        }
        self.start(now, false, started);
        cmd
    }

    fn start(&mut self, now: SimTime, arrived_idle: bool, started: &mut Vec<(u16, SimTime)>) {
        let before = started.len();
        if let Model::HwRaid5(_) = self.model {
            self.start_raid(now, started);
        } else if let Some(s) = self.start_next(now, arrived_idle) {
            started.push(s);
        }
        if started.len() > before && self.busy_since.is_none() {
            self.busy_since = Some(now);
        }
    }

    /// The RAID controller takes host commands in arrival order (writes into its cache while
    /// they fit, reads to the members), then starts a stripe operation if it has one to do.
    fn start_raid(&mut self, now: SimTime, started: &mut Vec<(u16, SimTime)>) {
        let Model::HwRaid5(c) = &mut self.model else { unreachable!("not a RAID controller") };
        while let Some(front) = self.queue.front() {
            let Some(slot) = self.slots.iter().position(|s| s.is_none()) else { break };
            let done = if front.write {
                if !c.fits(front.bytes / 512) {
                    break;
                }
                c.accept_write(now, front)
            } else {
                c.read(now, front)
            };
            self.slots[slot] = self.queue.pop_front();
            started.push((slot as u16, done));
        }
        if !c.destaging() {
            let pressed = self.queue.front().is_some_and(|f| f.write);
            if let Some(end) = c.start_destage(now, pressed) {
                started.push((ENGINE_SLOT, end));
            }
        }
    }

    fn start_next(&mut self, now: SimTime, arrived_idle: bool) -> Option<(u16, SimTime)> {
        let slot = match self.slots.iter().position(|s| s.is_none()) {
            Some(i) => i,
            None if self.slots.len() < self.slot_max => {
                self.slots.push(None);
                self.slots.len() - 1
            }
            None => return None,
        };
        if let Model::Hdd(h) = &mut self.model {
            // Pick from where the head is now: the destages that started by now have run.
            h.destage_until(now, self.capacity_sectors);
        }
        let pick = match &self.model {
            Model::Hdd(h) => hdd_pick(h, &self.queue, now, self.capacity_sectors)?,
            Model::Ssd(_) | Model::Ram(_) => 0,
            Model::HwRaid5(_) => unreachable!("the RAID controller starts commands in start_raid"),
        };
        let cmd = self.queue.remove(pick)?;
        let done = match &mut self.model {
            Model::Hdd(h) => now + hdd_service_ns(h, now, &cmd, arrived_idle, self.capacity_sectors),
            Model::Ssd(s) => s.service(now, &cmd),
            Model::Ram(r) => r.service(now, &cmd),
            Model::HwRaid5(_) => unreachable!("the RAID controller starts commands in start_raid"),
        };
        self.slots[slot] = Some(cmd);
        Some((slot as u16, done))
    }
}

pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    crate::engine::time::mul_div(bytes, NS_PER_S, bytes_per_s)
}

impl Disk {
    /// The events a disk can have queued at once: a completion per command slot, one for a
    /// RAID controller's stripe operation, and 64 more for its timers (a RAM LUN has 64 slots,
    /// a RAID controller one per tag, up to 1024).
    pub(crate) fn events_max(&self) -> usize {
        64 + self.slot_count() + 1
    }
}
