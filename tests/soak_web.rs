//! The soak's native-vs-WASM part (`scripts/soak`): every lesson and variant for 5
//! simulated seconds in headless Chromium, the whole trace and the report hashed
//! (`crates/blksim/examples/soak/hashes.rs`, compiled here too), and the lines compared with
//! the native run's, which the script passes at build time in `SOAK_NATIVE_HASHES`. Without
//! it the test does nothing: `scripts/test` does not run this file.
#![cfg(target_arch = "wasm32")]

#[path = "../crates/blksim/examples/soak/hashes.rs"]
mod hashes;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn every_lesson_and_variant_hashes_as_natively() {
    let Some(native) = option_env!("SOAK_NATIVE_HASHES") else { return };
    blkviz::lessons::install().unwrap();
    let lines = hashes::all_lines(hashes::SECONDS);
    let native: Vec<&str> = native.lines().collect();
    let differ: Vec<String> = lines
        .iter()
        .zip(native.iter().chain(std::iter::repeat(&"(missing)")))
        .filter(|(got, want)| got != want)
        .map(|(got, want)| format!("browser {got}\n native {want}"))
        .collect();
    assert!(differ.is_empty() && lines.len() == native.len(), "{} of {} lines differ:\n{}", differ.len(), lines.len(), differ.join("\n"));
    console_log!("soak wasm: {} lessons' variants, trace and report hashes identical to the native run's", lines.len());
}
