//! dm-linear (`drivers/md/dm-linear.c` with `dm.c`'s bio-based path, 2.6.x): an LVM2 logical
//! volume remaps each bio onto its physical volume, in the submitter's context.

use crate::block::LVM_PE_START_SECTORS;
use crate::engine::ids::{BioId, DevId, ThreadId};
use crate::engine::Sim;
use crate::kernel::sched::Wait;

impl Sim {
    /// `dm_request` → `__map_bio` → `linear_map`: the clone goes to the lower device next, past
    /// the physical volume's metadata, in this submitter's context (it may sleep there in
    /// `get_request_wait`).
    pub(crate) fn dm_linear_map(&mut self, bio_id: BioId, lower: DevId, tid: ThreadId) -> Result<(), Wait> {
        let sector = self.bios.get(bio_id.0).sector + LVM_PE_START_SECTORS;
        self.dm_map_bio(bio_id, lower, sector, tid)
    }
}
