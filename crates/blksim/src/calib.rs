//! The one calibration. Every cost constant the model uses lives here, with its source or the
//! reason for its value. Lessons never get constants of their own: hardware that differs between
//! reports is a different device model (see `hw/`), not a different number for the same thing.
//!
//! A constant that no source gives is fitted once, jointly across the lessons, and says which
//! fidelity rows it was fitted to; those rows are marked `fitted` in the lessons' front matter,
//! and the scoreboard (`blksim fidelity`) counts them as fits, not predictions.

use crate::engine::time::{NS_PER_MS, NS_PER_US};

// ---- CPU -------------------------------------------------------------------------------------

/// Direct cost of a context switch. Source: pipe ping-pong measurements on 2005–2012 x86
/// (lmbench `lat_ctx`, 2–5 µs); pipe ping-pong of that era gives a 3–5 µs direct cost.
pub const CONTEXT_SWITCH_NS: u64 = 3 * NS_PER_US;

/// A read()/write() system call's fixed entry, lookup and exit cost, without per-bio work.
/// Reason: a null syscall is ~0.1 µs, a block-device `read` through `blkdev_direct_IO` a few µs.
pub const SYSCALL_NS: u64 = 2 * NS_PER_US;

/// Building and submitting one bio (`bio_alloc`, `submit_bio`, `generic_make_request`,
/// `__make_request` up to `add_request`). Reason: a few hundred ns to ~1 µs per bio in perf
/// profiles of 2.6-era kernels. The model charges the whole per bio; the trace's stamps
/// (`TraceClock`) place its three parts around the records blktrace makes on the way.
pub const BIO_SUBMIT_NS: u64 = BIO_ALLOC_SUBMIT_NS + ELV_MERGE_NS + ADD_REQUEST_NS;

/// The part of `BIO_SUBMIT_NS` before blktrace's Q (`bio_alloc`, `submit_bio`'s accounting,
/// `generic_make_request`'s checks): between the Q of a stacked device's bio and the Q of
/// the bio it remaps to. INFERRED split: no profile gives the phases apart; half the whole.
pub const BIO_ALLOC_SUBMIT_NS: u64 = 400;

/// The part of `BIO_SUBMIT_NS` between Q and G or M: `elv_merge`'s look for a request to
/// merge into (the last-merge hint, then the elevator's hash or sort tree). INFERRED split.
pub const ELV_MERGE_NS: u64 = 200;

/// The part of `BIO_SUBMIT_NS` between G and I: `init_request_from_bio` and `add_request`'s
/// insert into the elevator (`__elv_add_request`). INFERRED split.
pub const ADD_REQUEST_NS: u64 = 200;

/// `get_request`: allocating and initialising a request from the pool.
pub const GET_REQUEST_NS: u64 = 400;

/// `scsi_request_fn` issuing one command to the LLD (`scsi_dispatch_cmd`, `queuecommand`).
pub const DISPATCH_NS: u64 = 1_500;

/// Hard interrupt entry and the HBA's interrupt handler for one completion.
pub const HARDIRQ_NS: u64 = 2 * NS_PER_US;

/// Softirq completion of one request (`scsi_softirq_done`, `blk_end_request`,
/// `scsi_run_queue`), without the per-bio part.
pub const SOFTIRQ_REQUEST_NS: u64 = 3 * NS_PER_US;

/// Ending one bio in the completion path (`bio_endio`, waking its waiter's page).
pub const SOFTIRQ_BIO_NS: u64 = 300;

/// How long softirq processing may run in interrupt context before the rest is deferred to
/// the CPU's `ksoftirqd/N` thread. Source: `MAX_SOFTIRQ_TIME` = 2 ms in `kernel/softirq.c`
/// (3.9+; 2.6.32 bounded it by `MAX_SOFTIRQ_RESTART` = 10 rounds, about as long under load).
/// While ksoftirqd has work, new softirq work joins it (4dd53d89, "defer to ksoftirqd if it is
/// running"; the report of seed 000 shows exactly that: ksoftirqd/4 at 100%).
pub const SOFTIRQ_BUDGET_NS: u64 = 2 * NS_PER_MS;

/// One visit of `__blk_recalc_rq_segments` to a remaining bio of a partly completed request
/// (follow `bi_next`, walk its bio_vec, test physical mergeability). Not published: fit once so
/// that seed 000's regressed case is bound by one CPU near its reported 600 MB/s, as
/// the per-segment cost, unpublished, has to be fitted, with the readers' page wakeups
/// (`TTWU_REMOTE_NS`) charged on their own. A reading of 2.6.32's source
/// argues a visit stays in L1/L2 (~3-15 ns, inferred): the fit is larger
/// because the model's completion work runs on one CPU group (the scenario's one socket), so
/// it absorbs what a faithful 2 × 4-core topology would add (see the lesson's Status).
/// Fitted to the fidelity row "dm-sg-lists / regressed throughput" (marked fitted there).
pub const SEGMENT_WALK_NS: u64 = 70;

/// `wake_up_page` finding a waiter on the page it unlocks: `__wake_up_bit` → `try_to_wake_up`
/// of a reader on another CPU (its run queue's lock, `enqueue_task`, `check_preempt_curr`,
/// the resched IPI to an idle CPU), charged to the CPU ending the page. A reading of 2.6.32's
/// completion path for seed report 000: ~1–3 µs on the hot CPU; we take the middle. Inferred, not
/// measured; a page nobody waits on costs only the hashed wait queue's check (in
/// `SOFTIRQ_BIO_NS`).
pub const TTWU_REMOTE_NS: u64 = 2 * NS_PER_US;
/// A reader woken at its page, back asleep on the next one: switched in on its CPU and the
/// page copied out (`CONTEXT_SWITCH_NS` + `PAGE_COPY_NS`), from the constants above.
pub const READER_RETURN_NS: u64 = CONTEXT_SWITCH_NS + PAGE_COPY_NS;
/// Cloning one bio for a request-based dm clone (`blk_rq_prep_clone`: `bio_alloc_bioset` and
/// `__bio_clone`). Reason: a slab allocation and a 100-byte copy, ~0.2-0.3 µs.
pub const BIO_CLONE_NS: u64 = 250;

/// Mapping one request onto a path and inserting the clone into the lower queue
/// (`map_request`, `multipath_map`, `blk_insert_cloned_request`). Reason: a few µs in profiles.
pub const DM_MAP_REQUEST_NS: u64 = 2 * NS_PER_US;

/// md RAID5 `handle_stripe` for one stripe head (the state machine under `sh->lock`, issuing
/// or finishing its member I/O). Reason: a few µs per stripe in 2.6-era raid5 profiles.
pub const STRIPE_HANDLE_NS: u64 = 3 * NS_PER_US;

/// XOR of one 4 KiB page into the parity (`xor_blocks`, SSE): ~8 GB/s on 2007-2010 x86.
pub const XOR_PAGE_NS: u64 = 500;

/// `get_active_stripe` + `add_stripe_bio` + `release_stripe` for one page of a bio
/// (hash lookup and list work under `device_lock`). Reason: ~1 µs.
pub const STRIPE_ADD_NS: u64 = NS_PER_US;

/// Allocating one page for readahead and adding it to the page cache (`page_cache_alloc_cold`,
/// `add_to_page_cache_lru`). Reason: ~0.5 µs per page in 2.6-era profiles.
pub const RA_PAGE_NS: u64 = 500;

/// Copying one 4 KiB page from user space into the page cache (`generic_perform_write`):
/// ~2-4 GB/s memcpy on 2010 x86, plus the page-cache lookup.
pub const PAGE_COPY_NS: u64 = 1_200;

/// Writeback's CPU time per dirty page, beyond building and submitting the bio
/// (`write_cache_pages`, 2.6.32-2.6.39; `mpage_writepages` in 2.6.2): the dirty-tag lookup
/// (`pagevec_lookup_tag`), `lock_page`, `clear_page_dirty_for_io` (`page_mkclean`, the dirty
/// tag cleared, zone and bdi counters), `set_page_writeback` (the writeback tag set, counters),
/// `unlock_page`, and adding the page to the bio (`mpage_writepage`/`__bio_add_page`): about
/// eight radix-tree walks, atomic bit operations and per-CPU counter updates on the page's
/// cache lines, ~100-150 ns each on 2004-2011 x86. Estimated from the source, not measured and
/// not fitted: ~1 µs per page.
pub const WRITEBACK_PAGE_NS: u64 = NS_PER_US;

/// How much of one file a flusher writes before moving to the next (`MAX_WRITEBACK_PAGES`,
/// 1024 pages, in 2.6.32-2.6.39 `fs/fs-writeback.c`).
pub const MAX_WRITEBACK_BYTES: u64 = 1024 * 4096;
/// `blk_congestion_wait(WRITE, HZ/10)` in background writeback: at most 100 ms
/// (mm/page-writeback.c `background_writeout`, 2.6.2; `congestion_wait` in 2.6.32).
pub const CONGESTION_WAIT_NS: u64 = 100 * NS_PER_MS;

/// A kblockd work item's fixed cost (workqueue dispatch, taking the queue lock).
pub const KBLOCKD_WORK_NS: u64 = NS_PER_US;
/// `SCSI_QUEUE_DELAY` (3 ms, `drivers/scsi/scsi_lib.c` 2.6.39+): `scsi_request_fn` stopped by
/// a busy host with nothing of the device in flight re-runs the queue after this
/// (`blk_delay_queue`; 2.6.38 plugged the queue for its 3 ms `unplug_delay` instead).
pub const SCSI_QUEUE_DELAY_NS: u64 = 3 * NS_PER_MS;

// ---- Locks: the critical sections CPUs contend on (`kernel/spinlock.rs`) -------------------

/// A legacy request queue's `q->queue_lock` in `__make_request` (2.6.x; `blk_queue_bio` to
/// 4.x): `elv_merge`'s look for a merge and `add_request`'s insert run under it, the parts of
/// `BIO_SUBMIT_NS` that `ELV_MERGE_NS` and `ADD_REQUEST_NS` are; `get_request` drops it
/// around the allocation (`blk_alloc_request` runs unlocked, 2.6.32 `get_request`).
/// The request_fn's part under it, per request it starts: `blk_peek_request` (the elevator's
/// `dispatch_fn`, the driver's `prep_rq_fn`: sd's command and `blk_rq_map_sg`) and
/// `blk_start_request`; `scsi_request_fn` then drops it for the host's checks and
/// `scsi_dispatch_cmd` (2.6.32 `scsi_lib.c`). Part of `DISPATCH_NS`.
/// INFERRED from the code path (about a third of the 1.5 µs), not measured, not fitted.
pub const QUEUE_LOCK_START_NS: u64 = 500;
/// `blk_finish_request` under `q->queue_lock` when a request ends (`blk_end_request` →
/// `blk_end_bidi_request`: `elv_completed_request`, the disk stats, `blk_put_request`): part of
/// `SOFTIRQ_REQUEST_NS`, the request's `bio_endio`s running before it, unlocked. INFERRED as
/// `QUEUE_LOCK_START_NS` (the same kind of list and counter work), not fitted.
pub const QUEUE_LOCK_FINISH_NS: u64 = 500;

/// bfq's `bfqd->lock` (blk-mq, 4.12+): "the total, single-lock-protected, per-request
/// processing time of BFQ---i.e., the sum of the execution times of the request insertion,
/// dispatch and completion hooks---is, e.g., 1.9 us on an Intel Core i7-2760QM@2.40GHz"
/// (Documentation/block/bfq-iosched.rst, from 5.0, Paolo Valente, 4438cf50 "doc, block, bfq:
/// add information on bfq execution time"). Its three hooks (`bfq_insert_requests`,
/// `bfq_dispatch_request`, `bfq_finish_requeue_request`) take a third each: INFERRED split,
/// the document gives the sum. A dispatch that finds nothing to give (bfq idling) runs the
/// same hook (`__bfq_dispatch_request` → `bfq_select_queue`), INFERRED as long. None of it is
/// in the other costs: bfq's time is charged only as these sections.
pub const BFQ_LOCKED_NS: u64 = 1_900;
pub const BFQ_HOOK_LOCKED_NS: u64 = BFQ_LOCKED_NS / 3;
/// mq-deadline's `dd->lock`: "the total, single-lock-protected, per-request execution time of
/// the lightest I/O scheduler available in blk-mq, mq-deadline, is 0.7 us" (the same document
/// and CPU). In 5.x it is taken by `dd_insert_requests` and `dd_dispatch_request`
/// (`dd_finish_request` takes only a zoned disk's `zone_lock`): half each, INFERRED split.
pub const DD_LOCKED_NS: u64 = 700;
pub const DD_HOOK_LOCKED_NS: u64 = DD_LOCKED_NS / 2;

/// `__blk_mq_run_hw_queue` (4.0) from `scsi_queue_rq`'s BUSY (which stopped the queue) to the
/// splice of the leftovers onto `hctx->dispatch`: un-start the request, put it back on the
/// list, take `hctx->lock`. Reason: a few hundred instructions and one lock, ~0.3 µs; an
/// interrupt handled on that CPU meanwhile lengthens it (`Sim::mq_splice_due`).
pub const MQ_SPLICE_NS: u64 = 300;
/// `BLK_MAX_TIMEOUT` (5 HZ, block/blk-timeout.c 3.13+): the blk-mq timeout timer looks at
/// least this often while requests are started.
pub const BLK_MAX_TIMEOUT_NS: u64 = 5 * crate::engine::time::NS_PER_S;
/// request-based dm's `dm_request_fn` (4.0) re-runs its queue after `blk_delay_queue(q, HZ/10)`
/// whenever it finds the queue empty or the target busy.
pub const DM_REQUEST_DELAY_NS: u64 = 100 * NS_PER_MS;
/// multipathd's `MAX_CHECKINT`: the path checker's interval doubles after each good check up
/// to 4 × `polling_interval` (multipath-tools `libmultipath/defaults.h`, `check_path()`).
pub const MULTIPATH_MAX_CHECKINT_FACTOR: u64 = 4;
/// Bio-based round-robin's repeat count when multipath.conf sets none: multipath-tools'
/// `DEFAULT_MINIO` 1000 (`libmultipath/defaults.h`), which it writes into the table, the same as
/// the kernel's own `RR_MIN_IO` 1000 for a table without one (`drivers/md/dm-round-robin.c`).
pub const MULTIPATH_DEFAULT_MINIO: u32 = 1000;
/// 2.6.10-2.6.38 queue plugging (`blk_queue_make_request` in `ll_rw_blk.c`, 2.6.20):
/// `q->unplug_thresh = 4` requests waiting (not issued) unplug a plugged queue, and
/// `q->unplug_delay = 3 * HZ / 1000` unplugs it from kblockd if nobody did sooner.
pub const UNPLUG_THRESH: u32 = 4;
pub const UNPLUG_DELAY_NS: u64 = 3 * NS_PER_MS;
/// `generic_unplug_device` on a queue (take the queue lock, test and clear the plug, and run
/// the queue if it was plugged; what it dispatches is charged as `DISPATCH_NS`). Reason: a
/// spinlock round trip and a bit test, ~0.3 µs.
pub const UNPLUG_NS: u64 = 300;

/// 2.6 request-pool batching (`ll_rw_blk.c`, later `blk-core.c`): a process that found the
/// pool full, or slept in `get_request_wait`, may allocate `BLK_BATCH_REQ` requests within
/// `BLK_BATCH_TIME` (HZ/50) even while the pool stays full, up to 3/2 of `nr_requests`.
pub const BLK_BATCH_REQ: u32 = 32;
pub const BLK_BATCH_TIME_NS: u64 = 20 * NS_PER_MS;

/// `balance_dirty_pages` (2.6.32-2.6.39): a writer over the dirty limit sleeps in
/// `io_schedule_timeout(pause)`, the pause starting at one jiffy and doubling up to HZ/10.
/// HZ=1000 (the common distribution setting of that era).
pub const DIRTY_PAUSE_MIN_NS: u64 = NS_PER_MS;
pub const DIRTY_PAUSE_MAX_NS: u64 = 100 * NS_PER_MS;

/// deadline (2.6 `deadline-iosched.c`): read_expire HZ/2, write_expire 5*HZ, fifo_batch 16,
/// writes_starved 2.
pub const DEADLINE_READ_EXPIRE_NS: u64 = 500 * NS_PER_MS;
pub const DEADLINE_WRITE_EXPIRE_NS: u64 = 5_000 * NS_PER_MS;
pub const DEADLINE_FIFO_BATCH: u32 = 16;
pub const DEADLINE_WRITES_STARVED: u32 = 2;

/// cfq (2.6.2x `cfq-iosched.c` defaults, HZ=1000): slice_sync HZ/10, slice_async HZ/25,
/// slice_idle HZ/125, quantum 4, fifo_expire sync HZ/8 and async HZ/4.
pub const CFQ_SLICE_SYNC_NS: u64 = 100 * NS_PER_MS;
pub const CFQ_SLICE_ASYNC_NS: u64 = 40 * NS_PER_MS;
pub const CFQ_SLICE_IDLE_NS: u64 = 8 * NS_PER_MS;
pub const CFQ_QUANTUM: u32 = 4;
pub const CFQ_FIFO_EXPIRE_SYNC_NS: u64 = 125 * NS_PER_MS;
pub const CFQ_FIFO_EXPIRE_ASYNC_NS: u64 = 250 * NS_PER_MS;
/// cfq's `back_max` (16 MiB, as sectors), `back_penalty` and `slice_async_rq` (2.6.20
/// `cfq-iosched.c`): how far behind the last request `cfq_choose_req` looks, how much a
/// backward seek counts, and an async queue's requests per slice (× 8 at priority 4).
pub const CFQ_BACK_MAX_SECTORS: u64 = 16 * 1024 * 2;
pub const CFQ_BACK_PENALTY: u64 = 2;
pub const CFQ_SLICE_ASYNC_RQ: u32 = 2;

/// How long a thread keeps a core while others are runnable on it before it is preempted at
/// its next step boundary. Reason: CFS `sched_min_granularity_ns` is 0.75–4 ms by core count.
pub const SCHED_SLICE_NS: u64 = 3 * NS_PER_MS;

/// `cpu.scheduler = fair` (CFS as 2.6.39 sets it up, `kernel/sched_fair.c`): the normalized
/// `sysctl_sched_latency` 6 ms and `sysctl_sched_wakeup_granularity` 1 ms, both multiplied at
/// boot by `1 + ilog2(min(ncpus, 8))` (`sched_init_granularity`, SCHED_TUNABLESCALING_LOG).
/// A woken sleeper is placed half a latency behind `min_vruntime` (`place_entity`,
/// GENTLE_FAIR_SLEEPERS); it preempts the running thread when that one's vruntime is ahead by
/// more than the wakeup granularity (`wakeup_preempt_entity`).
pub const SCHED_LATENCY_NORMALIZED_NS: u64 = 6 * NS_PER_MS;
pub const SCHED_WAKEUP_GRAN_NORMALIZED_NS: u64 = NS_PER_MS;

/// Spread of job start times: a shell loop forks one `dd` after another.
pub const JOB_FORK_SPREAD_NS: u64 = 200 * NS_PER_US;

// ---- HDD: a 7200 rpm SATA drive of 2010 (Hitachi 7K1000.C / Seagate 7200.12 class) ---------------

/// 7200 rpm: 8.33 ms per revolution. Source: drive spec sheets.
pub const HDD_REVOLUTION_NS: u64 = 60 * 1_000_000_000 / 7200;
/// Track-to-track seek ~1 ms; average seek ~8.5 ms at one third of the stroke; full stroke
/// ~17 ms. Source: Seagate Barracuda 7200.7 / HGST 7K4000 spec sheets. The curve between is
/// √distance for short seeks and linear for long ones (Ruemmler & Wilkes; DiskSim's 3-point curve).
pub const HDD_SEEK_TRACK_NS: u64 = NS_PER_MS;
pub const HDD_SEEK_AVG_NS: u64 = 8_500 * NS_PER_US;
pub const HDD_SEEK_FULL_NS: u64 = 17 * NS_PER_MS;
/// Media rate, outer and inner zone. Source: spec sheets and reviews of 1 TB
/// 7200 rpm drives (≈130 MB/s outer in 2010, outer ≈ 2× inner).
pub const HDD_MEDIA_OUTER_BYTES_PER_S: u64 = 130_000_000;
pub const HDD_MEDIA_INNER_BYTES_PER_S: u64 = 65_000_000;
/// Capacity: 500 GB (976,773,168 sectors, the IDEMA figure for 500 GB).
pub const HDD_CAPACITY_SECTORS: u64 = 976_773_168;
/// The 2010 drive, from the figures above; its link is SATA 3 Gb/s (`SATA_LINK_BYTES_PER_S`).
pub const HDD_2010: crate::hw::hdd::HddSpec = crate::hw::hdd::HddSpec {
    revolution_ns: HDD_REVOLUTION_NS,
    seek_track_ns: HDD_SEEK_TRACK_NS,
    seek_avg_ns: HDD_SEEK_AVG_NS,
    seek_full_ns: HDD_SEEK_FULL_NS,
    media_outer_bytes_per_s: HDD_MEDIA_OUTER_BYTES_PER_S,
    media_inner_bytes_per_s: HDD_MEDIA_INNER_BYTES_PER_S,
    capacity_sectors: HDD_CAPACITY_SECTORS,
    link_bytes_per_s: SATA_LINK_BYTES_PER_S,
};
/// NCQ/TCQ aging: a command queued in the drive longer than this is served next. Reason: drive
/// firmware bounds starvation under shortest-positioning-first; vendors do not publish the
/// figure, we take a few average service times' worth of hundreds of ms.
pub const HDD_NCQ_AGE_MAX_NS: u64 = 500 * NS_PER_MS;

/// Drive firmware and protocol overhead per command. Reason: ~0.1–0.3 ms measured for
/// random 4 KiB I/O beyond seek and rotation on SATA drives; we take the low end.
pub const HDD_COMMAND_OVERHEAD_NS: u64 = 100 * NS_PER_US;
/// The drive's buffer segment: each segment follows one run of sectors, and after a read the
/// drive keeps reading the following sectors into it while the media is idle (a new command
/// stops it). Source: 8–32 MB caches of 2005–2012 drives split into segments of ~1–2 MB
/// (SCSI mode page 08h "number of cache segments": IBM's DDRS-39130 manual lists 3 × 128 KB
/// or 6 × 64 KB of a 512 KB buffer, a segment an eighth to a quarter of the buffer; Seagate's
/// SAS manuals describe each segment as "a self-contained circular buffer").
pub const HDD_SEGMENT_BYTES: u64 = 2 * 1024 * 1024;
// The read-ahead's policy when another command needs the head is the firmware's, a knob
// (`disk.prefetch`, no constant): `stop`, mode page 08h's minimum pre-fetch of zero ("read ahead
// should be terminated immediately after a new command arrives", HGST Ultrastar C15K600 and
// 15K450 specifications; IBM DDRS-39130), the default; or `stream`, a detected stream's
// read-ahead (Seagate's ARLA: "as long as sequential read operations request contiguous blocks
// of data, ARLA keeps prefetch enabled") "continues sequentially until the allocated buffer is
// full" (Maxtor D540X-4G manual), here one `HDD_SEGMENT_BYTES` segment past the host's last read.
/// How many segments the buffer has: `HDD_BUFFER_BYTES` in segments of `HDD_SEGMENT_BYTES`
/// (8). Cached writes not yet on the media hold segments of it (`hw/hdd_buffer.rs`).
pub const HDD_BUFFER_SEGMENTS: u32 = (HDD_BUFFER_BYTES / HDD_SEGMENT_BYTES) as u32;
/// Write cache space for not-yet-destaged writes. Source: 16 MB buffers of 2010 drives, part
/// of which holds read segments; we give writes half.
pub const HDD_WRITE_CACHE_BYTES: u64 = 8 * 1024 * 1024;
/// How many of the oldest cached writes the drive's destage chooses among, shortest
/// positioning first. Source for the reordering: IBM's "Write Cache Improvement by Combination
/// of Rotational Positioning Reordering and Skip Write" (IPCOM000123912D, 1999): "Hard Disk
/// Drive reorders cached writes to improve performance. RPO is a method to find one command
/// which needs the shortest access time from current writing sector." The window is INFERRED:
/// the 32 entries of the drive's NCQ queue (SATA's 32 tags), so destaging a full cache is never
/// slower than the same writes queued uncached at NCQ's full depth. Not fitted.
pub const HDD_WRITE_CACHE_RPO_WINDOW: u32 = 32;
/// The drive's buffer as a cache of what it last read or wrote: 16 MB (2010 drives' buffer;
/// reads it holds are served from it, as drives serve reads from cache segments and pending
/// writes).
pub const HDD_BUFFER_BYTES: u64 = 16 * 1024 * 1024;
// ---- SCSI host (HBA) -----------------------------------------------------------------------
/// What an HBA's link moves, MB/s: the narrower of its PCIe slot and its SAS port. An LSI
/// SAS2008 (mpt2sas; seed 000's HBAs) sits on PCIe 2.0 x8 (8 × 500 MB/s = 4000 MB/s raw, ~3.2
/// GB/s of payload) and reaches its disks through an expander's x4 wide port: 4 × 6 Gb/s with
/// 8b/10b coding = 2400 MB/s, the narrower. ServeTheHome's review of the LSI 9202-16e (two
/// SAS2008) measured ~2.5 GB/s per controller. Not fitted. A scenario whose report names its
/// HBA and cabling sets `host.link_mb_s` to this; the default, 0, leaves the link unbounded
/// (the reports of the other lessons do not say what their HBA was).
pub const SAS2_X4_WIDE_PORT_MB_S: u32 = 2400;
/// SATA 3 Gb/s link: ~300 MB/s for data already in the drive's cache.
pub const SATA_LINK_BYTES_PER_S: u64 = 300_000_000;

// ---- hardware RAID5: a 3ware Escalade 8506-8 (seed 003) over the HDDs above -------------------

/// Members of the array. The report does not say; 4 is how xbitlabs measured the 8506-8
/// ("3ware 8506-8 Escalade", 2004-06-11).
pub const HWRAID5_MEMBERS: u32 = 4;
/// The member drives are the scenario's (`disk.member_drive`): the 2010 drive above (`hdd`,
/// the default: seed 003's box had 7200 rpm 200 GB disks, the nearest the model has), or this
/// one (`wd360gd`). Western Digital's Raptor WD360GD, the 10,000 rpm SATA drive xbitlabs'
/// 3ware reviews of 2004 ran on ("we just didn't have eight Raptor HDDs at that time", their
/// 8500-8 review; the 8506-8 review reran its four). Sources, field by field:
/// - spindle, seek, capacity: 10,000 rpm (average rotational latency 2.99 ms), average read
///   seek 5.2 ms, 37 GB on one platter (WD's figures for the WD360GD, as The Tech Report's
///   WD740GD review tabulates them). The seek curve's other two points are the 2010 drive's
///   scaled to that average (track-to-track 0.6 ms, full stroke 10.4 ms): INFERRED.
/// - media rate: 54 MB/s at the outer edge: xbitlabs' four WD360GD in RAID0 on a SiI 3114
///   read 215 MB/s, "about exactly four times the maximum speed of the single drive" (its
///   review, 2004-08-27; the drive named in their SiI3124 review, 2005: "the SiI3114 was tested
///   with the WD360GD HDD"). The inner edge at half the outer, the 2010 drive's ratio: INFERRED.
/// - link: SATA 1.5 Gb/s, 150 MB/s of payload (the drive's Marvell 88i8030 bridge; the 8506's
///   "8 channels SerialATA 150", xbitlabs' specifications table).
///
/// Its 8 MB buffer is not the model's: every drive's buffer is `HDD_BUFFER_BYTES` in
/// `HDD_SEGMENT_BYTES` segments. Nothing here is fitted.
pub const HDD_WD360GD: crate::hw::hdd::HddSpec = crate::hw::hdd::HddSpec {
    revolution_ns: 60 * 1_000_000_000 / 10_000,
    seek_track_ns: 600 * NS_PER_US,
    seek_avg_ns: 5_200 * NS_PER_US,
    seek_full_ns: 10_400 * NS_PER_US,
    media_outer_bytes_per_s: 54_000_000,
    media_inner_bytes_per_s: 27_000_000,
    capacity_sectors: 37_000_000_000 / 512,
    link_bytes_per_s: 150_000_000,
};
/// Stripe unit per member: 64 KiB. Source: 3ware Escalade user guide ("RAID 5 stripe size is
/// limited to 64k").
pub const HWRAID5_CHUNK_SECTORS: u64 = 128;
/// The controller's memory, all of it used as the write-back cache: 2.25 MB SRAM. Source:
/// xbitlabs' 8506-8 review (specifications table).
pub const HWRAID5_CACHE_BYTES: u64 = 2_359_296;
/// The members' own write caches destage in arrival order (a reorder window of one): the
/// 8506 speaks SATA-1 to 2003 drives without command queueing (NCQ came with SATA II drives
/// in 2004-2005). INFERRED: whether those drives reordered cached writes is not published;
/// the 2010 drive (`HDD_WRITE_CACHE_RPO_WINDOW`) does.
pub const HWRAID5_MEMBER_RPO_WINDOW: u32 = 1;
/// Host transfers into the controller: 64-bit/66 MHz PCI, 533 MB/s. Source: the same review.
/// Each transfer is timed alone at this rate: transfers sharing the bus are not modelled.
pub const HWRAID5_HOST_BYTES_PER_S: u64 = 533_000_000;
/// The controller's RAID5 write path (parity generation and staging), per byte of new data:
/// 80 MB/s. Source: this controller's own figure in seed 003, the same file written straight
/// to /dev/sda1 on the same box (79.8 MB/s, nothing between XFS and the controller); 3ware
/// quoted "up to 100 MB/s" RAID5 writes for the next generation (9500S). It bounds a stream
/// of full-stripe writes; the lesson's variants are not fitted to it. Taken from the fidelity
/// row "nr-requests / the same writer straight on /dev/sda1" (marked fitted there).
pub const HWRAID5_WRITE_BYTES_PER_S: u64 = 80_000_000;

// ---- SSDs: an Intel X25-M G2 class (2009-2011) and a Samsung 830 class (2011-2012) SATA SSD ----
//
// Each is built as the drive is (`hw::flash::Nand`): the SATA link, the controller's work per
// command and its data path, N channels × dies per channel, pages sensed in tR and moved over
// their channel, programs in tPROG. What each figure stands on is said at each. Their channels
// and link move data in the order the commands came (`reorder: false`): INFERRED
// simplification, as their rows were checked; NCQ lets a SATA drive complete out of order too,
// but at their controllers' rates (35,000 and 80,000 commands a second) a die's wait seldom
// holds up the commands behind it: 4 KiB random reads at QD32 reordered move by under 0.1%
// (measured on `Nand` alone).

/// The X25-M G2's flash channels. Source: Intel's X25-M controller (PC29AS21) has ten
/// channels (Xbit Labs, "First Look at Intel X25-M SSD", 2008: "the ten-channel controller
/// (one channel for each two memory chips)"; kept in the 34 nm G2).
pub const SSD_CHANNELS: u32 = 10;
/// The Samsung 830's flash channels. Source: Samsung's MCX controller, 8 channels (AnandTech,
/// "The Samsung SSD 830 Review", 2011).
pub const SSD830_CHANNELS: u32 = 8;
/// Commands a SATA drive holds at once: NCQ's 32 tags (SATA 2.6). Source: the SATA spec.
pub const SSD_NCQ_TAGS: u32 = 32;

/// The X25-M G2 160 GB. Sources, field by field:
/// - link: SATA 3 Gb/s, 8b/10b coded: 300 MB/s of payload at most (SATA 2.6).
/// - controller, per command: 1 / 35,000 s, the spec sheet's "Random 4KB Reads: up to 35,000
///   IOPS" (Intel X25-M G2 product specification, 322296). At a deep queue of 4 KiB reads
///   neither the link (73,000 a second) nor the channels (122,000) nor the dies bound the
///   drive, so the spec's figure is the controller's rate; the rows that check 4 KiB random
///   reads at depth are the check of that reading, not fitted to it.
/// - data path: the controller moves at most 250 MB/s toward the host and 100 MB/s from it,
///   the same sheet's sustained sequential figures (160 GB); SATA's 300 MB/s and the flash's
///   500 MB/s of channel bandwidth exceed them, so what limits them is inside the controller.
/// - flash: 34 nm Intel/Micron MLC, 4 KiB pages, tR 50 µs, tPROG 900 µs (Intel/Micron 34 nm
///   MLC NAND datasheets, 29F32G08/29F64G08 class: two planes per die, programmed together);
///   each channel an 8-bit ONFI 1.0 bus in
///   asynchronous timing mode 5 (20 ns cycle): 50 MB/s.
/// - dies: 4 per channel: 160 GiB of raw flash in 40 dies of 32 Gbit on 10 channels. INFERRED
///   from the capacity and the part (the sheet does not list the packages' dies).
/// - random writes: the FTL's 1 / 8,600 s per write that does not continue the last, one at a
///   time: "Random 4KB Writes: up to 8,600 IOPS" (the sheet). Not fitted: AnandTech's 35.8 MB/s
///   at QD3 (a devices row) checks it.
/// - the drive's read-ahead: one page on each channel beyond a read that continues the last.
///   INFERRED: no sheet gives it; a drive that reads the next stripe keeps every channel busy,
///   and the X25-M's 123 MB/s with 4 KiB host readahead (Wu Fengguang's LKML figures) is more
///   than its flash gives one 4 KiB command at a time.
pub const SSD_X25M_G2: crate::hw::flash::FlashSpec = crate::hw::flash::FlashSpec {
    link_bytes_per_s: 300_000_000,
    command_ns: 1_000_000_000 / 35_000,
    read_path_bytes_per_s: 250_000_000,
    write_path_bytes_per_s: 100_000_000,
    channels: SSD_CHANNELS,
    dies_per_channel: 4,
    page_bytes: 4096,
    planes: 2,
    t_r_ns: 50 * NS_PER_US,
    t_prog_ns: 900 * NS_PER_US,
    channel_bytes_per_s: 50_000_000,
    random_write_ns: 1_000_000_000 / 8_600,
    readahead_pages: SSD_CHANNELS,
    reorder: false,
};
pub const SSD_CAPACITY_SECTORS: u64 = 312_581_808;

/// The Samsung 830 256 GB. Sources, field by field:
/// - link: SATA 6 Gb/s, 8b/10b coded: 600 MB/s (SATA 3.0).
/// - controller, per command: 1 / 80,000 s, the spec's "Random Read (4KB, QD32): up to 80,000
///   IOPS" (Samsung SSD 830 data sheet, 2011), read as for the X25-M.
/// - data path: 520 MB/s read, 400 MB/s write, the sheet's sequential figures (256 GB).
/// - flash: Samsung 27 nm 2-bit MLC, toggle DDR 1.0 (133 MB/s a channel), 8 KiB pages
///   (Samsung's 27 nm 64 Gbit toggle parts), two planes per die as the Intel/Micron parts
///   (INFERRED). tR 60 µs and tPROG 1.3 ms: INFERRED from the
///   generation (20-30 nm MLC of 2011: tR 50-75 µs, tPROG 1.2-1.5 ms, Grupp et al. "The Bleak
///   Future of NAND Flash Memory", FAST 2012); Samsung does not publish the part's timings.
/// - dies: 4 per channel: 256 GiB raw in 32 dies of 64 Gbit on 8 channels, INFERRED.
/// - random writes: 1 / 36,000 s, the sheet's "Random Write (4KB, QD32): up to 36,000 IOPS".
/// - read-ahead: one page on each channel, INFERRED as for the X25-M.
pub const SSD_830: crate::hw::flash::FlashSpec = crate::hw::flash::FlashSpec {
    link_bytes_per_s: 600_000_000,
    command_ns: 1_000_000_000 / 80_000,
    read_path_bytes_per_s: 520_000_000,
    write_path_bytes_per_s: 400_000_000,
    channels: SSD830_CHANNELS,
    dies_per_channel: 4,
    page_bytes: 8192,
    planes: 2,
    t_r_ns: 60 * NS_PER_US,
    t_prog_ns: 1_300 * NS_PER_US,
    channel_bytes_per_s: 133_000_000,
    random_write_ns: 1_000_000_000 / 36_000,
    readahead_pages: SSD830_CHANNELS,
    reorder: false,
};
/// 256 GB (500,118,192 sectors, as IDEMA's LBA count for 256 GB).
pub const SSD830_CAPACITY_SECTORS: u64 = 500_118_192;

// ---- NVMe: a Samsung 970 EVO Plus class drive (2019-2022) on PCIe 3.0 x4 ---------------------
//
// The same flash model as the SATA drives (`hw::flash::Nand`), with its own figures; the path
// to it is the NVMe driver's (`drivers/nvme/pci.rs`), not SCSI's.

/// The Phoenix controller's flash channels: 8. Source: KitGuru, "Samsung 970 EVO 2TB SSD
/// review" (2018): "Phoenix is an 8-channel, 5-core controller"; the 970 EVO Plus keeps it
/// (cdrinfo.com, "Samsung Sets New Performance Levels for Consumer NVMe SSDs with 970 EVO
/// Plus", 2019: "Samsung Phoenix Controller" for both).
pub const NVME_CHANNELS: u32 = 8;

/// PCIe 3.0 x4 as payload: 8 GT/s a lane, 128b/130b coded (3,938 MB/s for four lanes), in
/// TLPs of 256 bytes of data behind 24 bytes of header, sequence number, LCRC and framing
/// (PCIe 3.0 base specification; 256 bytes is the usual Max_Payload_Size of desktop root
/// ports, INFERRED for the reviewers' boards): 3,600 MB/s.
pub const PCIE3_X4_BYTES_PER_S: u64 = 8_000_000_000 * 4 / 8 * 128 / 130 * 256 / 280;

/// The 970 EVO Plus 1 TB. Sources, field by field:
/// - link: PCIe 3.0 x4 (`PCIE3_X4_BYTES_PER_S`), both ways; the controller's data path is
///   taken as no narrower (INFERRED: the data sheet's 3,500 MB/s sequential read is what the
///   link carries, less the host's own work).
/// - controller, per command: 1 / 620,000 s, the data sheet's "Random Read (QD32): up to
///   620,000 IOPS" of the 2 TB model (Samsung 970 EVO Plus data sheet, as cdrinfo.com and
///   digit.in list it). The 2 TB model has 64 dies, which could read 1.2 million 4 KiB pages a
///   second: what bounds it is the controller, which the 1 TB model shares. The 1 TB model's own
///   figure (600,000 with 32 dies, which could read ~600,000) is the devices row that checks
///   the reading, not fitted to it.
/// - flash: Samsung's fifth-generation (9x-layer) 256 Gbit TLC V-NAND: "the response time to
///   read-signals has been significantly reduced to 50μs", "data write speed ... 500-microseconds",
///   Toggle DDR 4.0 at "1.4 Gbps" (Samsung's announcement, 2018-07-10, as convergedigest.com
///   quotes it): tR 50 µs, tPROG 500 µs, an 8-bit channel at 1,400 MB/s (INFERRED: that the
///   Phoenix runs its channels at the NAND's full rate). 16 KiB pages and two planes per die:
///   INFERRED from the generation (Samsung does not publish the part's geometry).
/// - dies: 4 per channel: 1 TB of raw flash in 32 dies of 256 Gbit on 8 channels.
/// - random writes: the FTL's 1 / 560,000 s per write that does not continue the last, the data
///   sheet's "up to 560,000 IOPS" random write (2 TB). The SLC write cache (TurboWrite) is not
///   modelled: writes are programmed at TLC's tPROG. No devices row checks writes.
/// - read-ahead: one page on each channel beyond a read that continues the last, INFERRED as
///   for the SATA drives.
/// - reorder: the channels and the link move each page when it is ready (NVMe completes
///   commands in any order: each completion entry names its command, NVMe 1.3 § 4.6). In
///   arrival order, a read waiting on a busy die would hold up every read behind it on its
///   channel and on the link (half the IOPS at QD128).
pub const NVME_970_EVO_PLUS: crate::hw::flash::FlashSpec = crate::hw::flash::FlashSpec {
    link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
    command_ns: 1_000_000_000 / 620_000,
    read_path_bytes_per_s: PCIE3_X4_BYTES_PER_S,
    write_path_bytes_per_s: PCIE3_X4_BYTES_PER_S,
    channels: NVME_CHANNELS,
    dies_per_channel: 4,
    page_bytes: 16_384,
    planes: 2,
    t_r_ns: 50 * NS_PER_US,
    t_prog_ns: 500 * NS_PER_US,
    channel_bytes_per_s: 1_400_000_000,
    random_write_ns: 1_000_000_000 / 560_000,
    readahead_pages: NVME_CHANNELS,
    reorder: true,
};
/// 1 TB (1,953,525,168 sectors, IDEMA's LBA count for 1 TB).
pub const NVME_CAPACITY_SECTORS: u64 = 1_953_525_168;

/// The driver's `io_queue_depth` module parameter, 1024 by default (drivers/nvme/host/pci.c,
/// v4.4-v6.x; `NVME_Q_DEPTH` in 3.19-4.3 drivers/block/nvme-core.c): each I/O queue pair has
/// 1024 entries, and blk-mq gets one tag fewer per hardware queue (`nvme_dev_add`:
/// `tagset.queue_depth = min(q_depth, BLK_MQ_MAX_DEPTH) - 1`, as a full submission queue
/// would look empty). The drive's CAP.MQES is INFERRED to allow it.
pub const NVME_IO_QUEUE_DEPTH: u32 = 1024;

/// `nvme_queue_rq` for one request: `nvme_setup_cmd` fills the 64-byte command,
/// `nvme_map_data` maps the data (`blk_rq_map_sg`, `dma_map_sg`, the PRPs), `nvme_submit_cmd`
/// copies it into the submission queue and writes the tail doorbell (one posted MMIO write).
/// Reason: a few hundred instructions and one uncached write, ~1 µs (INFERRED from the code
/// path, not measured; SCSI's `DISPATCH_NS` is 1.5 µs for a longer path). Not fitted.
pub const NVME_QUEUE_RQ_NS: u64 = NS_PER_US;
/// The queue's MSI-X interrupt and `nvme_irq` → `nvme_process_cq` for one completion entry
/// (read the entry, check its phase bit, write the head doorbell). Reason: interrupt entry and
/// exit plus a cache miss on the entry, ~1 µs (INFERRED; `HARDIRQ_NS`, an HBA's handler with
/// its own bookkeeping, is 2 µs). Not fitted.
pub const NVME_IRQ_NS: u64 = NS_PER_US;
/// `nvme_handle_cqe` → `blk_mq_complete_request` on the submitting CPU (no IPI: the vector is
/// that CPU's) → `nvme_pci_complete_rq` (`dma_unmap_sg`) → `blk_mq_end_request` (the request's
/// accounting and its tag freed), without the per-bio part (`SOFTIRQ_BIO_NS`). Reason: ~1.5 µs,
/// half of SCSI's `SOFTIRQ_REQUEST_NS` (which adds `scsi_io_completion`, the sense check and
/// the queue's restart). INFERRED, not fitted.
pub const NVME_COMPLETE_RQ_NS: u64 = 1_500;

// ---- ramlun: an SRP LUN backed by a tmpfs file (seed 002) ------------------------------------

/// Round trip of one SRP command over InfiniBand to a target serving it from RAM. Source: SRP
/// and iSER latency measurements of the era, 10–20 µs for 4 KiB.
pub const RAMLUN_COMMAND_NS: u64 = 15 * NS_PER_US;
/// Data rate of a 4x DDR/QDR link, ~2 GB/s usable.
pub const RAMLUN_BYTES_PER_S: u64 = 2_000_000_000;
/// Commands the target works on at once (a RAM target is not the limit; the tags are).
pub const RAMLUN_SLOTS: u32 = 64;
/// The report's LUN: a 16 MB tmpfs file.
pub const RAMLUN_CAPACITY_SECTORS: u64 = 32_768;

/// `cpu.load_balance = 2.6.32` (kernel/sched.c, 2.6.32.69): `sysctl_sched_migration_cost`
/// (a thread that ran within the last 0.5 ms is cache-hot, `task_hot`, and stays unless
/// balancing has failed `cache_nice_tries` times; also the least mean idle time for which a
/// CPU going idle looks for work, `idle_balance`), `sysctl_sched_nr_migrate` (at most 32
/// threads looked at per pull), and the tick that drives `rebalance_domains`: HZ=1000
/// (x86_64_defconfig of 2.6.32, as the other HZ-based figures here).
pub const SCHED_MIGRATION_COST_NS: u64 = 500_000;
pub const SCHED_NR_MIGRATE: u32 = 32;
pub const JIFFY_NS: u64 = NS_PER_MS;

/// The jiffy of a 5.x kernel's timers where blk-mq arms `run_work` with `msecs_to_jiffies`
/// (`blk_mq.run_work = mod`): HZ=250, the default of v5.10:kernel/Kconfig.hz (`default
/// HZ_250`). The report's kernel config is not given: the Kconfig default is taken (INFERRED).
/// A timer of n jiffies fires at the n-th tick from now (the timer wheel's first level has
/// one-jiffy buckets), so a 3 ms re-run (one jiffy) fires at the next tick.
pub const RUN_WORK_JIFFY_NS: u64 = crate::engine::time::NS_PER_S / 250;

/// bfq (v5.10 block/bfq-iosched.c): `bfq_slice_idle` NSEC_PER_SEC / 125 (8 ms) and
/// `bfq_timeout` HZ / 8 (125 ms, sysfs `timeout_sync`).
pub const BFQ_SLICE_IDLE_NS: u64 = 8 * NS_PER_MS;
pub const BFQ_TIMEOUT_SYNC_NS: u64 = 125 * NS_PER_MS;
