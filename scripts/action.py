#!/usr/bin/env python3
"""The steps of the selfdebug GitHub Action (action.yml), stdlib only.

`action.py install`: a virtualenv of its own under $RUNNER_TEMP with selfdebug in it, from the
release wheel for this runner (`pip install --only-binary`), else built from the action's own
checkout (needs cargo, which GitHub's hosted runners have). Step output `bin`. With
$SELFDEBUG_ACTION_BIN set, that binary is used as it is (tests, or a runner that has one).

`action.py run`: `selfdebug fix --output-format github --json-file ...` in $GITHUB_WORKSPACE
(annotations on stdout, the log on stderr), then the job summary, the patch file for the
artifact and the step outputs `status`, `patched`, `patch-file`. Exits with selfdebug's code.
"""

import json
import os
import re
import shlex
import subprocess
import sys

ACTION_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {
    "fix": [],
    # Nothing is written; a proven patch fails the step (exit 1), as the pre-commit check hook.
    "check": ["--dry-run", "--exit-non-zero-on-fix"],
}


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
        m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M)
    return m.group(1)


def install():
    given = os.environ.get("SELFDEBUG_ACTION_BIN")
    if given:
        exe = given
    else:
        venv = os.path.join(os.environ.get("RUNNER_TEMP") or "/tmp", "selfdebug-venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet",
               "--disable-pip-version-check"]
        wanted = "selfdebug==" + version()
        if subprocess.run(pip + ["--only-binary", ":all:", wanted]).returncode != 0:
            log("no release wheel %s for this runner; building it from %s (cargo)"
                % (wanted, ACTION_DIR))
            subprocess.run(pip + [ACTION_DIR], check=True)
        exe = os.path.join(venv, "bin", "selfdebug")
    out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, check=True)
    log("installed " + out.stdout.decode().strip())
    set_output("bin", exe)
    return 0


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
    sys.exit({"install": install, "run": run}[sys.argv[1]]())
