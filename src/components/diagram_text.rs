//! The diagram's words: text cut to fit, and the device names of its columns in the longest
//! form that fits them all ("sdaa–sdah", "sdaa–ah", "aa–ah", "×8"), so a narrow column still
//! says which devices it holds.

use super::diagram::Theme;
use web_sys::CanvasRenderingContext2d;

/// Draws `text` at (x, y), cut short with an ellipsis to fit `max_w` (columns are narrow with
/// many devices or large type; overlapping labels read as nonsense on a projector).
pub(super) fn fit_text(ctx: &CanvasRenderingContext2d, text: &str, x: f64, y: f64, max_w: f64) {
    if max_w < 10.0 {
        return;
    }
    let width = |t: &str| ctx.measure_text(t).map_or(0.0, |m| m.width());
    if width(text) <= max_w {
        let _ = ctx.fill_text(text, x, y);
        return;
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let t: String = chars.iter().collect::<String>() + "…";
        if width(&t) <= max_w {
            let _ = ctx.fill_text(&t, x, y);
            return;
        }
    }
}

/// `fit_text` on a plate of `bg` (a little wider than the text, as tall as the font), in
/// `fg`: for a label that tokens in transit cross, drawn after them.
pub(super) fn plated_text(ctx: &CanvasRenderingContext2d, bg: &str, fg: &str, text: &str, x: f64, y: f64, max_w: f64) {
    if max_w < 10.0 {
        return;
    }
    let m = ctx.measure_text(text).ok();
    let w = m.as_ref().map_or(max_w, |m| m.width()).min(max_w);
    let h = m.map_or(12.0, |m| m.font_bounding_box_ascent() + m.font_bounding_box_descent()).max(8.0);
    ctx.set_fill_style_str(bg);
    ctx.set_global_alpha(0.85);
    ctx.fill_rect(x - 2.0, y - h / 2.0 - 1.0, w + 4.0, h + 2.0);
    ctx.set_global_alpha(1.0);
    ctx.set_fill_style_str(fg);
    fit_text(ctx, text, x, y, max_w);
}

/// What a CPU strip says in `max_w`: "cpu3 flush-8:16" if it fits; else the thread's name if
/// it fits in type shrunk to `floor` of its size (0.7); else the name's stem ("flush",
/// "ksoftirqd"), which says more than a cut "flus…". (The caller shrinks or cuts what is still
/// too wide.)
pub(super) fn cpu_strip_text<'a>(label: &'a str, name: &'a str, max_w: f64, floor: f64, width: impl Fn(&str) -> f64) -> &'a str {
    if width(label) <= max_w {
        return label;
    }
    let stem = name.split(['-', '/']).next().filter(|s| !s.is_empty()).unwrap_or(name);
    [name, stem].into_iter().find(|t| width(t) * floor <= max_w).unwrap_or(stem)
}

/// A column's label, longest first, for `fit_first`: one device's name, or a group's range
/// ("sdaa–sdah", then "sdaa–ah", "aa–ah", "×8"), so a narrow column (80 disks in Large type)
/// still says which devices it holds instead of "sd…".
pub(super) fn group_names(first: &str, last: &str, count: usize) -> Vec<String> {
    // The kind's stem ("sd", "dm-", "md"), never part of a number or a disk's letters.
    let stem = |n: &str| -> usize {
        if n.starts_with("sd") {
            2
        } else if let Some(i) = n.rfind('-') {
            i + 1
        } else {
            n.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(n.len())
        }
    };
    if count <= 1 {
        // One device beside groups (an expanded group): its name, then what follows the stem.
        let tail = &first[stem(first)..];
        return if tail.is_empty() || tail.len() == first.len() {
            vec![first.to_string()]
        } else {
            vec![first.to_string(), tail.to_string()]
        };
    }
    let common = stem(first);
    let mut names = vec![format!("{first}–{last}")];
    if common > 0 && stem(last) == common && first[..common] == last[..common] {
        let (head, tail) = (&first[common..], &last[common..]);
        if !head.is_empty() && !tail.is_empty() {
            names.push(format!("{first}–{tail}"));
            names.push(format!("{head}–{tail}"));
        }
    }
    names.push(format!("×{count}"));
    names
}

/// A column's name forms (`group_names`) and where they go.
pub(super) struct ColumnName {
    pub names: Vec<String>,
    /// Devices in the column.
    pub count: usize,
    pub x: f64,
    pub y: f64,
    pub w: f64,
}

/// Draws a row's column names all in the same form, the longest that fits every column
/// ("sdaa–sdah", "sdaa–ah", "aa–ah"); when even the shortest does not fit one of them (80
/// disks in Large type), one caption across the row instead ("sda–sdcb · 8 per column") rather
/// than names cut to "sd…" or mixed forms.
pub(super) fn draw_column_names(ctx: &CanvasRenderingContext2d, theme: &Theme, cols: &[ColumnName]) {
    let (Some(first), Some(last)) = (cols.first(), cols.last()) else { return };
    let fits = |t: &str, w: f64| ctx.measure_text(t).is_ok_and(|m| m.width() <= w);
    ctx.set_fill_style_str(theme.fg);
    // A group's forms are ranges, then its count; level i takes a group's i-th form. Next to
    // single devices (a group expanded), groups may go down to their count, since the expand
    // buttons below name them; single devices take their longest form that fits.
    let mixed = cols.iter().any(|c| c.count == 1) && cols.iter().any(|c| c.count > 1);
    let forms = |c: &ColumnName| if mixed { c.names.len() } else { c.names.len() - 1 };
    let groups = || cols.iter().filter(|c| c.count > 1);
    let levels = groups().map(forms).max().unwrap_or(0);
    let level = (0..levels).find(|&i| groups().all(|c| i < forms(c) && fits(&c.names[i], c.w)));
    if level.is_some() || groups().next().is_none() || mixed {
        for c in cols {
            if c.count > 1 {
                fit_text(ctx, &c.names[level.unwrap_or(c.names.len() - 1)], c.x, c.y, c.w);
            } else {
                let names: Vec<&str> = c.names.iter().map(String::as_str).collect();
                fit_first(ctx, &names, c.x, c.y, c.w);
            }
        }
        return;
    }
    let from = first.names[0].split('–').next().unwrap_or_default();
    let to = last.names[0].rsplit('–').next().unwrap_or_default();
    let per = cols.iter().find(|c| c.count > 1).map_or(1, |c| c.count);
    let caption = if cols.iter().all(|c| c.count == per) {
        format!("{from}–{to} · {per} per column")
    } else {
        format!("{from}–{to} · up to {per} per column")
    };
    // On a plate of the background, so that it reads over what the row draws beneath it.
    let (w, h) =
        ctx.measure_text(&caption).map_or((0.0, 14.0), |m| (m.width(), m.font_bounding_box_ascent() + m.font_bounding_box_descent()));
    let w = w.min(last.x + last.w - first.x);
    ctx.set_fill_style_str(theme.bg);
    ctx.fill_rect(first.x - 2.0, first.y - h / 2.0, w + 4.0, h);
    ctx.set_fill_style_str(theme.fg);
    fit_text(ctx, &caption, first.x, first.y, last.x + last.w - first.x);
}

/// Draws the first of `options` that fits whole, else the last one cut short: a number cut
/// in the middle ("0/10…" for 0/1024) reads as another number.
pub(super) fn fit_first(ctx: &CanvasRenderingContext2d, options: &[&str], x: f64, y: f64, max_w: f64) {
    let fits = |t: &str| ctx.measure_text(t).is_ok_and(|m| m.width() <= max_w);
    let pick = options.iter().find(|t| fits(t)).or(options.last());
    if let Some(t) = pick {
        fit_text(ctx, t, x, y, max_w);
    }
}

#[cfg(test)]
mod tests {
    use super::{cpu_strip_text, group_names};

    #[test]
    fn a_narrow_cpu_strip_keeps_the_threads_name_or_its_stem() {
        // 7 px a character, as a monospace font would measure.
        let w = |t: &str| 7.0 * t.chars().count() as f64;
        assert_eq!(cpu_strip_text("cpu3 flush-8:16", "flush-8:16", 120.0, 0.7, w), "cpu3 flush-8:16");
        assert_eq!(cpu_strip_text("cpu3 flush-8:16", "flush-8:16", 60.0, 0.7, w), "flush-8:16");
        assert_eq!(cpu_strip_text("cpu3 flush-8:16", "flush-8:16", 40.0, 0.7, w), "flush");
        assert_eq!(cpu_strip_text("cpu4 ksoftirqd/4", "ksoftirqd/4", 50.0, 0.7, w), "ksoftirqd");
        assert_eq!(cpu_strip_text("cpu0 37%", "37%", 20.0, 0.7, w), "37%");
        assert_eq!(cpu_strip_text("cpu0 -x", "-x", 10.0, 0.7, w), "-x");
        // Large type (1.45x, 10 px a character) in a 60 px strip: its stem at 70% is still 63 px
        // and would be cut ("ksof…"); shrunk to the plain type's 70% floor, the whole name fits.
        let large = |t: &str| 10.15 * t.chars().count() as f64;
        assert_eq!(cpu_strip_text("cpu4 ksoftirqd/4", "ksoftirqd/4", 60.0, 0.7, large), "ksoftirqd");
        assert!(large("ksoftirqd") * 0.7 > 60.0, "the 70% floor leaves the stem too wide: the caller cut it");
        assert_eq!(cpu_strip_text("cpu4 ksoftirqd/4", "ksoftirqd/4", 60.0, 0.7 / 1.45, large), "ksoftirqd/4");
    }

    #[test]
    fn a_group_label_shortens_without_cutting_a_number_or_a_disks_letters() {
        assert_eq!(group_names("sdaa", "sdah", 8), ["sdaa–sdah", "sdaa–ah", "aa–ah", "×8"]);
        assert_eq!(group_names("dm-10", "dm-17", 8), ["dm-10–dm-17", "dm-10–17", "10–17", "×8"]);
        assert_eq!(group_names("md0", "md3", 4), ["md0–md3", "md0–3", "0–3", "×4"]);
        assert_eq!(group_names("sdb", "sdb", 1), ["sdb", "b"]);
        assert_eq!(group_names("dm-17", "dm-17", 1), ["dm-17", "17"]);
        assert_eq!(group_names("md0", "md0", 1), ["md0", "0"]);
        // Different kinds in one group: only the full range and the count.
        assert_eq!(group_names("dm-0", "md0", 2), ["dm-0–md0", "×2"]);
    }
}
