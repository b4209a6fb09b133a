//! The `sleeplab` binary.

fn main() {
    std::process::exit(sleeplab_cli::app::run());
}
