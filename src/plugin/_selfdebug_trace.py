"""selfdebug's line tracer: which lines of the project's own files ran.

Shared by the pytest coverage plugin (`_selfdebug_cover`, one record per test) and command mode,
whose search traces the command's script once: selfdebug runs `python -c CODE SCRIPT ARGS` (or
`python -c CODE -m MODULE ARGS`), CODE imports this module from selfdebug's private directory,
takes that directory off `sys.path` again and calls `run_command`, which gives the script the
`sys.argv`, `sys.path[0]` and `__main__` that `python SCRIPT ARGS` would have given it. Its exit
status and its uncaught exception are the script's own; the lines go, as the coverage plugin's
format ({"tests": {"command": {"failed": true, "lines": {abs_path: [line, ...]}}}}), to
SELFDEBUG_COVER_OUT, whatever way the script ends short of os._exit.

Files outside SELFDEBUG_COVER_ROOT, in a virtualenv or site-packages, and selfdebug's own
directory are never recorded. Python 3.12+ uses sys.monitoring (each line reports once: the
callback disables its location, and `start` re-arms every location); earlier versions use
sys.settrace (and threading.settrace for the threads started while tracing), whose global
function declines every frame outside the project at once. Its own errors are swallowed: it
must never change what the traced code does.
"""

import json
import os
import sys

_OUT = os.environ.get("SELFDEBUG_COVER_OUT") or ""
_ROOT = os.path.realpath(os.environ.get("SELFDEBUG_COVER_ROOT") or os.getcwd())
_HERE = os.path.dirname(os.path.realpath(__file__))
_SEP = os.sep

_wanted = {}
_current = None


def _project_path(filename):
    """The real path of `filename` (a code object's co_filename) when its lines are recorded,
    else None. Resolved once, at first sight: a script run as `python s.py` has a relative
    co_filename, and may change directory later."""
    try:
        return _wanted[filename]
    except KeyError:
        pass
    real = None
    try:
        if filename and not filename.startswith("<"):
            path = os.path.realpath(filename)
            if (
                path.startswith(_ROOT + _SEP)
                and not path.startswith(_HERE + _SEP)
                and _SEP + "site-packages" + _SEP not in path
                and _SEP + "dist-packages" + _SEP not in path
                and _SEP + ".venv" + _SEP not in path
                and _SEP + "venv" + _SEP not in path
            ):
                real = path
    except Exception:
        real = None
    _wanted[filename] = real
    return real


def _record(filename, line):
    # An empty module's code reports line 0 (no statement is there).
    if _current is not None and line:
        real = _project_path(filename)
        if real is not None:
            _current.setdefault(real, set()).add(line)


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
        _record(code.co_filename, line)
    except Exception:
        pass
    # Once per location per record: restart_events() re-arms it for the next one.
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
        if event == "call" and _project_path(frame.f_code.co_filename) is not None:
            return _tracer
    except Exception:
        pass
    return None


def start(lines):
    """Records the lines that run from now on into `lines` ({filename: set of lines})."""
    global _current
    _current = lines
    if _TOOL is not None:
        try:
            _MON.register_callback(_TOOL, _MON.events.LINE, _on_line)
            _MON.set_events(_TOOL, _MON.events.LINE)
            _MON.restart_events()
            return
        except Exception:
            pass
    sys.settrace(_global)
    # sys.settrace is per thread: threads started from here on (an executor's workers, a loop
    # run in a thread) are traced too. sys.monitoring above covers every thread already.
    try:
        import threading

        threading.settrace(_global)
    except Exception:
        pass


def stop():
    global _current
    _current = None
    if _TOOL is not None:
        try:
            _MON.set_events(_TOOL, 0)
            return
        except Exception:
            pass
    sys.settrace(None)
    try:
        import threading

        threading.settrace(None)
    except Exception:
        pass


def write(tests):
    """Writes {name: {"failed": bool, "spawns": bool, "lines": {filename: set}}} to
    SELFDEBUG_COVER_OUT."""
    if not _OUT:
        return
    try:
        data = {
            "tests": {
                name: {
                    "failed": t["failed"],
                    "spawns": t.get("spawns", False),
                    "lines": {f: sorted(ls) for f, ls in t["lines"].items()},
                }
                for name, t in tests.items()
            }
        }
        tmp = "%s.%d.tmp" % (_OUT, os.getpid())
        with open(tmp, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, _OUT)
    except Exception:
        pass


class CommandTimeout(BaseException):
    """The command ran past selfdebug's per-run limit (see `run_command`'s `limit`);
    BaseException, so that `except Exception` in the script does not swallow it."""


def run_command(args, limit=0.0, flag="--test-timeout"):
    """Runs `SCRIPT ARGS` or `-m MODULE ARGS` as `python` would, traced (see the module docs).

    With `limit` (seconds; the command's baseline run), nothing is traced: an interval timer
    raises CommandTimeout *inside* the stuck code after `limit` seconds, so the traceback on
    stderr ends at the line it was stuck at (as the pytest plugin's timer does), and a hang
    costs one limit, not a killed run and a rerun. An uncaught exception's traceback then
    starts at the script's own frame, as `python SCRIPT` prints it (the wrapper's frames are
    left out), so the run reads exactly as an unwrapped one."""
    import runpy

    import signal

    traced = limit <= 0
    if not traced:
        _release()
        sys.excepthook = _from_the_script
    if not hasattr(signal, "SIGALRM"):
        limit = 0.0
    if limit > 0:

        def _on_alarm(signum, frame):
            raise CommandTimeout(
                "the command did not finish within %g s (selfdebug's per-run limit, %s)"
                % (limit, flag)
            )

        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    # The untraced run records no lines: tracing would only slow the loop it times.
    begin = start if traced else (lambda lines: None)

    # The script's own children must not see the tracer's settings.
    for name in ("SELFDEBUG_COVER_OUT", "SELFDEBUG_COVER_ROOT"):
        os.environ.pop(name, None)
    lines = {}
    try:
        if args[0] == "-m":
            # `python -m`: the current directory first on sys.path; run_module sets argv[0].
            sys.argv[:] = args[1:]
            sys.path[0] = os.getcwd()
            begin(lines)
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            # `python SCRIPT`: the script's real directory first; run_path sets argv[0].
            sys.argv[:] = args
            sys.path[0] = os.path.dirname(os.path.realpath(args[0]))
            begin(lines)
            runpy.run_path(args[0], run_name="__main__")
    finally:
        if traced:
            stop()
            write({"command": {"failed": True, "lines": lines}})


def _release():
    """The untraced run gives back the sys.monitoring tool id taken at import (the script may
    want it: coverage uses the same one)."""
    global _TOOL
    if _TOOL is not None:
        try:
            _MON.free_tool_id(_TOOL)
        except Exception:
            pass
        _TOOL = None


def _from_the_script(exc_type, exc, tb):
    """sys.excepthook of the untraced run: the traceback without the frames of `-c`, this
    module and runpy (`<frozen runpy>` on 3.11+) above the script's first frame."""
    import runpy

    skip = (os.path.realpath(__file__), os.path.realpath(runpy.__file__))
    try:
        while tb is not None and (
            tb.tb_frame.f_code.co_filename.startswith("<")
            or os.path.realpath(tb.tb_frame.f_code.co_filename) in skip
        ):
            tb = tb.tb_next
        # The hook prints the exception's own __traceback__, not its argument.
        exc.__traceback__ = tb
    except Exception:
        pass
    sys.__excepthook__(exc_type, exc, tb)
