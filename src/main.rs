//! The `schedlab` binary: the command line ([`cli`]) and the subcommands that connect the
//! stages ([`app`]); `main` maps their result to the exit code.
//!
//! The stages are crates of their own (see docs/ARCHITECTURE.md); unsafe code lives only in
//! `schedlab-sys`.

#![forbid(unsafe_code)]

mod app;
mod cli;

fn main() {
    std::process::exit(app::main());
}
