//! `block/blk-flush.c` as 5.10 has it, the part a FUA write with data takes: a direct write
//! to a file opened O_SYNC is `REQ_FUA` (`dio_bio_write_op`, v5.10 fs/block_dev.c), and
//! `blk_mq_submit_bio` sends a flush or FUA request past the elevator to `blk_insert_flush`
//! (`submit_bio_checks` has already dropped `REQ_FUA` where the queue has no write cache,
//! `QUEUE_FLAG_WC`). With the drive taking FUA (`QUEUE_FLAG_FUA`: INFERRED for the disks
//! modelled, the SCSI disk's DPOFUA bit is not in the sources) `blk_flush_policy` is
//! `REQ_FSEQ_DATA` alone, so the request goes to its own hardware queue's `hctx->dispatch`
//! (`blk_mq_request_bypass_insert`) and that one queue is run from kblockd
//! (`blk_mq_run_hw_queue(data.hctx, true)`): only that queue's run issues it.
//!
//! Not modelled: the flush sequence (`REQ_PREFLUSH`, a post-flush for a drive without FUA,
//! `blk_kick_flush`'s flush request through the requeue work), and so `blkdev_issue_flush`
//! and fsync's cache flush.

use crate::engine::ids::*;
use crate::engine::Sim;
use crate::fio::job::IoOwner;

use super::Bio;

impl Sim {
    /// Whether `bio` is a FUA write that reaches `blk_insert_flush`: a direct write of a job
    /// opened O_SYNC, to a 5.x blk-mq queue (`blk_mq.dispatch = 5.0`, the path whose
    /// `blk_insert_flush` is modelled) of disks with their write cache on.
    pub(crate) fn blk_rq_fua(&self, bio: &Bio) -> bool {
        let IoOwner::Job(j) = self.ios.get(bio.io.0).owner else { return false };
        let job = &self.jobs[j];
        bio.write && job.o_sync && !job.buffered && self.cfg.scenario.disk.write_cache && self.devs[bio.dev].queue.mq_sched.is_some()
    }

    /// `blk_insert_flush` with `REQ_FSEQ_DATA` alone, then `blk_mq_submit_bio`'s run: the
    /// request keeps its tag (with an elevator a scheduler tag, as allocated), goes at the tail
    /// of its hardware queue's `hctx->dispatch`, and that queue is run asynchronously.
    pub(crate) fn blk_insert_flush(&mut self, dev: DevId, rq: ReqId) {
        let live = self.reqs.live();
        let elevator = self.mq_sched(dev).is_some_and(super::blk_mq_sched::MqSched::has_elevator);
        let r = self.reqs.get_mut(rq.0);
        let h = r.hctx;
        if elevator {
            let tag = r.tag.take().expect("a scheduler tag from blk_mq_get_request");
            let s = self.mq_sched_mut(dev);
            assert!(s.sched_tag_of.insert(rq.0, tag).is_none(), "a request holds one scheduler tag");
        }
        let q = &mut self.mq_mut(dev).hctx[h as usize];
        assert!(q.dispatch.len() < live, "hctx->dispatch over the live requests");
        q.dispatch.push_back(rq);
        self.blk_mq_run_hw_queue(dev, h, true);
    }
}
