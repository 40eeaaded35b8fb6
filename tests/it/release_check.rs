//! `scripts/release-check`, the release dry run the release workflow starts with: a tag
//! against the versions of a copy of Cargo.toml, Cargo.lock and pyproject.toml (this
//! repository's, then edited), and the wiring of `.github/workflows/release.yml` to it.

use crate::support;

use std::path::Path;
use std::process::Output;

/// `scripts/release-check ARGS --root ROOT` with `GITHUB_OUTPUT` a file of its own: (exit
/// code, stdout, stderr, what it appended to GITHUB_OUTPUT).
fn check(root: &Path, args: &[&str]) -> (Option<i32>, String, String, String) {
    let temp = tempfile::tempdir().unwrap();
    let output = temp.path().join("output");
    std::fs::write(&output, "").unwrap();
    let out: Output = std::process::Command::new(support::repo().join("scripts/release-check"))
        .args(args)
        .arg("--root")
        .arg(root)
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        std::fs::read_to_string(&output).unwrap(),
    )
}

/// A copy of the repository's version files with Cargo's version (in Cargo.toml and in
/// Cargo.lock's entry for the package) set to `version`.
fn versions(version: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = support::repo();
    let cargo = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let current = cargo
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    let set =
        |text: &str, before: &str| text.replacen(before, &format!("version = \"{version}\""), 1);
    let at = format!("version = \"{current}\"");
    std::fs::write(dir.path().join("Cargo.toml"), set(&cargo, &at)).unwrap();
    let lock = std::fs::read_to_string(repo.join("Cargo.lock")).unwrap();
    let entry = format!("name = \"selfdebug\"\n{at}");
    assert!(lock.contains(&entry));
    let lock = lock.replacen(
        &entry,
        &format!("name = \"selfdebug\"\nversion = \"{version}\""),
        1,
    );
    std::fs::write(dir.path().join("Cargo.lock"), lock).unwrap();
    std::fs::copy(
        repo.join("pyproject.toml"),
        dir.path().join("pyproject.toml"),
    )
    .unwrap();
    dir
}

const FINAL: &str = "version=0.2.0\npep440=0.2.0\nprerelease=false\nmajor=v0\n";

#[test]
fn a_final_tag_matching_every_version_moves_the_major_tag() {
    let dir = versions("0.2.0");
    let (code, stdout, stderr, output) = check(dir.path(), &["v0.2.0"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (Some(0), FINAL, "")
    );
    assert_eq!(output, FINAL);
}

#[test]
fn a_release_candidate_is_a_prerelease_and_moves_no_major_tag() {
    let dir = versions("1.0.0-rc1");
    let (code, stdout, _, _) = check(dir.path(), &["v1.0.0-rc1"]);
    assert_eq!(
        (code, stdout.as_str()),
        (
            Some(0),
            "version=1.0.0-rc1\npep440=1.0.0rc1\nprerelease=true\nmajor=\n"
        )
    );
    // `v*.*.*` matches the rc tag too, but its version is not the final one.
    let (code, stdout, stderr, output) = check(dir.path(), &["v1.0.0"]);
    assert_eq!((code, stdout.as_str(), output.as_str()), (Some(1), "", ""));
    assert_eq!(
        stderr,
        "release-check: tag v1.0.0 but Cargo.toml's version is 1.0.0-rc1: set it to 1.0.0 \
         (and run cargo update -p selfdebug), or tag v1.0.0-rc1\n"
    );
}

#[test]
fn a_tag_that_disagrees_or_is_no_release_tag_is_refused() {
    let dir = versions("0.2.0");
    let (code, _, stderr, output) = check(dir.path(), &["v0.3.0"]);
    assert_eq!((code, output.as_str()), (Some(1), ""));
    assert_eq!(
        stderr,
        "release-check: tag v0.3.0 but Cargo.toml's version is 0.2.0: set it to 0.3.0 \
         (and run cargo update -p selfdebug), or tag v0.2.0\n"
    );
    for tag in ["v0", "v0.2", "0.2.0", "v0.2.0rc1", "v0.2.0-foo1"] {
        let (code, _, stderr, _) = check(dir.path(), &[tag]);
        assert_eq!(
            (code, stderr),
            (
                Some(2),
                format!(
                    "release-check: {tag} is not a release tag (vMAJOR.MINOR.PATCH, or \
                     vMAJOR.MINOR.PATCH-rcN)\n"
                )
            )
        );
    }
    // Cargo.lock left behind: a --locked build would fail.
    let lock = dir.path().join("Cargo.lock");
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(
        &lock,
        text.replacen(
            "name = \"selfdebug\"\nversion = \"0.2.0\"",
            "name = \"selfdebug\"\nversion = \"0.1.9\"",
            1,
        ),
    )
    .unwrap();
    let (code, _, stderr, _) = check(dir.path(), &["v0.2.0"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(1),
            "release-check: Cargo.lock has selfdebug 0.1.9, Cargo.toml 0.2.0: run cargo update -p selfdebug\n"
        )
    );
}

/// The repository as it is: its versions agree (what a manual run of the workflow checks).
#[test]
fn the_repository_s_versions_agree() {
    let (code, stdout, stderr, _) = check(&support::repo(), &["--current"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.ends_with("major=\n"), "{stdout}");
}

/// release.yml starts with the check, moves the major tag only on its word, and runs on no
/// retired runner.
#[test]
fn the_release_workflow_is_wired_to_the_check() {
    let text =
        std::fs::read_to_string(support::repo().join(".github/workflows/release.yml")).unwrap();
    assert!(text.contains("            scripts/release-check \"$TAG\"\n"));
    assert!(text.contains("    if: ${{ needs.check.outputs.major != '' }}\n"));
    assert!(text.contains("          MAJOR: ${{ needs.check.outputs.major }}\n"));
    // Every build job waits for the check.
    for job in ["sdist", "linux", "macos"] {
        assert!(
            text.contains(&format!("  {job}:\n    needs: check\n")),
            "{job}"
        );
    }
    // The sdist is installed (built from source), and the release carries the sums.
    assert!(text.contains("pip\" install dist/selfdebug-*.tar.gz\n"));
    assert!(text.contains("sha256sum -- * > SHA256SUMS"));
    // The pre-commit mirror from those sums, dot file included, before the release exists.
    let mirror = text
        .find("scripts/pre-commit-mirror \"$RUNNER_TEMP/pre-commit-mirror\" --version \"$VERSION\"")
        .unwrap();
    assert!(text[mirror..].contains("            --sums dist/SHA256SUMS \\\n"));
    assert!(text.contains("          include-hidden-files: true\n"));
    assert!(mirror < text.find("gh release create").unwrap());
    for dir in [".github/workflows"] {
        for entry in std::fs::read_dir(support::repo().join(dir)).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(!text.contains("macos-13"), "a retired runner label");
        }
    }
}
