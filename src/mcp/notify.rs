//! What a run reports, as MCP notifications: its steps as `notifications/progress`, its log
//! lines (the child's stderr) as `notifications/message` at the level the client set.

#![allow(deprecated)] // LoggingLevel: deprecated by the SDK for a later spec; 2025-11-25 has it.

use rmcp::model::LoggingLevel;

/// `progress` and `total` of the run's steps. The unit is a failure: `total` is the failures
/// known (it grows when a fix reveals failures behind it), `progress` the failures done plus
/// the share of the current one's candidates tried (candidate k of m: k/(m+1)). Before the
/// baseline ends no failure is known, so there is no total. `progress` strictly increases, as
/// the specification requires: a step that would not move it moves it by a thousandth.
#[derive(Default)]
pub struct Steps {
    last: Option<f64>,
}

/// `n` and `m` of `n/m` at the start of `text` (digits, a slash, digits).
fn fraction(text: &str) -> Option<(u32, u32)> {
    let (n, rest) = text.split_once('/')?;
    let m: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((n.parse().ok()?, m.parse().ok()?))
}

impl Steps {
    /// The notification's message (the step without the terminal's `selfdebug: ` prefix),
    /// `progress` and `total` for a step the run reported.
    pub fn next(&mut self, context: &str, step: &str) -> (String, f64, Option<f64>) {
        let message = [context, step]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        // `[n/of] test` while a failure is worked on; `candidate k/m (rule)` in its steps.
        let failure = context.strip_prefix('[').and_then(fraction);
        let candidate = step
            .find("candidate ")
            .and_then(|i| fraction(&step[i + "candidate ".len()..]));
        let (value, total) = match failure {
            Some((n, of)) if n >= 1 && of >= n => {
                let share = candidate
                    .filter(|(k, m)| *k <= *m)
                    .map_or(0.0, |(k, m)| f64::from(k) / f64::from(m + 1));
                (f64::from(n - 1) + share, Some(f64::from(of)))
            }
            _ => (0.0, None),
        };
        let value = match self.last {
            Some(last) if value <= last => last + 0.001,
            _ => value,
        };
        self.last = Some(value);
        (message, value, total)
    }
}

/// Rank of a level, lowest (debug) first; the SDK's enum has no order of its own.
pub fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A line the run wrote on stderr as a log message: its level (`selfdebug: error:` is an
/// error, `warning:` a warning, the rest info) and its text without the `selfdebug: ` prefix.
/// Blank lines are none.
pub fn log_line(line: &str) -> Option<(LoggingLevel, String)> {
    let line = line.trim_end();
    if line.trim().is_empty() {
        return None;
    }
    let text = line.strip_prefix("selfdebug: ").unwrap_or(line);
    let level = if text.starts_with("error:") {
        LoggingLevel::Error
    } else if text.starts_with("warning:") {
        LoggingLevel::Warning
    } else {
        LoggingLevel::Info
    };
    Some((level, text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_failures_and_their_candidates_and_always_increases() {
        let mut s = Steps::default();
        let steps = [
            ("", "running the test suite (baseline)"),
            ("[1/2] t.py::a", ""),
            ("[1/2] t.py::a", "probing the failing line"),
            ("[1/2] t.py::a", "candidate 1/3 (r): running the test"),
            (
                "[1/2] t.py::a",
                "candidate 1/3 (r): running the whole suite",
            ),
            ("[1/2] t.py::a", "candidate 2/3 (r): running the test"),
            ("[2/3] t.py::b", ""),
        ];
        let got: Vec<(String, f64, Option<f64>)> =
            steps.iter().map(|(c, st)| s.next(c, st)).collect();
        let values: Vec<f64> = got
            .iter()
            .map(|g| (g.1 * 1000.0).round() / 1000.0)
            .collect();
        assert_eq!(values, [0.0, 0.001, 0.002, 0.25, 0.251, 0.5, 1.0]);
        let totals: Vec<Option<f64>> = got.iter().map(|g| g.2).collect();
        assert_eq!(
            totals,
            [
                None,
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(2.0),
                Some(3.0)
            ]
        );
        assert_eq!(got[0].0, "running the test suite (baseline)");
        assert_eq!(
            got[3].0,
            "[1/2] t.py::a: candidate 1/3 (r): running the test"
        );
    }

    #[test]
    fn stderr_lines_become_leveled_messages() {
        assert_eq!(
            log_line("selfdebug: error: bad log"),
            Some((LoggingLevel::Error, "error: bad log".to_string()))
        );
        assert_eq!(
            log_line("selfdebug: warning: x"),
            Some((LoggingLevel::Warning, "warning: x".to_string()))
        );
        assert_eq!(
            log_line("selfdebug: pass: nothing to fix"),
            Some((LoggingLevel::Info, "pass: nothing to fix".to_string()))
        );
        assert_eq!(log_line("  "), None);
        assert!(rank(LoggingLevel::Error) > rank(LoggingLevel::Info));
    }
}
