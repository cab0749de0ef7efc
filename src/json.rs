//! JSON without a JSON library in the page: the browser's own parser reads (`JSON.parse`, then
//! serde through serde-wasm-bindgen), and the few small objects the page writes (the Perfetto
//! export, the speaker notes' messages, the benchmark's figures) are written here, as
//! serde_json writes them: keys in sorted order, no spaces, a float with its ".0". The native
//! build (the app's tests) reads with serde_json.

use serde::de::DeserializeOwned;

/// `text` read as a `T`, or what is wrong with it.
pub fn read<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let v = js_sys::JSON::parse(text).map_err(|e| String::from(e.unchecked_into::<js_sys::Error>().message()))?;
        serde_wasm_bindgen::from_value(v).map_err(|e| e.to_string())
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// A value of an object written here.
pub enum J {
    Str(String),
    Int(u64),
    Num(f64),
    Null,
    /// Already JSON (an object or array written here).
    Raw(String),
}

/// An object of `fields`, given with their keys in sorted order (as serde_json's map keeps
/// them; the callers write them so, rather than the page carrying one more sort).
pub fn object(fields: Vec<(&str, J)>) -> String {
    debug_assert!(fields.windows(2).all(|w| w[0].0 < w[1].0), "keys not in order");
    let body: Vec<String> = fields.into_iter().map(|(k, v)| format!("{}:{}", string(k), value(v))).collect();
    format!("{{{}}}", body.join(","))
}

/// An array of values written here.
pub fn array(items: impl IntoIterator<Item = J>) -> String {
    let body: Vec<String> = items.into_iter().map(value).collect();
    format!("[{}]", body.join(","))
}

fn value(v: J) -> String {
    match v {
        J::Str(s) => string(&s),
        J::Int(n) => n.to_string(),
        J::Num(x) => number(x),
        J::Null => "null".into(),
        J::Raw(s) => s,
    }
}

/// A string, escaped as serde_json escapes it.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A float as serde_json writes one between 1e-5 and 1e16 (every time and rate the page
/// writes): the shortest digits that read back the same, with ".0" when they are whole; null
/// when not finite. Outside that range serde_json would use an exponent ("1e16"); this writes
/// one too, in Rust's form.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-5..1e16).contains(&a) {
        return format!("{x:e}");
    }
    let s = x.to_string();
    if s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What this writes is what serde_json writes, byte for byte, for the values the page writes.
    #[test]
    fn writes_as_serde_json_does() {
        for x in [0.0, 1.0, 1000.0, 0.001, 2.5, 123456.789, 1.0 / 3.0, 0.00001, 9.99e15, -4.25] {
            assert_eq!(number(x), serde_json::to_string(&x).unwrap(), "{x}");
        }
        for s in ["sda", "a \"quoted\" \\ name", "tab\there\nline\u{1}\u{8}\u{c}\u{7f}é"] {
            assert_eq!(string(s), serde_json::to_string(s).unwrap());
        }
        let mine = object(vec![
            ("alpha", J::Str("x".into())),
            ("arr", J::Raw(array([J::Num(1.0), J::Int(2)]))),
            ("mid", J::Null),
            ("zeta", J::Int(3)),
        ]);
        let theirs = serde_json::json!({"zeta": 3, "alpha": "x", "mid": null, "arr": [1.0, 2]}).to_string();
        assert_eq!(mine, theirs);
        assert_eq!(read::<Vec<u32>>("[1, 2]"), Ok(vec![1, 2]));
        assert!(read::<Vec<u32>>("[1,").is_err());
    }
}
