"""selfdebug's own pytest plugin, loaded with `-p _selfdebug_pytest` into every run it starts.

It is written to selfdebug's private directory, never into the project. It does one thing: a
per-test time limit (SELFDEBUG_TEST_TIMEOUT, seconds), so that one stuck test cannot stall a run.

- Where SIGALRM exists and the test runs in the main thread, an interval timer raises
  PerTestTimeout *inside* the stuck code: pytest reports it as an ordinary failure whose deepest
  frame is where the test was stuck, and the rest of the suite runs on.
- As a backstop for code that never returns to the interpreter (a C call that ignores signals),
  faulthandler dumps every thread's stack to a file in SELFDEBUG_HANG_DIR (one per process, so
  pytest-xdist workers do not share one) and ends the process a little later; selfdebug reads
  that file and names the test and the frame.

A project that configures pytest-timeout keeps its own limit: the timer is then not armed.
"""

import faulthandler
import os
import signal
import threading

import pytest

_LIMIT = 0.0
try:
    _LIMIT = float(os.environ.get("SELFDEBUG_TEST_TIMEOUT") or 0)
except ValueError:
    _LIMIT = 0.0
_HANG_DIR = os.environ.get("SELFDEBUG_HANG_DIR") or ""
# Seconds the backstop waits after the limit for the timer's exception to unwind the test.
_BACKSTOP_GRACE = 5.0


class PerTestTimeout(BaseException):
    """A test ran past selfdebug's per-test limit (BaseException: `except Exception` in the
    code under test must not swallow it)."""


def _use_timer(item):
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        return False
    # pytest-timeout's own limit wins; two handlers for one signal would fight.
    if item.config.pluginmanager.hasplugin("timeout"):
        try:
            if item.config.getvalue("timeout") or item.get_closest_marker("timeout"):
                return False
        except Exception:
            pass
    return True


def _on_alarm(signum, frame):
    raise PerTestTimeout(
        "the test did not finish within %g s (selfdebug's per-test limit, --test-timeout)" % _LIMIT
    )


class _Limit:
    """Arms the timer and the backstop around one phase of one test."""

    def __init__(self, item, when):
        self.item = item
        self.when = when
        self.timer = False
        self.previous = None
        self.hang = None
        self.path = ""

    def __enter__(self):
        if _LIMIT <= 0:
            return self
        if _HANG_DIR:
            try:
                self.path = os.path.join(_HANG_DIR, "hang-%d.txt" % os.getpid())
                self.hang = open(self.path, "w")
                self.hang.write("%s\n%s\n" % (self.item.nodeid, self.when))
                self.hang.flush()
                faulthandler.dump_traceback_later(
                    _LIMIT + _BACKSTOP_GRACE, exit=True, file=self.hang
                )
            except Exception:
                self.hang = None
        if _use_timer(self.item):
            try:
                self.previous = signal.signal(signal.SIGALRM, _on_alarm)
                signal.setitimer(signal.ITIMER_REAL, _LIMIT)
                self.timer = True
            except Exception:
                self.timer = False
        return self

    def __exit__(self, *exc):
        if self.timer:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)
            except Exception:
                pass
        if self.hang is not None:
            try:
                faulthandler.cancel_dump_traceback_later()
                self.hang.close()
                os.unlink(self.path)
            except Exception:
                pass
        return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with _Limit(item, "setup"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _Limit(item, "call"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    with _Limit(item, "teardown"):
        yield
