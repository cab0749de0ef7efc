//! `blksim`: run lessons and scenarios from the command line (docs/cli.md is its contract).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Err(e) = blksim::cli::main(&args, &mut out) {
        eprintln!("blksim: {e}");
        std::process::exit(e.exit_code());
    }
}
