//! The kernel eras: `kernel=VERSION` sets every rule the model has that changed between
//! kernels (`ERA`, one row per knob: from which version each value holds, and where that was
//! read), for the versions the table covers (`OLDEST` to `NEWEST`). A knob set explicitly (a
//! lesson's front matter, `--set`, a link, a job file, a scoreboard row) keeps its value
//! whatever `kernel` says, in whichever order the two were set: the scenario remembers which
//! knobs were set (`Scenario::explicit`), and `apply` writes the era's value only into the
//! others. Without `kernel` nothing here acts: every knob keeps its own default and every
//! scheduler and rule is accepted.
//!
//! Sources are named `TAG:FILE` as read: a tree that holds that release (the kernel's own
//! history where a release's tree was not at hand, by commit). INFERRED marks a boundary
//! between two releases read on either side, placed where the commit that changed it went in.

use super::knob_table as k;
use super::*;
use std::collections::BTreeMap;

/// The oldest and newest kernels the table stands for.
pub const OLDEST: &str = "2.6.2";
pub const NEWEST: &str = "6.6";

/// What `kernel` takes, for messages, `blksim knobs` and `run --help`.
pub const ALLOWED: &str = "a kernel version from 2.6.2 to 6.6 (2.6.N, an -rcN of it such as 2.6.39-rc4, 3.N, 4.N, 5.N, 6.N; a stable release's last number, 2.6.32.69 or 5.10.180, is read as its base), or none";

/// A kernel release: 2.6.20 is (2, 6, 20), 3.10 is (3, 10, 0); an -rc sorts before its release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelVersion {
    major: u8,
    minor: u8,
    sub: u8,
    /// The release candidate, or `u8::MAX` for the release itself.
    rc: u8,
}

impl KernelVersion {
    /// Parses `2.6.20`, `2.6.39-rc4`, `3.10`, `4.19`, `5.10.180`, `6.6`, `2.6.32.69`, `v3.2`;
    /// None outside the table's range or malformed.
    pub fn parse(text: &str) -> Option<KernelVersion> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let (base, rc) = match t.split_once("-rc") {
            Some((b, n)) => (b, n.parse::<u8>().ok().filter(|n| (1..=20).contains(n))?),
            None => (t, u8::MAX),
        };
        let nums: Vec<u8> = base.split('.').map(|p| p.parse::<u8>().ok()).collect::<Option<_>>()?;
        let v = match nums.as_slice() {
            // 2.6.N, and a stable 2.6.N.M read as 2.6.N (no -rc of a stable release).
            [2, 6, sub] | [2, 6, sub, _] if rc == u8::MAX || nums.len() == 3 => KernelVersion { major: 2, minor: 6, sub: *sub, rc },
            // 3.N to 6.N, and their stable releases 3.N.M.
            [major @ 3..=6, minor] | [major @ 3..=6, minor, _] if rc == u8::MAX || nums.len() == 2 => {
                KernelVersion { major: *major, minor: *minor, sub: 0, rc }
            }
            _ => return None,
        };
        let in_range = |v: KernelVersion| (at(OLDEST)..=at(NEWEST)).contains(&v);
        // 3.0 to 3.19, 4.0 to 4.20 and 5.0 to 5.19 exist; 2.6.40 did not (it became 3.0).
        let exists = match v.major {
            2 => v.sub <= 39,
            3 | 5 => v.minor <= 19,
            4 => v.minor <= 20,
            _ => true,
        };
        (exists && in_range(v)).then_some(v)
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major == 2 {
            write!(f, "2.6.{}", self.sub)?;
        } else {
            write!(f, "{}.{}", self.major, self.minor)?;
        }
        if self.rc != u8::MAX {
            write!(f, "-rc{}", self.rc)?;
        }
        Ok(())
    }
}

use std::fmt;

/// A version the table names (its bounds and its rows' steps), written in this file.
fn at(v: &str) -> KernelVersion {
    let (base, rc) = v.split_once("-rc").map_or((v, u8::MAX), |(b, n)| (b, n.parse().expect("the era table's rc")));
    let n: Vec<u8> = base.split('.').map(|p| p.parse().expect("the era table's versions")).collect();
    match n.as_slice() {
        [2, 6, sub] => KernelVersion { major: 2, minor: 6, sub: *sub, rc },
        [major, minor] => KernelVersion { major: *major, minor: *minor, sub: 0, rc },
        _ => panic!("the era table names {v}"),
    }
}

/// The text `kernel` keeps for a version as given (`v2.6.32.69` is `2.6.32`), or `none`.
pub fn canonical(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("none") {
        return Some("none".into());
    }
    KernelVersion::parse(t).map(|v| v.to_string())
}

/// One era-dependent rule: the knob, the value it takes from each version on (the first step
/// from `OLDEST`), and where each was read.
pub struct EraRule {
    pub knob: &'static KnobSpec,
    pub steps: &'static [(&'static str, &'static str)],
    pub source: &'static str,
}

impl EraRule {
    /// The value this rule has in `v`.
    pub fn value(&self, v: KernelVersion) -> &'static str {
        self.steps.iter().rev().find(|(from, _)| at(from) <= v).map_or(self.steps[0].1, |(_, value)| value)
    }
}

/// Every rule that changed between the kernels the table covers, with the versions each value
/// stands for. docs/model.md ("Kernel eras") says the same in prose. A rule whose source
/// names no release after 4.0 keeps its 4.0 value to `NEWEST`, not read there (INFERRED);
/// cfq's rules and tunables stop mattering at 5.0, which refuses cfq.
pub const ERA: &[EraRule] = &[
    EraRule {
        knob: &k::QUEUE_SCHEDULER,
        // The Kconfig default: anticipatory until 2.6.17, which the model lacks (deadline, which
        // it extends by the anticipation, is the nearest); cfq from 2.6.18. 5.0 removes the
        // legacy request path and its elevators; a blk-mq queue with one hardware queue then
        // gets mq-deadline (`elevator_get_default`), one with several gets none (`apply`).
        steps: &[("2.6.2", "deadline"), ("2.6.18", "cfq"), ("5.0", "mq-deadline")],
        source: "v2.6.11:drivers/block/Kconfig.iosched (anticipatory the default); v2.6.20, v2.6.29, v2.6.32, v2.6.34, v4.0:block/Kconfig.iosched (DEFAULT_CFQ); 2.6.18 by the commit making cfq the default (INFERRED between 2.6.11 and 2.6.20); v5.8:block/blk-mq-sched.c and v5.10:block/elevator.c (elevator_get_default: mq-deadline if nr_hw_queues is 1, else none; no legacy elevators); 5.0, the release that removed the legacy path, by its commits; 4.1-4.20 taken as 4.0's cfq (scsi-mq's default in 4.19-4.20 not read)",
    },
    EraRule {
        knob: &k::QUEUE_PLUGGING,
        steps: &[("2.6.2", "2.6.2"), ("2.6.10", "2.6.20"), ("2.6.39-rc1", "task")],
        source: "v2.6.11:drivers/block/elevator.c and v2.6.20, v2.6.29, v2.6.32:block/elevator.c (the unplug threshold counts rq.count less in_flight); 2.6.2 counts in-flight requests too; v2.6.39:block/blk-core.c (the on-stack plug, 2.6.39-rc1); 2.6.10 INFERRED",
    },
    EraRule {
        knob: &k::QUEUE_CFQ,
        steps: &[("2.6.2", "2.6.20"), ("2.6.30", "simple")],
        source: "v2.6.20:block/cfq-iosched.c (quanta onto the sorted dispatch list); 2.6.30-2.6.39 cfq_check_fifo once a slice, which the simple rules follow; before 2.6.13 cfq was not time-sliced and the model's nearest is 2.6.20's (INFERRED)",
    },
    EraRule {
        knob: &k::QUEUE_BATCH_HARD_LIMIT,
        steps: &[("2.6.2", "false"), ("2.6.13", "true")],
        source: "v2.6.11:drivers/block/ll_rw_blk.c (get_request without the cap); v2.6.20:block/ll_rw_blk.c (\"up to 50% over the defined limit\", 2.6.13-rc1)",
    },
    EraRule {
        knob: &k::QUEUE_ASYNC_RUN_CANCELS_DELAY,
        steps: &[("2.6.2", "true"), ("2.6.39-rc1", "false"), ("2.6.39", "true")],
        source: "v2.6.39.3:block/blk-core.c (blk_run_queue_async: __cancel_delayed_work, then queue_delayed_work); 2.6.39-rc without the cancel (INFERRED from the 2.6.39-rc report); before 2.6.39 there is no async run",
    },
    EraRule {
        knob: &k::QUEUE_RQ_AFFINITY,
        steps: &[("2.6.2", "0"), ("2.6.32", "1")],
        source: "v2.6.29:include/linux/blkdev.h (QUEUE_FLAG_DEFAULT without QUEUE_FLAG_SAME_COMP; rq_affinity came in 2.6.28, off); v2.6.32, v2.6.34, v2.6.39, v4.0:include/linux/blkdev.h (with it); 2.6.30-2.6.31 not read, taken as 0",
    },
    EraRule {
        knob: &k::IOSCHED_QUANTUM,
        steps: &[("2.6.2", "4"), ("2.6.33", "8")],
        source: "v2.6.20, v2.6.29, v2.6.32:block/cfq-iosched.c (cfq_quantum 4); v2.6.34, v2.6.39, v4.0 (8); 2.6.33 INFERRED",
    },
    EraRule {
        knob: &k::IOSCHED_SLICE_IDLE,
        steps: &[("2.6.2", "8")],
        source: "v2.6.20, v2.6.29, v2.6.32, v4.0:block/cfq-iosched.c (HZ/125)",
    },
    EraRule { knob: &k::IOSCHED_SLICE_SYNC, steps: &[("2.6.2", "100")], source: "v2.6.20 to v4.0:block/cfq-iosched.c (HZ/10)" },
    EraRule { knob: &k::IOSCHED_SLICE_ASYNC, steps: &[("2.6.2", "40")], source: "v2.6.20 to v4.0:block/cfq-iosched.c (HZ/25)" },
    EraRule {
        knob: &k::IOSCHED_FIFO_EXPIRE_SYNC,
        steps: &[("2.6.2", "125")],
        source: "v2.6.20 to v4.0:block/cfq-iosched.c (cfq_fifo_expire[1], HZ/8)",
    },
    EraRule {
        knob: &k::IOSCHED_FIFO_EXPIRE_ASYNC,
        steps: &[("2.6.2", "250")],
        source: "v2.6.20 to v4.0:block/cfq-iosched.c (cfq_fifo_expire[0], HZ/4)",
    },
    EraRule { knob: &k::IOSCHED_FIFO_BATCH, steps: &[("2.6.2", "16")], source: "v2.6.20, v2.6.29, v2.6.32, v4.0:block/deadline-iosched.c; v5.10:block/mq-deadline.c, the same for mq-deadline" },
    EraRule { knob: &k::IOSCHED_READ_EXPIRE, steps: &[("2.6.2", "500")], source: "v2.6.20 to v4.0:block/deadline-iosched.c (HZ/2); v5.10:block/mq-deadline.c, the same for mq-deadline" },
    EraRule { knob: &k::IOSCHED_WRITE_EXPIRE, steps: &[("2.6.2", "5000")], source: "v2.6.20 to v4.0:block/deadline-iosched.c (5*HZ); v5.10:block/mq-deadline.c, the same for mq-deadline" },
    EraRule { knob: &k::IOSCHED_WRITES_STARVED, steps: &[("2.6.2", "2")], source: "v2.6.20 to v4.0:block/deadline-iosched.c; v5.10:block/mq-deadline.c, the same for mq-deadline" },
    EraRule {
        knob: &k::BLK_MQ_RERUN_AFTER_SPLICE,
        steps: &[("2.6.2", "false"), ("4.1", "true")],
        source: "v4.0:block/blk-mq.c (no run after the splice onto hctx->dispatch); 9ba52e5812e5 (v4.1) runs it; from 4.15 on blk_mq.dispatch=5.0 has no splice of its own",
    },
    EraRule {
        knob: &k::BLK_MQ_DISPATCH,
        steps: &[("2.6.2", "4.0"), ("4.15", "5.0")],
        source: "v4.0:block/blk-mq.c; v5.8:block/blk-mq-sched.c (blk_mq_do_dispatch_sched: has_work, the budget, dispatch_request; BLK_MQ_BUDGET_DELAY), v5.10:block/mq-deadline.c, v5.10:block/elevator.c; the budget (.get_budget/.put_budget) came in 4.15 by its commits, the boundary placed there; 4.1-4.14 taken as 4.0's (4.11-4.14's scheduler framework without a budget is not modelled; INFERRED)",
    },
    EraRule {
        knob: &super::knob_table_mq::BLK_MQ_RUN_HW_QUEUES,
        steps: &[("2.6.2", "all"), ("5.12", "sq_hctx")],
        source: "v5.10:block/blk-mq.c (blk_mq_run_hw_queues, blk_mq_delay_run_hw_queues: every hardware queue not stopped); b6e68ee82585 (v5.12-rc1, \"blk-mq: Improve performance of non-mq IO schedulers with multiple HW queues\"): blk_mq_get_sq_hctx, the current CPU's hardware queue, for an elevator with dispatch_request and without ELEVATOR_F_MQ_AWARE (bfq, mq-deadline; kyber is MQ-aware), plus any with requests on hctx->dispatch; before 4.15 no elevator runs on blk-mq's disks here",
    },
    EraRule {
        knob: &super::knob_table_mq::BLK_MQ_RUN_WORK,
        steps: &[("2.6.2", "queue"), ("4.18", "mod"), ("5.18", "mod_unless_pending")],
        source: "v5.10:block/blk-mq.c (__blk_mq_delay_run_hw_queue: kblockd_mod_delayed_work_on(blk_mq_hctx_next_cpu(hctx), &hctx->run_work, msecs_to_jiffies(msecs)), for a run now (0) and the 3 ms re-run alike) and v5.10:block/blk-core.c (kblockd_mod_delayed_work_on is mod_delayed_work_on); the kernels' symbol tables (DepSurf) show kblockd_mod_delayed_work_on called from blk_mq_delay_queue in 4.13 and 4.15 and from __blk_mq_delay_run_hw_queue from 4.18 on: 4.16-4.17 not read, the boundary INFERRED at 4.18; 8f5fea65b06d (v5.18, David Jeffery; by its commit, not read in a tree): blk_mq_delay_run_hw_queues skips a hardware queue with delayed_work_pending(&hctx->run_work); before 4.15 no elevator runs on blk-mq's disks here",
    },
    EraRule {
        knob: &super::knob_table_mq::BLK_MQ_PLUG,
        steps: &[("2.6.2", "off"), ("5.0", "5.0"), ("5.5", "5.5"), ("5.16", "5.16"), ("5.17", "5.17")],
        source: "a 5.10 block/blk-mq.c (android common 5.10, a 5.10.y: blk_mq_submit_bio plugs when plug && (q->nr_hw_queues == 1 || blk_mq_is_sbitmap_shared || q->mq_ops->commit_rqs || !blk_queue_nonrot(q)), flushes first at blk_plug_max_rq_count (BLK_MAX_REQUEST_COUNT, twice that over several queues) or a last request of BLK_PLUG_FLUSH_SIZE; with an elevator otherwise blk_mq_sched_insert_request(rq, false, true, true); blk_mq_flush_plug_list: blk_mq_sched_insert_requests per hardware queue and software queue, run async only from_schedule); a 5.10 block/blk-core.c (openharmony 5.10: blk_start_plug, blk_flush_plug_list, blk_finish_plug flushes with from_schedule false); a 5.10-5.11 block/blk-mq-sched.c (blk_mq_sched_insert_requests: the elevator's insert_requests, or under none try_issue_list_directly unless async, then blk_mq_run_hw_queue(hctx, run_queue_async)); the rotational clause by Ming Lei's \"blk-mq: apply normal plugging for HDD\" (posted 2019-09-27 on 5.4-rc: the 5.5 boundary INFERRED; before it plug && (nr_hw_queues == 1 || commit_rqs), 5.0's commit_rqs); blk_mq_is_sbitmap_shared by the fix to 32bc15afed04 (5.13, 5.10's stable releases); 5.16's __blkdev_direct_IO_async (one bio, no plug) and 5.17's \"blk-mq: simplify the plug handling in blk_mq_submit_bio\" (Christoph Hellwig, posted 2021-11-23: if (plug) for every queue) by their patches, boundaries INFERRED; 4.x's blk_mq_make_request and blk_sq_make_request also plug and are not modelled (off)",
    },
    EraRule {
        knob: &k::DM_PARTIAL_COMPLETION,
        steps: &[("2.6.2", "true"), ("4.13", "false")],
        source: "v2.6.32, v4.0:drivers/md/dm.c (end_clone_bio updates the original per clone bio); a 4.13-4.20 drivers/md/dm-rq.c (blk_status_t and the dm_old_ paths; read without its tag) adds up tio->completed and updates the original once, at the last clone bio; 4.1-4.12 not read, taken as 4.0's (INFERRED)",
    },
    EraRule {
        knob: &k::DM_CLONE_ALLOC,
        steps: &[("2.6.2", "mempool"), ("4.0", "sleep"), ("4.1", "nowait")],
        source: "v2.6.32:drivers/md/dm.c (clones from dm's mempool); v4.0:drivers/md/dm-mpath.c (blk_get_request(..., GFP_KERNEL) on the lower blk-mq queue, e5863d9a); a dm-mpath.c of 4.1-4.5 (set_mapinfo; read without its tag) allocates with GFP_ATOMIC and requeues on failure, as later kernels do with BLK_MQ_REQ_NOWAIT; the 4.1 boundary INFERRED",
    },
    EraRule {
        knob: &k::DM_CONGESTION_CALLOUT,
        steps: &[("2.6.2", "false"), ("2.6.6", "true")],
        source: "2.6.6's queue-congestion-callout and dm_any_congested (2.6.2-2.6.5 dm has none)",
    },
    EraRule {
        knob: &k::DM_MPATH,
        steps: &[("2.6.2", "bio"), ("2.6.31", "request")],
        source: "a 2.6.27-2.6.30 drivers/md/dm-mpath.c (scsi_dh; read without its tag: map_io chooses a path per bio, a new one when repeat_count runs out, and remaps the bio to it for __map_bio to submit), with 2.6.19-rc6's patches over 2.6.18's map_io (the same repeat count); drivers/md/dm-round-robin.c as the patch adding it has it and a post-2.6.31 tree keeps it, both read without a tag (rr_select_path: the next valid path, its repeat_count from the table, RR_MIN_IO 1000 without one); request-based dm-multipath from 2.6.31 (cec47e3d), read in v2.6.32:drivers/md/dm.c; dm-multipath came in 2.6.12, before which the bio-based rule stands in (INFERRED)",
    },
    EraRule {
        knob: &k::MD_ALIGNED_READS,
        steps: &[("2.6.2", "false"), ("2.6.20", "true")],
        source: "a 2.6.16-era drivers/md/raid5.c (read without its tag; bitmaps and the stripe_cache_size attribute, no reshape yet: make_request maps every bio onto stripe heads, and run sets no merge_bvec_fn); NeilBrown's \"[PATCH 000 of 9] md: udev notification, raid5 read improvements etc\" (LKML 2006-11-08, on 2.6.19-rc4-mm2: raid5_mergeable_bvec, chunk_aligned_read and its call in make_request \"should be held for .20\"); a 2.6.20-2.6.22 drivers/md/raid5.c (read without its tag: request_queue_t, active_aligned_reads) has them; 2.6.19 is the series' base",
    },
    EraRule {
        knob: &k::MD_SPLIT_ALIGNED_READS,
        steps: &[("2.6.2", "false"), ("4.3", "true")],
        source: "\"md/raid5: split bio for chunk_aligned_read\" is v4.3 (by its commit, not read in a tree)",
    },
    EraRule {
        knob: &k::SCSI_RUN_QUEUE,
        steps: &[("2.6.2", "direct"), ("2.6.39-rc1", "kblockd"), ("2.6.39", "fixed")],
        source: "c21e6beb (2.6.39-rc1) punts starved runs to kblockd; v2.6.39.3:drivers/scsi/scsi_lib.c (scsi_run_queue runs them directly: 9937a5e2, 466c08c7); the -rc the fixes came in INFERRED as 2.6.39",
    },
    EraRule {
        knob: &k::VM_DIRTY_RATIO,
        steps: &[("2.6.2", "40"), ("2.6.22", "10"), ("2.6.30", "20")],
        source: "v2.6.11, v2.6.20:mm/page-writeback.c (40); v2.6.24, v2.6.29 (10); v2.6.32, v2.6.34, v4.0 (20); 2.6.22 and 2.6.30 INFERRED by the commits that changed them",
    },
    EraRule {
        knob: &k::VM_DIRTY_BACKGROUND_RATIO,
        steps: &[("2.6.2", "10"), ("2.6.22", "5"), ("2.6.30", "10")],
        source: "v2.6.11, v2.6.20:mm/page-writeback.c (10); v2.6.24, v2.6.29 (5); v2.6.32, v2.6.34, v4.0 (10)",
    },
    EraRule {
        knob: &k::VM_WRITEBACK,
        steps: &[("2.6.2", "pdflush"), ("2.6.32", "per-bdi")],
        source: "v2.6.24:mm/page-writeback.c (pdflush_operation); v2.6.32:fs/fs-writeback.c (per-bdi flusher threads)",
    },
    EraRule {
        knob: &k::VM_BDI_DIRTY_LIMIT,
        steps: &[("2.6.2", "equal"), ("2.6.24", "writeout")],
        source: "v2.6.20:mm/page-writeback.c (one global limit); v2.6.24:mm/page-writeback.c (bdi_writeout_fraction); 3.2+ keeps the share but throttles by pauses, which the model lacks (nearest: writeout)",
    },
    EraRule {
        knob: &super::knob_table_readahead::VM_READAHEAD,
        steps: &[("2.6.2", "2.6.20"), ("2.6.23", "ondemand")],
        source: "v2.6.20:mm/readahead.c (current and ahead windows); on-demand readahead from 2.6.23; 2.6.2-2.6.19 INFERRED alike",
    },
    EraRule {
        knob: &k::CPU_KBLOCKD_HIGHPRI,
        steps: &[("2.6.2", "false"), ("2.6.36", "true")],
        source: "v2.6.34:block/blk-core.c (create_workqueue(\"kblockd\")); v2.6.39.3, v4.0 (alloc_workqueue WQ_MEM_RECLAIM | WQ_HIGHPRI); 2.6.36, the workqueue rewrite, INFERRED",
    },
    EraRule {
        knob: &k::CPU_SCHEDULER,
        steps: &[("2.6.2", "fifo"), ("2.6.23", "fair")],
        source: "CFS from 2.6.23 (kernel/sched_fair.c); the O(1) scheduler before it is not modelled (nearest: fifo)",
    },
    EraRule {
        knob: &k::CPU_LOAD_BALANCE,
        steps: &[("2.6.2", "off"), ("2.6.23", "2.6.32")],
        source: "v2.6.32:kernel/sched.c (rebalance_domains, idle_balance); CFS kernels' balancers taken as 2.6.32's, the O(1) scheduler's as none (INFERRED nearest)",
    },
    EraRule {
        knob: &k::CPU_WAKE_IDLE,
        steps: &[("2.6.2", "idle_cpu")],
        source: "v2.6.32, v4.0:kernel/sched (idle_cpu: the idle task current, none queued); no kernel has the model's no-work rule",
    },
    EraRule {
        knob: &super::knob_table_readahead::VM_BLKDEV_READAHEAD,
        steps: &[("2.6.2", "readpage"), ("3.18", "mpage")],
        source: "v2.6.20 and v3.4:fs/block_dev.c (def_blk_aops: .readpage = blkdev_readpage, block_read_full_page, and no .readpages); 447f05bb488b, \"block_dev: implement readpages() to optimize sequential read\" (blkdev_readpages: mpage_readpages), in mmotm after 3.17 and listed with 3.18 (the release taken from those listings, its tag not read)",
    },
    EraRule {
        knob: &super::knob_table_uring::IO_URING_CQ_WAKE,
        steps: &[("2.6.2", "each"), ("5.4", "min_complete")],
        source: "v5.2:fs/io_uring.c (io_cqring_wait: wait_event_interruptible(ctx->wait, io_cqring_events(ring) >= min_events), each io_cqring_ev_posted a wake_up); a 5.4 fs/io_uring.c read without its tag (io_wake_function returns without waking until io_should_wake); dd671c79e40b, \"io_uring: make CQ ring wakeups be more efficient\", pulled for 5.4 (for-5.4/io_uring-2019-09-27); 5.1 and 5.3 not read, taken as 5.2's; no io_uring before 5.1",
    },
];

/// What `kernel` sets in a scenario, with each rule's source: (knob, value, source).
pub fn rules(v: KernelVersion) -> Vec<(&'static str, &'static str, &'static str)> {
    ERA.iter().map(|r| (r.knob.key, r.value(v), r.source)).collect()
}

/// The table as `blksim knobs` and `run --help` print it: each era knob's value from each
/// version on.
pub fn table_text() -> String {
    let mut s = format!(
        "kernel=VERSION ({OLDEST} to {NEWEST}) sets these knobs, each from the version named on (a knob set explicitly keeps its value, wherever it is set):\n"
    );
    for r in ERA {
        let steps: Vec<String> = r.steps.iter().map(|(v, x)| format!("{v}: {x}")).collect();
        s.push_str(&format!("  {:<30} {}\n", r.knob.key, steps.join(", ")));
    }
    s.push_str("Before 2.6.18 the default elevator is anticipatory, which the model lacks: deadline stands for it.\n");
    s.push_str("From 5.0 the legacy request path is gone: noop, deadline and cfq are refused; a disk with several hardware queues gets none, not mq-deadline.\n");
    s
}

/// The scenario's kernel, if it names one.
pub fn kernel_of(s: &Scenario) -> Option<KernelVersion> {
    s.kernel.as_deref().and_then(KernelVersion::parse)
}

/// Whether the scenario names a kernel older than `version` (one of the table's, or any
/// `major.minor`): without a kernel the sandbox is not era-strict, so never.
pub fn kernel_before(s: &Scenario, version: &str) -> bool {
    let v = KernelVersion::parse(version).expect("a version the code names parses");
    kernel_of(s).is_some_and(|k| k < v)
}

/// Writes `s.kernel`'s value of every era rule into the knobs not set explicitly, then lets
/// the device settle the elevator it was not given (`device_default_elevator`). Without a
/// kernel it does nothing.
pub fn apply(s: &mut Scenario) {
    let Some(v) = kernel_of(s) else { return };
    for r in ERA {
        if !s.explicit.iter().any(|k| k == r.knob.key) {
            let parsed = r.knob.kind.parse(r.value(v)).expect("the era table's values are the knobs' own");
            (r.knob.access.set)(s, parsed).expect("the era table's values are the knobs' own");
        }
    }
    device_default_elevator(s);
}

/// The elevator of a queue that was given none, where the device decides it. An NVMe queue
/// is blk-mq's alone (3.19+; before it the driver was bio-based), and a blk-mq queue has no
/// legacy elevator, so it starts with none, in every era and without a kernel. From 5.0 a
/// blk-mq queue with one hardware queue gets mq-deadline and one with several none
/// (v5.10:block/elevator.c `elevator_get_default`: `if (q->nr_hw_queues != 1) return NULL`);
/// NVMe has a hardware queue per CPU (`nvme_setup_io_queues`), a SCSI host
/// `host.nr_hw_queues`.
pub fn device_default_elevator(s: &mut Scenario) {
    if s.explicit.iter().any(|k| k == k::QUEUE_SCHEDULER.key) {
        return;
    }
    if s.disk.kind == DiskKind::Nvme && !crate::block::is_mq(s.queue.scheduler) {
        s.queue.scheduler = Scheduler::None;
    }
    if s.queue.scheduler == Scheduler::MqDeadline && crate::drivers::nvme::pci::nr_hw_queues(s) > 1 {
        s.queue.scheduler = Scheduler::None;
    }
}

/// The kernels without the legacy request path: 5.0 removed it, and with it noop, deadline and
/// cfq (v5.10:block/elevator.c has only blk-mq's elevators).
pub fn lacks_legacy_path(v: KernelVersion) -> bool {
    v >= at("5.0")
}

/// A legacy elevator on a kernel without the legacy path: the one-line refusal, naming what
/// that kernel allows.
pub fn check_scheduler(s: &Scenario) -> Result<(), String> {
    let Some(v) = kernel_of(s) else { return Ok(()) };
    if !lacks_legacy_path(v) || crate::block::is_mq(s.queue.scheduler) {
        return Ok(());
    }
    Err(format!(
        "{} is the legacy request queue's elevator, which kernel {v} lacks (5.0 removed the legacy path); kernel {v} allows none, mq-deadline, bfq or kyber",
        super::knobs::enum_name(&s.queue.scheduler)
    ))
}

/// `queue.scheduler`'s setter, and the dispatch the elevator implies (`imply_dispatch`).
pub(super) fn set_scheduler(s: &mut Scenario, v: Value) -> Result<(), ()> {
    s.queue.scheduler = enum_from(v)?;
    imply_dispatch(s);
    Ok(())
}

/// Without `kernel`, the sandbox is not era-strict: bfq and kyber, which the model runs on
/// blk-mq's 5.x dispatch only, bring that dispatch with them unless `blk_mq.dispatch` is set
/// explicitly, and another elevator leaves the dispatch at its default. With a kernel, its
/// rules decide (4.12 to 4.14 have bfq and kyber on 4.0's dispatch, which the model refuses).
fn imply_dispatch(s: &mut Scenario) {
    if s.kernel.is_some() || s.explicit.iter().any(|k| k == k::BLK_MQ_DISPATCH.key) {
        return;
    }
    s.blk_mq.dispatch = match s.queue.scheduler {
        Scheduler::Bfq | Scheduler::Kyber => MqDispatch::V5_0,
        _ => BlkMqKnobs::default().dispatch,
    };
}

/// `kernel`'s setter: a new kernel's rules, or with `none` the defaults back in every era knob
/// not set explicitly.
pub(super) fn set_kernel(s: &mut Scenario, v: Value) -> Result<(), ()> {
    let text = v.text();
    if text == "none" {
        if s.kernel.take().is_some() {
            let d = Scenario::default();
            let unset: Vec<&EraRule> = ERA.iter().filter(|r| !s.explicit.iter().any(|k| k == r.knob.key)).collect();
            for r in unset {
                (r.knob.access.set)(s, (r.knob.access.get)(&d))?;
            }
            imply_dispatch(s);
        }
    } else {
        s.kernel = Some(text);
        apply(s);
    }
    Ok(())
}

/// The era knobs' values in `s`, by key (`run --json`'s `era`).
pub fn era_of(s: &Scenario) -> BTreeMap<String, String> {
    ERA.iter().map(|r| (r.knob.key.to_string(), r.knob.get(s))).collect()
}

/// The knobs a scenario read from a file sets (their fields present in `raw`), marked explicit;
/// then its kernel's rules in the rest.
pub fn mark_present(s: &mut Scenario, raw: &serde_json::Value) {
    for spec in KNOBS {
        let mut at = Some(raw);
        for p in spec.access.path {
            at = at.and_then(|v| v.get(p));
        }
        if at.is_some() {
            s.mark_explicit(spec.key);
        }
    }
    apply(s);
}

/// What the run does that its kernel did otherwise, for the run's notes (`model_gaps`): the
/// elevator `kernel` chose where the version's default is not modelled, and an elevator the
/// version lacks that was set anyway (accepted, so that a lesson's elevator choice still
/// runs, and named).
pub fn notes(s: &Scenario) -> Vec<String> {
    let Some(v) = kernel_of(s) else { return Vec::new() };
    let mut notes = Vec::new();
    if v < at("2.6.18") && !s.explicit.iter().any(|key| key == k::QUEUE_SCHEDULER.key) {
        notes.push(format!(
            "kernel {v}'s default elevator is anticipatory, which the model lacks: deadline, the nearest (anticipatory is deadline that waits for a process's next read)"
        ));
    }
    let since = match s.queue.scheduler {
        Scheduler::Cfq => Some(("2.6.6", "cfq")),
        Scheduler::None => Some(("3.17", "blk-mq SCSI disks (scsi-mq, queue.scheduler=none)")),
        Scheduler::MqDeadline => Some(("4.11", "mq-deadline")),
        Scheduler::Kyber => Some(("4.12", "kyber")),
        Scheduler::Bfq => Some(("4.12", "bfq")),
        Scheduler::Noop | Scheduler::Deadline => None,
    };
    if let Some((since, what)) = since.filter(|(since, _)| v < at(since)) {
        notes.push(format!("kernel {v} has no {what}, which came in {since}: the run uses it anyway"));
    }
    if lacks_legacy_path(v) && s.stack == StackKind::Dm {
        notes.push(format!(
            "kernel {v}'s request-based dm is blk-mq (5.0 removed the legacy path): the run keeps the model's legacy queue for dm itself"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_in_the_range_and_order_rcs_first() {
        for (t, want) in [
            ("2.6.20", "2.6.20"),
            ("v2.6.32.69", "2.6.32"),
            ("2.6.39-rc4", "2.6.39-rc4"),
            ("3.10", "3.10"),
            ("4.0", "4.0"),
            ("3.2.1", "3.2"),
            ("4.19", "4.19"),
            ("v5.10.180", "5.10"),
            ("5.19", "5.19"),
            ("6.6", "6.6"),
        ] {
            assert_eq!(canonical(t).as_deref(), Some(want), "{t}");
        }
        for bad in ["2.6.1", "2.6.40", "3.20", "4.21", "5.20", "6.7", "7.0", "2.4.31", "x", "2.6", "2.6.20-rc0", "2.6.32.69-rc1"] {
            assert_eq!(canonical(bad), None, "{bad}");
        }
        assert!(at("2.6.39-rc1") < at("2.6.39") && at("2.6.38") < at("2.6.39-rc1"));
        // Every step of every rule is a version in range, in order, and a value its knob takes.
        for r in ERA {
            assert_eq!(r.steps[0].0, OLDEST, "{}", r.knob.key);
            assert!(r.steps.windows(2).all(|w| at(w[0].0) < at(w[1].0)), "{}", r.knob.key);
            for (v, value) in r.steps {
                assert!(KernelVersion::parse(v).is_some(), "{v}");
                r.knob.set(&mut Scenario::default(), value).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    fn with(kv: &[(&str, &str)]) -> Scenario {
        let mut s = Scenario::default();
        for (k, v) in kv {
            crate::scenario::set_knob(&mut s, k, v).unwrap();
        }
        s
    }

    #[test]
    fn from_5_0_a_single_queue_disk_gets_mq_deadline_and_several_queues_none() {
        let cfg = with(&[("kernel", "5.10")]).validate().unwrap();
        assert_eq!(cfg.scenario.queue.scheduler, Scheduler::MqDeadline);
        let cfg = with(&[("kernel", "5.10"), ("host.nr_hw_queues", "4"), ("cpu.cores", "4")]).validate().unwrap();
        assert_eq!(cfg.scenario.queue.scheduler, Scheduler::None);
        // An explicit choice stands, and 4.20 still has cfq.
        let cfg = with(&[("queue.scheduler", "mq-deadline"), ("host.nr_hw_queues", "4"), ("cpu.cores", "4"), ("kernel", "6.6")])
            .validate()
            .unwrap();
        assert_eq!(cfg.scenario.queue.scheduler, Scheduler::MqDeadline);
        assert_eq!(with(&[("kernel", "4.20")]).validate().unwrap().scenario.queue.scheduler, Scheduler::Cfq);
    }

    #[test]
    fn an_nvme_queue_not_given_an_elevator_runs_as_its_kernel_would() {
        let sched = |kv: &[(&str, &str)]| with(kv).validate().ok().map(|c| c.scenario.queue.scheduler);
        // A queue per CPU: none, on every kernel and without one.
        for kernel in [None, Some("3.19"), Some("4.0"), Some("5.10"), Some("6.6")] {
            let mut kv = vec![("disk.kind", "nvme"), ("cpu.cores", "4")];
            kv.extend(kernel.map(|v| ("kernel", v)));
            assert_eq!(sched(&kv), Some(Scheduler::None), "{kernel:?}");
        }
        // One CPU, one queue: 5.x's mq-deadline; 4.0 has no blk-mq elevator.
        assert_eq!(sched(&[("disk.kind", "nvme"), ("cpu.cores", "1"), ("kernel", "5.10")]), Some(Scheduler::MqDeadline));
        assert_eq!(sched(&[("disk.kind", "nvme"), ("cpu.cores", "1"), ("kernel", "4.0")]), Some(Scheduler::None));
        // A choice made stands: mq-deadline on several queues, and a legacy elevator is refused.
        assert_eq!(sched(&[("disk.kind", "nvme"), ("queue.scheduler", "mq-deadline"), ("kernel", "5.10")]), Some(Scheduler::MqDeadline));
        let e = with(&[("disk.kind", "nvme"), ("queue.scheduler", "cfq")]).validate().unwrap_err();
        assert_eq!(e.field, "queue.scheduler");
    }

    #[test]
    fn from_5_0_a_legacy_elevator_is_refused_naming_what_the_kernel_allows() {
        for (sched, kernel) in [("cfq", "5.0"), ("noop", "5.4"), ("deadline", "6.6")] {
            // In either order: the elevator set first, or the kernel.
            for kv in [[("queue.scheduler", sched), ("kernel", kernel)], [("kernel", kernel), ("queue.scheduler", sched)]] {
                let e = with(&kv).validate().unwrap_err();
                assert_eq!(e.field, "queue.scheduler");
                assert!(e.message.contains(&format!("kernel {kernel} allows none, mq-deadline, bfq or kyber")), "{}", e.message);
            }
        }
        assert!(with(&[("queue.scheduler", "cfq"), ("kernel", "4.20")]).validate().is_ok());
        assert!(with(&[("queue.scheduler", "none"), ("kernel", "5.4")]).validate().is_ok());
    }

    #[test]
    fn raid5_reads_bypass_the_stripe_cache_from_2_6_20() {
        let v = |t: &str| KernelVersion::parse(t).unwrap();
        let value = |t: &str| ERA.iter().find(|r| r.knob.key == "md.aligned_reads").unwrap().value(v(t));
        assert_eq!(value("2.6.19"), "false");
        assert_eq!(value("2.6.20"), "true");
        assert_eq!(value("6.6"), "true");
    }

    #[test]
    fn rules_after_4_0_step_where_read() {
        let v = |t: &str| KernelVersion::parse(t).unwrap();
        let value = |key: &str, t: &str| ERA.iter().find(|r| r.knob.key == key).unwrap().value(v(t));
        assert_eq!(value("blk_mq.rerun_after_splice", "4.0"), "false");
        assert_eq!(value("blk_mq.rerun_after_splice", "4.1"), "true");
        assert_eq!(value("md.split_aligned_reads", "4.3"), "true");
        assert_eq!(value("dm.clone_alloc", "5.4"), "nowait");
        assert_eq!(value("dm.partial_completion", "5.4"), "false");
        assert_eq!(value("iosched.read_expire", "6.6"), "500");
    }
}
