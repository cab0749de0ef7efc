//! `kernel/sched_fair.c`: where a woken task runs (`select_task_rq_fair`, 2.6.32); with
//! `cpu.scheduler = fair`, CFS's vruntime pick and wakeup preemption (2.6.39); and with
//! `cpu.load_balance`, CFS's load balancer (`rebalance_domains`, `load_balance`,
//! `find_busiest_group`, `idle_balance`). In 2.6.32 the balancer is in kernel/sched.c (which
//! includes sched_fair.c); later kernels moved it to sched_fair.c, where it has stayed
//! (kernel/sched/fair.c today), so it lives here.

use crate::calib::{JIFFY_NS, SCHED_LATENCY_NORMALIZED_NS, SCHED_MIGRATION_COST_NS, SCHED_NR_MIGRATE, SCHED_WAKEUP_GRAN_NORMALIZED_NS};
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{NS_PER_MS, NS_PER_S};
use crate::engine::Sim;
use crate::kernel::sched::{ThreadKind, ThreadState};
use crate::scenario::LoadBalance;

impl Sim {
    /// Where a woken thread runs (`select_task_rq_fair` → `select_idle_sibling`): on its last
    /// CPU if that is idle, else on the next idle CPU. What idle means is `cpu.wake_idle`: in
    /// the lessons, running nothing, interrupt and softirq work included, which is stricter
    /// than the kernel's `idle_cpu` (2.6.32: the current task is the idle task; 3.x-4.0: that
    /// and none queued), under which a CPU handling an interrupt on its idle task is idle; the
    /// sandbox takes the kernel's. Not yet the lessons' rule: it removes mq-clone-stall's
    /// stalls and takes raid5-chunk's throughput ratio and regressed `vmstat r` out of their
    /// bands (the caveats on those rows). Per-CPU kernel threads (`ksoftirqd/N`,
    /// `kblockd/N`) stay bound to theirs. Without sched domains every core is searched; with
    /// them (`cpu.load_balance`), only the last CPU's socket, as 2.6.32's `select_idle_sibling`
    /// stops at the last domain sharing package resources (the MC domain): moving a thread to
    /// another socket is the load balancer's job.
    pub(crate) fn select_task_rq(&self, tid: ThreadId, prev: CoreId) -> CoreId {
        if matches!(self.threads[tid.idx()].kind, ThreadKind::Ksoftirqd | ThreadKind::Kblockd(_)) {
            return prev;
        }
        let kernel_test = self.cfg.scenario.cpu.wake_idle == crate::scenario::WakeIdle::IdleCpu;
        let idle = |c: usize| {
            if kernel_test {
                return self.idle_cpu(c);
            }
            let core = &self.cores[c];
            !core.busy && core.runq.is_empty() && core.softirq.is_empty()
        };
        if idle(prev.idx()) {
            return prev;
        }
        let (first, n) = match self.cores[prev.idx()].sd.first() {
            Some(mc) if mc.share_pkg_resources => (mc.first as usize, mc.span as usize),
            Some(_) => return prev,
            None => (0, self.cores.len()),
        };
        let p = prev.idx() - first;
        (1..n).map(|k| first + (p + k) % n).find(|&c| idle(c)).map_or(prev, |c| CoreId(c as u16))
    }
}

/// `cpu.scheduler = fair`: CFS's pick and wakeup preemption as 2.6.39 has them. All threads
/// here are SCHED_NORMAL at nice 0, so every weight is NICE_0_LOAD and vruntime is CPU time.
impl Sim {
    /// The CPU scheduler is CFS (`cpu.scheduler = fair`).
    pub(crate) fn fair(&self) -> bool {
        self.cfg.scenario.cpu.scheduler == crate::scenario::CpuScheduler::Fair
    }

    /// `1 + ilog2(min(ncpus, 8))`: the boot-time factor of the latency tunables
    /// (`get_update_sysctl_factor`, SCHED_TUNABLESCALING_LOG).
    fn sysctl_factor(&self) -> u64 {
        let cpus = (self.cores.len() as u64).clamp(1, 8);
        1 + u64::from(cpus.ilog2())
    }

    /// `sysctl_sched_latency` for this many CPUs.
    pub(crate) fn sched_latency_ns(&self) -> u64 {
        SCHED_LATENCY_NORMALIZED_NS * self.sysctl_factor()
    }

    /// `sysctl_sched_wakeup_granularity` for this many CPUs.
    pub(crate) fn sched_wakeup_gran_ns(&self) -> u64 {
        SCHED_WAKEUP_GRAN_NORMALIZED_NS * self.sysctl_factor()
    }

    /// A sleeper is enqueued on `to` (`task_waking_fair` takes `from`'s `min_vruntime` off its
    /// vruntime, `enqueue_entity` adds `to`'s), then `place_entity`: it comes back no further
    /// behind `min_vruntime` than half the latency (GENTLE_FAIR_SLEEPERS), so a long sleeper
    /// gets that much credit and a short one keeps what it had.
    pub(crate) fn place_entity(&mut self, tid: ThreadId, from: CoreId, to: CoreId) {
        let from_min = self.cores[from.idx()].min_vruntime;
        let to_min = self.cores[to.idx()].min_vruntime;
        let credit = self.sched_latency_ns() / 2;
        let t = &mut self.threads[tid.idx()];
        let v = (t.vruntime + to_min).saturating_sub(from_min);
        t.vruntime = v.max(to_min.saturating_sub(credit));
    }

    /// The runnable thread of core `c` with the least vruntime (the leftmost of the tree; the
    /// first in wake order among equals), as its index in the run queue.
    pub(crate) fn pick_next_entity(&self, c: usize) -> Option<usize> {
        let runq = &self.cores[c].runq;
        (0..runq.len()).min_by_key(|&i| self.threads[runq[i].idx()].vruntime)
    }

    /// `check_preempt_wakeup` → `wakeup_preempt_entity`: the leftmost runnable thread preempts
    /// the running `cur` when `cur`'s vruntime is ahead of it by more than the wakeup
    /// granularity.
    pub(crate) fn check_preempt_wakeup(&self, c: usize, cur: ThreadId) -> bool {
        let Some(i) = self.pick_next_entity(c) else { return false };
        let left = self.threads[self.cores[c].runq[i].idx()].vruntime;
        self.threads[cur.idx()].vruntime > left + self.sched_wakeup_gran_ns()
    }

    /// `update_curr` → `update_min_vruntime`: the running thread's vruntime grows by the CPU
    /// time of its step; the core's `min_vruntime` follows the least of the running and the
    /// runnable, never backwards.
    pub(crate) fn update_curr(&mut self, c: usize, tid: ThreadId, cost_ns: u64) {
        let v = self.threads[tid.idx()].vruntime + cost_ns;
        self.threads[tid.idx()].vruntime = v;
        let least = self.pick_next_entity(c).map_or(v, |i| v.min(self.threads[self.cores[c].runq[i].idx()].vruntime));
        let core = &mut self.cores[c];
        core.min_vruntime = core.min_vruntime.max(least);
    }
}

/// `SCHED_LOAD_SCALE` (a CPU's `cpu_power`) and `NICE_0_LOAD` (a nice-0 thread's weight):
/// every thread here is SCHED_NORMAL at nice 0, so a run queue's load is 1024 per thread.
const SCHED_LOAD_SCALE: u64 = 1024;
/// `MAX_PINNED_INTERVAL`: the back-off cap (ms) when every thread found was pinned.
const MAX_PINNED_INTERVAL_MS: u64 = 512;

/// `enum cpu_idle_type`: why a CPU balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIdleType {
    /// From the tick, the CPU idle (`CPU_IDLE`).
    Idle,
    /// From the tick, the CPU busy (`CPU_NOT_IDLE`).
    NotIdle,
    /// From `schedule()`, about to go idle (`CPU_NEWLY_IDLE`).
    NewlyIdle,
}

/// What `load_balance` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbResult {
    /// No imbalance worth moving for (0).
    Balanced,
    /// A busier group, but nothing could be moved (newidle's -1).
    Failed,
    /// It pulled at least one thread.
    Moved,
}

/// `struct sg_lb_stats`: one group's figures.
#[derive(Default)]
struct SgStats {
    group_load: u64,
    sum_nr_running: u64,
    sum_weighted_load: u64,
    idle_cpus: u64,
    avg_load: u64,
    group_imb: bool,
    capacity: u64,
    has_capacity: bool,
}

/// `struct sd_lb_stats`: the domain's figures, as `find_busiest_group` gathers them.
#[derive(Default)]
struct SdStats {
    total_load: u64,
    total_pwr: u64,
    avg_load: u64,
    this_load: u64,
    this_pwr: u64,
    this_nr_running: u64,
    this_load_per_task: u64,
    this_has_capacity: bool,
    this_idle_cpus: u64,
    max_load: u64,
    busiest: Option<(u16, u16)>,
    busiest_pwr: u64,
    busiest_nr_running: u64,
    busiest_idle_cpus: u64,
    busiest_group_capacity: u64,
    busiest_group_weight: u64,
    busiest_load_per_task: u64,
    busiest_has_capacity: bool,
    group_imb: bool,
}

/// CFS's load balancer, 2.6.32's rules (kernel/sched.c of 2.6.32.69). Not modelled: active
/// balancing (the migration thread pushing a running thread; the failure count and back-off
/// that lead to it are), the CACHE_HOT_BUDDY hint, cgroup shares, power-savings balancing,
/// and the balancer's own CPU time in SCHED_SOFTIRQ. Every CPU ticks (a tickless idle CPU's
/// balancing, which the nohz idle load balancer does for it as CPU_IDLE, runs at its own tick).
impl Sim {
    pub(crate) fn load_balancing(&self) -> bool {
        self.cfg.scenario.cpu.load_balance != LoadBalance::Off
    }

    /// `rq->nr_running`: the thread running on `c` and those waiting for it.
    fn nr_running(&self, c: usize) -> u64 {
        let core = &self.cores[c];
        let running = core.current.is_some_and(|t| self.threads[t.idx()].state == ThreadState::Running);
        core.runq.len() as u64 + u64::from(running)
    }

    /// `weighted_cpuload`: the run queue's `load.weight`.
    fn weighted_cpuload(&self, c: usize) -> u64 {
        self.nr_running(c) * SCHED_LOAD_SCALE
    }

    /// `idle_cpu`: nothing runnable (softirq work run at irq exit on an idle CPU leaves it idle).
    fn idle_cpu(&self, c: usize) -> bool {
        self.nr_running(c) == 0
    }

    /// `source_load`: a low guess at a migration source's load (the lesser of now and the
    /// decayed `cpu_load[idx-1]`).
    fn source_load(&self, c: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(c);
        if idx == 0 {
            total
        } else {
            total.min(self.cores[c].cpu_load[idx - 1])
        }
    }

    /// `target_load`: a high guess at a migration target's load.
    fn target_load(&self, c: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(c);
        if idx == 0 {
            total
        } else {
            total.max(self.cores[c].cpu_load[idx - 1])
        }
    }

    /// `update_cpu_load` at each tick: `cpu_load[i]` follows the load with a decay of 2^-i,
    /// rounded up while it rises.
    fn update_cpu_load(&mut self, c: usize) {
        let this = self.weighted_cpuload(c);
        let core = &mut self.cores[c];
        for (i, load) in core.cpu_load.iter_mut().enumerate() {
            let scale = 1u64 << i;
            let new = if this > *load { this + scale - 1 } else { this };
            *load = (*load * (scale - 1) + new) >> i;
        }
    }

    /// `try_to_wake_up` on a CPU that went idle: the mean idle time it had (`avg_idle`, one
    /// eighth of each new sample, capped at twice the migration cost), which `idle_balance`
    /// weighs against the cost of pulling a thread.
    pub(crate) fn update_avg_idle(&mut self, to: CoreId) {
        let now = self.now();
        let core = &mut self.cores[to.idx()];
        if let Some(stamp) = core.idle_stamp.take() {
            let (delta, max) = (now - stamp, 2 * SCHED_MIGRATION_COST_NS);
            core.avg_idle_ns = if delta > max {
                max
            } else {
                let avg = core.avg_idle_ns as i64;
                (avg + ((delta as i64 - avg) >> 3)) as u64
            };
        }
    }

    /// `scheduler_tick` on every CPU: `update_cpu_load`, then `trigger_load_balance` →
    /// `run_rebalance_domains` once `next_balance` is due.
    pub(crate) fn on_sched_tick(&mut self) {
        let now = self.now();
        for c in 0..self.cores.len() {
            self.update_cpu_load(c);
            if now >= self.cores[c].next_balance {
                let idle = if self.idle_cpu(c) { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
                self.rebalance_domains(c, idle);
                // A CPU that pulled threads while idle runs them.
                self.kick(CoreId(c as u16));
            }
        }
        self.events.schedule(now + JIFFY_NS, Event::SchedTick);
    }

    /// `rebalance_domains`: each domain, lowest first, is balanced once its interval (longer by
    /// `busy_factor` on a busy CPU) has passed; a CPU that is not its group's balancer at a
    /// level stops there.
    fn rebalance_domains(&mut self, c: usize, mut idle: CpuIdleType) {
        let now = self.now();
        let mut balance = true;
        let mut next_balance = now + 60 * NS_PER_S;
        for l in 0..self.cores[c].sd.len() {
            let sd = &self.cores[c].sd[l];
            let factor = if idle == CpuIdleType::Idle { 1 } else { sd.busy_factor };
            let interval = (sd.balance_interval_ms * factor).max(1) * NS_PER_MS;
            if now >= sd.last_balance + interval {
                if self.load_balance(c, l, idle, Some(&mut balance)) == LbResult::Moved {
                    // It pulled threads: no longer idle.
                    idle = CpuIdleType::NotIdle;
                }
                self.cores[c].sd[l].last_balance = now;
            }
            next_balance = next_balance.min(self.cores[c].sd[l].last_balance + interval);
            if !balance {
                break;
            }
        }
        if !self.cores[c].sd.is_empty() {
            self.cores[c].next_balance = next_balance;
        }
    }

    /// `idle_balance`, from `schedule()` on a CPU about to go idle: unless its idle periods
    /// have been shorter than a migration costs, `load_balance_newidle` over its domains,
    /// stopping at the first that found a busier group. Returns whether it pulled a thread.
    pub(crate) fn idle_balance(&mut self, c: usize) -> bool {
        let now = self.now();
        self.cores[c].idle_stamp = Some(now);
        if self.cores[c].avg_idle_ns < SCHED_MIGRATION_COST_NS {
            return false;
        }
        let mut next_balance = now + NS_PER_S;
        let (mut stop, mut pulled) = (false, false);
        for l in 0..self.cores[c].sd.len() {
            let result = self.load_balance(c, l, CpuIdleType::NewlyIdle, None);
            let sd = &self.cores[c].sd[l];
            next_balance = next_balance.min(sd.last_balance + sd.balance_interval_ms * NS_PER_MS);
            // load_balance_newidle's -1 (a busier group found, nothing moved) stops it too.
            stop = result != LbResult::Balanced;
            if result == LbResult::Moved {
                pulled = true;
                self.cores[c].idle_stamp = None;
            }
            if stop {
                break;
            }
        }
        if stop || now > self.cores[c].next_balance {
            self.cores[c].next_balance = next_balance;
        }
        pulled
    }
}

impl Sim {
    /// `load_balance` (and, with `CpuIdleType::NewlyIdle`, `load_balance_newidle`): find the
    /// busiest group of domain `l` and its busiest CPU, and pull up to the imbalance from it.
    /// `balance` is cleared when `c` is not the CPU that balances its group at this level.
    fn load_balance(&mut self, c: usize, l: usize, idle: CpuIdleType, mut balance: Option<&mut bool>) -> LbResult {
        let mut cpus = vec![true; self.cores.len()];
        let newidle = idle == CpuIdleType::NewlyIdle;
        let (mut ld_moved, mut all_pinned, mut found) = (false, false, false);
        while let Some((first, n, imbalance)) = self.find_busiest_group(c, l, idle, balance.as_deref_mut(), &cpus) {
            let Some(busiest) = self.find_busiest_queue(first, n, imbalance, &cpus) else { break };
            found = true;
            if self.nr_running(busiest) > 1 {
                (ld_moved, all_pinned) = self.move_tasks(c, busiest, imbalance, l, idle);
                if all_pinned {
                    // Every thread there is pinned: look again without that CPU.
                    cpus[busiest] = false;
                    found = false;
                    if cpus.iter().any(|&x| x) {
                        continue;
                    }
                }
            }
            break;
        }
        let sd = &mut self.cores[c].sd[l];
        if !found {
            // out_balanced (newidle leaves the interval alone).
            sd.nr_balance_failed = 0;
            if !newidle && ((all_pinned && sd.balance_interval_ms < MAX_PINNED_INTERVAL_MS) || sd.balance_interval_ms < sd.max_interval_ms)
            {
                sd.balance_interval_ms *= 2;
            }
            return LbResult::Balanced;
        }
        if ld_moved {
            sd.nr_balance_failed = 0;
            if !newidle {
                sd.balance_interval_ms = sd.min_interval_ms;
            }
            return LbResult::Moved;
        }
        if newidle {
            return LbResult::Failed;
        }
        sd.nr_balance_failed += 1;
        if sd.nr_balance_failed > sd.cache_nice_tries + 2 {
            // Active balancing would be kicked here (not modelled): its back-off is.
            sd.nr_balance_failed = sd.cache_nice_tries + 1;
            if sd.balance_interval_ms < sd.max_interval_ms {
                sd.balance_interval_ms *= 2;
            }
        } else {
            sd.balance_interval_ms = sd.min_interval_ms;
        }
        LbResult::Failed
    }

    /// `update_sg_lb_stats` for the group of `n` CPUs from `first`; None when `c` is in it
    /// but is not the CPU that balances for it (the first idle one, else the first).
    fn update_sg_lb_stats(
        &self,
        c: usize,
        (first, n): (u16, u16),
        idle: CpuIdleType,
        load_idx: usize,
        local: bool,
        cpus: &[bool],
    ) -> Option<SgStats> {
        let mut sgs = SgStats::default();
        let (mut balance_cpu, mut first_idle) = (first as usize, false);
        let (mut max_cpu_load, mut min_cpu_load, mut max_nr_running) = (0, u64::MAX, 0);
        for i in (first as usize..(first + n) as usize).filter(|&i| cpus[i]) {
            let load = if local {
                if self.idle_cpu(i) && !first_idle {
                    first_idle = true;
                    balance_cpu = i;
                }
                self.target_load(i, load_idx)
            } else {
                let load = self.source_load(i, load_idx);
                if load > max_cpu_load {
                    max_cpu_load = load;
                    max_nr_running = self.nr_running(i);
                }
                min_cpu_load = min_cpu_load.min(load);
                load
            };
            sgs.group_load += load;
            sgs.sum_nr_running += self.nr_running(i);
            sgs.sum_weighted_load += self.weighted_cpuload(i);
            sgs.idle_cpus += u64::from(self.idle_cpu(i));
        }
        if idle != CpuIdleType::NewlyIdle && local && balance_cpu != c {
            return None;
        }
        let power = u64::from(n) * SCHED_LOAD_SCALE;
        sgs.avg_load = sgs.group_load * SCHED_LOAD_SCALE / power;
        let avg_load_per_task = sgs.sum_weighted_load.checked_div(sgs.sum_nr_running).unwrap_or(0);
        sgs.group_imb = max_cpu_load.saturating_sub(min_cpu_load) > 2 * avg_load_per_task && max_nr_running > 1;
        sgs.capacity = u64::from(n);
        sgs.has_capacity = sgs.capacity > sgs.sum_nr_running;
        Some(sgs)
    }

    /// `find_busiest_group`: the busiest group of domain `l` seen from `c`, and the weighted
    /// load to pull from it (`calculate_imbalance`), if the imbalance is worth it.
    fn find_busiest_group(
        &self,
        c: usize,
        l: usize,
        idle: CpuIdleType,
        balance: Option<&mut bool>,
        cpus: &[bool],
    ) -> Option<(u16, u16, u64)> {
        let sd = &self.cores[c].sd[l];
        let load_idx = match idle {
            CpuIdleType::NotIdle => sd.busy_idx,
            CpuIdleType::NewlyIdle => sd.newidle_idx,
            CpuIdleType::Idle => sd.idle_idx,
        };
        let (g, ngroups) = (sd.group_cpus, sd.span / sd.group_cpus);
        let local_group = (c as u16 - sd.first) / g;
        let mut sds = SdStats::default();
        // sd->groups starts at this CPU's own group.
        for k in 0..ngroups {
            let grp = (local_group + k) % ngroups;
            let first = sd.first + grp * g;
            let local = k == 0;
            let Some(mut sgs) = self.update_sg_lb_stats(c, (first, g), idle, load_idx, local, cpus) else {
                if let Some(b) = balance {
                    *b = false;
                    return None;
                }
                unreachable!("only a periodic balance asks who balances the group")
            };
            let power = u64::from(g) * SCHED_LOAD_SCALE;
            sds.total_load += sgs.group_load;
            sds.total_pwr += power;
            if sd.prefer_sibling && !local && sds.this_has_capacity {
                sgs.capacity = sgs.capacity.min(1);
            }
            if local {
                sds.this_load = sgs.avg_load;
                sds.this_pwr = power;
                sds.this_nr_running = sgs.sum_nr_running;
                sds.this_load_per_task = sgs.sum_weighted_load;
                sds.this_has_capacity = sgs.has_capacity;
                sds.this_idle_cpus = sgs.idle_cpus;
            } else if sgs.avg_load > sds.max_load && (sgs.sum_nr_running > sgs.capacity || sgs.group_imb) {
                sds.max_load = sgs.avg_load;
                sds.busiest = Some((first, g));
                sds.busiest_pwr = power;
                sds.busiest_nr_running = sgs.sum_nr_running;
                sds.busiest_idle_cpus = sgs.idle_cpus;
                sds.busiest_group_capacity = sgs.capacity;
                sds.busiest_group_weight = u64::from(g);
                sds.busiest_load_per_task = sgs.sum_weighted_load;
                sds.busiest_has_capacity = sgs.has_capacity;
                sds.group_imb = sgs.group_imb;
            }
        }
        let (first, n) = sds.busiest?;
        if sds.busiest_nr_running == 0 {
            return None;
        }
        // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized.
        let force = idle == CpuIdleType::NewlyIdle && sds.this_has_capacity && !sds.busiest_has_capacity;
        if !force {
            if sds.this_load >= sds.max_load {
                return None;
            }
            sds.avg_load = SCHED_LOAD_SCALE * sds.total_load / sds.total_pwr;
            if sds.this_load >= sds.avg_load {
                return None;
            }
            if idle == CpuIdleType::NewlyIdle || !self.idle_cpu(c) {
                if 100 * sds.max_load <= sd.imbalance_pct * sds.this_load {
                    return None;
                }
            } else if sds.this_idle_cpus <= sds.busiest_idle_cpus + 1 && sds.busiest_nr_running <= sds.busiest_group_weight {
                return None;
            }
        }
        Some((first, n, self.calculate_imbalance(&mut sds, c)))
    }

    /// `calculate_imbalance`: bring the busiest group down toward the domain's mean without
    /// taking this group above it, nor the busiest below its capacity. Unsigned arithmetic
    /// wraps as the kernel's `unsigned long` does.
    fn calculate_imbalance(&self, sds: &mut SdStats, c: usize) -> u64 {
        sds.busiest_load_per_task /= sds.busiest_nr_running;
        if sds.group_imb {
            sds.busiest_load_per_task = sds.busiest_load_per_task.min(sds.avg_load);
        }
        if sds.max_load < sds.avg_load {
            return self.fix_small_imbalance(sds, c, 0);
        }
        let mut load_above_capacity = u64::MAX;
        if !sds.group_imb {
            load_above_capacity =
                sds.busiest_nr_running.wrapping_sub(sds.busiest_group_capacity).wrapping_mul(SCHED_LOAD_SCALE * SCHED_LOAD_SCALE)
                    / sds.busiest_pwr;
        }
        let max_pull = (sds.max_load.wrapping_sub(sds.avg_load)).min(load_above_capacity);
        let imbalance = max_pull.wrapping_mul(sds.busiest_pwr).min(sds.avg_load.wrapping_sub(sds.this_load).wrapping_mul(sds.this_pwr))
            / SCHED_LOAD_SCALE;
        if imbalance < sds.busiest_load_per_task {
            return self.fix_small_imbalance(sds, c, imbalance);
        }
        imbalance
    }

    /// `fix_small_imbalance`: move one thread if that alone evens things out or uses more CPU.
    fn fix_small_imbalance(&self, sds: &mut SdStats, c: usize, imbalance: u64) -> u64 {
        let mut imbn = 2;
        if let Some(per_task) = sds.this_load_per_task.checked_div(sds.this_nr_running) {
            sds.this_load_per_task = per_task;
            if sds.busiest_load_per_task > sds.this_load_per_task {
                imbn = 1;
            }
        } else {
            sds.this_load_per_task = self.weighted_cpuload(c).checked_div(self.nr_running(c)).unwrap_or(0);
        }
        let (bpwr, tpwr, blpt) = (sds.busiest_pwr, sds.this_pwr, sds.busiest_load_per_task);
        let scaled_busy_load_per_task = blpt * SCHED_LOAD_SCALE / bpwr;
        if sds.max_load.wrapping_sub(sds.this_load).wrapping_add(scaled_busy_load_per_task) >= scaled_busy_load_per_task * imbn {
            return blpt;
        }
        let pwr_now = (bpwr * blpt.min(sds.max_load) + tpwr * sds.this_load_per_task.min(sds.this_load)) / SCHED_LOAD_SCALE;
        let mut pwr_move = 0;
        let tmp = blpt * SCHED_LOAD_SCALE / bpwr;
        if sds.max_load > tmp {
            pwr_move += bpwr * blpt.min(sds.max_load - tmp);
        }
        let tmp = if sds.max_load * bpwr < blpt * SCHED_LOAD_SCALE { sds.max_load * bpwr / tpwr } else { blpt * SCHED_LOAD_SCALE / tpwr };
        pwr_move += tpwr * sds.this_load_per_task.min(sds.this_load + tmp);
        if pwr_move / SCHED_LOAD_SCALE > pwr_now {
            blpt
        } else {
            imbalance
        }
    }

    /// `find_busiest_queue`: the most loaded CPU of the group, passing over one whose single
    /// thread outweighs the imbalance.
    fn find_busiest_queue(&self, first: u16, n: u16, imbalance: u64, cpus: &[bool]) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for i in (first as usize..(first + n) as usize).filter(|&i| cpus[i]) {
            let wl = self.weighted_cpuload(i);
            if self.nr_running(i) == 1 && wl > imbalance {
                continue;
            }
            if wl > best.map_or(0, |b| b.0) {
                best = Some((wl, i));
            }
        }
        best.map(|b| b.1)
    }

    /// `move_tasks` → `balance_tasks` (CFS is the only class here): pull waiting threads from
    /// `busiest`, newest first, while at least half a thread's weight of the imbalance is left.
    /// Returns (moved any, all were pinned).
    fn move_tasks(&mut self, c: usize, busiest: usize, max_load_move: u64, l: usize, idle: CpuIdleType) -> (bool, bool) {
        if max_load_move == 0 {
            return (false, false);
        }
        let (mut pinned, mut pulled) = (true, 0u32);
        let mut rem = max_load_move as i64;
        let candidates: Vec<ThreadId> = self.cores[busiest].runq.iter().rev().copied().collect();
        for (loops, tid) in candidates.into_iter().enumerate() {
            if loops as u32 > SCHED_NR_MIGRATE {
                break;
            }
            if (SCHED_LOAD_SCALE >> 1) as i64 > rem || !self.can_migrate_task(tid, l, c, idle, &mut pinned) {
                continue;
            }
            self.pull_task(busiest, tid, c);
            pulled += 1;
            rem -= SCHED_LOAD_SCALE as i64;
            if rem <= 0 {
                break;
            }
        }
        (pulled > 0, pinned)
    }

    /// `can_migrate_task`: not a per-CPU kernel thread (`cpus_allowed`), and cache-cold unless
    /// balancing this domain has failed more than `cache_nice_tries` times.
    fn can_migrate_task(&self, tid: ThreadId, l: usize, c: usize, _idle: CpuIdleType, pinned: &mut bool) -> bool {
        let t = &self.threads[tid.idx()];
        if matches!(t.kind, ThreadKind::Ksoftirqd | ThreadKind::Kblockd(_)) {
            return false;
        }
        *pinned = false;
        if t.state != ThreadState::Runnable {
            return false;
        }
        let sd = &self.cores[c].sd[l];
        !self.task_hot(tid) || sd.nr_balance_failed > sd.cache_nice_tries
    }

    /// `task_hot`: it ran within the last `sysctl_sched_migration_cost`.
    fn task_hot(&self, tid: ThreadId) -> bool {
        self.now() - self.threads[tid.idx()].exec_start < SCHED_MIGRATION_COST_NS
    }

    /// `pull_task`: off `src`'s run queue onto `c`'s (`set_task_cpu` keeps its vruntime's place
    /// relative to the new queue's `min_vruntime`). The caller kicks `c`.
    fn pull_task(&mut self, src: usize, tid: ThreadId, c: usize) {
        let pos = self.cores[src].runq.iter().position(|&t| t == tid).expect("a pulled thread waits on its CPU");
        self.cores[src].runq.remove(pos);
        if self.cores[src].current == Some(tid) {
            self.cores[src].current = None;
        }
        let (from_min, to_min) = (self.cores[src].min_vruntime, self.cores[c].min_vruntime);
        let t = &mut self.threads[tid.idx()];
        t.vruntime = (t.vruntime + to_min).saturating_sub(from_min);
        t.home = CoreId(c as u16);
        self.cores[c].runq.push_back(tid);
    }
}

#[cfg(test)]
mod tests {
    use super::{CpuIdleType, LbResult};
    use crate::engine::ids::{CoreId, JobId, ThreadId};
    use crate::engine::time::{SimTime, NS_PER_MS, NS_PER_S};
    use crate::engine::Sim;
    use crate::kernel::sched::{ThreadKind, ThreadState};
    use crate::kernel::topology::tests::balancing_sim;
    use crate::scenario::{set_knob, Scenario};

    fn sim(cores: &str) -> Sim {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", cores), ("cpu.scheduler", "fair")] {
            set_knob(&mut s, k, v).unwrap();
        }
        Sim::new(&s.validate().unwrap(), 1)
    }

    #[test]
    fn a_cpu_reaping_completions_on_its_idle_task_keeps_a_woken_thread_only_under_the_kernels_idle_cpu() {
        for (rule, stays) in [("no-work", false), ("idle_cpu", true)] {
            let mut sc = Scenario::default();
            for (k, v) in [("cpu.cores", "4"), ("cpu.wake_idle", rule)] {
                set_knob(&mut sc, k, v).unwrap();
            }
            let mut s = Sim::new(&sc.validate().unwrap(), 1);
            let t = s.jobs[0].tid;
            let other = (0..s.threads.len() as u32)
                .map(ThreadId)
                .find(|&o| o != t && !matches!(s.threads[o.idx()].kind, ThreadKind::Ksoftirqd | ThreadKind::Kblockd(_)))
                .expect("a second thread");
            // CPU 0 handles interrupt work with no task of its own (its idle task is current).
            s.cores[0].busy = true;
            s.cores[0].current = None;
            let expect = if stays { CoreId(0) } else { CoreId(1) };
            assert_eq!(s.select_task_rq(t, CoreId(0)), expect, "{rule}");
            // A CPU with a thread queued is busy under either rule...
            s.cores[0].runq.push_back(other);
            assert_eq!(s.select_task_rq(t, CoreId(0)), CoreId(1), "{rule}");
            // ...and so is one running a thread.
            s.cores[0].runq.clear();
            s.cores[0].current = Some(other);
            s.threads[other.idx()].state = ThreadState::Running;
            assert_eq!(s.select_task_rq(t, CoreId(0)), CoreId(1), "{rule}");
        }
    }

    #[test]
    fn the_latency_and_wakeup_granularity_scale_with_the_log_of_the_cpus_up_to_8() {
        let (two, eight) = (sim("2"), sim("8"));
        assert_eq!((two.sched_latency_ns(), two.sched_wakeup_gran_ns()), (12 * NS_PER_MS, 2 * NS_PER_MS));
        assert_eq!((eight.sched_latency_ns(), eight.sched_wakeup_gran_ns()), (24 * NS_PER_MS, 4 * NS_PER_MS));
        assert_eq!(sim("16").sched_latency_ns(), 24 * NS_PER_MS);
    }

    #[test]
    fn a_long_sleeper_comes_back_half_a_latency_behind_and_a_short_one_keeps_its_vruntime() {
        let mut s = sim("8");
        let (long, short) = (ThreadId(0), ThreadId(1));
        s.cores[0].min_vruntime = 100 * NS_PER_MS;
        s.threads[long.idx()].vruntime = 10 * NS_PER_MS;
        s.threads[short.idx()].vruntime = 95 * NS_PER_MS;
        s.place_entity(long, CoreId(0), CoreId(0));
        s.place_entity(short, CoreId(0), CoreId(0));
        assert_eq!(s.threads[long.idx()].vruntime, 88 * NS_PER_MS);
        assert_eq!(s.threads[short.idx()].vruntime, 95 * NS_PER_MS);
        // Moving to a CPU whose min_vruntime is 50 ms further on keeps its place relative to it.
        s.cores[1].min_vruntime = 150 * NS_PER_MS;
        s.place_entity(short, CoreId(0), CoreId(1));
        assert_eq!(s.threads[short.idx()].vruntime, 145 * NS_PER_MS);
    }

    #[test]
    fn a_woken_thread_preempts_only_one_more_than_the_wakeup_granularity_ahead() {
        let mut s = sim("8");
        let (cur, woken) = (ThreadId(0), ThreadId(1));
        s.cores[0].runq.clear();
        s.cores[0].runq.push_back(woken);
        s.threads[woken.idx()].vruntime = 88 * NS_PER_MS;
        s.threads[cur.idx()].vruntime = 92 * NS_PER_MS;
        assert!(!s.check_preempt_wakeup(0, cur), "4 ms ahead is the granularity, not more");
        s.threads[cur.idx()].vruntime = 92 * NS_PER_MS + 1;
        assert!(s.check_preempt_wakeup(0, cur));
        assert_eq!(s.pick_next_entity(0), Some(0));
    }

    /// Four jobs, each reading its own RAM LUN with 32 I/Os in flight, on two CPUs (run
    /// queues in wake order): each job's I/Os per second.
    fn four_jobs_iops(load_balance: &str) -> Vec<f64> {
        let mut s = Scenario::default();
        for (k, v) in [
            ("disk.kind", "ramlun"),
            ("disks", "4"),
            ("workload.numjobs", "4"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.direct", "true"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "32"),
            ("cpu.load_balance", load_balance),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        sim.run_until(SimTime(2 * NS_PER_S));
        sim.jobs.iter().map(|j| j.bytes_done as f64 / 4096.0 / 2.0).collect()
    }

    #[test]
    fn four_identical_jobs_on_two_cpus_get_shares_within_ten_percent_with_the_balancer() {
        let ratio = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min) / v.iter().cloned().fold(0.0, f64::max);
        let off = four_jobs_iops("off");
        assert!(ratio(&off) < 0.5, "without balancing three jobs share one CPU: {off:?}");
        let on = four_jobs_iops("2.6.32");
        assert!(ratio(&on) >= 0.9, "2.6.32's balancer evens them out: {on:?}");
    }

    #[test]
    fn an_idle_cpu_pulls_waiting_cache_cold_threads_but_not_a_cache_hot_one() {
        let mut s = balancing_sim("2", "1");
        // Nothing else happens: the forks and ticks are dropped (the clock moves past them).
        while s.events.pop().is_some() {}
        let now = s.now();
        assert!(now >= SimTime(10 * NS_PER_MS));
        // Three threads of our own on CPU 0: one running, two waiting (one of them ran just now).
        let ids: Vec<ThreadId> = (0..3).map(|i| ThreadId((s.threads.len() - 1 - i) as u32)).collect();
        let (running, cold, hot) = (ids[0], ids[1], ids[2]);
        for &t in &ids {
            let th = &mut s.threads[t.idx()];
            th.kind = ThreadKind::User(JobId(0));
            th.home = CoreId(0);
            th.state = ThreadState::Runnable;
            th.exec_start = SimTime::ZERO;
        }
        s.threads[running.idx()].state = ThreadState::Running;
        s.cores[0].current = Some(running);
        s.cores[0].runq.clear();
        s.cores[0].runq.extend([cold, hot]);
        s.threads[hot.idx()].exec_start = SimTime(now.0 - 100_000);
        let mut balance = true;
        assert_eq!(s.load_balance(1, 0, CpuIdleType::Idle, Some(&mut balance)), LbResult::Moved);
        assert_eq!(s.cores[1].runq.iter().copied().collect::<Vec<_>>(), vec![cold], "the hot one stays");
        assert_eq!(s.threads[cold.idx()].home, CoreId(1));
        // Balanced now: one thread each way is within imbalance_pct.
        s.cores[1].runq.clear();
        s.cores[0].runq.retain(|&t| t != hot);
        s.cores[1].runq.push_back(cold);
        assert_eq!(s.load_balance(1, 0, CpuIdleType::NotIdle, Some(&mut balance)), LbResult::Balanced);
    }

    #[test]
    fn the_balance_interval_doubles_while_balanced_up_to_its_max() {
        let mut s = balancing_sim("2", "1");
        let mut balance = true;
        for _ in 0..5 {
            s.load_balance(0, 0, CpuIdleType::Idle, Some(&mut balance));
        }
        assert_eq!(s.cores[0].sd[0].balance_interval_ms, 4, "SD_MC_INIT: 1 ms doubling to max_interval 4");
    }
}
