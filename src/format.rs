//! Number formatting for the counters: units always show, and the sizes read at a glance.

/// Throughput in MB/s (10^6 bytes, as iostat -m and fio print): "767.6 MB/s", "2.81 GB/s".
pub fn throughput(mb_s: f64) -> String {
    if mb_s >= 1000.0 {
        format!("{:.2} GB/s", mb_s / 1000.0)
    } else if mb_s >= 100.0 {
        format!("{mb_s:.0} MB/s")
    } else {
        format!("{mb_s:.1} MB/s")
    }
}

/// A rate with a k/M suffix: "21.9k", "732", "1.20M".
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A ratio B/A as "×1.23", or "–" when A is zero. Below 0.1 it keeps two significant digits
/// ("×0.0040", not "×0.00": a run 250 times shorter is not no time at all).
pub fn ratio(b: f64, a: f64) -> String {
    if !(a > 0.0 && b.is_finite()) {
        return "–".into();
    }
    let r = b / a;
    if r > 0.0 && r < 0.1 {
        let decimals = (1.0 - r.log10().floor()).clamp(2.0, 9.0) as usize;
        format!("×{r:.decimals$}")
    } else {
        format!("×{r:.2}")
    }
}

/// Simulated time: "0.000 123 456 s" style is hard to read; use ms below 1 s.
pub fn sim_time(ns: u64) -> String {
    if ns < 1_000_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    }
}

/// Speed in simulated time per wall second: "1 µs/s", "10 ms/s", "1 s/s".
pub fn speed(s_per_s: f64) -> String {
    if s_per_s >= 1.0 {
        format!("{s_per_s:.0} s/s")
    } else if s_per_s >= 1e-3 {
        format!("{} ms/s", trim(s_per_s * 1e3))
    } else {
        format!("{} µs/s", trim(s_per_s * 1e6))
    }
}

fn trim(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A measured figure to three significant digits, as the scoreboard prints it (46610, 2.92,
/// 0.0382), without trailing zeros.
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// An axis label for `x` on an axis whose neighbouring ticks are at least `spacing` apart: as
/// many decimals as the spacing needs and no more, so 1603.5 and 1604 stay apart on a narrow
/// range (two significant digits printed both as "1600") and 15000 stays 15000 on a wide one.
/// Plotters steps its ticks by 1, 2 or 5 times a power of ten, so a tick is a multiple of the
/// power of ten at or below the spacing.
pub fn axis_tick(x: f64, spacing: f64) -> String {
    if !x.is_finite() || !spacing.is_finite() || spacing <= 0.0 {
        return format!("{x}");
    }
    // The tick values are multiples of a power of ten no larger than the spacing.
    let exp = spacing.log10().floor() as i32;
    let unit = 10f64.powi(exp);
    let v = (x / unit).round() * unit;
    let decimals = (-exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        "0".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ticks_carry_the_digits_their_spacing_needs() {
        // The seed sweep of scsi-starved: 1603..1609 MB/s over eight labels.
        assert_eq!([axis_tick(1603.5, 0.75), axis_tick(1604.0, 0.75), axis_tick(1609.0, 0.75)], ["1603.5", "1604.0", "1609.0"]);
        assert_eq!([axis_tick(15000.0, 2500.0), axis_tick(3000.0000001, 2000.0)], ["15000", "3000"]);
        assert_eq!([axis_tick(0.0124, 0.002), axis_tick(-0.0, 0.5), axis_tick(1e-12, 0.5)], ["0.012", "0", "0"]);
        assert_eq!(axis_tick(f64::NAN, 1.0), "NaN");
    }

    #[test]
    fn measured_figures_keep_three_significant_digits() {
        assert_eq!(
            [sig(46610.0), sig(2.92), sig(0.0382), sig(1.0), sig(0.999), sig(17.6)],
            ["46610", "2.92", "0.0382", "1", "0.999", "17.6"]
        );
    }

    #[test]
    fn counters_read_at_a_glance() {
        assert_eq!(throughput(767.6), "768 MB/s");
        assert_eq!(throughput(43.1), "43.1 MB/s");
        assert_eq!(throughput(2810.0), "2.81 GB/s");
        assert_eq!(rate(21900.0), "21.9k");
        assert_eq!(rate(732.4), "732");
        assert_eq!(ratio(2.0, 1.0), "×2.00");
        assert_eq!(ratio(1.0, 0.0), "–");
        assert_eq!(ratio(0.042, 10.466), "×0.0040");
        assert_eq!(ratio(0.5, 10.0), "×0.050");
        assert_eq!(ratio(0.0, 10.0), "×0.00");
        assert_eq!(speed(1e-6), "1 µs/s");
        assert_eq!(speed(0.01), "10 ms/s");
        assert_eq!(speed(1.0), "1 s/s");
    }
}
