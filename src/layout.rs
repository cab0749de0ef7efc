//! Where things go on the stack diagram: pure arithmetic on the scenario's topology, so that it
//! is tested without a browser.

/// The stages, top to bottom, in the order of the Linux storage stack diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Processes,
    /// The stacking drivers above the disks (dm-*, md*), when the scenario has them.
    Layer,
    Elevator,
    RequestPool,
    TagMap,
    Host,
    Disks,
    Cpus,
}

pub const STAGES: [Stage; 8] =
    [Stage::Processes, Stage::Layer, Stage::Elevator, Stage::RequestPool, Stage::TagMap, Stage::Host, Stage::Disks, Stage::Cpus];

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Processes => "processes",
            Stage::Layer => "dm / md",
            Stage::Elevator => "elevator",
            Stage::RequestPool => "request pool",
            Stage::TagMap => "tag map",
            Stage::Host => "host (HBA)",
            Stage::Disks => "disks",
            Stage::Cpus => "CPUs",
        }
    }

    /// What the row shows, in a line: its tip on the diagram.
    pub fn explain(self) -> &'static str {
        match self {
            Stage::Processes => "the processes and kernel threads that submit I/O, a dot each; zz while asleep, a ring once exited",
            Stage::Layer => "the stacking drivers (device-mapper, md RAID): each bio is remapped, split or cloned onto the devices below",
            Stage::Elevator => "the I/O scheduler's queue (noop, deadline, cfq): requests wait here to be merged and sorted before dispatch",
            Stage::RequestPool => "the struct requests a queue may allocate (nr_requests per direction); a process that finds none free sleeps in get_request_wait",
            Stage::TagMap => "the commands the device holds (queue_depth): a request takes a tag at dispatch and gives it back at completion",
            Stage::Host => "the SCSI host's can_queue, shared by its disks; a disk that finds it full waits on the host's starved_list",
            Stage::Disks => "each drive, with q, the commands it holds; its own queueing and media decide the service time",
            Stage::Cpus => "what each CPU runs: a process, a kernel thread, softirq work, or nothing (idle), as top counts it",
        }
    }

    /// Relative row heights.
    fn weight(self) -> f64 {
        match self {
            Stage::Processes => 1.1,
            Stage::Layer => 1.2,
            Stage::Elevator => 1.4,
            Stage::RequestPool => 1.0,
            Stage::TagMap => 1.0,
            Stage::Host => 0.8,
            Stage::Disks => 1.5,
            Stage::Cpus => 0.7,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// Up to this many devices get a column each; larger arrays collapse into groups.
pub const DEVICES_UNGROUPED_MAX: usize = 16;
/// How many group columns a large array collapses into (at most).
pub const GROUPS: usize = 10;

/// A device column: one device, or a group of adjacent devices drawn as one aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub first: usize,
    pub count: usize,
    /// The group this column is (None: a single device that is not a group).
    pub group: Option<usize>,
}

impl Column {
    pub fn contains(&self, dev: usize) -> bool {
        dev >= self.first && dev < self.first + self.count
    }
}

/// The columns for `devices` devices: one each up to 16; beyond, about ten groups, with group
/// `expanded` (if any) shown as one column per device.
pub fn columns(devices: usize, expanded: Option<usize>) -> Vec<Column> {
    if devices <= DEVICES_UNGROUPED_MAX {
        return (0..devices).map(|d| Column { first: d, count: 1, group: None }).collect();
    }
    let size = devices.div_ceil(GROUPS);
    let mut out = Vec::new();
    for (g, first) in (0..devices).step_by(size).enumerate() {
        let count = size.min(devices - first);
        if expanded == Some(g) {
            out.extend((first..first + count).map(|d| Column { first: d, count: 1, group: None }));
        } else {
            out.push(Column { first, count, group: Some(g) });
        }
    }
    out
}

/// The diagram's geometry for a canvas of `width` × `height` CSS pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct StackLayout {
    pub width: f64,
    pub height: f64,
    pub label_w: f64,
    /// The stages drawn (`STAGES` without the layer row when there is no stacking driver, and
    /// without the host row when there is no SCSI host), and one band per stage in that order.
    pub stages: Vec<Stage>,
    pub rows: Vec<Rect>,
    /// The device columns and their (x, width), shared by the per-device stages.
    pub cols: Vec<Column>,
    pub dev_cols: Vec<(f64, f64)>,
    /// Whether each device column is wide enough for text.
    pub dev_labels: bool,
    /// Room the processes row keeps free on its right (the A/B run badge) and at its bottom
    /// (a note), in px.
    pub process_inset: (f64, f64),
}

/// The diagram box its text and offsets were drawn for: at 1280 x 800 and 1400 x 900 the
/// canvas is about this size or smaller (706 x 670, 775 x 770).
const ZOOM_REF_W: f64 = 780.0;
const ZOOM_REF_H: f64 = 700.0;
/// The most a larger box zooms the drawing (a 1920 x 1080 projector gives about 1.36).
const ZOOM_MAX: f64 = 1.6;

/// How much the drawing is zoomed in a box of `cw` x `ch` CSS pixels: a box larger than the
/// reference both ways draws the same diagram larger, text, bars and tokens alike, so a
/// projector's labels grow with the diagram instead of staying at 11 px in a 1073 px box.
/// Large type already draws the text 1.45x: the zoom then grows it only up to `ZOOM_MAX` in
/// all (crowded counts lose their "/limit" and CPU strips their names past that).
pub fn zoom(cw: f64, ch: f64, type_scale: f64) -> f64 {
    let most = ZOOM_MAX / type_scale.max(1.0);
    (cw / ZOOM_REF_W).min(ch / ZOOM_REF_H).clamp(1.0, most.max(1.0))
}

/// How much larger Large type draws the diagram's text.
pub const LARGE_TYPE: f64 = 1.45;

/// The diagram's type scale: its 11 px counts become 16 px (Large type, or presenter mode, for
/// a projector at 1280 x 720) or 18 px (both).
pub fn type_scale(presenter: bool, large: bool) -> f64 {
    match (presenter, large) {
        (false, false) => 1.0,
        (false, true) => LARGE_TYPE,
        (true, false) => 16.0 / 11.0,
        (true, true) => 18.0 / 11.0,
    }
}

pub const LABEL_W: f64 = 118.0;
const GAP: f64 = 4.0;

/// The rows a stack has beside those every stack has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Optional {
    /// Stacking drivers (dm-*, md*) above the disks.
    pub layer: bool,
    /// A SCSI host under the disks. An NVMe drive sits on PCIe with a queue pair per CPU and
    /// no host-wide `can_queue`, so a stack of NVMe drives has no host row.
    pub host: bool,
}

impl Optional {
    pub const ALL: Optional = Optional { layer: true, host: true };

    pub fn of(t: &blksim::tools::view::Topology) -> Optional {
        Optional { layer: !t.upper.is_empty(), host: !t.hosts.is_empty() }
    }
}

impl StackLayout {
    pub fn new(width: f64, height: f64, cols: Vec<Column>, has: Optional) -> StackLayout {
        let stages: Vec<Stage> = STAGES
            .iter()
            .copied()
            .filter(|&s| match s {
                Stage::Layer => has.layer,
                Stage::Host => has.host,
                _ => true,
            })
            .collect();
        let total: f64 = stages.iter().map(|s| s.weight()).sum();
        let mut y = 0.0;
        let rows = stages
            .iter()
            .map(|s| {
                let h = height * s.weight() / total;
                let r = Rect { x: LABEL_W, y, w: width - LABEL_W, h };
                y += h;
                r
            })
            .collect();
        let n = cols.len().max(1) as f64;
        let avail = width - LABEL_W - GAP;
        let col_w = avail / n;
        let dev_cols = (0..cols.len()).map(|i| (LABEL_W + GAP + i as f64 * col_w, (col_w - GAP).max(1.0))).collect();
        StackLayout { width, height, label_w: LABEL_W, stages, rows, cols, dev_cols, dev_labels: col_w >= 44.0, process_inset: (0.0, 0.0) }
    }

    /// The band of stage `s` (an absent layer or host row is the elevator's top edge: tokens of
    /// a stacking device, and a host's bar, never occur then).
    pub fn row(&self, s: Stage) -> Rect {
        match self.stages.iter().position(|&x| x == s) {
            Some(i) => self.rows[i],
            None => Rect { h: 0.0, ..self.row(Stage::Elevator) },
        }
    }

    /// The cell of column `c` in stage `s`.
    pub fn cell(&self, s: Stage, c: usize) -> Rect {
        let r = self.row(s);
        let (x, w) = self.dev_cols[c];
        Rect { x, y: r.y + 3.0, w, h: r.h - 6.0 }
    }

    /// The column that shows device `dev`.
    pub fn column_of(&self, dev: usize) -> usize {
        self.cols.iter().position(|c| c.contains(dev)).unwrap_or(0)
    }

    /// The column under x (for clicks).
    pub fn column_at(&self, x: f64) -> Option<usize> {
        self.dev_cols.iter().position(|&(cx, w)| x >= cx && x < cx + w + GAP)
    }

    /// Where the `i`-th of `n` processes sits in the processes row.
    pub fn process_slot(&self, i: usize, n: usize) -> (f64, f64) {
        let (r, per_row, rows, _) = self.process_grid(n);
        let n = n.max(1);
        let (row, col) = (i / per_row, i % per_row);
        let in_this_row = if row + 1 == rows { n - row * per_row } else { per_row };
        let step = (r.w - 8.0) / in_this_row.max(1) as f64;
        let rh = r.h / rows as f64;
        (r.x + 4.0 + step * (col as f64 + 0.5), r.y + rh * (row as f64 + 0.5))
    }

    /// The radius of a process dot: 7 px, less when many share the row, so that dots never
    /// overlap each other or leave the row.
    pub fn process_radius(&self, n: usize) -> f64 {
        self.process_grid(n).3
    }

    /// The area the dots share (the row less its insets), and the grid that gives the largest
    /// dots: dots per line, lines, and the radius (fewer lines when the radius is the same).
    fn process_grid(&self, n: usize) -> (Rect, usize, usize, f64) {
        let row = self.row(Stage::Processes);
        let r = Rect { w: (row.w - self.process_inset.0).max(40.0), h: (row.h - self.process_inset.1).max(8.0), ..row };
        let n = n.max(1);
        let radius = |per_row: usize| {
            let rows = n.div_ceil(per_row);
            ((r.w - 8.0) / per_row as f64 / 2.0 - 1.0).min(r.h / rows as f64 / 2.0 - 0.5).min(7.0)
        };
        let best = (1..=n).max_by(|&a, &b| radius(a).total_cmp(&radius(b))).unwrap_or(1);
        (r, best, n.div_ceil(best), radius(best).max(0.75))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stack of SCSI disks with no stacking driver.
    const NO_LAYER: Optional = Optional { layer: false, host: true };

    #[test]
    fn a_larger_box_zooms_the_drawing_and_a_small_one_does_not() {
        // The canvas at 1280 x 800, 1400 x 900, and A/B in presenter mode at 1920 x 1080.
        for (w, h) in [(706.0, 670.0), (775.0, 770.0), (1073.0, 465.0), (356.0, 478.0)] {
            assert_eq!(zoom(w, h, 1.0), 1.0, "{w} x {h}");
        }
        // 1920 x 1080, with presenter mode or without: about a third larger.
        assert!((zoom(1073.0, 950.0, 1.0) - 950.0 / 700.0).abs() < 1e-9);
        assert_eq!(zoom(4000.0, 3000.0, 1.0), 1.6);
        // In Large type the text is 1.45x already: 1.6x in all at most.
        let large = type_scale(false, true);
        assert!((zoom(979.0, 948.0, large) * large - 1.6).abs() < 1e-9);
        assert_eq!(zoom(706.0, 670.0, large), 1.0);
        // Presenter mode with Large type: the type is 18 px already, and a larger box does not
        // zoom it further.
        let both = type_scale(true, true);
        assert!((11.0 * both - 18.0).abs() < 1e-9);
        assert_eq!(zoom(4000.0, 3000.0, both), 1.0);
        assert!((11.0 * type_scale(true, false) - 16.0).abs() < 1e-9);
    }

    #[test]
    fn rows_fill_the_height_in_stack_order() {
        let l = StackLayout::new(900.0, 560.0, columns(12, None), NO_LAYER);
        assert_eq!(l.rows.len(), STAGES.len() - 1);
        assert_eq!(StackLayout::new(900.0, 560.0, columns(12, None), Optional::ALL).rows.len(), STAGES.len());
        assert!((l.rows.last().unwrap().y + l.rows.last().unwrap().h - 560.0).abs() < 1e-6);
        for w in l.rows.windows(2) {
            assert!(w[0].y < w[1].y);
        }
        // NVMe drives: no host row, and the others share its height.
        let nvme = StackLayout::new(900.0, 560.0, columns(1, None), Optional { layer: false, host: false });
        assert!(!nvme.stages.contains(&Stage::Host) && nvme.stages.len() == STAGES.len() - 2);
        assert!(nvme.row(Stage::Disks).h > l.row(Stage::Disks).h);
    }

    #[test]
    fn device_columns_never_overlap_and_stay_inside_the_canvas() {
        for n in [1usize, 2, 12, 80, 256] {
            let l = StackLayout::new(900.0, 560.0, columns(n, None), Optional::ALL);
            assert_eq!(l.dev_cols.len(), n.min(if n > DEVICES_UNGROUPED_MAX { GROUPS } else { n }));
            for w in l.dev_cols.windows(2) {
                assert!(w[0].0 + w[0].1 <= w[1].0 + 1e-9);
            }
            let (x, w) = *l.dev_cols.last().unwrap();
            assert!(x + w <= 900.0 + 1e-9);
        }
        assert!(StackLayout::new(900.0, 560.0, columns(12, None), NO_LAYER).dev_labels);
    }

    #[test]
    fn a_large_array_collapses_into_groups_and_one_group_expands() {
        let cols = columns(80, None);
        assert_eq!(cols.len(), 10);
        assert!(cols.iter().all(|c| c.count == 8 && c.group.is_some()));
        let cols = columns(80, Some(3));
        assert_eq!(cols.len(), 9 + 8);
        assert_eq!(cols.iter().filter(|c| c.group.is_none()).count(), 8);
        // Every device is in exactly one column, in order.
        let mut next = 0;
        for c in &cols {
            assert_eq!(c.first, next);
            next += c.count;
        }
        assert_eq!(next, 80);
        let l = StackLayout::new(900.0, 560.0, cols, NO_LAYER);
        assert_eq!(l.column_of(27), 3 + 3);
        assert_eq!(l.column_at(l.dev_cols[5].0 + 1.0), Some(5));
    }

    #[test]
    fn processes_stay_in_their_row() {
        let l = StackLayout::new(900.0, 560.0, columns(80, None), Optional::ALL);
        let r = l.row(Stage::Processes);
        for i in 0..100 {
            let (x, y) = l.process_slot(i, 100);
            assert!(x > r.x && x < r.x + r.w && y > r.y && y < r.y + r.h, "{i}: {x},{y}");
        }
    }

    #[test]
    fn process_dots_neither_overlap_nor_leave_their_row_in_a_small_ab_diagram() {
        // 80 dd readers in one of two A/B diagrams at 1024 px, with the run badge and a note.
        for (w, h, n) in [(440.0, 280.0, 80), (900.0, 560.0, 80), (440.0, 280.0, 3), (560.0, 300.0, 100)] {
            let mut l = StackLayout::new(w, h, columns(80, None), Optional::ALL);
            l.process_inset = (140.0, 12.0);
            let r = l.row(Stage::Processes);
            let rad = l.process_radius(n);
            let dots: Vec<(f64, f64)> = (0..n).map(|i| l.process_slot(i, n)).collect();
            for &(x, y) in &dots {
                assert!(x - rad >= r.x && x + rad <= r.x + r.w - 140.0 + 1e-9, "{w}x{h}: x {x} r {rad}");
                assert!(y - rad >= r.y - 1e-9 && y + rad <= r.y + r.h - 12.0 + 1e-9, "{w}x{h}: y {y} r {rad} row {r:?}");
            }
            for (i, a) in dots.iter().enumerate() {
                for b in &dots[i + 1..] {
                    let d = ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
                    assert!(d >= 2.0 * rad - 1e-9, "{w}x{h}: dots {d} apart, radius {rad}");
                }
            }
        }
    }
}
