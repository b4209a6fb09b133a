//! The command line (clap derive): the top-level options, the survey's options for
//! `sleeplab` without a subcommand, and the subcommands ([`Command`], one module each
//! in [`crate::commands`]). Values are parsed by [`crate::parse`], so a bad value is
//! reported with its text, in one line, with exit code 2.

use crate::commands::Command;
use crate::commands::survey::SurveyArgs;
use clap::Parser;

/// sleeplab: how long does waiting really take here, and why?
#[derive(Debug, Parser)]
#[command(name = "sleeplab", version, about, long_about = None)]
pub struct Cli {
    /// No progress bars.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Tables at their full width (every column), and a sentence per traced cell; by
    /// default they fit 100 columns, or the terminal's width when it is narrower.
    #[arg(long, global = true)]
    pub wide: bool,
    /// The survey's options, for `sleeplab` without a subcommand (= `sleeplab survey`).
    #[command(flatten)]
    pub survey: SurveyArgs,
    /// The experiment to run (default: the survey).
    #[command(subcommand)]
    pub command: Option<Command>,
}
