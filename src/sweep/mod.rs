//! A seed sweep in the page: the lesson's variant (and B's, in the A/B view) run for N seeds,
//! as `blksim sweep` does. The seeds go to Web Workers, one per CPU (`workers`), in batches
//! (`crate::protocol::SweepBatch`); where workers cannot start, or once one fails, they run
//! here, a slice of events per animation frame (`Sweep::frame`), so the page keeps drawing and
//! the sweep can be cancelled either way. Each run is the CLI's `run_one` (trace off, to the
//! lesson's duration or until every job is done); its figure is the completion time when every
//! run of its variant completes, else the throughput.

pub mod workers;

pub use crate::protocol::SeedRun;
use crate::view::warn;
use blksim::course::lessons::Lesson;
use blksim::scenario::Config;
use blksim::tools::report::RunReport;
use blksim::{Sim, SimTime};
use std::collections::VecDeque;

/// Events a sweep runs on the page's thread in its first frame; after it, the budget follows
/// the measured frame work as a jump's does (`Sweep::tune`).
pub const SWEEP_EVENTS_PER_FRAME: u64 = 20_000;

/// Seeds a sweep may run, at most (per variant).
pub const SWEEP_SEEDS_MAX: u64 = 1000;

impl SeedRun {
    /// The run's figures, as the CLI's report gives them.
    pub fn of(sim: &mut Sim, lesson: &str, variant: &str, seed: u64) -> SeedRun {
        let r = RunReport::from_sim(sim, lesson, variant);
        let (stall_from_ns, stall_ns) = sim.longest_stall_ns();
        SeedRun {
            variant: variant.to_string(),
            seed,
            completion_s: r.completion_s,
            throughput_mb_s: r.throughput_mb_s,
            run_ns: sim.now().ns(),
            stall_from_ns,
            stall_ns,
        }
    }

    /// Where a link to this run opens: where its longest stall begins, when that stall is at
    /// least half the run (a run that is slow because it stood still), else at the start.
    pub fn stall_t(&self) -> Option<f64> {
        (self.stall_ns > 0 && self.stall_ns * 2 >= self.run_ns).then(|| SimTime(self.stall_from_ns).as_secs_f64())
    }
}

pub struct Sweep {
    lesson: Lesson,
    overrides: Vec<(String, String)>,
    /// (variant, its config), in the order they run.
    variants: Vec<(String, Config)>,
    pub seeds: u64,
    /// The runs not started yet (variant index, seed), in order.
    todo: VecDeque<(usize, u64)>,
    /// The run under way on the page's thread: which variant, which seed, the simulation.
    current: Option<(usize, u64, Sim)>,
    /// The runs done, in the order they ended (workers end them out of order).
    pub runs: Vec<SeedRun>,
    /// The workers running the seeds, if they started.
    pub workers: Option<workers::SweepWorkers>,
    /// Events the sweep runs per frame on the page's thread (adapted to the measured frame work).
    events: u64,
}

impl Sweep {
    /// A sweep of seeds 1..=`seeds` for each of `variants` with the run's overrides.
    pub fn new(lesson: &Lesson, variants: &[String], overrides: &[(String, String)], seeds: u64) -> Result<Sweep, String> {
        if !(1..=SWEEP_SEEDS_MAX).contains(&seeds) {
            return Err(format!("{seeds} seeds is not allowed; expected 1 to {SWEEP_SEEDS_MAX}"));
        }
        let variants = variants
            .iter()
            .map(|v| lesson.config(v, overrides).map(|c| (v.clone(), c)).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let todo = (0..variants.len()).flat_map(|vi| (1..=seeds).map(move |seed| (vi, seed))).collect();
        Ok(Sweep {
            lesson: lesson.clone(),
            overrides: overrides.to_vec(),
            variants,
            seeds,
            todo,
            current: None,
            runs: Vec::new(),
            workers: None,
            events: SWEEP_EVENTS_PER_FRAME,
        })
    }

    /// A sweep as `new` makes it, in workers where the page can have them.
    pub fn start(lesson: &Lesson, variants: &[String], overrides: &[(String, String)], seeds: u64) -> Result<Sweep, String> {
        let mut sweep = Sweep::new(lesson, variants, overrides, seeds)?;
        match workers::SweepWorkers::start(&sweep) {
            Ok(w) => sweep.workers = Some(w),
            Err(e) => warn(&format!("seed sweep: {e}; the page runs the seeds itself")),
        }
        Ok(sweep)
    }

    /// One animation frame of a sweep under way: its workers' runs come in; without workers
    /// (or once one failed) it runs a frame's budget here. Returns true when a run ended.
    pub fn frame(&mut self) -> bool {
        let mut workers = self.workers.take();
        let mut ended = workers.as_mut().is_some_and(|w| w.poll(self));
        if self.is_done() {
            // Done: the workers stop (dropping them terminates them).
        } else if workers.as_ref().is_some_and(|w| w.ok()) {
            self.workers = workers;
        } else {
            if let Some(w) = &workers {
                warn(&format!("seed sweep: {}; the page runs the rest", w.error.as_deref().unwrap_or("?")));
            }
            ended |= self.advance(self.events);
        }
        ended
    }

    /// After a frame whose work took `work_ms`: the budget of a sweep under way follows it, so
    /// the page keeps its frame rate while it runs.
    pub fn tune(&mut self, work_ms: f64) {
        if !self.is_done() && work_ms.is_finite() && work_ms > 0.0 {
            self.events = crate::runs::scale_budget(self.events, work_ms, crate::runs::CATCH_UP_FRAME_MS);
        }
    }

    /// Variant `vi`'s name.
    pub fn variant_name(&self, vi: usize) -> &str {
        &self.variants[vi].0
    }

    /// The knobs the runs are made with (a worker makes the same config from them).
    pub fn overrides(&self) -> &[(String, String)] {
        &self.overrides
    }

    /// Takes up to `n` runs not started yet, all of one variant (a worker's batch).
    pub fn take_batch(&mut self, n: usize) -> Option<(usize, Vec<u64>)> {
        let &(vi, _) = self.todo.front()?;
        let mut seeds = Vec::new();
        while seeds.len() < n && self.todo.front().is_some_and(|&(v, _)| v == vi) {
            seeds.push(self.todo.pop_front().expect("checked").1);
        }
        Some((vi, seeds))
    }

    /// A batch that did not run (its worker failed) goes back to be run.
    pub fn put_back(&mut self, vi: usize, seeds: &[u64]) {
        for &seed in seeds.iter().rev() {
            self.todo.push_front((vi, seed));
        }
    }

    pub fn total(&self) -> u64 {
        self.seeds * self.variants.len() as u64
    }

    pub fn is_done(&self) -> bool {
        self.runs.len() as u64 == self.total()
    }

    pub fn variant_names(&self) -> Vec<String> {
        self.variants.iter().map(|(v, _)| v.clone()).collect()
    }

    /// Why these runs are not of what is on screen (`on_screen`: A's variant, and B's, with A's
    /// knob settings `overrides`), or None when they are: a variant on screen the sweep did not
    /// run, or other knob settings. A lesson step's sweep may run more variants than are shown.
    pub fn stale_for(&self, on_screen: &[String], overrides: &[(String, String)]) -> Option<String> {
        let missing: Vec<&str> = on_screen.iter().filter(|v| !self.variants.iter().any(|(s, _)| s == *v)).map(String::as_str).collect();
        if !missing.is_empty() {
            return Some(format!("the runs on screen are of {}, which this sweep did not run", missing.join(" and ")));
        }
        (self.overrides.as_slice() != overrides).then(|| "the knobs have changed since these seeds ran".to_string())
    }

    /// `variant`'s run of `seed`, if it has ended.
    pub fn run(&self, variant: &str, seed: u64) -> Option<&SeedRun> {
        self.runs.iter().find(|r| r.variant == variant && r.seed == seed)
    }

    pub fn lesson_id(&self) -> &str {
        &self.lesson.id
    }

    /// Runs at most `budget` events of the sweep. Returns true when a seed's run ended.
    pub fn advance(&mut self, budget: u64) -> bool {
        let mut left = budget;
        let mut ended = false;
        while left > 0 && !self.is_done() {
            let (vi, seed, mut sim) = match self.current.take() {
                Some(c) => c,
                None => {
                    let Some((vi, seed)) = self.todo.pop_front() else { break };
                    let mut sim = Sim::new(&self.variants[vi].1, seed);
                    sim.set_trace(false);
                    (vi, seed, sim)
                }
            };
            let end = SimTime::from_secs_f64(self.variants[vi].1.scenario.duration_s);
            let ran = sim.run_until_bounded(end, left);
            left = left.saturating_sub(ran.max(1));
            if sim.now() >= end || ran == 0 {
                let variant = self.variants[vi].0.clone();
                self.runs.push(SeedRun::of(&mut sim, &self.lesson.id, &variant, seed));
                ended = true;
            } else {
                self.current = Some((vi, seed, sim));
            }
        }
        ended
    }

    /// The figure a variant's runs are compared by: ("completion time", "s", values) when
    /// every run completed, else ("throughput", "MB/s", values); each value with its seed,
    /// sorted.
    pub fn figure(&self, variant: &str) -> (&'static str, &'static str, Vec<(f64, u64)>) {
        let runs: Vec<&SeedRun> = self.runs.iter().filter(|r| r.variant == variant).collect();
        let mut v: Vec<(f64, u64)>;
        let kind = if !runs.is_empty() && runs.iter().all(|r| r.completion_s.is_some()) {
            v = runs.iter().map(|r| (r.completion_s.unwrap_or(0.0), r.seed)).collect();
            ("completion time", "s")
        } else {
            v = runs.iter().map(|r| (r.throughput_mb_s, r.seed)).collect();
            ("the jobs' throughput over the run", "MB/s")
        };
        crate::sort::stable_by(&mut v, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        (kind.0, kind.1, v)
    }
}

/// One run's figure and its seed.
pub type SeedFigure = (f64, u64);

/// The best and worst of a figure's sorted (value, seed) runs (`Sweep::figure`): the fastest
/// and slowest completions, or the highest and lowest throughputs.
pub fn best_and_worst(unit: &str, vals: &[SeedFigure]) -> (Option<SeedFigure>, Option<SeedFigure>) {
    let (best, worst) = if unit == "MB/s" { (vals.last(), vals.first()) } else { (vals.first(), vals.last()) };
    (best.copied(), worst.copied())
}

/// Runs `seeds` of `lesson`'s `variant` with `overrides`, each the CLI's `run_one`: what a
/// sweep's worker does with a batch (`worker::sweep_seeds`).
pub fn run_seeds(lesson: &str, variant: &str, overrides: &[(String, String)], seeds: &[u64]) -> Result<Vec<SeedRun>, String> {
    let l = blksim::course::lessons::find(lesson).map_err(|e| e.to_string())?;
    let cfg = l.config(variant, overrides).map_err(|e| e.to_string())?;
    Ok(seeds
        .iter()
        .map(|&seed| {
            let mut sim = blksim::engine::run_one(&cfg, seed, None);
            SeedRun::of(&mut sim, lesson, variant, seed)
        })
        .collect())
}

/// The `q` quantile of sorted values (nearest rank), as `blksim sweep` reports them.
pub fn quantile(sorted: &[(f64, u64)], q: f64) -> Option<f64> {
    blksim::tools::stats::nearest_rank_index(sorted.len(), q).map(|i| sorted[i].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_says_when_it_is_not_of_the_runs_on_screen() {
        let l = blksim::course::lessons::find("mq-clone-stall").unwrap();
        let variants = ["regressed".to_string(), "fixed".to_string()];
        let s = Sweep::new(&l, &variants, &[], 2).unwrap();
        assert_eq!(s.stale_for(&variants[..1], &[]), None, "a step's sweep may run more than is on screen");
        assert_eq!(s.stale_for(&variants, &[]), None);
        let direct = s.stale_for(&["direct".to_string()], &[]).unwrap();
        assert!(direct.contains("of direct, which this sweep did not run"), "{direct}");
        let knobs = s.stale_for(&variants[..1], &[("host.nr_hw_queues".to_string(), "2".to_string())]).unwrap();
        assert!(knobs.contains("knobs have changed"), "{knobs}");
    }

    #[test]
    fn a_sweep_in_slices_gives_what_the_cli_gives_seed_by_seed() {
        let l = blksim::course::lessons::find("mq-clone-stall").unwrap();
        let mut s = Sweep::new(&l, &["regressed".to_string()], &[], 6).unwrap();
        let mut frames = 0;
        while !s.is_done() {
            s.advance(20_000);
            frames += 1;
            assert!(frames < 100_000);
        }
        let cfg = l.config("regressed", &[]).unwrap();
        for r in &s.runs {
            let mut sim = blksim::engine::run_one(&cfg, r.seed, None);
            let want = RunReport::from_sim(&mut sim, &l.id, "regressed");
            assert_eq!((r.completion_s, r.throughput_mb_s), (want.completion_s, want.throughput_mb_s), "seed {}", r.seed);
        }
        let (kind, unit, v) = s.figure("regressed");
        assert_eq!((kind, unit, v.len()), ("completion time", "s", 6));
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(Sweep::new(&l, &["regressed".to_string()], &[], 1001).is_err());
        // Batches are of one variant, in order; one given back runs again, first.
        let mut t = Sweep::new(&l, &["regressed".to_string(), "fixed".to_string()], &[], 3).unwrap();
        assert_eq!(t.take_batch(2), Some((0, vec![1, 2])));
        assert_eq!(t.take_batch(2), Some((0, vec![3])));
        t.put_back(0, &[3]);
        assert_eq!(t.take_batch(5), Some((0, vec![3])));
        assert_eq!(t.take_batch(5), Some((1, vec![1, 2, 3])));
        assert_eq!(t.take_batch(5), None);
        // A worker's batch gives the same runs.
        let batch = run_seeds("mq-clone-stall", "regressed", &[], &[2, 5]).unwrap();
        for b in &batch {
            assert!(s.runs.contains(b), "seed {}", b.seed);
        }
        assert_eq!(quantile(&[(1.0, 1), (2.0, 2), (3.0, 3), (4.0, 4)], 0.5), Some(2.0));
    }
}
