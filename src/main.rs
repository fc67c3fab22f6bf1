//! The `schedlab` binary: everything lives in the library; this maps its result to the exit code.

fn main() {
    std::process::exit(schedlab::app::main());
}
