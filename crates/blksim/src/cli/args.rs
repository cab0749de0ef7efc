//! The `blksim` command line as clap (derive) reads it: subcommands, `--help` with examples,
//! `--version`. Only the binary uses it (the `cli` feature), so the library the browser loads
//! does not carry clap. Values stay text here and are checked in `Args::checked`, which words
//! each message as docs/cli.md says: one line naming the word and what is allowed.

use super::commands::{bad, Args, CliError, USAGE};
use crate::scenario::knob_table::DURATION;
use crate::scenario::limits::SWEEP_SEEDS_MAX;
use crate::scenario::{clip, limits, KNOBS};
use clap::{CommandFactory, Parser, Subcommand};

const ABOUT: &str = "Deterministic simulation of the Linux block I/O stack: the model behind blkviz's lessons";

const EXAMPLES: &str = "Examples:
  blksim lessons                                  the lessons, their variants and fidelity
  blksim run scsi-starved --variant regressed     one run, as iostat/vmstat/top would show it
  blksim compare dm-sg-lists --json               every variant of a lesson side by side
  blksim sweep mq-clone-stall --seeds 200         a distribution over seeds
  blksim fidelity --check                         the scoreboard: each row against its band
  blksim fidelity --cues                          the lessons' cues and predictions, measured
  blksim trace nr-requests --out /tmp/t           binary blktrace files for blkparse and btt
  blksim run --job-file /usr/share/doc/fio/examples/fsx.fio
  blksim replay /tmp/t --json                     btt and iostat of a real trace
  blksim knobs                                    every --set KEY with what it allows
  blksim run 'https://host/#/lesson/nr-requests?v=1&variant=fixed&seed=3'
                                                  a link the app copied, where LESSON goes (in
                                                  quotes: # and & mean something to the shell)";

#[derive(Parser)]
#[command(name = "blksim", version, about = ABOUT, after_help = EXAMPLES, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The command line's clap `Command`: its subcommands and flags (docs/cli.md is checked against it).
pub fn command() -> clap::Command {
    Cli::command()
}

/// `--set KEY=VALUE`, repeatable: its long help lists every knob with its range.
fn set_help() -> String {
    let mut s = String::from(
        "Set a knob (sysfs names where the kernel has one); repeat for several. A lesson's variant sets its own, and these \
         come after them and win. The knobs and what each allows:\n",
    );
    for k in KNOBS {
        s.push_str(&format!("\n  {:<26} {}", k.key, k.kind.allowed()));
    }
    s.push_str("\n\n");
    s.push_str(&crate::scenario::era::table_text());
    s
}

#[derive(Subcommand)]
enum Cmd {
    /// List the lessons, their variants and whether each reproduces its report
    #[command(after_help = "Examples:\n  blksim lessons\n  blksim lessons --json")]
    Lessons {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// List every knob `--set` takes, with what it allows and its source
    #[command(after_help = "Examples:\n  blksim knobs\n  blksim knobs --json | jq '.[].key'")]
    Knobs {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Run one variant of a lesson (or an fio job file) and print what the tools would show
    #[command(
        after_help = "Examples:\n  blksim run scsi-starved --variant regressed --seed 7\n  blksim run dm-sg-lists --set dm.max_sectors_kb=128 --json\n  blksim run --job-file job.fio --duration 5"
    )]
    Run {
        #[command(flatten)]
        run: RunArgs,
        /// An fio job file for the workload (without LESSON: the sandbox); options the model does
        /// not have are named on stderr and ignored
        #[arg(long, value_name = "FILE")]
        job_file: Option<String>,
        /// With --job-file: refuse (exit 2) a file that asks for what the model does not do (an
        /// unknown option, a value out of its range, a second job) instead of running without it
        #[arg(long, requires = "job_file")]
        strict: bool,
    },
    /// Run every variant of a lesson with the same seed, side by side
    #[command(after_help = "Examples:\n  blksim compare nr-requests\n  blksim compare scsi-starved --seed 3 --json")]
    Compare {
        #[command(flatten)]
        common: CommonArgs,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Run one variant over seeds 1..=N and print the distribution of its figures
    #[command(
        after_help = "Examples:\n  blksim sweep mq-clone-stall --variant regressed --seeds 200\n  blksim sweep raid5-chunk --seeds 10 --json"
    )]
    Sweep {
        /// The lesson (see `blksim lessons`), or a link the app copied (its lesson, variant and
        /// knobs; --variant and --set given here come after it)
        lesson: Option<String>,
        /// The variant (default: the lesson's first)
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE", long_help = set_help())]
        sets: Vec<String>,
        /// How many seeds, 1 to 10000
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        seeds: Option<String>,
        /// Simulated seconds per run (default: the lesson's)
        #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
        duration: Option<String>,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Print the app's link (#/lesson/...) for a scenario, to paste into a bug thread
    #[command(
        after_help = "Examples:\n  blksim link dm-sg-lists --variant workaround --set dm.max_sectors_kb=96 --seed 9\n  blksim link scsi-starved --variant regressed --b fixed"
    )]
    Link {
        /// The lesson (see `blksim lessons`), or a link to rewrite in this build's form (its
        /// lesson, variant, B, knobs and seed; what is given here comes after it)
        lesson: Option<String>,
        /// The variant (default: the lesson's first)
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
        /// The A/B view's second variant
        #[arg(long, value_name = "NAME")]
        b: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE", long_help = set_help())]
        sets: Vec<String>,
        /// The seed (default 1)
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        seed: Option<String>,
        /// The app's address to put before the link (https://host/path/), so that it opens
        /// when clicked; given a whole link as LESSON, its own address is kept
        #[arg(long, value_name = "URL")]
        base: Option<String>,
    },
    /// Measure each lesson's fidelity rows against the bands from its report
    #[command(
        after_help = "Examples:\n  blksim fidelity\n  blksim fidelity raid5-chunk\n  blksim fidelity --check   (exit 1 if a row misses)"
    )]
    Fidelity {
        /// One lesson (default: all that have rows)
        lesson: Option<String>,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
        /// Exit 1 if any row misses its band
        #[arg(long)]
        check: bool,
        /// The lessons' cues instead: each step's and prediction's check rows (with --check,
        /// exit 1 if a step's cue does not hold)
        #[arg(long)]
        cues: bool,
    },
    /// Write a run as binary blktrace files (per device and CPU) plus blkparse's text
    #[command(
        after_help = "Examples:\n  blksim trace nr-requests --variant regressed --duration 2 --out /tmp/t\n  blkparse -i /tmp/t/sda -D /tmp/t"
    )]
    Trace {
        #[command(flatten)]
        run: RunArgs,
        /// The directory for the trace files
        #[arg(long, value_name = "DIR")]
        out: Option<String>,
    },
    /// Read a real trace (blktrace's per-CPU files, a `blkparse -d` dump, or blkparse's text)
    /// and print what btt and iostat would: its phases per I/O, per-second figures, offsets
    #[command(
        after_help = "Examples:\n  blksim replay /tmp/t                 every DEV.blktrace.N file in a directory\n  blksim replay sda.blktrace.0 sda.blktrace.1 --json\n  blkparse -i sda -d dump.bin && blksim replay dump.bin\n  blkparse -i sda > sda.txt && blksim replay sda.txt --log"
    )]
    Replay {
        /// Trace files or directories (read nowhere but here: nothing is uploaded)
        #[arg(value_name = "FILE")]
        files: Vec<String>,
        /// Print JSON: btt's phases, iostat per second and the offsets over time, per device
        #[arg(long)]
        json: bool,
        /// Print the records as blkparse does, merged in time order, before the figures
        #[arg(long)]
        log: bool,
    },
}

#[derive(clap::Args)]
struct CommonArgs {
    /// The lesson (see `blksim lessons`), or a link the app copied (its lesson, variant, knobs
    /// and seed; --variant, --set and --seed given here come after it)
    lesson: Option<String>,
    #[arg(long = "set", value_name = "KEY=VALUE", long_help = set_help())]
    sets: Vec<String>,
    /// The seed (default 1); one seed gives one run
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    seed: Option<String>,
    /// Simulated seconds (default: the lesson's)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    duration: Option<String>,
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The variant (default: the lesson's first)
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
    /// Print JSON instead of text (run: the run report docs/cli.md describes; trace: the files written and how to read them)
    #[arg(long)]
    json: bool,
}

/// The raw words of one subcommand, before their values are checked.
#[derive(Default)]
struct Raw {
    lesson: Option<String>,
    variant: Option<String>,
    b: Option<String>,
    sets: Vec<String>,
    seed: Option<String>,
    duration: Option<String>,
    seeds: Option<String>,
    json: bool,
    check: bool,
    out: Option<String>,
    job_file: Option<String>,
    strict: bool,
    files: Vec<String>,
    log: bool,
    cues: bool,
    base: Option<String>,
}

impl Raw {
    fn common(c: CommonArgs) -> Raw {
        Raw { lesson: c.lesson, sets: c.sets, seed: c.seed, duration: c.duration, ..Raw::default() }
    }

    fn run(r: RunArgs) -> Raw {
        Raw { variant: r.variant, json: r.json, ..Raw::common(r.common) }
    }
}

/// An address a browser opens (`--base`, or a pasted link's part before its `#`).
fn is_web_address(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

impl Args {
    /// Checks the values: each wrong one is named with what is allowed.
    fn checked(cmd: &str, mut raw: Raw) -> Result<Args, CliError> {
        let base = Self::checked_base(cmd, &raw)?;
        let mut sets = Vec::with_capacity(raw.sets.len());
        let mut b_sets = Vec::new();
        let link_t = Self::take_link(cmd, &mut raw, &mut sets, &mut b_sets)?;
        Self::take_sets(&raw, &mut sets)?;
        let seed = match &raw.seed {
            None => None,
            Some(v) => Some(
                v.parse()
                    .map_err(|_| bad(format!("--seed: '{}' is not allowed; expected a whole number from 0 to {}", clip(v), u64::MAX)))?,
            ),
        };
        let seeds = match &raw.seeds {
            None => None,
            Some(v) => match v.parse::<u64>() {
                Ok(n) if (1..=SWEEP_SEEDS_MAX).contains(&n) => Some(n),
                _ => {
                    return Err(bad(format!("--seeds: '{}' is not allowed; expected a whole number from 1 to {SWEEP_SEEDS_MAX}", clip(v))))
                }
            },
        };
        let duration = match &raw.duration {
            None => None,
            Some(v) => match v.parse::<f64>() {
                // The same bounds as the page's duration knob, in the same words.
                Ok(d) if (limits::DURATION_S_MIN..=limits::DURATION_S_MAX).contains(&d) => Some(d),
                _ => {
                    let allowed = DURATION.kind.allowed();
                    return Err(bad(format!("--duration: '{}' is not allowed; expected {allowed}", clip(v))));
                }
            },
        };
        Ok(Args {
            lesson: raw.lesson,
            variant: raw.variant,
            b: raw.b,
            sets,
            b_sets,
            seed,
            duration,
            seeds,
            json: raw.json,
            check: raw.check,
            out: raw.out,
            job_file: raw.job_file,
            strict: raw.strict,
            files: raw.files,
            log: raw.log,
            cues: raw.cues,
            link_t,
            base,
        })
    }

    /// `--base`, or a whole link's address (before its `#`): `link` prints the rewritten link
    /// after it.
    fn checked_base(cmd: &str, raw: &Raw) -> Result<Option<String>, CliError> {
        let mut base = raw.base.clone();
        if let (Some(w), "link") = (raw.lesson.as_deref().map(as_pasted), cmd) {
            if let (Some((addr, _)), None) = (w.split_once('#'), &base) {
                if is_web_address(addr) {
                    base = Some(addr.to_string());
                }
            }
        }
        if let Some(b) = &base {
            if !is_web_address(b) || b.contains('#') || b.chars().any(char::is_whitespace) {
                return Err(bad(format!(
                    "--base: '{}' is not allowed; expected the app's address, http:// or https://, without a #",
                    clip(b)
                )));
            }
        }
        Ok(base)
    }

    /// A link pasted where the lesson goes: its scenario first (its knobs into `sets`, run B's
    /// own into `b_sets`), the command line's words after. Returns the link's time.
    fn take_link(
        cmd: &str,
        raw: &mut Raw,
        sets: &mut Vec<(String, String)>,
        b_sets: &mut Vec<(String, String)>,
    ) -> Result<Option<f64>, CliError> {
        if let Some(st) = raw.lesson.as_deref().map(link_in_lesson_word).transpose()?.flatten() {
            if cmd == "fidelity" {
                return Err(bad(
                    "fidelity: expected a lesson's id, not a link (its rows are measured on the lesson's own variants and knobs)",
                ));
            }
            // What of the link this command does not use is said on stderr, not dropped unsaid.
            let mut unused = Vec::new();
            if let (Some(b), true) = (&st.b, cmd != "link") {
                unused.push(format!("b={b} (the A/B view's second variant; `compare` runs every variant)"));
            }
            if !st.b_overrides.is_empty() && cmd != "link" {
                let own: Vec<String> = st.b_overrides.iter().map(|(k, v)| format!("b.{k}={v}")).collect();
                unused.push(format!("{} (run B's own knobs: --set them to run B's setup)", own.join(", ")));
            }
            if let (Some(v), true) = (&st.variant, cmd == "compare") {
                unused.push(format!("variant={v} (compare runs every variant)"));
            }
            if cmd == "sweep" && st.seed != 1 {
                unused.push(format!("seed={} (sweep runs seeds 1 to --seeds)", st.seed));
            }
            if let (Some(t), true) = (st.t, cmd != "link") {
                unused.push(format!("t={t} (the page's time; a run's end is --duration)"));
            }
            if !unused.is_empty() {
                eprintln!("blksim: {cmd} does not use the link's {}", unused.join(", "));
            }
            // --variant naming the link's B: say where the B came from.
            if let (Some(v), Some(b), "link") = (&raw.variant, &st.b, cmd) {
                if v == b && raw.b.is_none() {
                    return Err(bad(format!(
                        "--variant: '{}' is the link's B (b={}); expected A and B to differ: give --b another variant",
                        clip(v),
                        clip(b)
                    )));
                }
            }
            raw.lesson = Some(st.lesson);
            raw.variant = raw.variant.take().or(st.variant);
            raw.b = raw.b.take().or(st.b);
            *b_sets = st.b_overrides;
            raw.seed = raw.seed.take().or(Some(st.seed.to_string()));
            // The command line's --duration comes after the link's `duration` knob, as --set does.
            sets.extend(st.overrides.into_iter().filter(|(k, _)| !(k == DURATION.key && raw.duration.is_some())));
            return Ok(st.t);
        }
        Ok(None)
    }

    /// The `--set`s, after the link's: the last of a key is the one that runs.
    fn take_sets(raw: &Raw, sets: &mut Vec<(String, String)>) -> Result<(), CliError> {
        for kv in &raw.sets {
            let (k, v) = kv.split_once('=').ok_or_else(|| bad(format!("--set: '{}' is not KEY=VALUE", clip(kv))))?;
            // The last --set of a key is the one that runs; a link carries it once.
            sets.retain(|(key, _): &(String, String)| key != k);
            sets.push((k.to_string(), v.to_string()));
        }
        // Two ends for one run: which did the user mean? (A job file's runtime is a --set the
        // command line's --duration may override; that is not this, nor is a link's.)
        if raw.duration.is_some() && raw.sets.iter().any(|kv| kv.split_once('=').is_some_and(|(k, _)| k == DURATION.key)) {
            return Err(bad("--duration and --set duration= both given; expected one of them (they set the same end of the run)"));
        }
        Ok(())
    }
}

/// A link as it was pasted, made whole again: a pasted link often brings a space or a newline
/// with it, and mail and bug trackers wrap it in <...> or write its & as &amp; (HTML copied as
/// text).
fn as_pasted(word: &str) -> String {
    let word = word.trim();
    word.strip_prefix('<').and_then(|w| w.strip_suffix('>')).unwrap_or(word).replace("&amp;", "&")
}

/// The lesson word as a link the app copied (a whole address, or its fragment from `#/lesson/`
/// or `#/sandbox`): its state, checked as the page checks it, or None for a lesson's id. A link
/// with any part wrong is refused, naming the parts: the command line reproduces a run exactly
/// or not at all. A link without its version (`v=1`) is read as this build's.
fn link_in_lesson_word(word: &str) -> Result<Option<crate::course::link::LinkState>, CliError> {
    let pasted = as_pasted(word);
    let word = pasted.as_str();
    let fragment = match word.split_once('#') {
        Some((_, f)) => f,
        None if word.starts_with("/lesson/") || word.starts_with("/sandbox") => word,
        None if word.starts_with("http://") || word.starts_with("https://") => {
            return Err(bad(format!(
                "the link: '{}' has no #/lesson/… or #/sandbox… part; expected the whole address the app copied (…#/lesson/<id>?v=1&…)",
                crate::scenario::clip_line(word)
            )))
        }
        None => return Ok(None),
    };
    match crate::course::link::LinkState::decode_lenient(fragment) {
        Ok((st, None)) => Ok(Some(st)),
        Ok((st, Some(e))) => {
            // A missing `v` is read as this build's, and the page's view (pace, step, presenter
            // mode, type size) is not the run's: neither is a fault here.
            let wrong: Vec<String> = e
                .parts()
                .into_iter()
                .filter(|p| !p.starts_with("v: missing") && !LINK_VIEW_PARTS.iter().any(|v| p.starts_with(&format!("{v}: "))))
                .collect();
            if wrong.is_empty() {
                Ok(Some(st))
            } else {
                Err(bad(format!("the link: {}", wrong.join("; "))))
            }
        }
        Err(e) => Err(bad(format!("the link: {e}"))),
    }
}

/// A link's parameters that are the page's view of a run, not the run: the command line does
/// not use them, so a value the page would refuse does not stop a command.
const LINK_VIEW_PARTS: [&str; 4] = ["speed", "step", "presenter", "large"];

/// What the binary does: a subcommand and its checked arguments, or text to print and exit 0
/// (`--help`, `--version`).
pub enum Parsed {
    Command(&'static str, Box<Args>),
    Print(String),
}

/// Parses `args` (without the program name). Clap's own errors are cut to their first line,
/// with the subcommand's options or the subcommands appended, so the contract's one line holds.
pub fn parse(args: &[String]) -> Result<Parsed, CliError> {
    if args.is_empty() {
        return Err(bad(USAGE));
    }
    let words = std::iter::once("blksim".to_string()).chain(args.iter().cloned());
    let cli = match Cli::try_parse_from(words) {
        Ok(c) => c,
        Err(e) => return one_line(&e, args),
    };
    let (name, raw) = match cli.cmd {
        Cmd::Lessons { json } => ("lessons", Raw { json, ..Raw::default() }),
        Cmd::Knobs { json } => ("knobs", Raw { json, ..Raw::default() }),
        Cmd::Run { run, job_file, strict } => ("run", Raw { job_file, strict, ..Raw::run(run) }),
        Cmd::Compare { common, json } => ("compare", Raw { json, ..Raw::common(common) }),
        Cmd::Sweep { lesson, variant, sets, seeds, duration, json } => {
            ("sweep", Raw { lesson, variant, sets, seeds, duration, json, ..Raw::default() })
        }
        Cmd::Link { lesson, variant, b, sets, seed, base } => ("link", Raw { lesson, variant, b, sets, seed, base, ..Raw::default() }),
        Cmd::Fidelity { lesson, json, check, cues } => ("fidelity", Raw { lesson, json, check, cues, ..Raw::default() }),
        Cmd::Trace { run, out } => ("trace", Raw { out, ..Raw::run(run) }),
        Cmd::Replay { files, json, log } => ("replay", Raw { files, json, log, ..Raw::default() }),
    };
    Ok(Parsed::Command(name, Box::new(Args::checked(name, raw)?)))
}

/// A clap error as this CLI says it: help and version are text to print; anything else is one
/// line naming the word and what is allowed there.
fn one_line(e: &clap::Error, args: &[String]) -> Result<Parsed, CliError> {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => return Ok(Parsed::Print(e.render().to_string())),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => return Err(bad(USAGE)),
        _ => {}
    }
    let rendered = e.render().to_string();
    let mut lines = rendered.lines();
    let mut first = lines.next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
    // "the following required arguments were not provided:" names them on the lines after.
    if first.ends_with(':') {
        let named: Vec<&str> = lines.map(str::trim).take_while(|l| !l.is_empty()).collect();
        first = format!("{first} {}", named.join(", "));
    }
    if let Some(clap::error::ContextValue::String(s)) = e.get(clap::error::ContextKind::SuggestedArg) {
        first.push_str(&format!(" (did you mean '{s}'?)"));
    }
    let cmd = Cli::command();
    let sub = args.first().and_then(|s| cmd.get_subcommands().find(|c| c.get_name() == s.as_str()));
    let allowed = match sub {
        Some(sub) => {
            let opts: Vec<String> = sub.get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")).collect();
            format!("{}: {first}; allowed: {} (see 'blksim {} --help')", sub.get_name(), opts.join(" "), sub.get_name())
        }
        None => {
            let subs: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            format!("{first}; expected one of {} (see 'blksim --help')", subs.join(", "))
        }
    };
    Err(bad(allowed.replace(['\n', '\r'], " ")))
}
