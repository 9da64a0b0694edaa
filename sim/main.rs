//! The `ckptsim` binary: the command line of `ckptsim::cli`.

fn main() -> std::process::ExitCode {
    ckptsim::cli::main()
}
