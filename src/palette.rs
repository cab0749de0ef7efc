//! Colour means process: the Okabe–Ito colour-blind-safe palette for jobs, and fixed hues for
//! kernel threads, used the same way everywhere.

pub const OKABE_ITO: [&str; 7] = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"];

pub fn process_colour(pid: u32) -> &'static str {
    OKABE_ITO[(pid as usize) % OKABE_ITO.len()]
}

/// Kernel threads get fixed hues by name.
pub fn thread_colour(name: &str, pid: u32) -> &'static str {
    if name.starts_with("ksoftirqd") {
        "#9b1c31"
    } else if name.starts_with("kblockd") {
        "#6b4f9e"
    } else if name.starts_with("raid5d") || name.starts_with("md") {
        "#2f6f4f"
    } else if name.starts_with("kdmwork") {
        "#8a5a00"
    } else {
        process_colour(pid)
    }
}
