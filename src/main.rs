//! The `cairn` binary: the CLI, and the window when no command is given.

#![warn(clippy::too_many_lines)]

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cairn::cli::run());
}
