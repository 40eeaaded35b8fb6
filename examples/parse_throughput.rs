//! Times `traceback::parse` alone on a log: `parse_throughput LOG ROOT [RUNS]`.
//! Used by scripts/bench-parse; prints the best run's MB/s.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: parse_throughput LOG ROOT [RUNS]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).expect("read log");
    let root =
        selfdebug::traceback::locate::absolute_root(std::path::Path::new(&args[2])).expect("root");
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let mut best = f64::MAX;
    let mut failures = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let parsed = selfdebug::traceback::parse(&bytes, &root).expect("parse");
        best = best.min(start.elapsed().as_secs_f64());
        failures = parsed.failures.len();
    }
    println!(
        "{:.1} MB, {failures} failures, best of {runs}: {:.0} ms, {:.0} MB/s",
        bytes.len() as f64 / 1e6,
        best * 1e3,
        bytes.len() as f64 / 1e6 / best
    );
}
