//! Model answers by a hash of the request (endpoint and body; the key is in neither), in the
//! tool's private cache (`~/.cache/selfdebug/llm/`, 0700, files 0600): a rerun of the same
//! failure costs no request, and tests are deterministic. `--llm-no-cache` bypasses it.

use std::path::PathBuf;

/// The cache entry's name for a request.
pub fn key(url: &str, body: &str) -> String {
    let mut input = Vec::with_capacity(url.len() + body.len() + 1);
    input.extend_from_slice(crate::llm::client::endpoint(url).as_bytes());
    input.push(b'\n');
    input.extend_from_slice(body.as_bytes());
    crate::journal::hash(&input)
}

/// The private directory, or none when it cannot be made private (then nothing is cached).
fn dir() -> Option<PathBuf> {
    let d = crate::process::cache_home()?.join("llm");
    crate::process::private_dir(&d).then_some(d)
}

pub fn get(key: &str) -> Option<String> {
    std::fs::read_to_string(dir()?.join(format!("{key}.json"))).ok()
}

/// Best effort: a cache that cannot be written only costs a request next time.
pub fn put(key: &str, response: &str) {
    let Some(d) = dir() else { return };
    let _ = crate::process::write_private(&d.join(format!("{key}.json")), response.as_bytes());
}
