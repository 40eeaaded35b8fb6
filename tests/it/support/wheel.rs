//! Wheels built here, for pip to install from a local directory (`--find-links`): the zip
//! layout of a real wheel (dist-info with METADATA, WHEEL and a RECORD of SHA-256 sums), with
//! the files given. A file under `DIST-VERSION.data/scripts/` is installed as a script
//! (executable) on the venv's `bin/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `dir/DIST-VERSION-py3-none-TAG.whl` (the dist's `-` as `_` in the file name) holding `files`
/// (path in the wheel, text). Returns its path.
pub fn build(dir: &Path, dist: &str, version: &str, tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let script = r#"
import base64, hashlib, json, sys, zipfile
dir, dist, version, tag, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
name = dist.replace("-", "_")
info = "%s-%s.dist-info" % (name, version)
files[info + "/METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, version)
files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: selfdebug-tests\nRoot-Is-Purelib: false\n"
                          "Tag: py3-none-%s\n" % tag)
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (path, digest, len(text.encode())))
record.append(info + "/RECORD,,")
files[info + "/RECORD"] = "\n".join(record) + "\n"
out = "%s/%s-%s-py3-none-%s.whl" % (dir, name, version, tag)
with zipfile.ZipFile(out, "w") as z:
    for path, text in files.items():
        entry = zipfile.ZipInfo(path)
        # A regular file (S_IFREG), executable for a script: what pip reads to chmod it.
        entry.external_attr = (0o100755 if "/scripts/" in path else 0o100644) << 16
        z.writestr(entry, text)
print(out, end="")
"#;
    let map: serde_json::Map<String, serde_json::Value> = files
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect();
    let out = Command::new(super::python())
        .args(["-c", script])
        .arg(dir)
        .args([
            dist,
            version,
            tag,
            &serde_json::Value::Object(map).to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap())
}
