//! `fs/direct-io.c`: an O_DIRECT I/O becomes bios, cut at the queue's `max_sectors_kb`, and
//! once they are all submitted the device is unplugged (`blk_run_address_space`); and which of
//! them run under a task's plug (fs/block_dev.c `blkdev_direct_IO`, block/fops.c from 5.16).

use crate::block::Bio;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::fio::job::{Io, IoOwner};
use crate::scenario::Plugging;

impl Sim {
    /// Builds the next I/O of job `j` as bios, split at the queue's `max_sectors_kb`.
    pub(crate) fn issue_io(&mut self, j: JobId) {
        let now = self.now();
        let job = &mut self.jobs[j];
        let (offset, bytes) = job.next_extent();
        let write = job.next_direction();
        let dev = job.dev;
        let tid = job.tid;
        let io = IoId(self.ios.insert(Io { owner: IoOwner::Job(j), bytes, bios_left: 0, started: now, sync: true, write }));
        let max = self.devs[dev].queue.max_request_bytes();
        let boundary = self.devs[dev].bio_boundary(&self.cfg.scenario, write).unwrap_or(u64::MAX);
        let mut off = offset;
        let end = offset + bytes;
        let mut pieces = 0;
        while off < end {
            let len = (end - off).min(max).min(boundary - off % boundary);
            // An I/O over max_sectors: as blk_queue_split does, each piece is cut off the
            // front of what is left, so blktrace shows the rest queued (Q), then the split (X).
            let split_rest = if bytes > max { (end - off) as u32 } else { 0 };
            let bio = BioId(self.bios.insert(Bio { split_rest, ..Bio::new(io, dev, off / 512, len as u32, write, now) }));
            self.acct.totals.bios_submitted += 1;
            *if write { &mut self.acct.totals.pgpgout_bytes } else { &mut self.acct.totals.pgpgin_bytes } += len;
            self.threads[tid].pending.push_back(bio);
            pieces += 1;
            off += len;
        }
        self.ios.get_mut(io.0).bios_left = pieces;
        let job = &mut self.jobs[j];
        job.inflight += 1;
    }

    /// `direct_io_worker` (2.6.10-2.6.38), once every bio of job `j`'s I/O is submitted: "All
    /// IO is now issued, send it on its way", `blk_run_address_space`, which runs the device's
    /// `unplug_fn` through `blk_run_backing_dev` (`sync_page` takes the same way). A queue that
    /// plugs itself then does not hold the I/O its submitter is about to wait on until the
    /// 3 ms unplug timer. The per-task plug (2.6.39+) is flushed when the step ends instead, and
    /// 2.6.2's queue plug never holds a request a device with a free slot could take.
    pub(crate) fn dio_all_issued(&mut self, j: JobId) {
        if self.cfg.scenario.queue.plugging == Plugging::Queue {
            self.sync_page(self.jobs[j].dev);
        }
    }

    /// `blkdev_direct_IO` (5.10 fs/block_dev.c): an I/O of more than `BIO_MAX_PAGES` (256)
    /// pages, and every async one (libaio, io_uring), takes `__blkdev_direct_IO`, which submits
    /// under a plug; a sync one of fewer pages takes `__blkdev_direct_IO_simple`, which does
    /// not plug. From 5.16 (`blk_mq.plug` 5.16 on) an async I/O of one bio takes
    /// `__blkdev_direct_IO_async`, which does not plug either; io_uring's submission plugs a
    /// batch of more than `IO_PLUG_THRESHOLD` (2) itself. libaio's `io_submit` plugs more than
    /// `AIO_PLUG_THRESHOLD` (2) iocbs, and fio's libaio submits one at a time here.
    pub(crate) fn blkdev_direct_io_plugs(&self, j: JobId) -> bool {
        const BIO_MAX_PAGES: u64 = 256;
        let job = &self.jobs[j];
        if job.bs > BIO_MAX_PAGES * crate::mm::PAGE_SIZE {
            return true;
        }
        if !job.engine.is_async() {
            return false;
        }
        self.cfg.scenario.blk_mq.plug < crate::scenario::MqPlug::V5_16 || (job.ring.is_some() && self.uring_batch(j) > 2)
    }
}
