//! `drivers/md/dm-mpath.c` and its path selector (`dm-round-robin.c`): which path a request
//! goes to.

use crate::block::DevKind;
use crate::engine::ids::*;
use crate::engine::Sim;

impl Sim {
    /// The path selector: `failover` uses the first path of its only group; `multibus` takes
    /// the paths in turn, `rr_min_io_rq` requests each (1, multipath-tools' default for
    /// request-based dm), skipping busy ones when `skip_busy`. None: every path is busy.
    pub(crate) fn select_path(&mut self, dm: DevId, skip_busy: bool) -> Option<DevId> {
        let DevKind::DmMpath { paths } = &self.devs[dm.idx()].kind else { unreachable!("not a dm device") };
        let n = paths.len();
        let (start, tries) = match self.cfg.scenario.dm.path_grouping {
            crate::scenario::PathPolicy::Failover => (0, 1),
            crate::scenario::PathPolicy::Multibus => (self.rr_next[dm.idx()] as usize, n),
        };
        let i = (0..tries).map(|k| (start + k) % n).find(|&i| !skip_busy || !self.lld_busy(paths[i]))?;
        let pick = paths[i];
        self.rr_next[dm.idx()] = ((i + 1) % n) as u16;
        Some(pick)
    }
}
