//! `SELFDEBUG_TRACE_TIMES=1`: the duration of each phase of the tool's own work, one line per
//! span on stderr (`selfdebug-time: AT ms +TOOK ms LABEL`, AT counted from the process start).
//! For profiling where the time outside pytest goes; off by default and free when off.
use std::sync::OnceLock;
use std::time::Instant;

fn origin() -> Option<Instant> {
    static ON: OnceLock<Option<Instant>> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os("SELFDEBUG_TRACE_TIMES")
            .is_some_and(|v| !v.is_empty() && v != "0")
            .then(Instant::now)
    })
}

/// Starts the clock (call first thing, so AT is time since the start).
pub fn init() {
    let _ = origin();
}

/// A span: its line is printed when it is dropped.
pub struct Span {
    label: &'static str,
    start: Option<Instant>,
}

pub fn span(label: &'static str) -> Span {
    Span {
        label,
        start: origin().map(|_| Instant::now()),
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let (Some(o), Some(s)) = (origin(), self.start) {
            crate::stdio::errln(&format!(
                "selfdebug-time: {:>6} ms +{:>5} ms {}",
                s.duration_since(o).as_millis(),
                s.elapsed().as_millis(),
                self.label
            ));
        }
    }
}
