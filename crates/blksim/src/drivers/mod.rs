//! Drivers, as the kernel's `drivers/` holds them: the SCSI midlayer and `sd`, the NVMe PCIe
//! driver, and the stacking drivers of `drivers/md` (device-mapper and md RAID5); and the
//! hand-off both leaf drivers end in, a command to the drive (`drive_submit`).

pub mod md;
pub mod nvme;
pub mod scsi;

use crate::engine::ids::{DevId, DiskId, ReqId};
use crate::engine::Sim;

impl Sim {
    /// A driver hands `rq` to its drive (`scsi_dispatch_cmd`, `nvme_submit_cmd`): the driver's
    /// `driver_ns` charged, D traced, and the drive starts what it can, each started command's
    /// completion scheduled.
    pub(crate) fn drive_submit(&mut self, dev: DevId, disk: DiskId, rq: ReqId, driver_ns: u64) {
        let now = self.now();
        let r = self.reqs.get(rq.0);
        let cmd = crate::hw::Cmd { req: rq, sector: r.sector, bytes: r.bytes, write: r.write, fua: r.fua, queued_at: now };
        let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
        let ctx = self.context();
        self.charge(driver_ns);
        self.emit(dev, crate::kernel::trace::blktrace::Action::D, write, sector, bytes, ctx, rq.0, 0);
        let mut started = std::mem::take(&mut self.disks[disk].started);
        self.disks[disk].submit(now, cmd, &mut started);
        for (slot, done) in started.drain(..) {
            self.events.schedule(done, crate::engine::event::Event::DiskDone { disk, slot });
        }
        self.disks[disk].started = started;
    }
}
