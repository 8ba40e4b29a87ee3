use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// ptxr: compile NVIDIA PTX for CPUs.
#[derive(Parser)]
#[command(name = "ptxr", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and validate PTX files; errors as FILE:LINE:COL: error: ...
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Check { files } => {
            let mut ok = true;
            for f in &files {
                match ptxr::SourceFile::load(f) {
                    Ok(src) => {
                        if let Err(msg) = ptxr::check_source(&src) {
                            eprint!("{msg}");
                            ok = false;
                        }
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        ok = false;
                    }
                }
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
