//! The link codec as users abuse it: valid states round-trip, and any string either decodes
//! or names the offending part, without panicking.

use blksim::course::lessons;
use blksim::course::link::LinkState;
use proptest::prelude::*;

fn state() -> impl Strategy<Value = LinkState> {
    let ids: Vec<String> = lessons::ids();
    (
        prop::sample::select(ids),
        any::<prop::sample::Index>(),
        prop::option::of(4u32..=16384),
        prop::option::of(1u32..=1024),
        prop::option::of(prop::sample::select(vec!["4k", "64k", "1m"])),
        any::<u64>(),
        prop::option::of(1u32..=600_000),
        prop::option::of(1u32..=1_000_000),
        prop::option::of(any::<prop::sample::Index>()),
    )
        .prop_map(|(lesson, vi, nr, depth, bs, seed, t_ms, speed_ppm, bi)| {
            let l = lessons::find(&lesson).unwrap();
            let variant = Some(l.variants[vi.index(l.variants.len())].name.clone());
            // B is another variant than A's (the same one beside itself is refused).
            let b = bi.map(|i| l.variants[i.index(l.variants.len())].name.clone()).filter(|b| Some(b) != variant.as_ref());
            let mut overrides = Vec::new();
            if let Some(n) = nr {
                overrides.push(("queue.nr_requests".to_string(), n.to_string()));
            }
            if let Some(d) = depth {
                overrides.push(("queue.depth".to_string(), d.to_string()));
            }
            if let Some(b) = bs {
                overrides.push(("workload.bs".to_string(), b.to_string()));
            }
            // A view with it: a step of the lesson's (when it has any), presenter mode, Large type.
            let stops = l.stops() as u32;
            let step = (stops > 0).then(|| (seed % u64::from(stops.max(1))) as u32 + 1);
            LinkState {
                lesson,
                variant,
                b,
                overrides,
                b_overrides: Vec::new(),
                seed,
                t: t_ms.map(|m| m as f64 / 1000.0),
                speed: speed_ppm.map(|p| p as f64 / 1e6),
                step,
                presenter: Some(seed % 2 == 0),
                large: (seed % 3 == 0).then_some(true),
            }
        })
}

proptest! {
    #[test]
    fn encode_then_decode_is_the_identity(st in state()) {
        let f = st.encode();
        prop_assert_eq!(LinkState::decode(&f), Ok(st));
    }

    #[test]
    fn arbitrary_text_never_panics(s in ".{0,300}") {
        if let Err(e) = LinkState::decode(&s) {
            prop_assert!(!e.field.is_empty() && !e.message.is_empty());
        }
    }

    #[test]
    fn tampered_values_name_their_field(lesson in prop::sample::select(lessons::ids()), junk in "[^&=#]{1,40}") {
        let f = format!("#/lesson/{lesson}?v=1&queue.depth={}", blksim::course::link::pct_encode(&junk));
        if let Err(e) = LinkState::decode(&f) {
            prop_assert_eq!(e.field, "queue.depth");
        }
    }
}

#[test]
fn the_sandbox_has_links_too() {
    let st = LinkState {
        lesson: "sandbox".into(),
        variant: None,
        b: None,
        overrides: vec![("disks".into(), "4".into()), ("workload.rw".into(), "randread".into())],
        b_overrides: Vec::new(),
        seed: 3,
        t: None,
        speed: None,
        step: None,
        presenter: None,
        large: None,
    };
    let f = st.encode();
    assert_eq!(f, "#/sandbox?v=1&disks=4&workload.rw=randread&seed=3");
    assert_eq!(LinkState::decode(&f), Ok(st));
}

#[test]
fn b_beside_itself_is_refused_and_names_the_others() {
    let e = LinkState::decode("#/lesson/scsi-starved?v=1&variant=regressed&b=regressed").unwrap_err();
    assert_eq!(e.field, "b");
    assert!(e.message.contains("run A's variant too") && e.message.contains("before") && e.message.contains("fixed"), "{e}");
    // Without a variant, A runs the lesson's first.
    assert_eq!(LinkState::decode("#/lesson/scsi-starved?v=1&b=before").unwrap_err().field, "b");
    assert!(LinkState::decode("#/lesson/scsi-starved?v=1&b=regressed").is_ok());
    // The sandbox has one variant: its B is a copy of A (two setups, once B's knobs change);
    // with knobs of its own, a lesson's B may run A's variant too.
    assert_eq!(LinkState::decode("#/sandbox?v=1&b=custom").unwrap().b.as_deref(), Some("custom"));
    let st = LinkState::decode("#/lesson/scsi-starved?v=1&variant=regressed&b=regressed&b.host.can_queue=64").unwrap();
    assert_eq!((st.b.as_deref(), st.b_overrides.len()), (Some("regressed"), 1));
}
