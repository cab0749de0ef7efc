//! Decimal text to `f64`, as `str::parse::<f64>` reads it (the same grammar, the same value to
//! the bit), without std's tables: std's reader keeps about 20 KiB of powers of five and five
//! functions in the browser's wasm for the few knob, link and fio numbers the page reads. This
//! one reads the digits into a big integer and divides exactly, which is slow for a hot loop
//! and fast enough for a number a reader typed. The tests compare it with std's on generated
//! text of every shape.

/// Significant digits kept: a value halfway between two doubles has at most 767 of them, so
/// the digits past these only say "a little more" (one sticky digit keeps that).
const DIGITS_MAX: usize = 800;

/// What `s.parse::<f64>().ok()` gives: `None` where std's reader errs.
#[must_use]
pub fn parse_f64(s: &str) -> Option<f64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    let v = match parse_decimal(body.as_bytes()) {
        Some(d) => d.value(),
        None if body.eq_ignore_ascii_case("nan") => f64::NAN,
        None if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") => f64::INFINITY,
        None => return None,
    };
    Some(if neg { -v } else { v })
}

/// A decimal: its significant digits (no leading zeros, at most `DIGITS_MAX` and a sticky one)
/// times ten to `exp`.
struct Decimal {
    digits: Vec<u8>,
    exp: i64,
}

/// Digits, an optional point and digits (one digit at least), an optional exponent (`e` or `E`,
/// a sign, one digit at least): the whole text, or `None`. The exponent's digits stop counting
/// once it reaches 0x10000, as std's do.
fn parse_decimal(s: &[u8]) -> Option<Decimal> {
    let mut digits = Vec::new();
    let mut exp: i64 = 0;
    let mut n_digits = 0usize;
    let mut sticky = false;
    let mut i = 0;
    let mut push = |d: u8, frac: bool, exp: &mut i64| {
        if frac {
            *exp -= 1;
        }
        if digits.is_empty() && d == 0 {
            return;
        }
        if digits.len() < DIGITS_MAX {
            digits.push(d);
        } else {
            sticky |= d != 0;
            *exp += 1;
        }
    };
    while i < s.len() && s[i].is_ascii_digit() {
        push(s[i] - b'0', false, &mut exp);
        n_digits += 1;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            push(s[i] - b'0', true, &mut exp);
            n_digits += 1;
            i += 1;
        }
    }
    if n_digits == 0 {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let neg = i < s.len() && s[i] == b'-';
        if i < s.len() && (s[i] == b'-' || s[i] == b'+') {
            i += 1;
        }
        if i >= s.len() || !s[i].is_ascii_digit() {
            return None;
        }
        let mut e: i64 = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if e < 0x10000 {
                e = 10 * e + i64::from(s[i] - b'0');
            }
            i += 1;
        }
        exp += if neg { -e } else { e };
    }
    if i != s.len() {
        return None;
    }
    if sticky {
        digits.push(1);
        exp -= 1;
    }
    Some(Decimal { digits, exp })
}

impl Decimal {
    /// The double nearest to the decimal (ties to even), or 0 or infinity beyond the range.
    fn value(&self) -> f64 {
        if self.digits.is_empty() {
            return 0.0;
        }
        // The decimal lies in [10^(top-1), 10^top).
        let top = self.digits.len() as i64 + self.exp;
        if top > 310 {
            return f64::INFINITY;
        }
        if top < -324 {
            return 0.0;
        }
        let mut a = Big::from_digits(&self.digits);
        let mut b = Big(vec![1]);
        if self.exp >= 0 {
            a.mul_pow10(self.exp as u32);
        } else {
            b.mul_pow10((-self.exp) as u32);
        }
        // q = floor(a·2^s / b) with 55 or 56 bits: a 53-bit mantissa, a rounding bit and more.
        let s = 55 - i64::from(a.bits()) + i64::from(b.bits());
        if s >= 0 {
            a.shl(s as u32);
        } else {
            b.shl((-s) as u32);
        }
        let mut q: u64 = 0;
        for k in (0..=57u32).rev() {
            let mut bk = b.clone();
            bk.shl(k);
            if a.cmp(&bk) != std::cmp::Ordering::Less {
                a.sub(&bk);
                q |= 1 << k;
            }
        }
        round(q, s, !a.is_zero())
    }
}

/// The double nearest q·2^-s (`sticky`: a little more than that), q of 55 to 57 bits.
fn round(q: u64, s: i64, sticky: bool) -> f64 {
    let q_bits = i64::from(64 - q.leading_zeros());
    let e2 = q_bits - 1 - s;
    if e2 > 1023 {
        return f64::INFINITY;
    }
    // Bits dropped: to 53 for a normal value, to the 2^-1074 place for a subnormal one.
    let shift = if e2 >= -1022 { q_bits - 53 } else { s - 1074 };
    if shift >= 64 {
        return 0.0;
    }
    let shift = shift as u32;
    let mut m = q >> shift;
    let rest = q & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rest > half || (rest == half && (sticky || m & 1 == 1)) {
        m += 1;
    }
    if e2 < -1022 {
        // A subnormal (a mantissa that rounded up to 2^52 is the smallest normal's bits).
        return f64::from_bits(m);
    }
    let mut e2 = e2;
    if m == 1 << 53 {
        m >>= 1;
        e2 += 1;
        if e2 > 1023 {
            return f64::INFINITY;
        }
    }
    f64::from_bits(((e2 + 1023) as u64) << 52 | (m & ((1 << 52) - 1)))
}

/// An unsigned big integer, 32-bit limbs, least significant first, no high zero limbs.
#[derive(Clone)]
struct Big(Vec<u32>);

impl Big {
    fn from_digits(digits: &[u8]) -> Big {
        let mut b = Big(Vec::new());
        for chunk in digits.chunks(9) {
            let mut v = 0u32;
            for &d in chunk {
                v = v * 10 + u32::from(d);
            }
            b.mul_add(10u32.pow(chunk.len() as u32), v);
        }
        b
    }

    fn mul_add(&mut self, m: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let x = u64::from(*limb) * u64::from(m) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut n: u32) {
        while n > 0 {
            let k = n.min(9);
            self.mul_add(10u32.pow(k), 0);
            n -= k;
        }
    }

    fn bits(&self) -> u32 {
        self.0.last().map_or(0, |top| 32 * (self.0.len() as u32 - 1) + (32 - top.leading_zeros()))
    }

    fn shl(&mut self, n: u32) {
        let (limbs, bits) = ((n / 32) as usize, n % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let x = *limb;
                *limb = (x << bits) | carry;
                carry = x >> (32 - bits);
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        if !self.0.is_empty() {
            self.0.splice(0..0, std::iter::repeat_n(0, limbs));
        }
    }

    fn cmp(&self, o: &Big) -> std::cmp::Ordering {
        self.0.len().cmp(&o.0.len()).then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    /// self -= o, where o <= self.
    fn sub(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let x = i64::from(*limb) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(x < 0);
            *limb = x.rem_euclid(1 << 32) as u32;
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::parse_f64;

    fn same(s: &str) {
        let std = s.parse::<f64>().ok();
        let ours = parse_f64(s);
        assert_eq!(std.map(f64::to_bits), ours.map(f64::to_bits), "{s:?}: std {std:?}, ours {ours:?}");
    }

    #[test]
    fn the_grammar_is_std_s() {
        for s in [
            "",
            "+",
            "-",
            ".",
            "e",
            "e5",
            "1e",
            "1e+",
            "1e-",
            ".e1",
            "1.",
            ".5",
            "-.5",
            "+1",
            "++1",
            "-+1",
            "1.2.3",
            " 1",
            "1 ",
            "0x10",
            "1_000",
            "1e5",
            "1E5",
            "1e+5",
            "1e-5",
            "1.5e3",
            "inf",
            "-inf",
            "+Infinity",
            "INF",
            "infinit",
            "nan",
            "-NaN",
            "nAn",
            "infinityx",
            "0",
            "-0",
            "00000",
            "0.0000",
            "0e999999999",
            "1e999999999",
            "1e-999999999",
            "9.9e",
            "1,5",
            "١",
            "1e1e1",
            "5e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "0.1",
            "0.2",
            "0.3",
            "2.5",
            "60",
            "90",
            "1e6",
            "1e-6",
            "3600",
            "86400",
            "0.000001",
            "123456789012345678901234567890",
            "9007199254740993",
            "9007199254740992.5",
            "4503599627370496.5",
            "4503599627370497.5",
            "1e23",
            "8.98846567431158e307",
        ] {
            same(s);
        }
    }

    #[test]
    fn long_digits_round_as_std_s() {
        // A halfway case with digits past the kept ones: 2^-1075 (half the smallest subnormal)
        // and 1 + 2^-53, each with and without a trailing 1 far out.
        let one_half_ulp = "1.00000000000000011102230246251565404236316680908203125";
        same(one_half_ulp);
        same(&format!("{one_half_ulp}{}1", "0".repeat(900)));
        same(&format!("{one_half_ulp}{}", "0".repeat(900)));
        same(&format!("0.{}1e70000", "0".repeat(70000)));
        same(&format!("{}e-70000", "1".repeat(1000)));
        let tiny = "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324";
        same(tiny);
        same(&format!("{tiny}1"));
    }

    /// A small deterministic generator (xorshift), so a failure names its text.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn generated_text_reads_as_std_reads_it() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"0123456789.eE+-";
        for _ in 0..50_000 {
            let len = (next(&mut x) % 12) as usize;
            let s: String = (0..len).map(|_| alphabet[(next(&mut x) % alphabet.len() as u64) as usize] as char).collect();
            same(&s);
        }
        for _ in 0..50_000 {
            // Numbers: up to 40 digits with a point somewhere and an exponent across the range.
            let n = 1 + (next(&mut x) % 40) as usize;
            let mut s: String = (0..n).map(|_| char::from(b'0' + (next(&mut x) % 10) as u8)).collect();
            if next(&mut x) % 2 == 0 {
                s.insert((next(&mut x) % (n as u64 + 1)) as usize, '.');
            }
            let e = (next(&mut x) % 700) as i64 - 350;
            same(&format!("{s}e{e}"));
            same(&s);
        }
        for _ in 0..30_000 {
            // Doubles printed shortest, to 17 digits and to 26 (past the shortest, near the halfway points).
            let v = f64::from_bits(next(&mut x) >> 1);
            if !v.is_finite() {
                continue;
            }
            same(&format!("{v:e}"));
            same(&format!("{v}"));
            same(&format!("{v:.16e}"));
            same(&format!("{v:.25e}"));
        }
    }
}
