//! `block/genhd.c`: the block devices iostat lists (sd, nvmeXnY, dm-N, mdN), what is behind
//! each, and its capacity.

use crate::block::blkdev::SAFE_MAX_SECTORS;
use crate::block::{is_mq, tag_depth, RequestQueue};
use crate::drivers::scsi::sd::{sd_major_minor, sd_name};
use crate::hw::Disk;

use crate::engine::ids::{DevId, DiskId, HostId, IdVec};
use crate::scenario::Scenario;
use crate::tools::stats::DiskStats;

/// What is behind a block device: a disk on a SCSI host, or a stacking driver that maps onto
/// lower block devices.
#[derive(Debug, Clone)]
pub enum DevKind {
    /// An `sd` disk: its device model and the HBA it hangs off.
    Sd { disk: DiskId, host: HostId },
    /// An NVMe namespace (`nvmeXn1`): the drive on PCIe, its queue pairs blk-mq's hardware
    /// queues (`drivers/nvme/pci.rs`). No SCSI host.
    Nvme { disk: DiskId },
    /// dm-multipath (`dm-N`) over `paths`: request-based (2.6.31+), requests cloned onto the
    /// path chosen; or bio-based (`bio_based`, up to 2.6.30), each bio's clone sent to the path
    /// chosen for it (`dm.mpath`).
    DmMpath { paths: Vec<DevId>, bio_based: bool },
    /// md RAID5 (`mdN`): bio-based, over its member devices.
    Md { members: Vec<DevId> },
    /// LVM2's dm-linear (`dm-N`): bio-based, each bio remapped onto `lower` past the physical
    /// volume's metadata, in the submitter's context (`__map_bio` → `generic_make_request`).
    DmLinear { lower: DevId },
}

/// Where LVM2 puts the first physical extent by default (`pe_start`, 192 KiB).
pub const LVM_PE_START_SECTORS: u64 = 384;

/// A block device in iostat's list.
#[derive(Clone, Debug)]
pub struct BlockDev {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DevKind,
    pub queue: RequestQueue,
    pub stats: DiskStats,
    /// Request-based dm over blk-mq: its kdmwork thread.
    pub kdm: Option<crate::drivers::md::dm::KdmWork>,
}

/// The major number the kernel gives device-mapper dynamically; 253 on most systems.
pub const DM_MAJOR: u32 = 253;
/// md's major (Documentation/devices.txt).
pub const MD_MAJOR: u32 = 9;

impl BlockDev {
    pub fn leaf(index: u32, disk: DiskId, host: HostId, s: &Scenario) -> BlockDev {
        let (major, minor) = sd_major_minor(index);
        BlockDev {
            name: sd_name(index),
            major,
            minor,
            kind: DevKind::Sd { disk, host },
            queue: RequestQueue {
                mq: is_mq(s.queue.scheduler)
                    .then(|| crate::block::blk_mq::BlkMq::new(s.host.nr_hw_queues, s.host.can_queue, s.queue.depth, s.cpu.cores)),
                mq_sched: crate::block::blk_mq_sched::mq_sched_for(
                    s,
                    s.host.nr_hw_queues.clamp(1, s.cpu.cores.max(1)) as usize,
                    s.host.can_queue,
                ),
                ..RequestQueue::new(s, s.disk.max_sectors_kb, tag_depth(s))
            },
            stats: DiskStats::default(),
            kdm: None,
        }
    }

    /// `nvmeXn1`: namespace 1 of controller X, a blk-mq queue with a hardware queue per CPU
    /// (`nvme_dev_add`; see `drivers/nvme/pci.rs`).
    pub fn nvme(index: u32, disk: DiskId, s: &Scenario) -> BlockDev {
        let (name, major, minor) = crate::drivers::nvme::pci::nvme_name(index);
        BlockDev {
            name,
            major,
            minor,
            kind: DevKind::Nvme { disk },
            queue: RequestQueue {
                mq: Some(crate::drivers::nvme::pci::nvme_blk_mq(s)),
                mq_sched: crate::drivers::nvme::pci::nvme_mq_sched(s),
                ..RequestQueue::new(s, s.disk.max_sectors_kb, tag_depth(s))
            },
            stats: DiskStats::default(),
            kdm: None,
        }
    }

    /// `dm-N`: a multipath device over `paths`. Request-based, it has its own request queue
    /// and elevator (no tags: its "driver" is the map to the lower queue); bio-based, its queue
    /// only holds its limits, every bio going straight to a path.
    pub fn dm_mpath(index: u32, paths: Vec<DevId>, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("dm-{index}"),
            major: DM_MAJOR,
            minor: index,
            kind: DevKind::DmMpath { paths, bio_based: s.dm.mpath == crate::scenario::MpathMode::Bio },
            queue: RequestQueue::new(s, dm_mpath_max_sectors_kb(s), 0),
            stats: DiskStats::default(),
            kdm: None,
        }
    }

    /// `dm-N`: an LVM2 logical volume on `lower` (dm-linear). Bio-based: no request pool.
    pub fn dm_linear(index: u32, lower: DevId, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("dm-{index}"),
            major: DM_MAJOR,
            minor: index,
            kind: DevKind::DmLinear { lower },
            queue: RequestQueue::new(s, s.disk.max_sectors_kb, 0),
            stats: DiskStats::default(),
            kdm: None,
        }
    }

    /// Bio-based devices (md, dm-linear, bio-based dm-multipath) count bios in diskstats, not
    /// requests.
    pub fn is_bio_based(&self) -> bool {
        matches!(self.kind, DevKind::Md { .. } | DevKind::DmLinear { .. } | DevKind::DmMpath { bio_based: true, .. })
    }

    /// `mdN`: md RAID5 over `members`. Bio-based: it has no request pool or elevator of its own.
    /// Its queue limit is `blk_queue_make_request`'s default, `SAFE_MAX_SECTORS` (raid5 sets
    /// none of its own and, before 2.6.31, nothing stacks its members' limits onto it), so a
    /// bio of pages holds 31 of them (124 KiB); `raid5_mergeable_bvec` also ends a read bio at
    /// a chunk boundary (`bio_boundary`).
    pub fn md(index: u32, members: Vec<DevId>, s: &Scenario) -> BlockDev {
        BlockDev {
            name: format!("md{index}"),
            major: MD_MAJOR,
            minor: index,
            kind: DevKind::Md { members },
            queue: RequestQueue { max_sectors_bytes: SAFE_MAX_SECTORS * 512, ..RequestQueue::new(s, 0, 0) },
            stats: DiskStats::default(),
            kdm: None,
        }
    }

    /// Where a bio built for this device must end (the queue's `merge_bvec_fn`): md RAID5's
    /// `raid5_mergeable_bvec` (2.6.20+, `md.aligned_reads`) keeps a read inside one chunk
    /// (writes may cross). None: only the size limit.
    pub fn bio_boundary(&self, s: &Scenario, write: bool) -> Option<u64> {
        match self.kind {
            DevKind::Md { .. } if !write && s.md.aligned_reads => Some(s.md.chunk_kb as u64 * 1024),
            _ => None,
        }
    }

    /// A disk at the bottom of the stack (the fairness index is over these).
    pub fn is_leaf(&self) -> bool {
        matches!(self.kind, DevKind::Sd { .. } | DevKind::Nvme { .. })
    }

    /// The drive behind a leaf device (None for a stacking device).
    pub fn disk(&self) -> Option<DiskId> {
        match self.kind {
            DevKind::Sd { disk, .. } | DevKind::Nvme { disk } => Some(disk),
            _ => None,
        }
    }

    /// An NVMe namespace (its queue runs `nvme_queue_rq`, not SCSI's).
    pub fn is_nvme(&self) -> bool {
        matches!(self.kind, DevKind::Nvme { .. })
    }

    /// The disk and host of an `sd` device. Panics for a stacking device: only leaf queues
    /// dispatch to hardware.
    pub fn sd(&self) -> (DiskId, HostId) {
        match self.kind {
            DevKind::Sd { disk, host } => (disk, host),
            _ => panic!("{} is not a SCSI disk", self.name),
        }
    }
}

/// A device's size: a disk's capacity, a path's for dm-multipath, (n - 1) members' for RAID5.
pub(crate) fn dev_capacity_sectors(
    devs: &IdVec<DevId, BlockDev>,
    disks: &IdVec<DiskId, Disk>,
    dev: DevId,
    s: &crate::scenario::Scenario,
) -> u64 {
    match &devs[dev].kind {
        DevKind::Sd { disk, .. } | DevKind::Nvme { disk } => disks[*disk].capacity_sectors(),
        DevKind::DmMpath { paths, .. } => dev_capacity_sectors(devs, disks, paths[0], s),
        DevKind::DmLinear { lower } => dev_capacity_sectors(devs, disks, *lower, s) - crate::block::LVM_PE_START_SECTORS,
        DevKind::Md { members } => {
            let whole = members.iter().map(|&m| dev_capacity_sectors(devs, disks, m, s)).min().unwrap_or(0);
            md_capacity_sectors(whole, members.len() as u64, s)
        }
    }
}

/// RAID5's size: (n - 1) members, each `md.component_size_kb` of it (or the whole member)
/// rounded down to whole chunks.
fn md_capacity_sectors(member_sectors: u64, members: u64, s: &crate::scenario::Scenario) -> u64 {
    let chunk = s.md.chunk_kb as u64 * 2;
    let used = if s.md.component_size_kb > 0 { (s.md.component_size_kb * 2).min(member_sectors) } else { member_sectors };
    used / chunk * chunk * (members - 1)
}

/// The size of each top device a scenario's jobs use, before the stack is built (what
/// `validate` checks a job's `bs` against).
pub(crate) fn top_capacity_sectors(s: &crate::scenario::Scenario) -> u64 {
    use crate::scenario::StackKind;
    let disk = crate::hw::capacity_sectors(s.disk.kind, s.disk.member_drive);
    match s.stack {
        StackKind::Direct | StackKind::Dm => disk,
        StackKind::Lvm => disk - crate::block::LVM_PE_START_SECTORS,
        StackKind::Md => md_capacity_sectors(disk, s.disks as u64, s),
    }
}

/// A request-based dm device's `max_sectors_kb`: its own setting, within its paths' limit
/// (`dm_set_device_limits` → `blk_stack_limits` at table load takes the least of the paths'
/// `max_sectors`; a clone over a path's limit would fail `blk_rq_check_limits`).
pub fn dm_mpath_max_sectors_kb(s: &Scenario) -> u32 {
    s.dm.max_sectors_kb.min(s.disk.max_sectors_kb)
}

impl crate::engine::Sim {
    /// The disks and their sd devices, then the stacking layer, listed after the disks as
    /// iostat lists dm-* and md* after sd*. Returns the top of the stack, the devices the jobs
    /// use. With dm-multipath over several paths, each path to a disk is its own sd device, on
    /// the next HBA along (as two HBAs cabled to the same enclosure show every disk twice).
    pub(crate) fn add_disks(&mut self) -> Vec<DevId> {
        let s = &self.cfg.scenario;
        let paths = s.dm.paths;
        for d in 0..s.disks {
            let mut rng = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_DISK + d as u64);
            let mut disk = Disk::new(s.disk.kind, s.disk.write_cache, s.disk.controller_cache, s.disk.member_drive, &mut rng);
            disk.set_skip_within_track(s.disk.skip_within_track);
            disk.set_prefetch(s.disk.prefetch);
            if s.disk.kind == crate::scenario::DiskKind::Nvme {
                // One queue pair per CPU, on PCIe: no HBA, no second path.
                disk.set_queue_pairs(s.cpu.cores);
                self.disks.push(disk);
                self.devs.push(BlockDev::nvme(d, DiskId(d as u16), s));
                continue;
            }
            self.disks.push(disk);
            let first_host = d as u64 * s.hbas as u64 / s.disks as u64;
            for p in 0..paths {
                let host = HostId(((first_host + p as u64) % s.hbas as u64) as u16);
                self.devs.push(BlockDev::leaf(d * paths + p, DiskId(d as u16), host, s));
            }
        }
        let devs = &mut self.devs;
        let mut add = |dev: BlockDev| {
            devs.push(dev);
            DevId((devs.len() - 1) as u16)
        };
        match s.stack {
            StackKindUse::Direct => (0..s.disks).map(|d| DevId(d as u16)).collect(),
            StackKindUse::Lvm => (0..s.disks).map(|d| add(BlockDev::dm_linear(d, DevId(d as u16), s))).collect(),
            StackKindUse::Dm => {
                (0..s.disks).map(|d| add(BlockDev::dm_mpath(d, (0..paths).map(|p| DevId((d * paths + p) as u16)).collect(), s))).collect()
            }
            StackKindUse::Md => vec![add(BlockDev::md(0, (0..s.disks).map(|d| DevId(d as u16)).collect(), s))],
        }
    }
}

use crate::scenario::StackKind as StackKindUse;
