#!/usr/bin/env python3
"""The steps of the selfdebug GitHub Action (action.yml), stdlib only.

`action.py release`: selfdebug from this repository's GitHub Release for the action's version
(Cargo.toml of the action's checkout: `uses: OWNER/selfdebug@v0` at the v0.2.0 commit installs
v0.2.0). It reads the release's SHA256SUMS, downloads the wheels for this runner's platform,
checks each against its sum (a mismatch fails the step: the asset is not what was published),
and pip installs one of them with `--no-index` into a virtualenv of its own under
$RUNNER_TEMP. The package index is never asked. Step outputs `bin` (empty when the release has
no wheel for this runner, or there is no release: then the build step runs) and `version`.
With $SELFDEBUG_ACTION_BIN set, that binary is used as it is (tests, or a runner that has one).
$SELFDEBUG_ACTION_RELEASE_URL replaces the release's download URL (a mirror, or a directory).

`action.py build`: selfdebug built from the action's own checkout with pip and cargo (GitHub's
hosted runners have cargo), its cargo target dir under ~/.cache/selfdebug-action, which
action.yml restores and saves with actions/cache. Step output `bin`.

`action.py run`: `selfdebug fix --output-format github --json-file ...` in $GITHUB_WORKSPACE
(annotations on stdout, the log on stderr), then the job summary, the patch file for the
artifact and the step outputs `status`, `patched`, `patch-file`. Exits with selfdebug's code.
"""

import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from release_version import cargo_version as cargo_version_of, pep440  # noqa: E402

ACTION_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {
    "fix": [],
    # Nothing is written; a proven patch fails the step (exit 1), as the pre-commit check hook.
    "check": ["--dry-run", "--exit-non-zero-on-fix"],
}
# Where action.yml's actions/cache step keeps the source build's cargo target dir.
BUILD_TARGET = os.path.join(os.path.expanduser("~"), ".cache", "selfdebug-action", "target")


def log(msg):
    print("selfdebug-action: " + msg, file=sys.stderr, flush=True)


def set_output(name, value):
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        if "\n" in value:
            delim = "EOF_SELFDEBUG"
            while delim in value:
                delim += "_"
            f.write("%s<<%s\n%s\n%s\n" % (name, delim, value, delim))
        else:
            f.write("%s=%s\n" % (name, value))


def version():
    """The version of the action's checkout: Cargo.toml's, which the wheels carry."""
    with open(os.path.join(ACTION_DIR, "Cargo.toml"), encoding="utf-8") as f:
        return cargo_version_of(f.read())


def action_repository():
    """OWNER/REPO of the action: the runner's variable, else the path it checked the action
    out to (.../_actions/OWNER/REPO/REF)."""
    repo = os.environ.get("SELFDEBUG_ACTION_REPOSITORY") or os.environ.get(
        "GITHUB_ACTION_REPOSITORY")
    if repo:
        return repo
    parts = os.path.normpath(os.environ.get("GITHUB_ACTION_PATH") or ACTION_DIR).split(os.sep)
    if "_actions" in parts and len(parts) >= parts.index("_actions") + 3:
        i = parts.index("_actions")
        return "%s/%s" % (parts[i + 1], parts[i + 2])
    return None


def fetch(base, name):
    """The bytes of asset `name` under `base` (a URL, or a directory), or None when it does
    not exist."""
    if "://" not in base:
        path = os.path.join(base, name)
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read()
    try:
        with urllib.request.urlopen(base.rstrip("/") + "/" + name, timeout=120) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def platform_wheel(name):
    """A wheel built for this runner's OS and CPU (pip picks among them: glibc or musl)."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if not name.endswith(".whl"):
        return False
    tag = name[:-4].split("-")[-1]
    if sys.platform.startswith("linux"):
        return "linux" in tag and tag.endswith("_" + arch)
    if sys.platform == "darwin":
        return tag.startswith("macosx") and tag.endswith(
            "_arm64" if arch == "aarch64" else "_x86_64")
    return False


def venv():
    """A fresh virtualenv under $RUNNER_TEMP, and its pip command."""
    path = os.path.join(os.environ.get("RUNNER_TEMP") or "/tmp", "selfdebug-venv")
    subprocess.run([sys.executable, "-m", "venv", "--clear", path], check=True)
    pip = [os.path.join(path, "bin", "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check"]
    return path, pip


def installed(exe):
    out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, check=True)
    log("installed " + out.stdout.decode().strip())
    set_output("bin", exe)
    return 0


def release():
    given = os.environ.get("SELFDEBUG_ACTION_BIN")
    ver = version()
    set_output("version", ver)
    if given:
        return installed(given)
    tag = "v" + ver
    base = os.environ.get("SELFDEBUG_ACTION_RELEASE_URL")
    if not base:
        repo = action_repository()
        if not repo:
            log("the action's repository is unknown: building from source")
            set_output("bin", "")
            return 0
        base = "https://github.com/%s/releases/download/%s" % (repo, tag)
    sums = fetch(base, "SHA256SUMS")
    if sums is None:
        log("no release %s with SHA256SUMS at %s: building from source" % (tag, base))
        set_output("bin", "")
        return 0
    wanted = {}
    for line in sums.decode("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"[0-9a-f]{64}", parts[0]):
            wanted[parts[1].lstrip("*")] = parts[0]
    wheels = sorted(n for n in wanted if platform_wheel(n))
    if not wheels:
        log("release %s has no wheel for %s %s: building from source"
            % (tag, sys.platform, platform.machine()))
        set_output("bin", "")
        return 0
    temp = os.environ.get("RUNNER_TEMP") or "/tmp"
    dist = os.path.join(temp, "selfdebug-wheels")
    shutil.rmtree(dist, ignore_errors=True)
    os.makedirs(dist)
    for name in wheels:
        data = fetch(base, name)
        got = hashlib.sha256(data or b"").hexdigest()
        if data is None or got != wanted[name]:
            print("::error title=selfdebug action::%s of release %s: SHA-256 %s, SHA256SUMS "
                  "says %s; not installed" % (name, tag, got if data else "(missing)",
                                               wanted[name]), flush=True)
            return 1
        with open(os.path.join(dist, name), "wb") as f:
            f.write(data)
    path, pip = venv()
    if subprocess.run(pip + ["--no-index", "--find-links", dist, "selfdebug==" + pep440(ver)]
                      ).returncode != 0:
        log("pip took none of %s: building from source" % ", ".join(wheels))
        set_output("bin", "")
        return 0
    return installed(os.path.join(path, "bin", "selfdebug"))


def build():
    given = os.environ.get("SELFDEBUG_ACTION_BIN")
    if given:
        return installed(given)
    log("building selfdebug %s from %s with cargo (target dir %s)"
        % (version(), ACTION_DIR, BUILD_TARGET))
    path, pip = venv()
    env = dict(os.environ, CARGO_TARGET_DIR=BUILD_TARGET)
    subprocess.run(pip + [ACTION_DIR], check=True, env=env)
    return installed(os.path.join(path, "bin", "selfdebug"))


def fence(text):
    """A code fence longer than any run of backticks in `text`."""
    longest = max([len(m) for m in re.findall(r"`+", text)] + [2])
    return "`" * (longest + 1)


def item(text):
    """A Markdown list item: its continuation lines indented under it, so a multi-line note
    stays one item."""
    return "- " + text.replace("\n", "\n  ")


def repo_prefix(report):
    """The project root below $GITHUB_WORKSPACE (`pkg/`, empty when it is the workspace):
    patch paths in the artifact and the summary are relative to the repository root, as the
    annotations are, so `git apply` at the root takes the artifact."""
    root = report.get("root")
    workspace = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
    if not root:
        return ""
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(workspace))
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
        return ""
    return rel.replace(os.sep, "/") + "/"


def rebase(diff, prefix):
    """A patch's one-file diff with its `--- a/F` and `+++ b/F` headers naming `PREFIX F`.
    Only the lines before the first hunk are headers: a removed line may start with `--`."""
    if not prefix:
        return diff
    lines = diff.splitlines(True)
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            break
        for head in ("--- a/", "+++ b/"):
            if line.startswith(head):
                lines[i] = head + prefix + line[len(head):]
    return "".join(lines)


def summary(report, mode, code, prefix=""):
    status = report.get("final_status", "error")
    patches = report.get("patches") or []
    lines = ["## selfdebug (%s): %s" % (mode, status), ""]
    if patches:
        kept = "applied to the checkout" if mode == "fix" else "not applied (check mode)"
        lines.append("%d proven patch%s, %s; exit code %d." %
                     (len(patches), "" if len(patches) == 1 else "es", kept, code))
    else:
        lines.append("No patch; exit code %d." % code)
    lines.append("")
    for p in patches:
        lines.append("### `%s%s`: %s (%s)" % (prefix, p["file"], ", ".join(p["rules"]),
                                             p["applicability"]))
        lines.append("")
        for title in p.get("titles") or []:
            lines.append(item(title))
        for note in p.get("review") or []:
            lines.append(item("**review:** " + note))
        lines.append("")
        diff = rebase(p["diff"], prefix)
        f = fence(diff)
        lines += [f + "diff", diff.rstrip("\n"), f, ""]
    left = [x for x in report.get("failures") or [] if x.get("status") != "fixed"]
    if left:
        lines += ["### Not fixed", ""]
        for x in left:
            where = "%s%s:%s" % (prefix, x.get("file"), x.get("line")) if x.get("file") else "?"
            reason = "; " + x["reason"] if x.get("reason") else ""
            msg = x.get("msg") or ""
            head = "`%s`: %s" % (x.get("test"), x.get("exc_type"))
            if "\n" not in msg:
                lines.append(item("%s: %s at `%s` (%s%s)" % (
                    head, msg, where, x.get("status"), reason)))
                continue
            # A multi-line message (pytest's assertion rewriting) goes in a fence inside the
            # item: as text it would end the list.
            f = fence(msg)
            lines.append(item("%s at `%s` (%s%s)" % (head, where, x.get("status"), reason)))
            lines += [""] + ["  " + l if l else "" for l in [f] + msg.split("\n") + [f]]
        lines.append("")
    if report.get("error"):
        lines += ["**Error:** " + str(report["error"]), ""]
    notes = report.get("notes") or []
    if notes:
        lines += ["### Notes", ""] + [item(n) for n in notes] + [""]
    return "\n".join(lines)


def write_summary(text):
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def bad_input(mode, message):
    """An input the action refuses before selfdebug runs: one annotation, the summary, the
    outputs (status `bad_input`, as selfdebug's own usage errors), exit 2."""
    print("::error title=selfdebug action::" + message.replace("%", "%25")
          .replace("\r", "%0D").replace("\n", "%0A"), flush=True)
    write_summary("## selfdebug (%s): bad_input\n\n**Error:** %s\n" % (mode, message))
    set_output("status", "bad_input")
    set_output("patched", "false")
    set_output("patch-file", "")
    return 2


def run():
    mode = os.environ.get("INPUT_MODE") or "fix"
    if mode not in MODES:
        return bad_input(mode, "input mode: expected fix or check, got %r" % mode)
    try:
        # User arguments last: they may end with `-- PYTEST_ARGS`.
        user_args = shlex.split(os.environ.get("INPUT_ARGS") or "")
    except ValueError as e:
        return bad_input(mode, "input args: %s" % e)
    exe = os.environ.get("SELFDEBUG_BIN") or "selfdebug"
    temp = os.environ.get("RUNNER_TEMP") or "/tmp"
    report_path = os.path.join(temp, "selfdebug-report.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    cmd = [exe, "fix", "--output-format", "github", "--json-file", report_path] + MODES[mode]
    if os.environ.get("INPUT_PYTHON"):
        cmd += ["--python", os.environ["INPUT_PYTHON"]]
    cmd += user_args
    log("running " + " ".join(shlex.quote(c) for c in cmd))
    sys.stdout.flush()
    code = subprocess.run(cmd, cwd=os.environ.get("GITHUB_WORKSPACE") or None).returncode
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        # selfdebug writes its report on every exit, usage errors included: this is a crash.
        report = {"final_status": "error", "error": "selfdebug exited %d with no report (%s)"
                  % (code, e)}
    prefix = repo_prefix(report)
    patches = report.get("patches") or []
    patch_file = ""
    if patches:
        patch_file = os.path.join(temp, "selfdebug.patch")
        # Each diff in its file's own bytes (latin-1 files included), so `git apply` takes it.
        with open(patch_file, "wb") as f:
            for p in patches:
                f.write(rebase(p["diff"], prefix).encode(p.get("diff_encoding") or "utf-8"))
    write_summary(summary(report, mode, code, prefix))
    set_output("status", report.get("final_status", "error"))
    # `--dry-run` in `args` writes nothing, whatever the mode.
    written = mode == "fix" and not report.get("dry_run") and report.get("files_patched")
    set_output("patched", "true" if written else "false")
    set_output("patch-file", patch_file)
    return code


if __name__ == "__main__":
    sys.exit({"release": release, "build": build, "run": run}[sys.argv[1]]())
