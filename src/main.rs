//! The `cairn` binary: the CLI, and the window when no command is given.

fn main() {
    std::process::exit(cairn::cli::run());
}
