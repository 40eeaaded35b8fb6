"""selfdebug's line-coverage plugin, loaded with `-p _selfdebug_cover` only into the runs that
localize a wrong-output failure (spectrum-based fault localization).

For each test it records which lines of the project's own files ran (setup, call and teardown),
and whether the test failed. Files outside SELFDEBUG_COVER_ROOT, in a virtualenv or
site-packages, and selfdebug's own plugin directory are never recorded; selfdebug leaves out the
test files itself. At the end of the session the spectrum is written as JSON to
SELFDEBUG_COVER_OUT: {"tests": {nodeid: {"failed": bool, "lines": {abs_path: [line, ...]}}}}.

Python 3.12+ uses sys.monitoring (each line reports once per test: the callback disables its
location and the events are restarted before the next test); earlier versions use sys.settrace,
whose global function declines every frame outside the project at once. The plugin swallows its
own errors: it must never change a test's outcome.
"""

import json
import os
import sys

import pytest

_OUT = os.environ.get("SELFDEBUG_COVER_OUT") or ""
_ROOT = os.path.realpath(os.environ.get("SELFDEBUG_COVER_ROOT") or os.getcwd())
_HERE = os.path.dirname(os.path.realpath(__file__))
_SEP = os.sep

_tests = {}
_wanted = {}
_current = None


def _is_project(filename):
    """Whether lines of `filename` (a code object's co_filename) are recorded."""
    hit = _wanted.get(filename)
    if hit is not None:
        return hit
    ok = False
    try:
        if filename and not filename.startswith("<"):
            real = os.path.realpath(filename)
            ok = (
                real.startswith(_ROOT + _SEP)
                and not real.startswith(_HERE + _SEP)
                and _SEP + "site-packages" + _SEP not in real
                and _SEP + "dist-packages" + _SEP not in real
                and _SEP + ".venv" + _SEP not in real
                and _SEP + "venv" + _SEP not in real
            )
    except Exception:
        ok = False
    _wanted[filename] = ok
    return ok


def _record(filename, line):
    if _current is not None:
        _current.setdefault(filename, set()).add(line)


_MON = getattr(sys, "monitoring", None)
_TOOL = None
if _MON is not None:
    # The coverage tool id when free (coverage.py itself may hold it), else any free one.
    for tool in (_MON.COVERAGE_ID, 3, 4):
        try:
            if _MON.get_tool(tool) is None:
                _MON.use_tool_id(tool, "selfdebug-cover")
                _TOOL = tool
                break
        except Exception:
            pass


def _on_line(code, line):
    try:
        if _is_project(code.co_filename):
            _record(code.co_filename, line)
    except Exception:
        pass
    # Once per location per test: restart_events() re-arms it for the next test.
    return _MON.DISABLE


def _tracer(frame, event, arg):
    try:
        if event == "line":
            _record(frame.f_code.co_filename, frame.f_lineno)
    except Exception:
        pass
    return _tracer


def _global(frame, event, arg):
    try:
        if event == "call" and _is_project(frame.f_code.co_filename):
            return _tracer
    except Exception:
        pass
    return None


def _start():
    if _TOOL is not None:
        try:
            _MON.register_callback(_TOOL, _MON.events.LINE, _on_line)
            _MON.set_events(_TOOL, _MON.events.LINE)
            _MON.restart_events()
            return
        except Exception:
            pass
    sys.settrace(_global)


def _stop():
    if _TOOL is not None:
        try:
            _MON.set_events(_TOOL, 0)
            return
        except Exception:
            pass
    sys.settrace(None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _current
    entry = {"failed": False, "lines": {}}
    _tests[item.nodeid] = entry
    _current = entry["lines"]
    if _OUT:
        _start()
    try:
        yield
    finally:
        if _OUT:
            _stop()
        _current = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    entry = _tests.get(report.nodeid)
    if entry is not None and report.failed:
        entry["failed"] = True


def pytest_sessionfinish(session, exitstatus):
    if not _OUT:
        return
    try:
        data = {
            "tests": {
                nodeid: {
                    "failed": t["failed"],
                    "lines": {f: sorted(ls) for f, ls in t["lines"].items()},
                }
                for nodeid, t in _tests.items()
            }
        }
        tmp = "%s.%d.tmp" % (_OUT, os.getpid())
        with open(tmp, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, _OUT)
    except Exception:
        pass
