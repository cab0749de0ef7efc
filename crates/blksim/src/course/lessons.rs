//! Lesson presets, compiled in from `lessons/*.json` at the repository root. A lesson is a base
//! scenario plus named variants; a variant is a set of knob values, exactly what `--set` takes,
//! so the UI's toggle, `blksim compare` and a link all apply variants the same way.

use crate::scenario::{set_knob, Config, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    pub summary: String,
    /// Knob values, applied in key order.
    pub set: BTreeMap<String, String>,
}

/// A lesson step: what the presenter's PageDown sets up, and the text beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub title: String,
    /// Markdown.
    pub text: String,
    /// Speaker notes, shown in the notes window.
    #[serde(default)]
    pub notes: String,
    /// The variant run A uses in this step.
    pub variant: String,
    /// When set, the A/B view opens with this variant as B.
    #[serde(default)]
    pub ab: Option<String>,
    /// Simulated seconds per wall second.
    #[serde(default)]
    pub speed: Option<f64>,
    /// Where the step starts, in simulated seconds: a step that compares runs starts once they
    /// are past their warm-up (the page cache full, the caches in steady state).
    #[serde(default)]
    pub t: Option<f64>,
    /// The seed the step's runs use (a sweep's slowest run, opened at its stall); without it,
    /// the seed the reader had before any step chose one.
    #[serde(default)]
    pub seed: Option<u64>,
    /// What to look at, in one line: shown beside the diagram under the step's text.
    #[serde(default)]
    pub watch: String,
    /// The tables the step names (`STEP_TABLES`): presenter mode keeps them in view.
    #[serde(default)]
    pub tables: Vec<String>,
    /// Which of iostat's devices the step is about, when they are more than the table shows.
    #[serde(default)]
    pub iostat_rows: IostatRows,
    /// The `iostat -x` columns the step names (`IOSTAT_COLS`): presenter mode shows the device
    /// and these, in type a projector's back row can read.
    #[serde(default)]
    pub iostat_cols: Vec<String>,
    /// What the step's cue claims about the model's own numbers, measured like fidelity rows
    /// (`crate::course::cues`); a test fails when one does not hold, so a cue never contradicts the run.
    #[serde(default)]
    pub check: Vec<crate::course::fidelity::FidelityRow>,
}

/// Which iostat lines a step keeps when there are more devices than the table shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IostatRows {
    /// The busiest devices (by %util, then throughput): what `iostat -x` users scan for.
    #[default]
    Busiest,
    /// The busiest and the least served, with a line for those between: a step about how
    /// evenly the disks are served (a starved disk is at the bottom of the list).
    Spread,
}

/// `iostat -x`'s columns, as sysstat heads them (the page's table has them in this order).
pub const IOSTAT_COLS: [&str; 10] = ["rrqm/s", "wrqm/s", "r/s", "w/s", "rkB/s", "wkB/s", "avgrq-sz", "avgqu-sz", "await", "%util"];

/// The columns presenter mode shows when the stop names none: what a device is doing, in a
/// table that fits the numbers column at projector size.
pub const IOSTAT_COLS_PRESENTER: [&str; 6] = ["r/s", "w/s", "rkB/s", "wkB/s", "await", "%util"];

/// The tables a step may name: the counters column's, by their tools' names.
pub const STEP_TABLES: [&str; 5] = ["iostat -x", "vmstat", "top", "cpu", "numbers"];

/// A predict-then-reveal checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Predict {
    pub question: String,
    pub options: Vec<String>,
    /// Index into `options`.
    pub answer: usize,
    pub explanation: String,
    /// The answer's claim on the model's own numbers (measured like fidelity rows): the reveal
    /// shows each beside the report's, and marks an answer right only when the model shows it.
    #[serde(default)]
    pub check: Vec<crate::course::fidelity::FidelityRow>,
    /// The step (counted from 1, as the page numbers them) after which the prediction comes;
    /// 0 puts it before the first. It must come before the first step that shows its answer
    /// (`check` refuses a lesson whose prediction asks what the class has already seen).
    pub after_step: u32,
    /// The tables the question is about (`STEP_TABLES`), as a step names its own: presenter
    /// mode keeps them in view while the room answers and the comparison runs.
    #[serde(default)]
    pub tables: Vec<String>,
    /// The `iostat -x` columns the question is about, as a step names its own.
    #[serde(default)]
    pub iostat_cols: Vec<String>,
}

/// The prediction's name among the stops.
pub const PREDICT_TITLE: &str = "Predict, then reveal";

/// One place a lesson's walk (PageDown) stops at: a step, or the prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Index into `Lesson::steps`.
    Step(usize),
    Predict,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub id: String,
    /// Teaching order.
    pub order: u32,
    /// "primer" or "regression".
    pub kind: String,
    pub title: String,
    /// The one-line question the lesson answers.
    pub question: String,
    /// Which seed report it retells, by its number ("-" for primers and for a regression told
    /// from its public thread alone).
    pub seed_report: String,
    /// Every figure its report gives, with the band the model must land in and how to measure
    /// it (`crate::course::fidelity`). Whether the lesson reproduces its report is measured from these,
    /// never typed.
    #[serde(default)]
    pub fidelity: Vec<crate::course::fidelity::FidelityRow>,
    /// The knobs the lesson exposes first.
    pub knobs: Vec<String>,
    pub scenario: Scenario,
    pub variants: Vec<Variant>,
    #[serde(default)]
    pub predict: Option<Predict>,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// The run's first steady second (the page cache full, the caches warm): before it the
    /// page says "warming up", and the steps that compare runs start at or after it.
    #[serde(default)]
    pub warmup_s: Option<f64>,
}

/// The lessons, once read: from the JSON that build.rs compiles in (feature `lessons-json`: the
/// CLI, the tests, the benches), or as a program that takes the library without that feature
/// installs them (the app, which compiles them in its own binary form and so keeps no JSON
/// reader of the lesson types).
static LESSONS: std::sync::OnceLock<Vec<Lesson>> = std::sync::OnceLock::new();

/// Installs the lessons, in teaching order, as read by the program from its own compiled-in
/// form: each of its entry points calls this before anything reads a lesson. The first call
/// (or, with `lessons-json`, the first read) fixes them; a later call changes nothing.
pub fn install(lessons: Vec<Lesson>) {
    let _ = LESSONS.set(lessons);
}

/// Every lesson, in teaching order; an error when none are installed (a program without
/// `lessons-json` that reads a lesson before `install`). A lesson that does not parse, or whose
/// variants, steps, knobs or prediction do not check out, is a build defect: `tests/it` checks
/// them all.
#[inline]
pub fn loaded() -> Result<&'static [Lesson], ScenarioError> {
    #[cfg(feature = "lessons-json")]
    let lessons = Some(LESSONS.get_or_init(from_json));
    #[cfg(not(feature = "lessons-json"))]
    let lessons = LESSONS.get();
    lessons.map(Vec::as_slice).ok_or_else(|| {
        ScenarioError::new(
            "lessons",
            "the lessons are not loaded: the program reads a lesson before installing them (course::lessons::install)",
        )
    })
}

/// Every lesson, in teaching order (none when they are not loaded: `loaded` says why).
#[inline]
pub fn all() -> Vec<Lesson> {
    loaded().map(<[Lesson]>::to_vec).unwrap_or_default()
}

/// The lessons from the compiled-in JSON (see build.rs), read afresh.
#[cfg(feature = "lessons-json")]
#[inline]
pub fn from_json() -> Vec<Lesson> {
    const LESSONS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/lessons.json"));
    // Read straight from the text (not through `serde_json::Value`, whose own copy of every
    // lesson type's deserializer would be compiled in), and once more as values for which knobs
    // each front matter names.
    let fail = |e: serde_json::Error| -> ! { panic!("lessons/*.md front matter: {e}") };
    let mut lessons: Vec<Lesson> = serde_json::from_str(LESSONS_JSON).unwrap_or_else(|e| fail(e));
    let raw: Vec<serde_json::Value> = serde_json::from_str(LESSONS_JSON).unwrap_or_else(|e| fail(e));
    for (l, v) in lessons.iter_mut().zip(&raw) {
        // The knobs its front matter sets are its own: its `kernel` sets the rest.
        crate::scenario::era::mark_present(&mut l.scenario, &v["scenario"]);
    }
    lessons
}

/// Checks a lesson's internal references: variants' knobs, steps' variants, exposed knobs, the
/// prediction's answer.
pub fn check(l: &Lesson) -> Result<(), ScenarioError> {
    let cfgs = l.variants.iter().map(|v| l.config(&v.name, &[])).collect::<Result<Vec<_>, _>>()?;
    for (v, cfg) in l.variants.iter().zip(&cfgs) {
        // What a variant sets must act on something in it (a knob of a layer it lacks would
        // tell the reader a setting mattered that does nothing).
        let set: Vec<(String, String)> = v.set.iter().map(|(k, x)| (k.clone(), x.clone())).collect();
        crate::scenario::check_user_knobs(&[&cfg.scenario], &set)
            .map_err(|e| ScenarioError::new(format!("{}.variants.{}.{}", l.id, v.name, e.field), e.message))?;
    }
    for (i, st) in l.steps.iter().enumerate() {
        l.variant(&st.variant).map_err(|e| ScenarioError::new(format!("{}.steps[{i}].variant", l.id), e.message))?;
        if let Some(b) = &st.ab {
            l.variant(b).map_err(|e| ScenarioError::new(format!("{}.steps[{i}].ab", l.id), e.message))?;
        }
        if let Some(t) = st.t.filter(|t| !(t.is_finite() && *t > 0.0 && *t <= crate::course::link::T_MAX_S)) {
            return Err(ScenarioError::new(
                format!("{}.steps[{i}].t", l.id),
                format!("{t} is not a time from 0 to {} s", crate::course::link::T_MAX_S),
            ));
        }
        // The page stops a run at its duration: a step's time point past it would open at the
        // end, not where the text says.
        if let Some(t) = st.t {
            for name in std::iter::once(&st.variant).chain(st.ab.as_ref()) {
                let end_s = l.config(name, &[])?.scenario.duration_s;
                if t > end_s {
                    return Err(ScenarioError::new(
                        format!("{}.steps[{i}].t", l.id),
                        format!("{t} s is past the run's end: variant {name} runs {end_s} s (its duration)"),
                    ));
                }
            }
        }
        if let Some(bad) = st.tables.iter().find(|t| !STEP_TABLES.contains(&t.as_str())) {
            return Err(ScenarioError::new(format!("{}.steps[{i}].tables", l.id), format!("'{bad}' is not one of {STEP_TABLES:?}")));
        }
        check_iostat_cols(&st.iostat_cols, &st.tables, format!("{}.steps[{i}].iostat_cols", l.id))?;
        crate::course::fidelity::check_rows(l, &st.check, &format!("steps[{i}].check"))?;
        // A cue is of the run on screen: a step that opens a seed measures that seed.
        if let Some(j) = st.check.iter().position(|r| r.seeds.is_none() && r.seed.unwrap_or(1) != st.seed.unwrap_or(1)) {
            return Err(ScenarioError::new(
                format!("{}.steps[{i}].check[{j}].seed", l.id),
                format!("the step runs seed {}: its cue measures that seed (seed = {0}) or sweeps", st.seed.unwrap_or(1)),
            ));
        }
        // The first numbers a step shows are of the whole second before its t: that second
        // must be past the warm-up too, or the class first sees warm-up figures.
        if let (Some(w), Some(_)) = (l.warmup_s, &st.ab) {
            if st.t.is_none_or(|t| t < w + 1.0) {
                return Err(ScenarioError::new(
                    format!("{}.steps[{i}].t", l.id),
                    format!("a step that compares runs starts a second past the warm-up, so its first numbers are steady: t ≥ {}", w + 1.0),
                ));
            }
        }
    }
    // The knobs a lesson puts forward exist and act on something in one of its variants.
    let scenarios: Vec<&Scenario> = cfgs.iter().map(|c| &c.scenario).collect();
    for k in &l.knobs {
        let spec =
            crate::scenario::knob_spec(k).ok_or_else(|| ScenarioError::new(format!("{}.knobs", l.id), format!("unknown knob '{k}'")))?;
        let value = crate::scenario::get_knob(scenarios[0], spec.key).unwrap_or_default();
        crate::scenario::check_user_knobs(&scenarios, &[(k.clone(), value)])
            .map_err(|e| ScenarioError::new(format!("{}.knobs", l.id), e.to_string()))?;
    }
    crate::course::fidelity::check(l)?;
    if let Some(p) = &l.predict {
        if p.answer >= p.options.len() {
            return Err(ScenarioError::new(format!("{}.predict.answer", l.id), "not an index into options"));
        }
        crate::course::fidelity::check_rows(l, &p.check, "predict.check")?;
        if let Some(bad) = p.tables.iter().find(|t| !STEP_TABLES.contains(&t.as_str())) {
            return Err(ScenarioError::new(format!("{}.predict.tables", l.id), format!("'{bad}' is not one of {STEP_TABLES:?}")));
        }
        check_iostat_cols(&p.iostat_cols, &p.tables, format!("{}.predict.iostat_cols", l.id))?;
        check_predict_place(l, p)?;
    }
    Ok(())
}

/// A stop's iostat columns are iostat's, and only where the stop shows iostat -x.
fn check_iostat_cols(cols: &[String], tables: &[String], field: String) -> Result<(), ScenarioError> {
    if let Some(bad) = cols.iter().find(|c| !IOSTAT_COLS.contains(&c.as_str())) {
        return Err(ScenarioError::new(field, format!("'{bad}' is not one of {IOSTAT_COLS:?}")));
    }
    if !cols.is_empty() && !tables.iter().any(|t| t == "iostat -x") {
        return Err(ScenarioError::new(field, "names iostat columns, but tables has no \"iostat -x\""));
    }
    Ok(())
}

/// A prediction comes before the first step that shows its answer: the first step after which
/// the class has seen every variant the answer's rows measure (as a step's run or its B). A
/// prediction placed after it would ask what the room has just watched.
fn check_predict_place(l: &Lesson, p: &Predict) -> Result<(), ScenarioError> {
    let field = format!("{}.predict.after_step", l.id);
    if p.after_step as usize > l.steps.len() {
        return Err(ScenarioError::new(field, format!("{} is past the last step; expected 0 to {}", p.after_step, l.steps.len())));
    }
    let asked: std::collections::BTreeSet<&str> =
        p.check.iter().flat_map(|r| std::iter::once(r.variant.as_str()).chain(r.over.as_deref())).collect();
    let mut seen = std::collections::BTreeSet::new();
    for (i, st) in l.steps.iter().enumerate() {
        seen.insert(st.variant.as_str());
        seen.extend(st.ab.as_deref());
        if asked.len() > 1 && asked.is_subset(&seen) {
            if p.after_step as usize > i {
                return Err(ScenarioError::new(
                    field,
                    format!(
                        "the prediction comes after step {} ('{}'), which already shows its answer (it runs {}); expected at most {i}",
                        i + 1,
                        st.title,
                        asked.iter().copied().collect::<Vec<_>>().join(" and ")
                    ),
                ));
            }
            break;
        }
    }
    Ok(())
}

/// Every lesson's id, in teaching order (none when they are not loaded).
#[inline]
pub fn ids() -> Vec<String> {
    loaded().unwrap_or_default().iter().map(|l| l.id.clone()).collect()
}

/// The sandbox: the default scenario with no variants but one, "custom", to which the user's
/// knobs (or a fio job file) apply. Not a lesson, so `all()` does not list it. Its CPUs run
/// CFS with its load balancer (`cpu.scheduler = fair`, `cpu.load_balance = 2.6.32`), as a
/// user of any kernel since 2.6.23 expects, and place a woken thread by the kernel's idle test
/// (`cpu.wake_idle = idle_cpu`); the lessons keep their era's scheduler.
pub const SANDBOX: &str = "sandbox";

pub fn sandbox() -> Lesson {
    Lesson {
        id: SANDBOX.into(),
        order: 0,
        kind: "sandbox".into(),
        title: "Sandbox: any stack the model can build".into(),
        question: "Build a stack from the knobs, or paste a fio job file.".into(),
        seed_report: "-".into(),
        fidelity: Vec::new(),
        knobs: Vec::new(),
        scenario: sandbox_scenario(),
        variants: vec![Variant { name: "custom".into(), summary: "the default scenario plus your knobs".into(), set: BTreeMap::new() }],
        predict: None,
        steps: Vec::new(),
        warmup_s: None,
    }
}

/// The default scenario with CFS, its load balancer and the kernel's idle test for wakeups.
fn sandbox_scenario() -> Scenario {
    let mut s = Scenario::default();
    s.cpu.scheduler = crate::scenario::CpuScheduler::Fair;
    s.cpu.load_balance = crate::scenario::LoadBalance::V2_6_32;
    s.cpu.wake_idle = crate::scenario::WakeIdle::IdleCpu;
    s
}

#[inline]
pub fn find(id: &str) -> Result<Lesson, ScenarioError> {
    if id == SANDBOX {
        return Ok(sandbox());
    }
    let all = loaded()?;
    all.iter().find(|l| l.id == id).cloned().ok_or_else(|| {
        let ids: Vec<&str> = all.iter().map(|l| l.id.as_str()).collect();
        ScenarioError::new("lesson", format!("unknown lesson '{}'; expected one of {}", crate::scenario::clip(id), ids.join(", ")))
    })
}

impl Variant {
    /// The name as a list shows it: quoted when it has a space or a comma, as `--variant` must
    /// be given it (`blksim lessons`, and the errors that list a lesson's variants).
    pub fn quoted_name(&self) -> String {
        if self.name.contains([' ', ',']) {
            format!("\"{}\"", self.name)
        } else {
            self.name.clone()
        }
    }
}

impl Lesson {
    pub fn variant(&self, name: &str) -> Result<&Variant, ScenarioError> {
        self.variants.iter().find(|v| v.name == name).ok_or_else(|| {
            let names: Vec<String> = self.variants.iter().map(Variant::quoted_name).collect();
            ScenarioError::new(
                "variant",
                format!("unknown variant '{}' of {}; expected one of {}", crate::scenario::clip(name), self.id, names.join(", ")),
            )
        })
    }

    /// How many places PageDown walks: the steps, and the prediction among them.
    pub fn stops(&self) -> usize {
        self.steps.len() + usize::from(self.predict.is_some())
    }

    /// Where the prediction stands among the stops (from 0), if the lesson has one.
    pub fn predict_stop(&self) -> Option<usize> {
        self.predict.as_ref().map(|p| (p.after_step as usize).min(self.steps.len()))
    }

    /// What stop `i` (from 0) shows; None past the last.
    pub fn stop(&self, i: usize) -> Option<Stop> {
        match self.predict_stop() {
            Some(p) if i == p => Some(Stop::Predict),
            Some(p) if i > p => (i - 1 < self.steps.len()).then_some(Stop::Step(i - 1)),
            _ => (i < self.steps.len()).then_some(Stop::Step(i)),
        }
    }

    /// What stop `i` is called in the step bar's neighbours, the steps list and the notes:
    /// its step's title, or `PREDICT_TITLE`.
    pub fn stop_title(&self, i: usize) -> Option<&str> {
        match self.stop(i)? {
            Stop::Step(k) => Some(&self.steps[k].title),
            Stop::Predict => Some(PREDICT_TITLE),
        }
    }

    /// The stop that shows step `k` (from 0).
    pub fn stop_of_step(&self, k: usize) -> usize {
        k + usize::from(self.predict_stop().is_some_and(|p| p <= k))
    }

    pub fn first_variant(&self) -> &Variant {
        &self.variants[0]
    }

    /// The lesson's scenario with `variant` applied, then the user's overrides, validated.
    pub fn config(&self, variant: &str, overrides: &[(String, String)]) -> Result<Config, ScenarioError> {
        let mut s = self.scenario.clone();
        for (k, v) in &self.variant(variant)?.set {
            set_knob(&mut s, k, v)?;
        }
        for (k, v) in overrides {
            set_knob(&mut s, k, v)?;
        }
        s.validate()
    }

    /// The user's overrides split into those that act on something in `variants` (in at
    /// least one of them) and those that act on nothing in any (`knob_applies`: `md.chunk_kb`
    /// with no md device), each of the latter with why. Overrides that do not validate are an
    /// error, as in `config`.
    #[allow(clippy::type_complexity)]
    pub fn split_acting(
        &self,
        variants: &[&str],
        overrides: &[(String, String)],
    ) -> Result<(Vec<(String, String)>, Vec<ScenarioError>), ScenarioError> {
        let cfgs = variants.iter().map(|v| self.config(v, overrides)).collect::<Result<Vec<_>, _>>()?;
        let mut acting = Vec::new();
        let mut idle = Vec::new();
        let scenarios: Vec<&Scenario> = cfgs.iter().map(|c| &c.scenario).collect();
        for (k, v) in overrides {
            match crate::scenario::check_user_knobs(&scenarios, &[(k.clone(), v.clone())]) {
                Ok(()) => acting.push((k.clone(), v.clone())),
                Err(e) => idle.push(ScenarioError::new(format!("{k}={}", crate::scenario::clip(v)), e.message)),
            }
        }
        Ok((acting, idle))
    }
}
