//! CFS's load balancer (`cpu.load_balance`), 2.6.32's rules: the load-balancing part of
//! `kernel/sched_fair.c` (in 2.6.32 it sits in kernel/sched.c, which includes sched_fair.c;
//! later kernels moved it into sched_fair.c). `rebalance_domains` from the tick,
//! `idle_balance` from `schedule()`, and `load_balance` → `find_busiest_group` →
//! `find_busiest_queue` → `move_tasks` between them.

use crate::calib::{JIFFY_NS, SCHED_MIGRATION_COST_NS, SCHED_NR_MIGRATE};
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{NS_PER_MS, NS_PER_S};
use crate::engine::Sim;
use crate::kernel::sched::{ThreadKind, ThreadState};
use crate::scenario::LoadBalance;

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

    /// `weighted_cpuload`: the run queue's `load.weight`.
    fn weighted_cpuload(&self, c: usize) -> u64 {
        self.nr_running(c) * SCHED_LOAD_SCALE
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
        let core = &mut self.cores[to];
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
        let t = &self.threads[tid];
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
        self.now() - self.threads[tid].exec_start < SCHED_MIGRATION_COST_NS
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
        let t = &mut self.threads[tid];
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

    /// Four jobs that only use the CPU, left three on CPU 0 and one on CPU 1: buffered
    /// writers whose page cache never reaches the dirty thresholds, so none sleeps (no
    /// writeback, no throttling) and neither CPU is ever idle when a thread wakes. A fifth
    /// job, forked on CPU 1 first and gone after 0.1 s, makes the 3:1 placement: the other
    /// three are forked while both CPUs are busy, so each stays on its home CPU (jobs are
    /// homed round-robin), and nothing but the balancer can move a thread that never sleeps.
    /// CFS, as 2.6.32 schedules. Each long job's bytes written per second.
    fn three_to_one_writers(load_balance: &str) -> Vec<f64> {
        let mut s = Scenario::default();
        for (k, v) in [
            ("cpu.scheduler", "fair"),
            ("cpu.load_balance", load_balance),
            ("vm.mem_mb", "65536"),
            ("vm.dirty_ratio", "50"),
            ("vm.dirty_background_ratio", "40"),
            ("workload.rw", "write"),
            ("workload.direct", "false"),
            ("workload.ioengine", "sync"),
            ("job.short.runtime", "0.1"),
            ("job.rest.numjobs", "3"),
            ("job.rest.startdelay", "0.01"),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        sim.run_until(SimTime(2 * NS_PER_S));
        assert!(sim.jobs[1].done_at.is_some(), "the short job is gone");
        sim.jobs.iter().filter(|j| j.id != JobId(1)).map(|j| j.bytes_done as f64 / 2.0).collect()
    }

    /// The balancer's own work: pulling a runnable thread that never sleeps, which wakeup
    /// placement never moves. (Jobs that sleep on I/O also move when they wake onto an idle
    /// CPU, so a scenario of I/O-bound jobs shows the balancer only when no CPU is ever idle,
    /// and whether a job escapes a busy CPU by a wakeup then turns on a few microseconds of
    /// idle time: a knife-edge, not the balancer's property.)
    #[test]
    fn four_cpu_bound_jobs_left_three_to_one_get_shares_within_ten_percent_with_the_balancer() {
        let ratio = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min) / v.iter().cloned().fold(0.0, f64::max);
        let off = three_to_one_writers("off");
        assert!(ratio(&off) < 0.5, "without balancing three jobs share one CPU: {off:?}");
        let on = three_to_one_writers("2.6.32");
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
            let th = &mut s.threads[t];
            th.kind = ThreadKind::User(JobId(0));
            th.home = CoreId(0);
            th.state = ThreadState::Runnable;
            th.exec_start = SimTime::ZERO;
        }
        s.threads[running].state = ThreadState::Running;
        s.cores[0].current = Some(running);
        s.cores[0].runq.clear();
        s.cores[0].runq.extend([cold, hot]);
        s.threads[hot].exec_start = SimTime(now.0 - 100_000);
        let mut balance = true;
        assert_eq!(s.load_balance(1, 0, CpuIdleType::Idle, Some(&mut balance)), LbResult::Moved);
        assert_eq!(s.cores[1].runq.iter().copied().collect::<Vec<_>>(), vec![cold], "the hot one stays");
        assert_eq!(s.threads[cold].home, CoreId(1));
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
