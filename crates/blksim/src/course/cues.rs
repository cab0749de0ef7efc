//! The lessons' cues and predictions, measured: each step's `check` rows (what its "watch" line
//! claims about the run) and the prediction's (what its answer claims), run by the same
//! machinery as the fidelity scoreboard. `blksim fidelity --cues --json` writes them to
//! `lessons/cues.json`, which the page reads: the step panel shows a cue's figure beside it,
//! and the reveal shows what the model measured for the answer, beside the report's. A test
//! regenerates the file, and fails when a step's cue does not hold (a cue must agree with the
//! run on screen) or a prediction's row misses without saying why.

use crate::course::fidelity::{measure_row, RowResult, Runs};
use crate::course::lessons::{self, Lesson};
use serde::{Deserialize, Serialize};

/// One lesson's measured cues.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonCues {
    pub lesson: String,
    /// Per step, in order, its `check` rows.
    pub steps: Vec<Vec<RowResult>>,
    /// The prediction's `check` rows (empty without a prediction).
    pub predict: Vec<RowResult>,
}

impl LessonCues {
    /// The model shows the prediction's answer: every row of its check holds.
    pub fn answer_shown(&self) -> bool {
        self.predict.iter().all(|r| r.holds)
    }
}

/// Measures one lesson's cues (runs shared between rows, as the scoreboard shares them).
pub fn run_lesson(l: &Lesson) -> LessonCues {
    let mut runs = Runs::default();
    let steps = l.steps.iter().map(|st| st.check.iter().map(|r| measure_row(&mut runs, l, r)).collect()).collect();
    let predict = l.predict.iter().flat_map(|p| p.check.iter()).map(|r| measure_row(&mut runs, l, r)).collect();
    LessonCues { lesson: l.id.clone(), steps, predict }
}

/// Every lesson's cues, primers too, in teaching order.
pub fn run_all() -> Vec<LessonCues> {
    lessons::all().iter().map(run_lesson).collect()
}

/// As `lessons/cues.json` keeps them.
pub fn to_json(results: &[LessonCues]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({ "lessons": results })).expect("json") + "\n"
}

/// `lessons/cues.json` as last written (compacted), compiled in: read by `committed`, and by
/// the page with the browser's JSON parser into `CuesFile`.
pub const COMMITTED_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/cues.json"));

/// The form of `lessons/cues.json`.
#[derive(Deserialize)]
pub struct CuesFile {
    pub lessons: Vec<LessonCues>,
}

/// The cues as last written to `lessons/cues.json` (compiled in).
#[inline]
pub fn committed() -> Vec<LessonCues> {
    static PARSED: std::sync::OnceLock<Vec<LessonCues>> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            serde_json::from_str::<CuesFile>(COMMITTED_JSON).map(|f| f.lessons).unwrap_or_else(|e| panic!("lessons/cues.json: {e}"))
        })
        .clone()
}

/// A lesson's committed cues.
#[inline]
pub fn committed_for(id: &str) -> Option<LessonCues> {
    committed().into_iter().find(|c| c.lesson == id)
}

#[cfg(test)]
mod tests {
    use super::committed_for;

    /// The reveal says "Right" only where the model shows the answer: one missed row of the
    /// prediction's check withholds it, whatever the others measure.
    #[test]
    fn a_missed_prediction_row_withholds_the_answer() {
        let mut c = committed_for("scsi-starved").expect("scsi-starved has committed cues");
        assert!(c.predict.len() >= 2, "its prediction checks throughput and fairness");
        assert_eq!(c.answer_shown(), c.predict.iter().all(|r| r.holds));
        for r in &mut c.predict {
            r.holds = true;
        }
        assert!(c.answer_shown());
        c.predict[1].holds = false;
        assert!(!c.answer_shown(), "a missed fairness row withholds \"Right\"");
    }
}
