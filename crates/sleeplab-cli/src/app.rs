//! Dispatch: parse the command line, run the command, map errors to exit codes
//! (0 ok, 1 failure, 2 bad input, 130 interrupted).

use crate::cli::{Cli, Command};
use crate::{commands, error, interrupt};
use clap::Parser;

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
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("sleeplab: {}", first.trim_start_matches("error: "));
            return 2;
        }
    };
    interrupt::install();
    let result = match &cli.command {
        Some(Command::List) => commands::list::run(),
        Some(Command::Sweep(args)) => commands::sweep::run(args, cli.quiet),
        Some(Command::Schema { output }) => commands::schema::run(output.as_deref()),
        None => {
            // The default experiment: a sweep with default settings.
            match Cli::try_parse_from(["sleeplab", "sweep"]) {
                Ok(Cli {
                    command: Some(Command::Sweep(a)),
                    ..
                }) => commands::sweep::run(&a, cli.quiet),
                Ok(_) => unreachable!("parsing `sweep` yields the sweep command"),
                Err(e) => Err(e.into()),
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = if error::is_usage(&e) { 2 } else { 1 };
            eprintln!(
                "sleeplab: {}",
                format!("{e:#}").lines().next().unwrap_or("error")
            );
            code
        }
    }
}
