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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub id: String,
    pub title: String,
    /// The one-line question the lesson answers.
    pub question: String,
    /// Which report in shared/seeds it retells.
    pub seed_report: String,
    /// True once its fidelity bands are met by the model and tested.
    pub calibrated: bool,
    pub scenario: Scenario,
    pub variants: Vec<Variant>,
}

const SOURCES: &[(&str, &str)] = &[
    ("anatomy-of-a-request", include_str!("../../../lessons/anatomy-of-a-request.json")),
    ("dm-sg-lists", include_str!("../../../lessons/dm-sg-lists.json")),
    ("raid5-chunk", include_str!("../../../lessons/raid5-chunk.json")),
    ("mq-clone-stall", include_str!("../../../lessons/mq-clone-stall.json")),
    ("nr-requests", include_str!("../../../lessons/nr-requests.json")),
    ("scsi-starved", include_str!("../../../lessons/scsi-starved.json")),
];

/// Every lesson, in teaching order. The files are part of the build, so a parse failure is a
/// build defect: `tests/it` parses them all.
pub fn all() -> Vec<Lesson> {
    SOURCES
        .iter()
        .map(|(id, src)| {
            let l: Lesson = serde_json::from_str(src).unwrap_or_else(|e| panic!("lessons/{id}.json: {e}"));
            assert_eq!(&l.id, id, "lessons/{id}.json has the wrong id");
            l
        })
        .collect()
}

pub fn ids() -> Vec<&'static str> {
    SOURCES.iter().map(|(id, _)| *id).collect()
}

pub fn find(id: &str) -> Result<Lesson, ScenarioError> {
    all().into_iter().find(|l| l.id == id).ok_or_else(|| {
        ScenarioError::new("lesson", format!("unknown lesson '{}'; expected one of {}", crate::scenario::clip(id), ids().join(", ")))
    })
}

impl Lesson {
    pub fn variant(&self, name: &str) -> Result<&Variant, ScenarioError> {
        self.variants.iter().find(|v| v.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.variants.iter().map(|v| v.name.as_str()).collect();
            ScenarioError::new(
                "variant",
                format!("unknown variant '{}' of {}; expected one of {}", crate::scenario::clip(name), self.id, names.join(", ")),
            )
        })
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
}
