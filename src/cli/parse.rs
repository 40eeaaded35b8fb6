//! `selfdebug parse`: read a log, print failures.

use std::io::{IsTerminal, Read};

use super::{error, ParseArgs};
use crate::{exit, report, traceback};

pub fn run(args: &ParseArgs) -> i32 {
    let bytes = match read_log(args) {
        Ok(b) => b,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    if !args.root.is_dir() {
        error(format!("--root {}: not a directory", args.root.display()));
        return exit::BAD_INPUT;
    }
    let root = match traceback::locate::absolute_root(&args.root) {
        Ok(r) => r,
        Err(e) => {
            error(format!("--root {}: {e}", args.root.display()));
            return exit::BAD_INPUT;
        }
    };
    let parsed = match traceback::parse(&bytes, &root) {
        Ok(p) => p,
        Err(e) => {
            error(format!("{}: {e}", log_name(args)));
            return exit::BAD_INPUT;
        }
    };
    let out = if args.json {
        report::parse::json(&parsed)
    } else {
        report::parse::human(&parsed)
    };
    print!("{out}");
    if parsed.failures.is_empty() {
        exit::NO_FAILURE
    } else {
        exit::OK
    }
}

fn log_name(args: &ParseArgs) -> String {
    match &args.log {
        Some(p) if p.as_os_str() != "-" => p.display().to_string(),
        _ => "standard input".to_string(),
    }
}

fn read_log(args: &ParseArgs) -> Result<Vec<u8>, String> {
    match &args.log {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err("no log given: pass a file, or pipe pytest output into `-`".into());
            }
            let mut buf = Vec::new();
            stdin
                .lock()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(buf)
        }
    }
}
