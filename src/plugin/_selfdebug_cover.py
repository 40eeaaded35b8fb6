"""selfdebug's line-coverage plugin, loaded with `-p _selfdebug_cover` only into the runs that
localize a wrong-output failure (spectrum-based fault localization).

For each test it records which lines of the project's own files ran (setup, call and teardown),
and whether the test failed. Files outside SELFDEBUG_COVER_ROOT, in a virtualenv or
site-packages, and selfdebug's own plugin directory are never recorded; selfdebug leaves out the
test files itself. At the end of the session the spectrum is written as JSON to
SELFDEBUG_COVER_OUT: {"tests": {nodeid: {"failed": bool, "spawns": bool, "lines": {abs_path:
[line, ...]}}}}. `spawns`: the test started a process (an audit hook sees `subprocess.Popen`,
`os.fork`, `os.system`, ...); what the process ran is not traced, so the test may run any code.

The tracer itself is `_selfdebug_trace` (beside this module; command mode's search uses it
too): sys.monitoring on Python 3.12+, sys.settrace before (threads a test starts included), re-armed for each test. The plugin
swallows its own errors: it must never change a test's outcome.
"""

import sys

import pytest

import _selfdebug_trace as _trace

_tests = {}
# The entry of the test running now (None between tests).
_current = None
_SPAWNS = frozenset(
    ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.system", "os.exec",
     "os.spawn")
)


def _audit(event, args):
    # Called for every audited event of the process (open, import, ...): kept cheap.
    if _current is not None and event in _SPAWNS:
        _current["spawns"] = True


try:
    sys.addaudithook(_audit)
except Exception:
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _current
    entry = {"failed": False, "spawns": False, "lines": {}}
    _tests[item.nodeid] = entry
    _current = entry
    if _trace._OUT:
        _trace.start(entry["lines"])
    try:
        yield
    finally:
        _current = None
        if _trace._OUT:
            _trace.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    entry = _tests.get(report.nodeid)
    if entry is not None and report.failed:
        entry["failed"] = True


def pytest_sessionfinish(session, exitstatus):
    _trace.write(_tests)
