//! The `sleeplab` binary.

fn main() {
    // A closed stdout (`sleeplab list | head -1`) ends the process quietly, as it does
    // any other command-line tool, instead of a panic in `println!`. Rust starts with
    // SIGPIPE ignored; `sleeplab monitor`, a server whose clients may go away mid-answer,
    // ignores it again (commands/monitor.rs); probes' pipes are only read.
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(sleeplab_cli::app::run());
}
