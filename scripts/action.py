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


def summary(report, mode, code):
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
        lines.append("### `%s`: %s (%s)" % (p["file"], ", ".join(p["rules"]), p["applicability"]))
        lines.append("")
        for title in p.get("titles") or []:
            lines.append("- " + title)
        for note in p.get("review") or []:
            lines.append("- **review:** " + note)
        lines.append("")
        f = fence(p["diff"])
        lines += [f + "diff", p["diff"].rstrip("\n"), f, ""]
    left = [x for x in report.get("failures") or [] if x.get("status") != "fixed"]
    if left:
        lines += ["### Not fixed", ""]
        for x in left:
            where = "%s:%s" % (x.get("file"), x.get("line")) if x.get("file") else "?"
            reason = "; " + x["reason"] if x.get("reason") else ""
            lines.append("- `%s`: %s: %s at `%s` (%s%s)" % (
                x.get("test"), x.get("exc_type"), x.get("msg"), where, x.get("status"), reason))
        lines.append("")
    if report.get("error"):
        lines += ["**Error:** " + str(report["error"]), ""]
    notes = report.get("notes") or []
    if notes:
        lines += ["### Notes", ""] + ["- " + n for n in notes] + [""]
    return "\n".join(lines)


def run():
    mode = os.environ.get("INPUT_MODE") or "fix"
    if mode not in MODES:
        print("::error title=selfdebug action::input mode: expected fix or check, got %r" % mode)
        return 2
    exe = os.environ.get("SELFDEBUG_BIN") or "selfdebug"
    temp = os.environ.get("RUNNER_TEMP") or "/tmp"
    report_path = os.path.join(temp, "selfdebug-report.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    cmd = [exe, "fix", "--output-format", "github", "--json-file", report_path] + MODES[mode]
    if os.environ.get("INPUT_PYTHON"):
        cmd += ["--python", os.environ["INPUT_PYTHON"]]
    # User arguments last: they may end with `-- PYTEST_ARGS`.
    cmd += shlex.split(os.environ.get("INPUT_ARGS") or "")
    log("running " + " ".join(shlex.quote(c) for c in cmd))
    sys.stdout.flush()
    code = subprocess.run(cmd, cwd=os.environ.get("GITHUB_WORKSPACE") or None).returncode
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        # A command line selfdebug refused before it started (see the log above).
        report = {"final_status": "error", "error": "selfdebug exited %d with no report (%s)"
                  % (code, e)}
    patches = report.get("patches") or []
    patch_file = ""
    if patches:
        patch_file = os.path.join(temp, "selfdebug.patch")
        with open(patch_file, "w", encoding="utf-8") as f:
            f.write("".join(p["diff"] for p in patches))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as f:
            f.write(summary(report, mode, code))
    set_output("status", report.get("final_status", "error"))
    # `--dry-run` in `args` writes nothing, whatever the mode.
    written = mode == "fix" and not report.get("dry_run") and report.get("files_patched")
    set_output("patched", "true" if written else "false")
    set_output("patch-file", patch_file)
    return code


if __name__ == "__main__":
    sys.exit({"install": install, "run": run}[sys.argv[1]]())
