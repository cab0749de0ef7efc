//! What the page runs: run A, and in the A/B view run B, in lockstep (same seed, same speed,
//! same simulated time). B follows A's clock each frame.

use crate::driver::SimDriver;

pub struct Session {
    pub a: SimDriver,
    pub b: Option<SimDriver>,
    /// The device group expanded in the diagram (large arrays), if any.
    pub expanded: Option<usize>,
    /// Set when a new simulated second landed in either run (charts need redrawing).
    pub charts_dirty: bool,
}

impl Session {
    pub fn new(a: SimDriver) -> Session {
        Session { a, b: None, expanded: None, charts_dirty: true }
    }

    /// One animation frame. Returns true when the counters changed.
    pub fn frame(&mut self, dt_ms: f64, now_ms: f64) -> bool {
        let mut changed = self.a.frame(dt_ms, now_ms);
        if let Some(b) = &mut self.b {
            b.playing = self.a.playing;
            b.speed = self.a.speed;
            let before = b.sim.now();
            changed |= b.follow(self.a.sim.now(), now_ms);
            // B's own progress, for its "running at" line (it follows A, so normally A's speed).
            let dt_ms = dt_ms.clamp(0.0, 100.0);
            b.achieved_speed = if dt_ms > 0.0 { (b.sim.now() - before) as f64 / (dt_ms * 1e6) } else { 0.0 };
        }
        self.charts_dirty |= changed;
        changed
    }

    /// Opens the A/B view with `variant` as B (same lesson, overrides and seed as A).
    pub fn open_b(&mut self, variant: &str) -> Result<(), String> {
        let mut b = SimDriver::new(&self.a.lesson.id, Some(variant), self.a.overrides.clone(), self.a.seed)?;
        // B starts from A's time 0: restart A too, so both runs cover the same simulated time.
        let (va, seed) = (self.a.variant.clone(), self.a.seed);
        self.a.restart(&va, seed)?;
        b.speed = self.a.speed;
        b.playing = self.a.playing;
        self.b = Some(b);
        self.charts_dirty = true;
        Ok(())
    }

    pub fn close_b(&mut self) {
        self.b = None;
        self.charts_dirty = true;
    }

    /// Restarts both runs with a new seed (A/B keep one seed).
    pub fn reseed(&mut self, seed: u64) -> Result<(), String> {
        let va = self.a.variant.clone();
        self.a.restart(&va, seed)?;
        if let Some(b) = &mut self.b {
            let vb = b.variant.clone();
            b.restart(&vb, seed)?;
        }
        self.charts_dirty = true;
        Ok(())
    }

    /// Restarts both runs from time 0 (R).
    pub fn reset(&mut self) -> Result<(), String> {
        let seed = self.a.seed;
        self.reseed(seed)
    }
}
