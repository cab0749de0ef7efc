//! The knobs, one entry each: its name, what it allows, its help, whether it applies live and
//! how, the field it reads and writes and the layer it needs. `get_knob`, `set_knob`,
//! `knob_applies`, live writes, `blksim knobs`, `--help` and the page's knob panel all read it.

use super::*;
// The workload's later knobs, and the jobs', are declared with the jobs (`jobs.rs`).
pub use super::jobs::{
    JOBS, WORKLOAD_FILENAME, WORKLOAD_FILESYSTEM, WORKLOAD_FSYNC, WORKLOAD_GROUP_REPORTING, WORKLOAD_IODEPTH_BATCH_COMPLETE_MAX,
    WORKLOAD_IODEPTH_BATCH_COMPLETE_MIN, WORKLOAD_IODEPTH_BATCH_SUBMIT, WORKLOAD_OFFSET, WORKLOAD_OFFSET_PCT, WORKLOAD_PRIO,
    WORKLOAD_PRIOCLASS, WORKLOAD_RAMP_TIME, WORKLOAD_RATE_IOPS, WORKLOAD_RUNTIME, WORKLOAD_RWMIXREAD, WORKLOAD_STARTDELAY,
    WORKLOAD_STONEWALL, WORKLOAD_SYNC, WORKLOAD_THINKTIME, WORKLOAD_WAIT_FOR,
};
// dm-multipath's path knobs are declared in `knob_table_dm.rs`.
pub use super::knob_table_dm::{DM_MPATH, DM_PATHS, DM_PATH_GROUPING, DM_RR_MIN_IO};
// md RAID5's read-path knob is declared in `knob_table_md.rs`.
pub use super::knob_table_md::MD_ALIGNED_READS;

pub const STACK: KnobSpec = KnobSpec {
    key: "stack",
    kind: KnobKind::Enum(&["direct", "lvm", "dm", "md"]),
    help: "which layers sit above the disks",
    live: Live::Restart,
    access: named!(stack),
    applies: validate::anywhere,
    values: &[],
};

pub const DISKS: KnobSpec = KnobSpec {
    key: "disks",
    kind: KnobKind::Int { min: 1, max: limits::DISKS_MAX as u64, unit: "" },
    help: "number of disks",
    live: Live::Restart,
    access: int!(disks),
    applies: validate::anywhere,
    values: &[],
};

pub const HBAS: KnobSpec = KnobSpec {
    key: "hbas",
    kind: KnobKind::Int { min: 1, max: limits::HBAS_MAX as u64, unit: "" },
    help: "number of SCSI hosts (HBAs); disks are spread over them in order",
    live: Live::Restart,
    access: int!(hbas),
    applies: validate::anywhere,
    values: &[],
};

pub const DM_MAX_SECTORS_KB: KnobSpec = KnobSpec {
        key: "dm.max_sectors_kb",
        kind: KnobKind::Int { min: 4, max: limits::MAX_SECTORS_KB_MAX as u64, unit: "KiB" },
        help: "the dm device's queue limit (request-based dm; within its paths' disk.max_sectors_kb, which stack onto it when its table is loaded)",
        live: Live::Store(Store::DmMaxSectors),
    access: int!(dm.max_sectors_kb),
    applies: validate::request_based_dm,
    values: &[],
};

pub const DM_PARTIAL_COMPLETION: KnobSpec = KnobSpec {
    key: "dm.partial_completion",
    kind: KnobKind::Bool,
    help: "update the original request on every clone-bio completion (2.6.32)",
    live: Live::Restart,
    access: flag!(dm.partial_completion),
    applies: validate::multipath,
    values: &[],
};

pub const DM_CLONE_ALLOC: KnobSpec = KnobSpec {
    key: "dm.clone_alloc",
    kind: KnobKind::Enum(&["sleep", "mempool", "nowait"]),
    help: "how request-based dm over blk-mq gets a clone",
    live: Live::Restart,
    access: named!(dm.clone_alloc),
    applies: validate::multipath_over_mq,
    values: &[],
};

pub const DM_CONGESTION_CALLOUT: KnobSpec = KnobSpec {
    key: "dm.congestion_callout",
    kind: KnobKind::Bool,
    help: "dm reports its member queues' congestion (2.6.6+); pdflush (vm.writeback) skips congested devices",
    live: Live::Restart,
    access: flag!(dm.congestion_callout),
    applies: validate::congestion_callout,
    values: &[],
};

pub const MD_CHUNK_KB: KnobSpec = KnobSpec {
    key: "md.chunk_kb",
    kind: KnobKind::Int { min: 4, max: 65536, unit: "KiB, a power of two" },
    help: "RAID5 chunk size",
    live: Live::Restart,
    access: int!(md.chunk_kb),
    applies: validate::md_array,
    values: &[],
};

pub const MD_STRIPE_CACHE_SIZE: KnobSpec = KnobSpec {
    key: "md.stripe_cache_size",
    kind: KnobKind::Int { min: 17, max: 32768, unit: "stripe heads" },
    help: "RAID5 stripe cache",
    live: Live::Restart,
    access: int!(md.stripe_cache_size),
    applies: validate::md_array,
    values: &[],
};

pub const MD_SPLIT_ALIGNED_READS: KnobSpec = KnobSpec {
    key: "md.split_aligned_reads",
    kind: KnobKind::Bool,
    help: "split an oversized chunk-aligned read to fit the member (v4.3+)",
    live: Live::Restart,
    access: flag!(md.split_aligned_reads),
    applies: validate::md_array,
    values: &[],
};

pub const MD_COMPONENT_SIZE_KB: KnobSpec = KnobSpec {
    key: "md.component_size_kb",
    kind: KnobKind::Int { min: 0, max: 1 << 32, unit: "KiB; 0: the whole member" },
    help: "space used on each member (mdadm -z): the array, and the jobs' files on it, span only this much of each disk",
    live: Live::Restart,
    access: int!(md.component_size_kb),
    applies: validate::md_array,
    values: &[],
};

pub const DISK_KIND: KnobSpec = KnobSpec {
    key: "disk.kind",
    kind: KnobKind::Enum(&["hdd", "ssd", "hwraid5", "ramlun", "ssd830", "nvme"]),
    help: "the device model behind each disk: hdd (7200 rpm SATA), ssd (Intel X25-M G2, SATA), ssd830 (Samsung 830, SATA), hwraid5 (3ware RAID5 over HDDs), ramlun (an SRP LUN in RAM), nvme (Samsung 970 EVO Plus, PCIe; no SCSI: a queue pair per CPU, blk-mq only, so queue.scheduler=none)",
    live: Live::Restart,
    access: named!(disk.kind),
    applies: validate::anywhere,
    values: &[],
};

pub const DISK_MAX_SECTORS_KB: KnobSpec = KnobSpec {
    key: "disk.max_sectors_kb",
    kind: KnobKind::Int { min: 4, max: limits::MAX_SECTORS_KB_MAX as u64, unit: "KiB" },
    help: "the member/leaf queue limit",
    live: Live::Store(Store::MaxSectors),
    access: int!(disk.max_sectors_kb),
    applies: validate::anywhere,
    values: &[],
};

pub const DISK_WRITE_CACHE: KnobSpec = KnobSpec {
    key: "disk.write_cache",
    kind: KnobKind::Bool,
    help: "the drive's write cache (WCE): writes complete once in the cache",
    live: Live::Restart,
    access: flag!(disk.write_cache),
    applies: validate::anywhere,
    values: &[],
};

pub const DISK_SKIP_WITHIN_TRACK: KnobSpec = KnobSpec {
        key: "disk.skip_within_track",
        kind: KnobKind::Bool,
        help: "hdd (and a RAID controller's member disks): a sector less than a track ahead is reached without a seek, after the rotation to it, as a drive does (default); off: at least a track-to-track seek, then nearly a revolution (the model before, for comparison). A read within reach of the drive's read-ahead after a read is served by it either way",
        live: Live::Restart,
    access: flag!(disk.skip_within_track),
    applies: validate::rotating,
    values: &[],
};

pub const DISK_CONTROLLER_CACHE: KnobSpec = KnobSpec {
        key: "disk.controller_cache",
        kind: KnobKind::Enum(&["in-order", "gathering"]),
        help: "hwraid5: a write joins its stripe's cached entry until the stream passes the stripe, which then goes to disk (in-order, inferred for the 3ware 8506), or any cached writes gather into whole stripes (gathering)",
        live: Live::Restart,
    access: named!(disk.controller_cache),
    applies: validate::controller_cache,
    values: &[],
};

pub const QUEUE_NR_REQUESTS: KnobSpec = KnobSpec {
    key: "queue.nr_requests",
    kind: KnobKind::Int { min: 4, max: limits::NR_REQUESTS_MAX as u64, unit: "requests per direction" },
    help: "request pool size",
    live: Live::Store(Store::QueueRequests),
    access: int!(queue.nr_requests),
    applies: validate::request_pool,
    values: &[],
};

pub const QUEUE_DEPTH: KnobSpec = KnobSpec {
    key: "queue.depth",
    kind: KnobKind::Int { min: 1, max: limits::QUEUE_DEPTH_MAX as u64, unit: "tags" },
    help: "device tags (TCQ/NCQ queue_depth)",
    live: Live::Store(Store::QueueDepth),
    access: int!(queue.depth),
    applies: validate::scsi_host,
    values: &[],
};

pub const QUEUE_SCHEDULER: KnobSpec = KnobSpec { key: "queue.scheduler", kind: KnobKind::Enum(&["noop", "deadline", "cfq", "none", "mq-deadline", "bfq", "kyber"]), help: "the elevator, and with it the disks' queue type: noop, deadline and cfq run a legacy request queue (scsi_request_fn); none and mq-deadline make the disks blk-mq, run as blk_mq.dispatch says: as 4.0 has it, with no elevator on them (mq-deadline, 4.11+, sorts only on request-based dm's own queue), or as 5.x has it, mq-deadline sorting on the disks (blk_mq.dispatch=5.0, which kernel 4.15+ sets); bfq and kyber (4.12+; kyber throttles each kind of request to its latency target) run on 5.x's dispatch only, which they bring with them where no kernel and no blk_mq.dispatch is set; from kernel 5.0 only none, mq-deadline, bfq and kyber", live: Live::Store(Store::Elevator),
    access: Access { path: &["queue", "scheduler"], get: |s| Value::Text(enum_name(&s.queue.scheduler)), set: era::set_scheduler },
    applies: validate::anywhere,
    values: &[],
};

pub const QUEUE_READ_AHEAD_KB: KnobSpec = KnobSpec {
    key: "queue.read_ahead_kb",
    kind: KnobKind::Int { min: 0, max: limits::READ_AHEAD_KB_MAX as u64, unit: "KiB" },
    help: "readahead window",
    live: Live::Config,
    access: int!(queue.read_ahead_kb),
    applies: validate::anywhere,
    values: &[],
};

pub const QUEUE_MAX_SEGMENTS: KnobSpec = KnobSpec {
    key: "queue.max_segments",
    kind: KnobKind::Int { min: 1, max: 4096, unit: "segments" },
    help: "scatter-gather segments per request: with one 4 KiB page per segment, a request holds at most this many pages",
    live: Live::Restart,
    access: int!(queue.max_segments),
    applies: validate::anywhere,
    values: &[],
};

pub const QUEUE_PLUGGING: KnobSpec = KnobSpec {
        key: "queue.plugging",
        kind: KnobKind::Enum(&["task", "2.6.2", "2.6.20"]),
        help: "task: per-task plug, bios merge before dispatch (2.6.39+); 2.6.2: a deep device is never held plugged; 2.6.20: an idle queue plugs until 4 requests wait, 3 ms pass or someone unplugs it",
        live: Live::Restart,
    access: named!(queue.plugging),
    applies: validate::plugging,
    values: &[],
};

pub const QUEUE_CFQ: KnobSpec = KnobSpec {
        key: "queue.cfq",
        kind: KnobKind::Enum(&["simple", "2.6.20"]),
        help: "cfq's rules: simple (one request at a time from the active queue's slice, its FIFO looked at once a slice as 2.6.30-2.6.39's cfq_check_fifo does); 2.6.20 (block/cfq-iosched.c of 2.6.20: quanta of 4 onto a sector-sorted dispatch list, and a process thinking longer than slice_idle loses its idle window)",
        live: Live::Restart,
    access: named!(queue.cfq),
    applies: validate::cfq_rules,
    values: &[],
};

pub const QUEUE_GENERIC_TAGGING: KnobSpec = KnobSpec {
    key: "queue.generic_tagging",
    kind: KnobKind::Bool,
    help: "the driver uses generic block tagging: init_tag_map caps the depth at 2 x nr_requests",
    live: Live::Restart,
    access: flag!(queue.generic_tagging),
    applies: validate::scsi_request_fn,
    values: &[],
};

pub const QUEUE_BATCH_HARD_LIMIT: KnobSpec = KnobSpec {
        key: "queue.batch_hard_limit",
        kind: KnobKind::Bool,
        help: "get_request refuses batchers past 3/2 x nr_requests (\"only allow batching queuers to allocate up to 50% over the defined limit\", ll_rw_blk.c 2.6.13-rc1 on); false: 2.6.2-2.6.12, where a batcher takes its whole batch (2.6.11's get_request has no cap)",
        live: Live::Restart,
    access: flag!(queue.batch_hard_limit),
    applies: validate::request_pool,
    values: &[],
};

pub const QUEUE_ASYNC_RUN_CANCELS_DELAY: KnobSpec = KnobSpec {
        key: "queue.async_run_cancels_delay",
        kind: KnobKind::Bool,
        help: "blk_run_queue_async cancels a pending blk_delay_queue timer and runs now (\"block: don't delay blk_run_queue_async\", 3.0-rc; inferred absent in 2.6.39-rc, where the run waits for the timer)",
        live: Live::Restart,
    access: flag!(queue.async_run_cancels_delay),
    applies: validate::delay_timer,
    values: &[],
};

pub const QUEUE_RQ_AFFINITY: KnobSpec = KnobSpec {
        key: "queue.rq_affinity",
        kind: KnobKind::Int { min: 0, max: 2, unit: "" },
        help: "rq_affinity (__blk_complete_request): 0 complete where the interrupt came in; 1 (QUEUE_FLAG_SAME_COMP, default from 2.6.28) by IPI to the first CPU of the submitter's cache group when the interrupted CPU is in another; 2 (QUEUE_FLAG_SAME_FORCE, 3.1) to the submitting CPU itself",
        live: Live::Restart,
    access: int!(queue.rq_affinity),
    applies: validate::anywhere,
    // Before 2.6.32's sysfs value 2 existed it was a boolean: true and false still read.
    values: &[("true", "1"), ("false", "0")],
};

pub const IOSCHED_SLICE_IDLE: KnobSpec = KnobSpec {
        key: "iosched.slice_idle",
        kind: KnobKind::Int { min: 0, max: 1000, unit: "ms" },
        help: "cfq (cfq-iosched.c): how long an emptied sync queue waits for its process's next request before the slice ends; 0: never idle (cfq_should_idle)",
        live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.slice_idle),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_QUANTUM: KnobSpec = KnobSpec {
    key: "iosched.quantum",
    kind: KnobKind::Int { min: 1, max: 64, unit: "requests" },
    help: "cfq: requests a queue may have at the driver while other queues wait (2.6.20: a queue's dispatch round)",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.quantum),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_SLICE_SYNC: KnobSpec = KnobSpec {
    key: "iosched.slice_sync",
    kind: KnobKind::Int { min: 1, max: 1000, unit: "ms" },
    help: "cfq: a sync (read, O_DIRECT) queue's time slice",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.slice_sync),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_SLICE_ASYNC: KnobSpec = KnobSpec {
    key: "iosched.slice_async",
    kind: KnobKind::Int { min: 1, max: 1000, unit: "ms" },
    help: "cfq: the async (writeback) queue's time slice",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.slice_async),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_FIFO_EXPIRE_SYNC: KnobSpec = KnobSpec {
    key: "iosched.fifo_expire_sync",
    kind: KnobKind::Int { min: 1, max: 10000, unit: "ms" },
    help: "cfq: a sync request's FIFO expiry",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.fifo_expire_sync),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_FIFO_EXPIRE_ASYNC: KnobSpec = KnobSpec {
    key: "iosched.fifo_expire_async",
    kind: KnobKind::Int { min: 1, max: 10000, unit: "ms" },
    help: "cfq: an async request's FIFO expiry",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.fifo_expire_async),
    applies: validate::cfq_tunable,
    values: &[],
};

pub const IOSCHED_FIFO_BATCH: KnobSpec = KnobSpec {
    key: "iosched.fifo_batch",
    kind: KnobKind::Int { min: 0, max: 1024, unit: "requests" },
    help: "deadline (deadline-iosched.c): requests dispatched in sector order before the FIFO is checked again (0 acts as 1)",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.fifo_batch),
    applies: validate::deadline_tunable,
    values: &[],
};

pub const IOSCHED_READ_EXPIRE: KnobSpec = KnobSpec {
    key: "iosched.read_expire",
    kind: KnobKind::Int { min: 0, max: 60000, unit: "ms" },
    help: "deadline: a read's FIFO expiry",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.read_expire),
    applies: validate::deadline_tunable,
    values: &[],
};

pub const IOSCHED_WRITE_EXPIRE: KnobSpec = KnobSpec {
    key: "iosched.write_expire",
    kind: KnobKind::Int { min: 0, max: 60000, unit: "ms" },
    help: "deadline: a write's FIFO expiry",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.write_expire),
    applies: validate::deadline_tunable,
    values: &[],
};

pub const IOSCHED_WRITES_STARVED: KnobSpec = KnobSpec {
    key: "iosched.writes_starved",
    kind: KnobKind::Int { min: 0, max: 1024, unit: "read batches" },
    help: "deadline: read batches chosen over waiting writes before a write batch must go",
    live: Live::Store(Store::IoschedTunable),
    access: int!(queue.iosched.writes_starved),
    applies: validate::deadline_tunable,
    values: &[],
};
pub const HOST_CAN_QUEUE: KnobSpec = KnobSpec {
    key: "host.can_queue",
    kind: KnobKind::Int { min: 1, max: limits::CAN_QUEUE_MAX as u64, unit: "commands" },
    help: "commands the HBA takes at once",
    live: Live::Restart,
    access: int!(host.can_queue),
    applies: validate::scsi_host,
    values: &[],
};

pub const HOST_LINK_MB_S: KnobSpec = KnobSpec {
        key: "host.link_mb_s",
        kind: KnobKind::Int { min: 0, max: 100_000, unit: "MB/s" },
        help: "what the HBA's link moves, the narrowest of its PCIe slot and its SAS port (an LSI SAS2008 behind an expander's x4 SAS 2.0 wide port: 2400); completions wait for it; 0: unbounded",
        live: Live::Restart,
    access: int!(host.link_mb_s),
    applies: validate::scsi_host,
    values: &[],
};

pub const HOST_NR_HW_QUEUES: KnobSpec = KnobSpec {
    key: "host.nr_hw_queues",
    kind: KnobKind::Int { min: 1, max: 256, unit: "hardware queues per LUN" },
    help: "blk-mq hardware queues per LUN, each with can_queue tags (ib_srp ch_count, 3.19+); the CPUs are split evenly among them",
    live: Live::Restart,
    access: int!(host.nr_hw_queues),
    applies: validate::scsi_blk_mq_queues,
    values: &[],
};

pub const HOST_IRQ_PER_HW_QUEUE: KnobSpec = KnobSpec {
        key: "host.irq_per_hw_queue",
        kind: KnobKind::Bool,
        help: "each blk-mq hardware queue's completions interrupt the first of its CPUs (ib_srp 3.19+: channel i's own completion queue on vector i, reaped until empty per interrupt; the vector's CPU is inferred); false: all interrupt the HBA's CPU (cpu.irq_cpus)",
        live: Live::Restart,
    access: flag!(host.irq_per_hw_queue),
    applies: validate::scsi_blk_mq_queues,
    values: &[],
};

pub const BLK_MQ_RERUN_AFTER_SPLICE: KnobSpec = KnobSpec {
    key: "blk_mq.rerun_after_splice",
    kind: KnobKind::Bool,
    help: "run a hardware queue again after splicing a BUSY run's leftovers onto hctx->dispatch (9ba52e5812e5, v4.1; v4.0: false)",
    live: Live::Restart,
    access: flag!(blk_mq.rerun_after_splice),
    applies: validate::blk_mq_queues,
    values: &[],
};

pub const BLK_MQ_DISPATCH: KnobSpec = KnobSpec {
    key: "blk_mq.dispatch",
    kind: KnobKind::Enum(&["4.0", "5.0"]),
    help: "how the disks' blk-mq hardware queues are run. 4.0: __blk_mq_run_hw_queue, no elevator on the disks (mq-deadline runs as none), a BUSY stops the queue and splices the rest onto hctx->dispatch. 5.0 (4.15+): blk_mq_sched_dispatch_requests: per-CPU software queues (none) or the elevator's insert_requests/has_work/dispatch_request (mq-deadline, one queue-wide lock), scheduler tags (nr_requests = 2 x min(can_queue, 128) per hardware queue) apart from the driver's, SCSI's dispatch budget (queue.depth per LUN, taken before a request leaves the elevator), hctx->dispatch with SCHED_RESTART, completions running every hardware queue, a 3 ms delayed run (BLK_MQ_BUDGET_DELAY, BLK_MQ_RESOURCE_DELAY)",
    live: Live::Restart,
    access: named!(blk_mq.dispatch),
    applies: validate::blk_mq_queues,
    values: &[],
};

pub const DM_POLLING_INTERVAL: KnobSpec = KnobSpec {
        key: "dm.polling_interval",
        kind: KnobKind::Int { min: 0, max: 3600, unit: "s; 0: no multipathd" },
        help: "multipathd's path checker: one read per path, first after this, doubling after each good check up to 4x (multipath.conf polling_interval)",
        live: Live::Restart,
    access: int!(dm.polling_interval),
    applies: validate::multipath_over_mq,
    values: &[],
};

pub const SCSI_RUN_QUEUE: KnobSpec = KnobSpec {
    key: "scsi.run_queue",
    kind: KnobKind::Enum(&["direct", "kblockd", "fixed"]),
    help: "scsi_run_queue: before c21e6beb, c21e6beb, or 9937a5e2+466c08c7",
    live: Live::Restart,
    access: named!(scsi.run_queue),
    applies: validate::scsi_request_fn,
    values: &[],
};

pub const VM_MEM_MB: KnobSpec = KnobSpec {
    key: "vm.mem_mb",
    kind: KnobKind::Int { min: 64, max: 1 << 20, unit: "MiB" },
    help: "the box's memory: the page cache holds it, less md's stripe cache (its pages are the kernel's)",
    live: Live::Restart,
    access: int!(vm.mem_mb),
    applies: validate::anywhere,
    values: &[],
};

pub const VM_DIRTY_RATIO: KnobSpec = KnobSpec {
    key: "vm.dirty_ratio",
    kind: KnobKind::Int { min: 1, max: 100, unit: "%" },
    help: "writers throttle above this share of memory dirty",
    live: Live::Config,
    access: int!(vm.dirty_ratio),
    applies: validate::anywhere,
    values: &[],
};

pub const VM_DIRTY_BACKGROUND_RATIO: KnobSpec = KnobSpec {
    key: "vm.dirty_background_ratio",
    kind: KnobKind::Int { min: 1, max: 100, unit: "%" },
    help: "background writeback starts above this share",
    live: Live::Config,
    access: int!(vm.dirty_background_ratio),
    applies: validate::anywhere,
    values: &[],
};

pub const VM_WRITEBACK: KnobSpec = KnobSpec {
    key: "vm.writeback",
    kind: KnobKind::Enum(&["per-bdi", "pdflush"]),
    help: "per-bdi: flush-MAJ:MIN threads (2.6.32+); pdflush: nonblocking writeback that skips congested devices (2.6.0-2.6.31)",
    live: Live::Restart,
    access: named!(vm.writeback),
    applies: validate::anywhere,
    values: &[],
};

pub const VM_BDI_DIRTY_LIMIT: KnobSpec = KnobSpec {
        key: "vm.bdi_dirty_limit",
        kind: KnobKind::Enum(&["equal", "writeout"]),
        help: "equal: the dirty limit split equally among the devices written to; writeout: each device's share of recent page writeout (bdi_dirty_limit, 2.6.24-3.1)",
        live: Live::Restart,
    access: named!(vm.bdi_dirty_limit),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_NAME: KnobSpec = KnobSpec {
    key: "workload.name",
    kind: KnobKind::Name { max_len: 15 },
    help: "the process name (fio job name), as top shows it",
    live: Live::Restart,
    access: text!(workload.name),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_NUMJOBS: KnobSpec = KnobSpec {
    key: "workload.numjobs",
    kind: KnobKind::Int { min: 1, max: limits::JOBS_MAX as u64, unit: "" },
    help: "fio numjobs",
    live: Live::Restart,
    access: int!(workload.numjobs),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_RW: KnobSpec = KnobSpec {
    key: "workload.rw",
    kind: KnobKind::Enum(&["read", "write", "randread", "randwrite", "rw", "randrw"]),
    help: "fio rw (rw and randrw mix reads and writes in workload.rwmixread's proportion; readwrite is rw)",
    live: Live::Restart,
    access: named!(workload.rw),
    applies: validate::anywhere,
    values: &[("readwrite", "rw")],
};

pub const WORKLOAD_BS: KnobSpec = KnobSpec {
    key: "workload.bs",
    kind: KnobKind::Size { min: 512, max: limits::BS_MAX },
    help: "fio bs",
    live: Live::Restart,
    access: int!(workload.bs),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_IOENGINE: KnobSpec = KnobSpec {
    key: "workload.ioengine",
    kind: KnobKind::Enum(&["sync", "libaio", "io_uring"]),
    help: "fio ioengine (io_uring, 5.1+: its rings batch submissions by workload.iodepth_batch_submit and wake the job once workload.iodepth_batch_complete_min completions are in; at fio's defaults it runs as libaio does)",
    live: Live::Restart,
    access: named!(workload.ioengine),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_IODEPTH: KnobSpec = KnobSpec {
    key: "workload.iodepth",
    kind: KnobKind::Int { min: 1, max: limits::IODEPTH_MAX as u64, unit: "" },
    help: "fio iodepth (libaio, io_uring)",
    live: Live::Restart,
    access: int!(workload.iodepth),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_DIRECT: KnobSpec = KnobSpec {
    key: "workload.direct",
    kind: KnobKind::Bool,
    help: "fio direct (O_DIRECT)",
    live: Live::Restart,
    access: flag!(workload.direct),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_SIZE: KnobSpec = KnobSpec {
    key: "workload.size",
    kind: KnobKind::Size { min: 0, max: limits::SIZE_MAX },
    help: "fio size per job; 0 runs for the whole duration",
    live: Live::Restart,
    access: int!(workload.size),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_CORES: KnobSpec = KnobSpec {
    key: "cpu.cores",
    kind: KnobKind::Int { min: 1, max: limits::CORES_MAX as u64, unit: "" },
    help: "CPU cores",
    live: Live::Restart,
    access: int!(cpu.cores),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_SOCKETS: KnobSpec = KnobSpec {
        key: "cpu.sockets",
        kind: KnobKind::Int { min: 1, max: limits::CORES_MAX as u64, unit: "sockets" },
        help: "CPU sockets (cache groups), the cores split evenly: rq_affinity completes a request on the first core of its submitter's socket (blk_cpu_to_group, CONFIG_SCHED_MC)",
        live: Live::Restart,
    access: int!(cpu.sockets),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_IRQ_CPUS: KnobSpec = KnobSpec {
    key: "cpu.irq_cpus",
    kind: KnobKind::Cpus,
    help: "the CPU each HBA's interrupt goes to (/proc/irq/N/smp_affinity), where its completion softirq runs",
    live: Live::Restart,
    access: cpus!(cpu.irq_cpus),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_KBLOCKD_HIGHPRI: KnobSpec = KnobSpec {
        key: "cpu.kblockd_highpri",
        kind: KnobKind::Bool,
        help: "kblockd's workers run at nice -20 (WQ_HIGHPRI, 4.0 blk_dev_init) and preempt the thread running on their CPU when woken; false: a woken kblockd worker waits for that thread's slice (the 2.6 lessons)",
        live: Live::Restart,
    access: flag!(cpu.kblockd_highpri),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_SCHEDULER: KnobSpec = KnobSpec {
        key: "cpu.scheduler",
        kind: KnobKind::Enum(&["fifo", "fair"]),
        help: "fifo: run queues in wake order, a thread keeps its CPU for its slice; fair: CFS as 2.6.39 runs it, least vruntime first, and a woken sleeper preempts a thread that has run a wakeup granularity longer",
        live: Live::Restart,
    access: named!(cpu.scheduler),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_LOAD_BALANCE: KnobSpec = KnobSpec {
        key: "cpu.load_balance",
        kind: KnobKind::Enum(&["off", "2.6.32"]),
        help: "off: a thread changes CPU only when it wakes; 2.6.32: CFS's load balancer (kernel/sched.c 2.6.32.69): every tick rebalance_domains over the MC (socket) and NODE domains pulls runnable, cache-cold threads from the busiest CPU (find_busiest_group, task_hot 0.5 ms), and a CPU going idle pulls one sooner (idle_balance)",
        live: Live::Restart,
    access: named!(cpu.load_balance),
    applies: validate::anywhere,
    values: &[],
};

pub const CPU_WAKE_IDLE: KnobSpec = KnobSpec {
        key: "cpu.wake_idle",
        kind: KnobKind::Enum(&["no-work", "idle_cpu"]),
        help: "which CPU a woken thread takes as idle (select_idle_sibling): no-work: one running nothing, interrupt and softirq work included (blkviz's first rule, no kernel's; the lessons keep it and their scoreboard caveats say what rests on it); idle_cpu: the kernel's idle_cpu() (the idle task current, none queued), so a CPU reaping completions on its idle task is idle and the woken thread stays there",
        live: Live::Restart,
    access: named!(cpu.wake_idle),
    applies: validate::anywhere,
    values: &[],
};

pub const KERNEL: KnobSpec = KnobSpec {
    key: "kernel",
    kind: KnobKind::Kernel,
    help: "the kernel whose rules the era knobs follow (era.rs: the elevator and its tunables, plugging, readahead, writeback, dirty ratios, the CPU scheduler, dm, SCSI, blk-mq); a knob set explicitly keeps its value; from 5.0 noop, deadline and cfq are refused (the legacy path is gone); none: each knob's own default",
    live: Live::Restart,
    access: Access { path: &[stringify!(kernel)], get: |s| Value::Text(s.kernel.clone().unwrap_or_else(|| "none".into())), set: era::set_kernel },
    applies: validate::anywhere,
    values: &[],
};

pub const DURATION: KnobSpec = KnobSpec { key: "duration", kind: KnobKind::Seconds { min: limits::DURATION_S_MIN, max: limits::DURATION_S_MAX }, help: "simulated seconds to run: the run stops there, in the page as in blksim run (fio's runtime); in the page, an end past the clock applies live, one before it restarts the run", live: Live::Store(Store::Runtime),
    access: seconds!(duration_s),
    applies: validate::anywhere,
    values: &[],
};

/// Every knob, in the order the UI and `blksim` list them.
pub const KNOBS: &[KnobSpec] = &[
    STACK,
    DISKS,
    HBAS,
    DM_MAX_SECTORS_KB,
    DM_PARTIAL_COMPLETION,
    DM_CLONE_ALLOC,
    DM_CONGESTION_CALLOUT,
    DM_PATHS,
    DM_PATH_GROUPING,
    DM_MPATH,
    DM_RR_MIN_IO,
    MD_CHUNK_KB,
    MD_STRIPE_CACHE_SIZE,
    MD_ALIGNED_READS,
    MD_SPLIT_ALIGNED_READS,
    MD_COMPONENT_SIZE_KB,
    DISK_KIND,
    DISK_MAX_SECTORS_KB,
    DISK_WRITE_CACHE,
    DISK_SKIP_WITHIN_TRACK,
    super::knob_table_disk::DISK_PREFETCH,
    DISK_CONTROLLER_CACHE,
    super::knob_table_hwraid::DISK_MEMBER_DRIVE,
    QUEUE_NR_REQUESTS,
    QUEUE_DEPTH,
    QUEUE_SCHEDULER,
    QUEUE_READ_AHEAD_KB,
    QUEUE_MAX_SEGMENTS,
    QUEUE_PLUGGING,
    QUEUE_CFQ,
    QUEUE_GENERIC_TAGGING,
    QUEUE_BATCH_HARD_LIMIT,
    QUEUE_ASYNC_RUN_CANCELS_DELAY,
    QUEUE_RQ_AFFINITY,
    IOSCHED_SLICE_IDLE,
    IOSCHED_QUANTUM,
    IOSCHED_SLICE_SYNC,
    IOSCHED_SLICE_ASYNC,
    IOSCHED_FIFO_EXPIRE_SYNC,
    IOSCHED_FIFO_EXPIRE_ASYNC,
    IOSCHED_FIFO_BATCH,
    IOSCHED_READ_EXPIRE,
    IOSCHED_WRITE_EXPIRE,
    IOSCHED_WRITES_STARVED,
    super::knob_table_kyber::KYBER_READ_LAT_NSEC,
    super::knob_table_kyber::KYBER_WRITE_LAT_NSEC,
    knob_table_bfq::BFQ_SLICE_IDLE,
    knob_table_bfq::BFQ_TIMEOUT_SYNC,
    knob_table_bfq::BFQ_MAX_BUDGET,
    knob_table_bfq::BFQ_LOW_LATENCY,
    HOST_CAN_QUEUE,
    HOST_LINK_MB_S,
    HOST_NR_HW_QUEUES,
    HOST_IRQ_PER_HW_QUEUE,
    super::knob_table_tags::HOST_HOST_TAGSET,
    BLK_MQ_RERUN_AFTER_SPLICE,
    BLK_MQ_DISPATCH,
    super::knob_table_mq::BLK_MQ_RUN_HW_QUEUES,
    super::knob_table_mq::BLK_MQ_RUN_WORK,
    super::knob_table_mq::BLK_MQ_PLUG,
    DM_POLLING_INTERVAL,
    SCSI_RUN_QUEUE,
    super::knob_table_uring::IO_URING_CQ_WAKE,
    VM_MEM_MB,
    VM_DIRTY_RATIO,
    VM_DIRTY_BACKGROUND_RATIO,
    VM_WRITEBACK,
    VM_BDI_DIRTY_LIMIT,
    super::knob_table_readahead::VM_READAHEAD,
    super::knob_table_readahead::VM_BLKDEV_READAHEAD,
    WORKLOAD_NAME,
    WORKLOAD_NUMJOBS,
    WORKLOAD_RW,
    WORKLOAD_BS,
    WORKLOAD_IOENGINE,
    WORKLOAD_IODEPTH,
    WORKLOAD_IODEPTH_BATCH_SUBMIT,
    WORKLOAD_IODEPTH_BATCH_COMPLETE_MIN,
    WORKLOAD_IODEPTH_BATCH_COMPLETE_MAX,
    WORKLOAD_DIRECT,
    WORKLOAD_SIZE,
    WORKLOAD_FSYNC,
    WORKLOAD_SYNC,
    WORKLOAD_FILENAME,
    WORKLOAD_FILESYSTEM,
    WORKLOAD_RWMIXREAD,
    WORKLOAD_OFFSET,
    WORKLOAD_OFFSET_PCT,
    WORKLOAD_RATE_IOPS,
    WORKLOAD_THINKTIME,
    WORKLOAD_STARTDELAY,
    WORKLOAD_RUNTIME,
    WORKLOAD_RAMP_TIME,
    WORKLOAD_GROUP_REPORTING,
    WORKLOAD_PRIO,
    WORKLOAD_PRIOCLASS,
    WORKLOAD_STONEWALL,
    WORKLOAD_WAIT_FOR,
    JOBS,
    CPU_CORES,
    CPU_SOCKETS,
    CPU_IRQ_CPUS,
    CPU_KBLOCKD_HIGHPRI,
    CPU_SCHEDULER,
    CPU_LOAD_BALANCE,
    CPU_WAKE_IDLE,
    KERNEL,
    DURATION,
];
