//! `fs/ioprio.c` and `include/linux/ioprio.h` (2.6.20 to 4.0): a task's I/O priority as
//! `ioprio_set` (ionice, fio's `prio`/`prioclass`) gives it, and the class and level cfq reads
//! from it when it makes the task's queue (`cfq_init_prio_data`).

use crate::scenario::jobs::PrioClass;

/// `IOPRIO_BE_NR`: levels 0 (highest) to 7 in the real-time and best-effort classes.
pub const IOPRIO_BE_NR: u8 = 8;

/// `IOPRIO_NORM`: the level of a task that set none (nice 0: `task_nice_ioprio` is
/// (0 + 20) / 5).
pub const IOPRIO_NORM: u8 = 4;

/// The class a queue is served in, after `cfq_init_prio_data` resolved `IOPRIO_CLASS_NONE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum IoClass {
    /// `IOPRIO_CLASS_RT`: served before every best-effort queue.
    Rt,
    /// `IOPRIO_CLASS_BE`.
    #[default]
    Be,
    /// `IOPRIO_CLASS_IDLE`: served only when no other queue has requests.
    Idle,
}

/// A task's I/O priority as cfq serves it: the class and the level within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct IoPrio {
    pub class: IoClass,
    pub level: u8,
}

impl Default for IoPrio {
    /// A task that never called `ioprio_set` (every kernel thread): best-effort at the level
    /// its nice value gives, 4 at nice 0.
    fn default() -> IoPrio {
        IoPrio { class: IoClass::Be, level: IOPRIO_NORM }
    }
}

impl IoPrio {
    /// Best-effort at `IOPRIO_NORM`, for a `const`.
    pub const NORM: IoPrio = IoPrio { class: IoClass::Be, level: IOPRIO_NORM };

    /// A job's priority as fio sets it and `cfq_init_prio_data` reads it. fio calls
    /// `ioprio_set` when `prio` or `prioclass` is given, and makes a missing class best-effort
    /// (`ioprio_value` in fio's os-linux.h); a job that sets neither is `IOPRIO_CLASS_NONE`,
    /// which cfq serves best-effort at the nice level, 4 at nice 0 (the job options' defaults
    /// give the same). The idle class has level 7; real time and best effort keep the level
    /// set (`ioprio_set` refuses one past 7, and the job options are bounded so).
    pub fn of_task(class: PrioClass, level: u32) -> IoPrio {
        let level = u8::try_from(level).unwrap_or(IOPRIO_BE_NR - 1).min(IOPRIO_BE_NR - 1);
        match class {
            PrioClass::None => IoPrio { class: IoClass::Be, level },
            PrioClass::Rt => IoPrio { class: IoClass::Rt, level },
            PrioClass::Be => IoPrio { class: IoClass::Be, level },
            PrioClass::Idle => IoPrio { class: IoClass::Idle, level: IOPRIO_BE_NR - 1 },
        }
    }

    /// `cfq_prio_to_slice`: a slice of `base` scaled by the level, `base / CFQ_SLICE_SCALE`
    /// (5) more for each level above 4 and less for each below (level 0 gets 1.8 × base,
    /// level 7 0.4 ×).
    pub fn slice(self, base_ns: u64) -> u64 {
        const CFQ_SLICE_SCALE: u64 = 5;
        let step = base_ns / CFQ_SLICE_SCALE;
        (base_ns + step * u64::from(IOPRIO_NORM)).saturating_sub(step * u64::from(self.level))
    }

    /// `cfq_prio_to_maxrq`: the requests an async queue may dispatch in one slice,
    /// `2 × (base + base × (7 − level))`.
    pub fn maxrq(self, base: u32) -> u32 {
        2 * (base + base * u32::from(IOPRIO_BE_NR - 1 - self.level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfq_scales_slices_and_request_budgets_by_level() {
        let be = |level| IoPrio { class: IoClass::Be, level };
        assert_eq!(be(4).slice(100_000_000), 100_000_000, "level 4 is the base slice");
        assert_eq!(be(0).slice(100_000_000), 180_000_000);
        assert_eq!(be(7).slice(100_000_000), 40_000_000);
        assert_eq!(be(4).maxrq(2), 16, "2 × (2 + 2 × 3) at level 4");
        assert_eq!(be(0).maxrq(2), 32);
    }

    #[test]
    fn a_job_without_a_class_is_best_effort_and_idle_is_level_7() {
        assert_eq!(IoPrio::of_task(PrioClass::None, 4), IoPrio::default());
        assert_eq!(IoPrio::of_task(PrioClass::None, 0), IoPrio { class: IoClass::Be, level: 0 }, "fio: prio alone is best effort");
        assert_eq!(IoPrio::of_task(PrioClass::Idle, 0), IoPrio { class: IoClass::Idle, level: 7 });
        assert_eq!(IoPrio::of_task(PrioClass::Rt, 2), IoPrio { class: IoClass::Rt, level: 2 });
        assert!(IoPrio::of_task(PrioClass::Rt, 7) < IoPrio::default(), "real time sorts first");
    }
}
