//! A relative `root` argument, resolved against the client's MCP roots (`roots/list`, asked
//! only of a client that declared the `roots` capability). The server's own working directory
//! is never used: it is wherever the host happened to start the server, which the model cannot
//! know. A relative root with no roots to resolve it is refused (see `tools::ArgError`).

use std::path::{Path, PathBuf};

use rmcp::model::JsonObject;
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;

/// The `root` argument of a call when it is a relative path.
pub fn relative(arguments: Option<&JsonObject>) -> Option<&str> {
    let root = arguments?.get("root")?.as_str()?;
    Path::new(root).is_relative().then_some(root)
}

/// The local directory a root's URI names: `file://` URIs only (percent-decoded); others (the
/// specification allows only `file://` today) are skipped.
fn path_of(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// How long a client has to answer `roots/list` (it answers from memory; a few seconds is
/// already a client that is stuck).
pub const LIST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The client's roots as directories; none when it did not declare the capability.
pub async fn of_client(peer: &Peer<RoleServer>) -> Result<Vec<PathBuf>, String> {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !declared {
        return Ok(Vec::new());
    }
    // A client that declared roots but never answers must not hold the call forever.
    let listed = tokio::time::timeout(LIST_TIMEOUT, peer.list_roots())
        .await
        .map_err(|_| {
            format!(
                "the client did not answer roots/list within {} s: pass an absolute root",
                LIST_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("cannot list the client's MCP roots: {e}"))?;
    Ok(listed
        .roots
        .iter()
        .filter_map(|r| path_of(&r.uri))
        .collect())
}

/// `relative` joined to the one root under which it is a directory; `None` when there are no
/// roots (the caller then refuses the relative root); an error when it is under none of them
/// or under more than one.
pub fn resolve(tool: &str, relative: &str, roots: &[PathBuf]) -> Option<Result<PathBuf, String>> {
    if roots.is_empty() {
        return None;
    }
    let found: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.join(relative))
        .filter(|p| p.is_dir())
        .collect();
    let listed = || {
        roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "{tool}: root {relative:?} is not a directory under any of the client's MCP roots \
             ({}): pass an absolute path",
            listed()
        )),
        _ => Err(format!(
            "{tool}: root {relative:?} is a directory under more than one of the client's MCP \
             roots ({}): pass an absolute path",
            listed()
        )),
    })
}

/// `arguments` with `root` replaced by `resolved`.
pub fn with_root(arguments: &JsonObject, resolved: &Path) -> JsonObject {
    let mut args = arguments.clone();
    args.insert(
        "root".to_string(),
        Value::String(resolved.to_string_lossy().into_owned()),
    );
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(path_of("file:///a/b%20c"), Some(PathBuf::from("/a/b c")));
        assert_eq!(path_of("file://localhost/x"), Some(PathBuf::from("/x")));
        assert_eq!(path_of("https://example.com/x"), None);
        assert_eq!(path_of("file://host/x"), None);
    }

    #[test]
    fn a_relative_root_is_found_under_exactly_one_root() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::create_dir(a.path().join("proj")).unwrap();
        let roots = [a.path().to_path_buf(), b.path().to_path_buf()];
        assert_eq!(resolve("fix", "proj", &[]), None);
        assert_eq!(
            resolve("fix", "proj", &roots),
            Some(Ok(a.path().join("proj")))
        );
        let none = resolve("fix", "nope", &roots).unwrap().unwrap_err();
        assert!(
            none.starts_with("fix: root \"nope\" is not a directory under any"),
            "{none}"
        );
        std::fs::create_dir(b.path().join("proj")).unwrap();
        let two = resolve("fix", "proj", &roots).unwrap().unwrap_err();
        assert!(two.contains("more than one"), "{two}");
        // `.` is the root itself.
        assert_eq!(
            resolve("fix", ".", &roots[..1]),
            Some(Ok(a.path().join(".")))
        );
    }
}
