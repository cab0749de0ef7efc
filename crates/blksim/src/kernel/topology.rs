//! The sched domains of 2.6.32: `SD_MC_INIT` (include/linux/topology.h) and x86_64's
//! `SD_NODE_INIT` (arch/x86/include/asm/topology.h), and which of them each CPU gets
//! (`build_sched_domains` in kernel/sched.c, 2.6.32; kernel/sched/topology.c today).

use crate::engine::time::SimTime;

/// A CPU's view of one sched domain (`struct sched_domain`): the CPUs it spans (consecutive),
/// split evenly into groups of `group_cpus`, its tunables, and its balancing state.
#[derive(Clone, Debug)]
pub struct SchedDomain {
    pub first: u16,
    pub span: u16,
    pub group_cpus: u16,
    pub min_interval_ms: u64,
    pub max_interval_ms: u64,
    pub busy_factor: u64,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    pub busy_idx: usize,
    pub idle_idx: usize,
    pub newidle_idx: usize,
    /// The child domain has SD_PREFER_SIBLING (an MC domain without power savings).
    pub prefer_sibling: bool,
    /// SD_SHARE_PKG_RESOURCES: its CPUs share a last-level cache (MC).
    pub share_pkg_resources: bool,
    pub balance_interval_ms: u64,
    pub nr_balance_failed: u32,
    pub last_balance: SimTime,
}

impl SchedDomain {
    /// SD_MC_INIT (include/linux/topology.h, 2.6.32): one socket's cores, a group per CPU.
    fn mc(first: u16, span: u16) -> SchedDomain {
        SchedDomain {
            first,
            span,
            group_cpus: 1,
            min_interval_ms: 1,
            max_interval_ms: 4,
            busy_factor: 64,
            imbalance_pct: 125,
            cache_nice_tries: 1,
            busy_idx: 2,
            idle_idx: 0,
            newidle_idx: 0,
            prefer_sibling: false,
            share_pkg_resources: true,
            balance_interval_ms: 1,
            nr_balance_failed: 0,
            last_balance: SimTime::ZERO,
        }
    }

    /// SD_NODE_INIT (arch/x86/include/asm/topology.h, x86_64, 2.6.32): all sockets, a group
    /// per socket, one NUMA node each (the era's two-socket x86_64 boxes; the CPU level,
    /// spanning one node like MC, is degenerate and removed).
    fn node(span: u16, group_cpus: u16) -> SchedDomain {
        SchedDomain {
            group_cpus,
            min_interval_ms: 8,
            max_interval_ms: 32,
            busy_factor: 32,
            cache_nice_tries: 2,
            busy_idx: 3,
            idle_idx: 2,
            prefer_sibling: group_cpus > 1,
            share_pkg_resources: false,
            ..SchedDomain::mc(0, span)
        }
    }
}

/// Each CPU's domains, lowest first (`build_sched_domains` with degenerate levels removed):
/// MC over its socket when a socket has more than one core, NODE over all when there is more
/// than one socket.
pub fn sched_domains(cores: u32, sockets: u32) -> Vec<Vec<SchedDomain>> {
    let per_socket = (cores / sockets) as u16;
    (0..cores as u16)
        .map(|c| {
            let mut sd = Vec::new();
            if per_socket > 1 {
                sd.push(SchedDomain::mc(c / per_socket * per_socket, per_socket));
            }
            if sockets > 1 {
                sd.push(SchedDomain::node(cores as u16, per_socket));
            }
            sd
        })
        .collect()
}

impl crate::engine::Sim {
    /// `sched_init_smp`: with load balancing on, each core gets its sched domains, and the
    /// scheduler tick starts.
    pub(crate) fn sched_init_smp(&mut self) {
        let cpu = &self.cfg.scenario.cpu;
        if cpu.load_balance == crate::scenario::LoadBalance::Off {
            return;
        }
        for (core, sd) in self.cores.iter_mut().zip(sched_domains(cpu.cores, cpu.sockets)) {
            core.sd = sd;
            core.avg_idle_ns = 2 * crate::calib::SCHED_MIGRATION_COST_NS;
        }
        self.events.schedule(SimTime(crate::calib::JIFFY_NS), crate::engine::event::Event::SchedTick);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    /// A default scenario with `cores` in `sockets` and 2.6.32's balancer on (shared with
    /// sched_fair's tests).
    pub(crate) fn balancing_sim(cores: &str, sockets: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", cores), ("cpu.sockets", sockets), ("cpu.load_balance", "2.6.32")] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn two_sockets_of_four_give_each_cpu_an_mc_and_a_node_domain() {
        let s = balancing_sim("8", "2");
        let sd = &s.cores[5].sd;
        assert_eq!(sd.len(), 2);
        assert_eq!((sd[0].first, sd[0].span, sd[0].group_cpus, sd[0].busy_factor), (4, 4, 1, 64));
        assert_eq!((sd[1].first, sd[1].span, sd[1].group_cpus, sd[1].min_interval_ms), (0, 8, 4, 8));
        assert!(sd[1].prefer_sibling && !sd[0].prefer_sibling);
        assert_eq!(balancing_sim("4", "1").cores[0].sd.len(), 1, "one socket: MC only");
        assert_eq!(balancing_sim("2", "2").cores[0].sd[0].group_cpus, 1, "one core a socket: NODE only");
    }
}
