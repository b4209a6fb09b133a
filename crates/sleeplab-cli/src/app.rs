//! Dispatch: parse the command line, run the command, map errors to exit codes
//! (0 ok, 1 failure, 2 bad input, 130 interrupted).

use crate::cli::Cli;
use crate::error::UsageError;
use crate::model::LoadError;
use crate::parse::{ParseError, UnknownName};
use crate::{commands, interrupt};
use clap::Parser;

/// The width terminal tables fit: none with `--wide`, else the default, or the
/// terminal's width where stdout is a narrower terminal (never below 60 columns).
fn table_width(wide: bool) -> Option<u16> {
    if wide {
        return None;
    }
    let terminal = console::Term::stdout().size_checked().map(|(_, cols)| cols);
    Some(terminal.map_or(sleeplab_stats::DEFAULT_WIDTH, |c| {
        c.clamp(60, sleeplab_stats::DEFAULT_WIDTH)
    }))
}

/// Runs sleeplab with the process's arguments and returns the exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return 0;
            }
            // One line naming the bad value, exit 2.
            let text = e.render().to_string();
            let mut lines = text.lines();
            let mut first = lines.next().unwrap_or("invalid arguments").to_string();
            // "the following required arguments were not provided:" is followed by
            // the indented names: keep them on the one line.
            if first.ends_with(':') {
                let names: Vec<&str> = lines
                    .take_while(|l| l.starts_with(' '))
                    .map(str::trim)
                    .collect();
                first = format!("{first} {}", names.join(", "));
            }
            eprintln!("sleeplab: {}", first.trim_start_matches("error: "));
            return 2;
        }
    };
    if let (Some(_), Some(flag)) = (&cli.command, cli.survey.given_flag()) {
        eprintln!(
            "sleeplab: {flag} is an option of the survey (`sleeplab {flag}`), not of a subcommand"
        );
        return 2;
    }
    sleeplab_stats::set_terminal_width(table_width(cli.wide));
    interrupt::install();
    // What a `tune` killed before it could restore left changed, restored first (as
    // the capture crate removes the trace instances of dead runs).
    crate::tuning::replay_at_startup();
    let result = match &cli.command {
        Some(command) => command.run(cli.quiet),
        // No subcommand: the survey, with the options given at the top level.
        None => commands::survey::run(&cli.survey, cli.quiet),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = if is_usage(&e) { 2 } else { 1 };
            eprintln!(
                "sleeplab: {}",
                format!("{e:#}").lines().next().unwrap_or("error")
            );
            code
        }
    }
}

/// Whether an error chain is the user's to fix (exit 2).
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<UsageError>() || e.is::<ParseError>() || e.is::<UnknownName>() || e.is::<LoadError>()
    })
}
