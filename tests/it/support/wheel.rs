//! Wheels built here, for pip to install from a local directory (`--find-links`): the zip
//! layout of a real wheel (dist-info with METADATA, WHEEL and a RECORD of SHA-256 sums), with
//! the files given. A file under `DIST-VERSION.data/scripts/` is installed as a script
//! (executable) on the venv's `bin/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The platform tag of a wheel for this machine, as the release builds them
/// (`manylinux_2_17_x86_64`, `macosx_11_0_arm64`).
pub fn platform_tag() -> String {
    let arch = std::env::consts::ARCH;
    if cfg!(target_os = "macos") {
        format!(
            "macosx_11_0_{}",
            if arch == "aarch64" { "arm64" } else { arch }
        )
    } else {
        format!("manylinux_2_17_{arch}")
    }
}

/// `dir/DIST-VERSION-py3-none-TAG.whl` (the dist's `-` as `_` in the file name) holding `files`
/// (path in the wheel, text). Returns its path.
pub fn build(dir: &Path, dist: &str, version: &str, tag: &str, files: &[(&str, &str)]) -> PathBuf {
    build_with(dir, dist, version, tag, files, &[])
}

/// [`build`], with `copies` too: (path in the wheel, a file whose bytes it holds).
pub fn build_with(
    dir: &Path,
    dist: &str,
    version: &str,
    tag: &str,
    files: &[(&str, &str)],
    copies: &[(&str, &Path)],
) -> PathBuf {
    let script = r#"
import base64, hashlib, json, sys, zipfile
dir, dist, version, tag = sys.argv[1:5]
files = {k: v.encode() for k, v in json.loads(sys.argv[5]).items()}
for k, path in json.loads(sys.argv[6]).items():
    with open(path, "rb") as f:
        files[k] = f.read()
name = dist.replace("-", "_")
info = "%s-%s.dist-info" % (name, version)
files[info + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, version)).encode()
files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: selfdebug-tests\nRoot-Is-Purelib: false\n"
                          "Tag: py3-none-%s\n" % tag).encode()
record = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
record.append(info + "/RECORD,,")
files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
out = "%s/%s-%s-py3-none-%s.whl" % (dir, name, version, tag)
with zipfile.ZipFile(out, "w") as z:
    for path, data in files.items():
        entry = zipfile.ZipInfo(path)
        # A regular file (S_IFREG), executable for a script: what pip reads to chmod it.
        entry.external_attr = (0o100755 if "/scripts/" in path else 0o100644) << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(entry, data, compresslevel=1)
print(out, end="")
"#;
    let json = |pairs: Vec<(String, String)>| {
        let map: serde_json::Map<String, serde_json::Value> = pairs
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
        serde_json::Value::Object(map).to_string()
    };
    let texts = json(
        files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let copied = json(
        copies
            .iter()
            .map(|(k, p)| (k.to_string(), super::path_str(p).to_string()))
            .collect(),
    );
    let out = Command::new(super::python())
        .args(["-c", script])
        .arg(dir)
        .args([dist, version, tag, &texts, &copied])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap())
}
