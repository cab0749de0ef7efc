//! `block/bfq-wf2q.c` (v5.10): B-WF2Q+, the fair queueing that orders BFQ's queues. Each busy
//! queue is an entity on its class's service tree with a virtual start and finish time; the
//! tree's virtual time advances by the service (sectors) the device gives, divided by the sum
//! of the busy queues' weights. The next queue is the eligible one (start ≤ virtual time) with
//! the smallest finish.
//!
//! Not modelled: the hierarchy of groups (`CONFIG_BFQ_GROUP_IOSCHED`: one level of queues
//! here), the idle tree as a tree (an entity that leaves keeps its finish, which
//! `bfq_update_fin_time_enqueue` compares with the virtual time when it comes back, the same
//! result as `bfq_idle_insert` and `bfq_forget_idle`), and the idle class's
//! `BFQ_CL_IDLE_TIMEOUT` (the idle class is served only when the others are empty).

use crate::engine::ids::SortedMap;

/// `WFQ_SERVICE_SHIFT`: service is scaled by 2^22 before division by a weight.
pub const WFQ_SERVICE_SHIFT: u32 = 22;

/// `bfq_delta`: the virtual time `service` sectors take at `weight`.
pub fn bfq_delta(service: u64, weight: u64) -> u64 {
    (service << WFQ_SERVICE_SHIFT) / weight.max(1)
}

/// `bfq_entity`: a queue's place in B-WF2Q+.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BfqEntity {
    pub start: u64,
    pub finish: u64,
    /// The budget in sectors (`entity->budget`) and the service received in it.
    pub budget: u64,
    pub service: u64,
    /// `entity->weight` (raised while the queue is weight-raised) and `orig_weight`.
    pub weight: u64,
    pub orig_weight: u64,
}

impl BfqEntity {
    /// `bfq_calc_finish`: the finish time after `service` at the entity's weight.
    pub fn calc_finish(&mut self, service: u64) {
        self.finish = self.start + bfq_delta(service, self.weight);
    }
}

/// `bfq_service_tree`: one class's active entities by finish time, its virtual time and the
/// sum of its active weights (`wsum`).
#[derive(Clone, Debug, Default)]
pub struct BfqServiceTree {
    pub vtime: u64,
    pub wsum: u64,
    /// (finish, queue key) → start.
    active: SortedMap<(u64, u32), u64>,
}

impl BfqServiceTree {
    pub fn len(&self) -> usize {
        self.active.len()
    }

    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// `bfq_active_insert`: the entity waits on the tree for its turn.
    fn insert(&mut self, key: u32, e: &BfqEntity) {
        assert!(self.active.insert((e.finish, key), e.start).is_none(), "an entity on its service tree twice");
    }

    /// `bfq_active_extract`: the entity leaves the tree to be served (it stays busy: its
    /// weight stays in `wsum`).
    pub fn extract(&mut self, key: u32, e: &BfqEntity) {
        assert!(self.active.remove(&(e.finish, key)).is_some(), "an entity not on its service tree");
    }

    /// `__bfq_activate_entity` → `bfq_update_fin_time_enqueue` for an entity that was idle:
    /// it starts at the virtual time, or at its old finish if that is later (it left with
    /// service still owed to the others: `bfq_idle_insert`), finishes a budget later, and its
    /// weight joins `wsum`.
    pub fn activate(&mut self, key: u32, e: &mut BfqEntity) {
        e.start = e.finish.max(self.vtime);
        e.calc_finish(e.budget);
        self.wsum += e.weight;
        self.insert(key, e);
    }

    /// `__bfq_requeue_entity` for the in-service entity after its expiration: charged the
    /// service it got (`bfq_calc_finish(entity, entity->service)`), it restarts at that finish
    /// with its next budget.
    pub fn requeue_in_service(&mut self, key: u32, e: &mut BfqEntity) {
        e.calc_finish(e.service);
        e.start = e.finish;
        e.calc_finish(e.budget);
        e.service = 0;
        self.insert(key, e);
    }

    /// `__bfq_deactivate_entity` for the in-service entity that emptied: charged the service
    /// it got, it leaves `wsum` and keeps its finish for when it comes back.
    pub fn deactivate_in_service(&mut self, e: &mut BfqEntity) {
        e.calc_finish(e.service);
        e.service = 0;
        self.wsum -= e.weight;
    }

    /// `bfq_bfqq_served` on the tree: `vtime += service / wsum`.
    pub fn served(&mut self, service: u64) {
        if self.wsum > 0 {
            self.vtime += bfq_delta(service, self.wsum);
        }
    }

    /// `bfq_first_active_entity` after `bfq_calc_vtime_jump`: the eligible entity with the
    /// smallest finish; with none eligible the virtual time jumps to the smallest start.
    pub fn lookup_next(&mut self) -> Option<u32> {
        let min_start = self.active.iter().map(|(_, &s)| s).min()?;
        if min_start > self.vtime {
            self.vtime = min_start;
        }
        let vtime = self.vtime;
        self.active.iter().find(|(_, &s)| s <= vtime).map(|(&(_, k), _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(weight: u64, budget: u64) -> BfqEntity {
        BfqEntity { weight, orig_weight: weight, budget, ..BfqEntity::default() }
    }

    #[test]
    fn bfq_delta_scales_service_by_two_to_the_22_over_the_weight() {
        assert_eq!(bfq_delta(1, 1), 1 << 22);
        assert_eq!(bfq_delta(100, 100), 1 << 22);
        assert_eq!(bfq_delta(8, 80), bfq_delta(1, 10));
    }

    #[test]
    fn the_heavier_queue_is_served_in_proportion_to_its_weight() {
        // Two always-busy queues of weights 80 and 10 (ionice 0 and 7), each served a whole
        // budget of 1000 sectors in turn, as B-WF2Q+ picks them: the heavier gets 8 budgets
        // for each of the lighter's.
        let mut st = BfqServiceTree::default();
        let mut e = [entity(80, 1000), entity(10, 1000)];
        for (k, e) in e.iter_mut().enumerate() {
            st.activate(k as u32, e);
        }
        let mut served = [0u64; 2];
        for _ in 0..90 {
            let k = st.lookup_next().expect("two busy entities") as usize;
            st.extract(k as u32, &e[k]);
            st.served(1000);
            e[k].service = 1000;
            st.requeue_in_service(k as u32, &mut e[k]);
            served[k] += 1000;
        }
        assert_eq!(served[0], 8 * served[1], "{served:?}");
    }

    #[test]
    fn a_queue_that_comes_back_starts_at_the_virtual_time_not_its_old_finish() {
        let mut st = BfqServiceTree::default();
        let mut a = entity(100, 1000);
        st.activate(0, &mut a);
        assert_eq!((a.start, a.finish), (0, bfq_delta(1000, 100)));
        st.extract(0, &a);
        st.served(5000);
        a.service = 1000;
        st.deactivate_in_service(&mut a);
        assert_eq!(st.wsum, 0);
        // Back after the virtual time passed its finish: it is not credited the time away.
        st.activate(0, &mut a);
        assert_eq!(a.start, st.vtime);
        // With nothing eligible, the virtual time jumps to the smallest start.
        let mut b = entity(100, 1000);
        b.finish = st.vtime + 777;
        st.activate(1, &mut b);
        st.extract(0, &a);
        assert_eq!(st.lookup_next(), Some(1));
        assert_eq!(st.vtime, b.start);
    }
}
