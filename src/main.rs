//! The `tidebench` binary: parse, call, map errors to exit codes
//! (0 ok, 1 a check failed, 2 usage/config/setup error, 130 interrupted).

fn main() -> std::process::ExitCode {
    tidebench::cli::main()
}
