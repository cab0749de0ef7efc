//! Colour means process: the Okabe–Ito colour-blind-safe palette for jobs, and fixed hues for
//! kernel threads, used the same way everywhere.

pub const OKABE_ITO: [&str; 7] = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"];

pub fn process_colour(pid: u32) -> &'static str {
    OKABE_ITO[(pid as usize) % OKABE_ITO.len()]
}

/// Kernel threads get fixed hues by name.
pub fn thread_colour(name: &str, pid: u32) -> &'static str {
    kernel_colour(name).unwrap_or_else(|| process_colour(pid))
}

/// A kernel thread's fixed hue, by its name; None for any other thread.
fn kernel_colour(name: &str) -> Option<&'static str> {
    Some(if name.starts_with("ksoftirqd") {
        "#9b1c31"
    } else if name.starts_with("kblockd") {
        "#6b4f9e"
    } else if name.starts_with("raid5d") || name.starts_with("md") {
        "#2f6f4f"
    } else if name.starts_with("kdmwork") {
        "#8a5a00"
    } else {
        return None;
    })
}

/// A thread's colour on a run's diagram: a kernel thread's fixed hue, else its process's
/// (`pid_colour`: its job's where the run has several job sections).
pub fn thread_colour_in(topology: &blksim::tools::view::Topology, name: &str, pid: u32) -> &'static str {
    kernel_colour(name).unwrap_or_else(|| pid_colour(topology, pid))
}

/// A job section's colour where a run has several, in the job file's order: Okabe–Ito without
/// its yellow (too pale on the light theme and on a projector), orange and blue first, the
/// pair every kind of colour blindness keeps apart, then bluish green, vermilion, reddish
/// purple, sky blue.
pub const JOB_COLOURS: [&str; 6] = ["#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9"];

pub fn job_colour(section: usize) -> &'static str {
    JOB_COLOURS[section % JOB_COLOURS.len()]
}

/// A job process's colour: its job's where the run has several job sections, else its own.
pub fn pid_colour(topology: &blksim::tools::view::Topology, pid: u32) -> &'static str {
    if topology.process_jobs.iter().any(|&s| s > 0) {
        if let Some(i) = topology.processes.iter().position(|(_, p)| *p == pid) {
            return job_colour(usize::from(topology.process_jobs.get(i).copied().unwrap_or(0)));
        }
    }
    process_colour(pid)
}
