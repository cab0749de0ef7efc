//! Shareable links: the URL fragment the web app accepts, versioned (`v=1`) and readable:
//! `#/lesson/dm-sg-lists?v=1&variant=workaround&dm.max_sectors_kb=96&seed=9&t=2.5`.
//!
//! This is a transfer format, not an internal struct: it only grows, and an old version is
//! reported, never misread.

use crate::course::lessons;
use crate::scenario::{clip, knob_spec};
use std::fmt;

pub const LINK_VERSION: u32 = 1;
/// What a knob of run B alone starts with in a link: `b.queue.scheduler=cfq`.
pub const B_PREFIX: &str = "b.";
/// Room for a job file of a dozen sections as knobs (`job.NAME.rw=…`, a dozen knobs a job).
pub const FRAGMENT_LEN_MAX: usize = 8192;
pub const OVERRIDES_MAX: usize = 160;
/// The simulated time a link may ask to run to before showing the page: as long as a run may
/// be (`duration`), so that a link copied at any point of a run opens. The page replays it a
/// frame's worth of events at a time, with its progress shown.
pub const T_MAX_S: f64 = crate::scenario::limits::DURATION_S_MAX;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkState {
    pub lesson: String,
    pub variant: Option<String>,
    /// The A/B view's second variant (B), if the link opens it. It may be A's own variant when
    /// B has knobs of its own (`b_overrides`), or in the sandbox, which has one variant.
    pub b: Option<String>,
    /// Knob overrides in the order given.
    pub overrides: Vec<(String, String)>,
    /// Run B's own knobs (`b.<knob>=…`): where B differs from A. B runs with A's overrides and
    /// these over them (`b_knobs`).
    pub b_overrides: Vec<(String, String)>,
    pub seed: u64,
    /// Simulated seconds to run to.
    pub t: Option<f64>,
    /// Simulated seconds per wall second.
    pub speed: Option<f64>,
    /// The lesson step the page shows (1-based; one past the last step is the prediction).
    pub step: Option<u32>,
    /// Presenter mode, and Large type: how an instructor showed it.
    pub presenter: Option<bool>,
    pub large: Option<bool>,
}

impl Default for LinkState {
    fn default() -> Self {
        LinkState {
            lesson: String::new(),
            variant: None,
            b: None,
            overrides: Vec::new(),
            b_overrides: Vec::new(),
            seed: 1,
            t: None,
            speed: None,
            step: None,
            presenter: None,
            large: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError {
    /// The part of the link that is wrong (`seed`, `queue.depth`, `lesson`, `fragment`).
    pub field: String,
    pub message: String,
    /// All the error says is that the link had no `v` and was read as this build's: nothing
    /// of the run it names was dropped (the page says so plainly, not as a fault).
    pub version_missing_only: bool,
    /// Each wrong part on its own (`field: message`), when the link had several: the page lists
    /// them one per line; `message` joins them for one line of text.
    pub parts: Vec<String>,
}

impl LinkError {
    /// The wrong parts one by one (one, if the error names a single part).
    pub fn parts(&self) -> Vec<String> {
        if self.parts.is_empty() {
            vec![self.to_string()]
        } else {
            self.parts.clone()
        }
    }
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn err(field: &str, message: impl Into<String>) -> LinkError {
    LinkError { field: field.to_string(), message: message.into(), version_missing_only: false, parts: Vec::new() }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn pct_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Strict percent-decoding: a malformed escape or invalid UTF-8 is an error.
pub fn pct_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

impl LinkState {
    /// The fragment, starting with `#`.
    pub fn encode(&self) -> String {
        let mut s = if self.lesson == crate::course::lessons::SANDBOX {
            format!("#/sandbox?v={LINK_VERSION}")
        } else {
            format!("#/lesson/{}?v={LINK_VERSION}", pct_encode(&self.lesson))
        };
        if let Some(v) = &self.variant {
            s.push_str(&format!("&variant={}", pct_encode(v)));
        }
        if let Some(b) = &self.b {
            s.push_str(&format!("&b={}", pct_encode(b)));
        }
        for (k, v) in &self.overrides {
            s.push_str(&format!("&{}={}", pct_encode(k), pct_encode(v)));
        }
        for (k, v) in &self.b_overrides {
            s.push_str(&format!("&{B_PREFIX}{}={}", pct_encode(k), pct_encode(v)));
        }
        s.push_str(&format!("&seed={}", self.seed));
        if let Some(t) = self.t {
            s.push_str(&format!("&t={t}"));
        }
        if let Some(sp) = self.speed {
            s.push_str(&format!("&speed={sp}"));
        }
        if let Some(n) = self.step {
            s.push_str(&format!("&step={n}"));
        }
        for (k, v) in [("presenter", self.presenter), ("large", self.large)] {
            if let Some(on) = v {
                s.push_str(&format!("&{k}={}", u8::from(on)));
            }
        }
        s
    }

    /// Parses a fragment (with or without the leading `#`). Checks the lesson, the variant and
    /// every knob against the lesson's scenario, so an accepted link always runs.
    #[inline]
    pub fn decode(fragment: &str) -> Result<LinkState, LinkError> {
        match Self::decode_lenient(fragment)? {
            (st, None) => Ok(st),
            (_, Some(e)) => Err(e),
        }
    }

    /// As `decode`, but a link whose parts are wrong one by one (a bad knob value, a `t` out of
    /// range, an unknown variant) keeps its good parts: the state without the bad ones, and
    /// the one error that names them all (a link without `v` is read as this build's, and
    /// that is named too). A link that is not a link of this build (another `v`, an unknown
    /// lesson, too long), or whose good parts do not go together where the check names none
    /// of its settings, is an error.
    #[inline]
    pub fn decode_lenient(fragment: &str) -> Result<(LinkState, Option<LinkError>), LinkError> {
        if fragment.len() > FRAGMENT_LEN_MAX {
            return Err(err("fragment", format!("{} characters; at most {FRAGMENT_LEN_MAX} are allowed", fragment.len())));
        }
        let f = fragment.strip_prefix('#').unwrap_or(fragment);
        let (path, query) = f.split_once('?').unwrap_or((f, ""));
        let id = if path == "/sandbox" {
            crate::course::lessons::SANDBOX.to_string()
        } else {
            let id = path.strip_prefix("/lesson/").ok_or_else(|| {
                err("fragment", format!("'{}' is not a lesson link; expected #/lesson/<id>?v=1&… or #/sandbox?v=1&…", clip(path)))
            })?;
            pct_decode(id).ok_or_else(|| err("lesson", "bad percent-encoding"))?
        };
        let lesson = lessons::find(&id).map_err(|e| err("lesson", e.message))?;
        let mut st = LinkState { lesson: lesson.id.clone(), ..Default::default() };
        let mut version = None;
        let pairs: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        if pairs.len() > OVERRIDES_MAX + 10 {
            return Err(err("fragment", format!("{} parameters; at most {} are allowed", pairs.len(), OVERRIDES_MAX + 10)));
        }
        // Every wrong part is named, in one message, so that a hand-edited link is fixed in one go.
        let mut errors: Vec<LinkError> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for pair in pairs {
            if let Err(e) = Self::take_pair(pair, &lesson, &mut st, &mut version, &mut seen) {
                errors.push(e);
            }
        }
        let joined = |mut errors: Vec<LinkError>| {
            let parts = if errors.len() > 1 { errors.iter().map(|e| e.to_string()).collect() } else { Vec::new() };
            let mut first = errors.remove(0);
            for e in errors {
                first.message.push_str(&format!("; {e}"));
            }
            LinkError { parts, ..first }
        };
        match version {
            Some(LINK_VERSION) => {}
            Some(other) => errors.push(err("v", format!("link version {other} is not supported; this build reads version {LINK_VERSION}"))),
            None => {}
        }
        if errors.iter().any(|e| e.field == "v" || e.field == "fragment") {
            return Err(joined(errors));
        }
        // A link written by hand without its version (`#/lesson/raid5-chunk?variant=fixed`) is
        // read as this build's, and says so: only a link that names another version is refused.
        if version.is_none() {
            errors.insert(0, err("v", format!("missing; read as v={LINK_VERSION}")));
        }
        let variant = st.variant.clone().unwrap_or_else(|| lesson.first_variant().name.clone());
        // Settings that do not go together with the run (2 dm paths on a stack without dm): the
        // one the check names is dropped and named, and the rest is tried again, so one such
        // setting does not cost the link its t, seed and other settings. Only when the check
        // names no setting of the link is the link refused.
        while let Err(e) = lesson.config(&variant, &st.overrides) {
            let before = st.overrides.len();
            st.overrides.retain(|(k, _)| *k != e.field);
            // Named once, if dropping it did not help (the lesson's own setting fails too).
            let fault = err(&e.field, e.message);
            if !errors.contains(&fault) {
                errors.push(fault);
            }
            if st.overrides.len() == before {
                return Err(joined(errors));
            }
        }
        Self::check_b(&lesson, &variant, &mut st, &mut errors);
        let version_missing_only = version.is_none() && errors.len() == 1;
        Ok((st, (!errors.is_empty()).then(|| LinkError { version_missing_only, ..joined(errors) })))
    }

    /// Run B: knobs of its own open it as A's variant unless it names another; a B that
    /// compares a run with its own copy, or whose knobs do not go with its variant, is dropped
    /// (the link opens A alone) and named, as is every knob of B then.
    fn check_b(lesson: &lessons::Lesson, variant: &str, st: &mut LinkState, errors: &mut Vec<LinkError>) {
        if st.b.is_none() && !st.b_overrides.is_empty() {
            st.b = Some(variant.to_string());
        }
        let Some(b) = st.b.clone() else { return };
        let others: Vec<&str> = lesson.variants.iter().map(|x| x.name.as_str()).filter(|x| *x != variant).collect();
        if b == variant && st.b_overrides.is_empty() && !others.is_empty() {
            errors.push(err(
                "b",
                format!("'{}' is run A's variant too (A/B compares two variants); expected another: {}", clip(&b), others.join(", ")),
            ));
        } else if let Err(e) = lesson.config(&b, &st.b_knobs()) {
            // B runs with A's knobs and its own: if they do not go with B's variant, the link
            // opens A alone and names why.
            errors.push(err("b", format!("variant '{}' does not take these knobs: {e}", clip(&b))));
        } else {
            return;
        }
        st.b = None;
        st.b_overrides.clear();
    }

    /// The knobs run B runs with: A's, and B's own over them.
    pub fn b_knobs(&self) -> Vec<(String, String)> {
        merge_knobs(&self.overrides, &self.b_overrides)
    }

    /// One `key=value` of a link, into `st`.
    fn take_pair(
        pair: &str,
        lesson: &lessons::Lesson,
        st: &mut LinkState,
        version: &mut Option<u32>,
        seen: &mut Vec<String>,
    ) -> Result<(), LinkError> {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = pct_decode(k).ok_or_else(|| err("fragment", format!("bad percent-encoding in '{}'", clip(pair))))?;
        // The key as the messages name it: clipped, and an empty one shown as ''.
        let name = if k.trim().is_empty() { format!("'{}'", clip(&k)) } else { clip(&k) };
        let v = pct_decode(v).ok_or_else(|| err(&name, format!("bad percent-encoding in '{}'", clip(pair))))?;
        // A key given twice is ambiguous (which one did the sender mean?): refuse it.
        if seen.contains(&k) {
            return Err(err(&name, "given twice; a link takes each parameter and knob once"));
        }
        seen.push(k.clone());
        match k.as_str() {
            "v" => {
                *version =
                    Some(v.parse::<u32>().map_err(|_| err("v", format!("'{}' is not a version; expected {LINK_VERSION}", clip(&v))))?)
            }
            "variant" => {
                lesson.variant(&v).map_err(|e| err("variant", e.message))?;
                st.variant = Some(v);
            }
            "b" => st.b = Some(Self::take_b(lesson, v)?),
            "seed" => {
                st.seed = v.parse().map_err(|_| {
                    err("seed", format!("'{}' is not allowed; expected a whole number from 0 to {}", clip(&v), u64::MAX))
                })?
            }
            "t" => st.t = Some(parse_secs(&v, "t", T_MAX_S)?),
            "speed" => {
                st.speed = Some(crate::float_parse::parse_f64(&v).filter(|x| x.is_finite() && *x > 0.0 && *x <= 1.0).ok_or_else(|| {
                    err(
                        "speed",
                        format!(
                            "'{}' is not allowed; expected simulated seconds per second, greater than 0 and at most 1 (the speed slider's 50 ms/s is 0.05)",
                            clip(&v)
                        ),
                    )
                })?)
            }
            "step" => st.step = Some(Self::take_step(lesson, &v)?),
            "presenter" | "large" => {
                let on = match v.as_str() {
                    "1" => true,
                    "0" => false,
                    _ => return Err(err(&k, format!("'{}' is not allowed; expected 1 or 0", clip(&v)))),
                };
                if k == "presenter" {
                    st.presenter = Some(on);
                } else {
                    st.large = Some(on);
                }
            }
            key => Self::take_knob(lesson, st, key, &name, &v)?,
        }
        Ok(())
    }

    /// `b`: run B's variant (whether it is A's too is checked once the whole link is read).
    fn take_b(lesson: &lessons::Lesson, v: String) -> Result<String, LinkError> {
        lesson.variant(&v).map_err(|e| err("b", e.message))?;
        Ok(v)
    }

    /// `step`: one of the stops PageDown walks.
    fn take_step(lesson: &lessons::Lesson, v: &str) -> Result<u32, LinkError> {
        // The steps, and the prediction among them.
        let last = lesson.stops() as u32;
        v.parse::<u32>().ok().filter(|n| (1..=last).contains(n)).ok_or_else(|| {
            err(
                "step",
                if last == 0 {
                    format!("'{}' is not allowed; this lesson has no steps", clip(v))
                } else {
                    format!("'{}' is not allowed; expected a step from 1 to {last}", clip(v))
                },
            )
        })
    }

    /// A knob's key and value, into the link's overrides (B's, with `b.` before the key).
    fn take_knob(lesson: &lessons::Lesson, st: &mut LinkState, key: &str, name: &str, v: &str) -> Result<(), LinkError> {
        let (for_b, key) = match key.strip_prefix(B_PREFIX) {
            Some(k) => (true, k),
            None => (false, key),
        };
        if knob_spec(key).is_none() {
            return Err(err(
                name,
                format!("not a link parameter or a knob{}; a link takes v, variant, b, seed, t, speed, step, presenter, large and knob keys such as queue.depth, or b.queue.depth for run B alone (the sandbox's Knobs tab and `blksim knobs` list them all)", crate::scenario::did_you_mean(key)),
            ));
        }
        if st.overrides.len() + st.b_overrides.len() == OVERRIDES_MAX {
            return Err(err("fragment", format!("more than {OVERRIDES_MAX} knob overrides")));
        }
        // The value alone, here, so that every bad one is named; how the knobs go
        // together is checked once they are all read.
        crate::scenario::set_knob(&mut lesson.scenario.clone(), key, v).map_err(|e| err(&e.field, e.message))?;
        // As the knob read it (`%20512` is 512): the state, and a link made from it, say
        // the value once.
        let knobs = if for_b { &mut st.b_overrides } else { &mut st.overrides };
        knobs.push((key.to_string(), v.trim().to_string()));
        Ok(())
    }
}

/// `base` with `over`'s settings over it: each knob once, `over`'s value winning, in `base`'s
/// order then `over`'s new keys.
pub fn merge_knobs(base: &[(String, String)], over: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        base.iter().map(|(k, v)| (k.clone(), over.iter().find(|(o, _)| o == k).map_or_else(|| v.clone(), |(_, w)| w.clone()))).collect();
    out.extend(over.iter().filter(|(k, _)| !base.iter().any(|(b, _)| b == k)).cloned());
    out
}

/// A time point: from 0 (the start, paused there as any link with `t` opens) to `max`.
fn parse_secs(v: &str, field: &str, max: f64) -> Result<f64, LinkError> {
    match crate::float_parse::parse_f64(v) {
        Some(x) if x.is_finite() && (0.0..=max).contains(&x) => Ok(x),
        _ => Err(err(field, format!("'{}' is not allowed; expected seconds from 0 to {max}", clip(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_keeps_the_step_presenter_mode_and_large_type() {
        let f = "#/lesson/scsi-starved?v=1&variant=before&b=regressed&seed=1&t=6&step=2&presenter=1&large=0";
        let st = LinkState::decode(f).expect("a link with view parameters");
        assert_eq!((st.step, st.presenter, st.large), (Some(2), Some(true), Some(false)));
        assert_eq!(st.encode(), f);
        // scsi-starved has three steps and a prediction: step 4 is the prediction, 5 is not.
        assert_eq!(LinkState::decode("#/lesson/scsi-starved?v=1&step=4").map(|s| s.step), Ok(Some(4)));
        for (bad, field, says) in [
            ("#/lesson/scsi-starved?v=1&step=5", "step", "from 1 to 4"),
            ("#/lesson/scsi-starved?v=1&step=0", "step", "from 1 to 4"),
            ("#/lesson/scsi-starved?v=1&presenter=yes", "presenter", "1 or 0"),
            ("#/sandbox?v=1&step=1", "step", "no steps"),
        ] {
            let e = LinkState::decode(bad).expect_err(bad);
            assert_eq!(e.field, field, "{bad}");
            assert!(e.message.contains(says), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn a_setting_that_does_not_go_with_the_run_is_dropped_and_the_rest_kept() {
        // 2 dm paths on scsi-starved's direct stack: dm.paths goes, t and queue.depth stay.
        let (st, e) = LinkState::decode_lenient("#/lesson/scsi-starved?v=1&dm.paths=2&t=2&queue.depth=8").unwrap();
        let e = e.expect("the dropped setting is named");
        assert_eq!(e.field, "dm.paths", "{e}");
        assert!(e.message.contains("need stack=dm"), "{e}");
        assert_eq!((st.t, st.overrides.clone()), (Some(2.0), vec![("queue.depth".to_string(), "8".to_string())]));
        // With other faults, each is its own part.
        let (st, e) = LinkState::decode_lenient("#/lesson/scsi-starved?v=1&variant=nope&dm.paths=2&seed=7").unwrap();
        let parts = e.expect("faults").parts();
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(parts[0].starts_with("variant: ") && parts[1].starts_with("dm.paths: "), "{parts:?}");
        assert_eq!(st.seed, 7);
    }

    #[test]
    fn a_kernel_or_fio_name_for_a_knob_is_pointed_to_blkvizs() {
        for (typed, meant) in [
            ("nr_requests", "queue.nr_requests"),
            ("queue_depth", "queue.depth"),
            ("raid.chunk", "md.chunk_kb"),
            ("iodepth", "workload.iodepth"),
        ] {
            let e = LinkState::decode(&format!("#/lesson/scsi-starved?v=1&{typed}=64")).unwrap_err();
            assert!(e.message.contains(&format!("(did you mean {meant}?)")), "{typed}: {e}");
        }
        // Nothing near: no guess.
        let e = LinkState::decode("#/lesson/scsi-starved?v=1&colour=red").unwrap_err();
        assert!(!e.message.contains("did you mean"), "{e}");
        assert_eq!(crate::scenario::did_you_mean("max_sectors_kb"), " (did you mean dm.max_sectors_kb or disk.max_sectors_kb?)");
    }

    #[test]
    fn a_link_round_trips() {
        let st = LinkState {
            lesson: "dm-sg-lists".into(),
            variant: Some("workaround".into()),
            b: Some("regressed".into()),
            overrides: vec![("dm.max_sectors_kb".into(), "96".into())],
            b_overrides: vec![("dm.max_sectors_kb".into(), "128".into())],
            seed: 9,
            t: Some(2.5),
            speed: None,
            step: None,
            presenter: None,
            large: None,
        };
        let f = st.encode();
        assert_eq!(f, "#/lesson/dm-sg-lists?v=1&variant=workaround&b=regressed&dm.max_sectors_kb=96&b.dm.max_sectors_kb=128&seed=9&t=2.5");
        assert_eq!(LinkState::decode(&f), Ok(st));
    }

    #[test]
    fn run_b_takes_knobs_of_its_own() {
        // The sandbox (one variant): B with its own elevator is A's variant with it.
        let st = LinkState::decode("#/sandbox?v=1&disks=2&b.queue.scheduler=cfq&seed=3").unwrap();
        assert_eq!(st.b.as_deref(), Some("custom"));
        assert_eq!(st.b_knobs(), vec![("disks".to_string(), "2".to_string()), ("queue.scheduler".to_string(), "cfq".to_string())]);
        assert_eq!(LinkState::decode(&st.encode()), Ok(st.clone()));
        // B's value wins over A's for the same knob, in A's order.
        let st = LinkState::decode("#/sandbox?v=1&queue.depth=4&disks=2&b.queue.depth=31").unwrap();
        assert_eq!(st.b_knobs()[0], ("queue.depth".to_string(), "31".to_string()));
        // A copy of A in the sandbox opens (its knobs are changed next); in a lesson it compares
        // nothing and is refused, unless B has knobs of its own.
        assert_eq!(LinkState::decode("#/sandbox?v=1&b=custom").unwrap().b.as_deref(), Some("custom"));
        assert_eq!(LinkState::decode("#/lesson/scsi-starved?v=1&variant=regressed&b=regressed").unwrap_err().field, "b");
        let st = LinkState::decode("#/lesson/scsi-starved?v=1&variant=regressed&b=regressed&b.queue.nr_requests=512").unwrap();
        assert_eq!(st.b.as_deref(), Some("regressed"));
        // A bad knob of B is named with its prefix; one that does not go with B's variant drops
        // B and names it, and A opens.
        assert_eq!(LinkState::decode("#/sandbox?v=1&b.queue.depth=0").unwrap_err().field, "queue.depth");
        assert!(LinkState::decode("#/sandbox?v=1&b.queue.bogus=1").unwrap_err().message.contains("b.queue.depth"));
        let (st, e) = LinkState::decode_lenient("#/sandbox?v=1&b.dm.paths=4").unwrap();
        assert_eq!((st.b, st.b_overrides.len(), e.unwrap().field.as_str()), (None, 0, "b"));
    }

    #[test]
    fn tampered_links_name_the_offending_part() {
        let cases = [
            ("#/lesson/nope?v=1", "lesson"),
            ("#/lesson/scsi-starved?v=1&seed=-4", "seed"),
            ("#/lesson/scsi-starved?v=1&queue.depth=99999999999", "queue.depth"),
            ("#/lesson/scsi-starved?v=1&variant=%ZZ", "variant"),
            ("#/lesson/scsi-starved?v=1&b=bogus", "b"),
            ("#/lesson/scsi-starved?v=2", "v"),
            ("#/lesson/scsi-starved", "v"),
            ("#/lesson/scsi-starved?v=1&workload.rw=%3Cscript%3E", "workload.rw"),
            // A key twice: which one did the sender mean?
            ("#/lesson/scsi-starved?v=1&seed=3&seed=4", "seed"),
            ("#/lesson/scsi-starved?v=1&queue.nr_requests=64&queue.nr_requests=512", "queue.nr_requests"),
            ("#/lesson/scsi-starved?v=1&speed=0", "speed"),
            // A link copied late in a long run opens; past the longest run it does not.
            ("#/lesson/scsi-starved?v=1&t=3601", "t"),
        ];
        for (f, field) in cases {
            let e = LinkState::decode(f).unwrap_err();
            assert_eq!(e.field, field, "{f}: {e}");
        }
        assert_eq!(LinkState::decode(&"x".repeat(5000)).unwrap_err().field, "fragment");
        let twice = LinkState::decode("#/lesson/scsi-starved?v=1&seed=3&seed=4").unwrap_err();
        assert!(twice.message.contains("given twice"), "{twice}");
        let speed = LinkState::decode("#/lesson/scsi-starved?v=1&speed=0").unwrap_err();
        assert!(speed.message.contains("simulated seconds per second"), "{speed}");
        assert_eq!(LinkState::decode("#/lesson/anatomy-of-a-request?v=1&t=603").unwrap().t, Some(603.0));
        // t=0 is the start; below it is not a time point.
        assert_eq!(LinkState::decode("#/lesson/anatomy-of-a-request?v=1&t=0").unwrap().t, Some(0.0));
        assert!(LinkState::decode("#/lesson/anatomy-of-a-request?v=1&t=-1").unwrap_err().message.contains("from 0 to"));
        // Every wrong part is named in the one message, in the link's order.
        let many = LinkState::decode("#/lesson/scsi-starved?v=1&queue.depth=abc&t=zz&variant=nope").unwrap_err();
        let text = many.to_string();
        assert_eq!(many.field, "queue.depth");
        let at = |part: &str| text.find(part).unwrap_or_else(|| panic!("{part} not named in: {text}"));
        assert!(at("queue.depth: 'abc'") < at("; t: 'zz'") && at("; t: 'zz'") < at("; variant:"), "{text}");
        // Leniently, the good parts stand and the bad ones are named.
        let (st, e) = LinkState::decode_lenient("#/lesson/scsi-starved?v=1&variant=regressed&seed=7&t=3601").unwrap();
        assert_eq!((st.variant.as_deref(), st.seed, st.t), (Some("regressed"), 7, None));
        assert_eq!(e.unwrap().field, "t");
        assert!(LinkState::decode_lenient("#/lesson/scsi-starved?v=2&seed=7").is_err(), "another version is not read at all");
        // Without a version (written by hand): read as this build's, and the page says so.
        let (st, e) = LinkState::decode_lenient("#/lesson/scsi-starved?variant=regressed&seed=7").unwrap();
        assert_eq!((st.variant.as_deref(), st.seed), (Some("regressed"), 7));
        let e = e.unwrap();
        assert_eq!((e.field.as_str(), e.message.as_str(), e.version_missing_only), ("v", "missing; read as v=1", true));
        assert_eq!(st.encode(), "#/lesson/scsi-starved?v=1&variant=regressed&seed=7");
        // Missing with something else wrong: a fault like the others.
        let (_, e) = LinkState::decode_lenient("#/lesson/scsi-starved?variant=regressed&seed=x").unwrap();
        let e = e.unwrap();
        assert!(!e.version_missing_only && e.message.contains("read as v=1") && e.message.contains("seed"), "{e}");
    }
}
