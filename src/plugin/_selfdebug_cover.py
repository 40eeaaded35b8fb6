"""selfdebug's line-coverage plugin, loaded with `-p _selfdebug_cover` only into the runs that
localize a wrong-output failure (spectrum-based fault localization).

For each test it records which lines of the project's own files ran (setup, call and teardown),
and whether the test failed. Files outside SELFDEBUG_COVER_ROOT, in a virtualenv or
site-packages, and selfdebug's own plugin directory are never recorded; selfdebug leaves out the
test files itself. At the end of the session the spectrum is written as JSON to
SELFDEBUG_COVER_OUT: {"tests": {nodeid: {"failed": bool, "lines": {abs_path: [line, ...]}}}}.

The tracer itself is `_selfdebug_trace` (beside this module; command mode's search uses it
too): sys.monitoring on Python 3.12+, sys.settrace before (threads a test starts included), re-armed for each test. The plugin
swallows its own errors: it must never change a test's outcome.
"""

import pytest

import _selfdebug_trace as _trace

_tests = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    entry = {"failed": False, "lines": {}}
    _tests[item.nodeid] = entry
    if _trace._OUT:
        _trace.start(entry["lines"])
    try:
        yield
    finally:
        if _trace._OUT:
            _trace.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    entry = _tests.get(report.nodeid)
    if entry is not None and report.failed:
        entry["failed"] = True


def pytest_sessionfinish(session, exitstatus):
    _trace.write(_tests)
