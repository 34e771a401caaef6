//! The `tbstream` command: thin; the work lives in the library, the command line in `cli`.

mod cli;

fn main() {
    // A file-size limit then makes writes fail with an error instead of killing us.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    std::process::exit(cli::run());
}
