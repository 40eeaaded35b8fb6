"""selfdebug's own pytest plugin, loaded with `-p _selfdebug_pytest` into every run it starts.

It is written to selfdebug's private directory, never into the project. It does one thing: a
per-test time limit (SELFDEBUG_TEST_TIMEOUT, seconds), so that one stuck test cannot stall a run.

- Where SIGALRM exists and the test runs in the main thread, an interval timer raises
  PerTestTimeout *inside* the stuck code: pytest reports it as an ordinary failure whose deepest
  frame is where the test was stuck, and the rest of the suite runs on.
- As a backstop for code that never returns to the interpreter (a C call that ignores signals),
  faulthandler dumps every thread's stack to a file in SELFDEBUG_HANG_DIR (one per process, so
  pytest-xdist workers do not share one) and ends the process, at the latest twice the limit
  plus a grace after the phase began (see `_backstop`); selfdebug reads that file and names the
  test and the frame.

A project that configures pytest-timeout keeps its own limit: the timer is then not armed.

With SELFDEBUG_FACTS_DIR set (the baseline run), it also records crash-frame facts; see the
"Crash-frame facts" section below.
"""

import faulthandler
import json
import os
import signal
import sys
import threading
import time

import pytest



def _rewriter_ignores_pycache_prefix():
    """pytest before 6.0 writes its rewritten tests to `__pycache__` beside them, whatever
    `sys.pycache_prefix` says (6.0 added `get_cache_dir`, which honours it)."""
    try:
        from _pytest.assertion import rewrite
    except Exception:
        return False
    return not hasattr(rewrite, "get_cache_dir")


if sys.version_info < (3, 8) or _rewriter_ignores_pycache_prefix():
    # No PYTHONPYCACHEPREFIX before 3.8 (nor in an old pytest's rewriter): the bytecode of the
    # project's modules (and pytest's rewritten tests) would be written into the project's
    # __pycache__, where a later run of a same-size candidate could load it. The project's
    # modules are imported after this plugin.
    sys.dont_write_bytecode = True

import _selfdebug_values as _values

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


# The backstop, per process: its file, whose header region each phase rewrites with the test's
# node id and phase (a file with no stack after the header is no hang, src/plugin/mod.rs), and
# when the armed dump fires. faulthandler starts and joins a thread at every arming, ~0.2 ms:
# armed per phase that was 1.3 s of a 2400-test suite's 2.3 s. So the dump is armed for twice
# the phase's allowance and re-armed only when less than one allowance is left at a phase's
# start or end: every phase still gets at least limit + grace (never cut short), a stuck one is
# dumped within twice that, and the gaps between phases always have an allowance left.
#
# The header is a shared memory map of the file's first _HEADER bytes (NUL-terminated), and
# the dump is written after it: a phase's header is a memory copy, not four system calls
# (seek, truncate, write, flush were 13 % of a 2400-test suite's time). The page cache holds
# the mapped bytes even when faulthandler then ends the process.
_HEADER = 16384
_backstop = {"pid": None, "file": None, "header": None, "until": 0.0}


def _backstop_file():
    pid = os.getpid()
    if _backstop["pid"] != pid:
        # A forked process (an xdist worker, a test that forks) writes a file of its own: the
        # parent's map is shared with it and must not be written.
        _backstop.update(pid=pid, until=0.0, header=None)
        f = open(os.path.join(_HANG_DIR, "hang-%d.txt" % pid), "w+b", buffering=0)
        f.truncate(_HEADER)
        try:
            import mmap

            _backstop["header"] = mmap.mmap(f.fileno(), _HEADER)
        except Exception:
            _backstop["header"] = None
        f.seek(_HEADER)
        _backstop["file"] = f
    return _backstop["file"]


def _backstop_header(f, nodeid, when):
    data = ("%s\n%s\n" % (nodeid, when)).encode("utf-8", "replace")[: _HEADER - 1] + b"\0"
    header = _backstop["header"]
    if header is not None:
        header[: len(data)] = data
    else:
        # No map (a file system without mmap): the same bytes, written.
        f.seek(0)
        f.write(data)
        f.seek(_HEADER)


def _backstop_keep_armed(f):
    allowance = _LIMIT + _BACKSTOP_GRACE
    now = time.monotonic()
    if _backstop["until"] - now < allowance:
        faulthandler.dump_traceback_later(2 * allowance, exit=True, file=f)
        _backstop["until"] = now + 2 * allowance


# What a phase asks of its config, looked up once per session (a phase's getini and hasplugin
# were a tenth of the limit's cost): {id(config): (config, faulthandler_timeout, timeout plugin)}.
_per_config = {}


def _config_facts(config):
    got = _per_config.get(id(config))
    if got is None or got[0] is not config:
        try:
            fh = float(config.getini("faulthandler_timeout") or 0) > 0
        except Exception:
            fh = False
        got = (config, fh, config.pluginmanager.hasplugin("timeout"))
        _per_config.clear()
        _per_config[id(config)] = got
    return got


def _use_timer(item):
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        return False
    # pytest-timeout's own limit wins; two handlers for one signal would fight.
    if _config_facts(item.config)[2]:
        try:
            if item.config.getvalue("timeout") or item.get_closest_marker("timeout"):
                return False
        except Exception:
            pass
    return True


# One hang, not one limit per test: once a test of this process was stopped by the limit, the
# code object it was stuck in is remembered, and a later test still running inside that code
# after a short limit is stopped there as the same hang. Nine parametrized tests that call one
# endless loop then cost one limit and eight short ones, not nine limits. The short limit is the
# hang search's own (src/session/sources/limits.rs): 5 times what the passing tests of the same
# file took so far, at least 1 s, under the limit. A test that is elsewhere at that moment is
# checked again at each short limit and gets the full limit otherwise.
_SAME_HANG_FACTOR = 5.0
_SAME_HANG_MIN = 1.0
# {code object: node id of the first test stuck there}.
_hung = {}
# {test file: the passing tests' call phases so far, seconds}.
_passing = {}
# The phase under the timer: when it began, its test, and its short limit (0: none).
_phase = {"start": 0.0, "nodeid": "", "short": 0.0}


def _short_limit(item):
    if not _hung:
        return 0.0
    passing = _passing.get(item.nodeid.split("::", 1)[0], 0.0)
    short = max(_SAME_HANG_MIN, _SAME_HANG_FACTOR * passing)
    return short if short < _LIMIT else 0.0


def _stuck_in_a_hung_code(frame):
    f = frame
    while f is not None:
        first = _hung.get(f.f_code)
        if first is not None:
            return f, first
        f = f.f_back
    return None, None


def _on_alarm(signum, frame):
    elapsed = time.monotonic() - _phase["start"]
    short = _phase["short"]
    if short and elapsed < _LIMIT - 0.01:
        f, first = _stuck_in_a_hung_code(frame)
        if f is not None:
            raise PerTestTimeout(
                "the test did not finish within %g s: it was still in %s(), where %s hung "
                "(the same hang costs selfdebug's per-test limit once, --test-timeout)"
                % (short, f.f_code.co_name, first)
            )
        try:
            signal.setitimer(signal.ITIMER_REAL, min(short, _LIMIT - elapsed))
        except Exception:
            pass
        return
    if frame is not None and frame.f_code not in _hung:
        _hung[frame.f_code] = _phase["nodeid"]
    raise PerTestTimeout(
        "the test did not finish within %g s (selfdebug's per-test limit, --test-timeout)" % _LIMIT
    )


def _pytest_faulthandler_timeout(item):
    # pytest's own faulthandler_timeout arms and cancels the one dump per test: then ours is
    # armed and cancelled per phase, as pytest's is per test.
    return _config_facts(item.config)[1]


class _Limit:
    """Arms the timer and the backstop around one phase of one test."""

    def __init__(self, item, when):
        self.item = item
        self.when = when
        self.timer = False
        self.previous = None
        self.hang = None
        self.per_phase = False

    def __enter__(self):
        if _LIMIT <= 0:
            return self
        if _HANG_DIR:
            try:
                f = _backstop_file()
                _backstop_header(f, self.item.nodeid, self.when)
                self.per_phase = _pytest_faulthandler_timeout(self.item)
                if self.per_phase:
                    faulthandler.dump_traceback_later(_LIMIT + _BACKSTOP_GRACE, exit=True, file=f)
                    _backstop["until"] = 0.0
                else:
                    _backstop_keep_armed(f)
                self.hang = f
            except Exception:
                self.hang = None
        if _use_timer(self.item):
            try:
                short = _short_limit(self.item)
                _phase.update(start=time.monotonic(), nodeid=self.item.nodeid, short=short)
                self.previous = signal.signal(signal.SIGALRM, _on_alarm)
                signal.setitimer(signal.ITIMER_REAL, short or _LIMIT)
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
                if self.per_phase:
                    faulthandler.cancel_dump_traceback_later()
                else:
                    _backstop_keep_armed(self.hang)
            except Exception:
                pass
        return False


def pytest_runtest_logreport(report):
    if _LIMIT > 0 and report.when == "call" and report.passed:
        f = report.nodeid.split("::", 1)[0]
        _passing[f] = _passing.get(f, 0.0) + report.duration


@pytest.hookimpl(trylast=True)
def pytest_exception_interact():
    # pytest's faulthandler plugin cancels the dump here (after every failed phase, and before
    # pdb): the next phase arms it again.
    _backstop["until"] = 0.0


@pytest.hookimpl(trylast=True)
def pytest_enter_pdb():
    _backstop["until"] = 0.0


def pytest_unconfigure(config):
    # What comes after the last test (the summary, other plugins' reports) is no test's.
    if _backstop["pid"] == os.getpid() and _backstop["until"]:
        try:
            faulthandler.cancel_dump_traceback_later()
            _backstop["until"] = 0.0
        except Exception:
            pass


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


# ---------------------------------------------------------------------------------------------
# Crash-frame facts (SELFDEBUG_FACTS_DIR, set for the baseline run only).
#
# For a test whose call phase fails, the innermost frame of the traceback, when it is project
# code (under SELFDEBUG_FACTS_ROOT, not in site-packages or a virtualenv), is recorded as the
# probe would have seen it: its locals and the values of the failing statement's name /
# attribute / constant-subscript sub-expressions. Which of those the probe's rule selects is
# decided in Rust (src/probe/frame_facts.rs): this side records a superset, keyed by source
# text. The test is then run once more in the same session (the flakiness check the probe run
# used to be) and the record says whether it failed the same way. One JSON line per test, in
# one file per process (pytest-xdist workers do not share one). Everything here swallows its
# own errors: a fact that cannot be had is left out, and selfdebug probes instead.

# Read at each use, not at import: a warm worker imports this module once for many runs.
def _facts_dir():
    return os.environ.get("SELFDEBUG_FACTS_DIR") or ""


def _facts_root():
    return os.environ.get("SELFDEBUG_FACTS_ROOT") or ""


# Values are recorded as the probe records them: `_values` is the probe's own code.
# Reruns per process, and the longest first run worth rerunning (seconds): a baseline with
# dozens of failures must not double its time; a test past either limit is probed instead.
_RERUNS_MAX = 5
_RERUN_SLOW = 10.0
_EXPRS_MAX = 80
_facts_state = {
    "reruns": 0,
    "pending": None,
    "again": None,
    "rerunning": False,
    "pid": None,
    "watch": None,
    "direct": False,
}


def _project_file(path):
    """`path` relative to the root when it is project code, else None."""
    root = _facts_root()
    if not root or not path or path.startswith("<"):
        return None
    try:
        real = os.path.realpath(path)
        root = os.path.realpath(root)
        rel = os.path.relpath(real, root)
    except (OSError, ValueError):
        return None
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return None
    parts = rel.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return None
    d = root
    for p in parts[:-1]:
        if os.path.exists(os.path.join(d, "pyvenv.cfg")):
            return None
        d = os.path.join(d, p)
    if os.path.exists(os.path.join(d, "pyvenv.cfg")):
        return None
    return "/".join(parts)


def _crash(excinfo):
    """(innermost traceback entry, exception) of a failed call."""
    tb = excinfo.tb
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb, excinfo.value


def _signature(excinfo):
    """What "failed the same way" compares: the exception type and the innermost frame."""
    try:
        tb, exc = _crash(excinfo)
        where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb is not None else None
        return (_values.type_name(exc), where)
    except BaseException:
        return None


def _statement_exprs(path, line):
    """The sub-expressions the probe may evaluate for the statement at `line`: names, loads of
    attributes and constant subscripts of those (and an augmented assignment's target), not
    inside lambdas or comprehensions, in the innermost statement spanning the line and in a
    compound statement whose header shares that line (`if x: return y.z`). Returns the
    statement's first line and a list of (text, node, roles), roles a subset of {"receiver",
    "callee"}; (None, None) when no statement spans the line."""
    import ast

    import io
    import tokenize

    with open(path, "rb") as f:
        src = f.read()
    tree = ast.parse(src, path)
    # The text as Python decoded it (cookie, BOM): ast's columns are UTF-8 offsets into it.
    text = src.decode(tokenize.detect_encoding(io.BytesIO(src).readline)[0])
    chain = []
    node = tree
    while True:
        inner = None
        for child in _stmt_children(node):
            if child.lineno <= line <= (child.end_lineno or 0):
                inner = child
                break
        if inner is None:
            break
        chain.append(inner)
        node = inner
    if not chain:
        return None, None
    stmts = [chain[-1]]
    if len(chain) >= 2 and chain[-2].lineno == chain[-1].lineno:
        stmts.insert(0, chain[-2])
    classes = [s.name for s in chain if isinstance(s, ast.ClassDef)]
    # Private names are mangled by the innermost class, which eval of a bare expression does not
    # do (as the probe's planner does: src/probe/plan.rs, `mangle`).
    mangle_as = classes[-1].lstrip("_") if classes else ""
    found = []

    def header_fields(s):
        # A compound statement's own expressions, not its nested bodies.
        for name, value in ast.iter_fields(s):
            if name in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            vals = value if isinstance(value, list) else [value]
            for v in vals:
                if isinstance(v, ast.AST):
                    yield v

    def pure(n, any_ctx=False):
        if isinstance(n, ast.Name):
            return True
        if isinstance(n, ast.Attribute):
            return (any_ctx or isinstance(n.ctx, ast.Load)) and pure(n.value)
        if isinstance(n, ast.Subscript):
            return (any_ctx or isinstance(n.ctx, ast.Load)) and _constant(n.slice) and pure(n.value)
        return False

    def _constant(n):
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            n = n.operand
        return isinstance(n, ast.Constant) and not isinstance(n.value, bytes)

    roles = {}

    def visit(n, skip):
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(n, ast.Attribute):
            roles.setdefault(id(n.value), set()).add("receiver")
        if isinstance(n, ast.Call) and n.keywords:
            roles.setdefault(id(n.func), set()).add("callee")
        if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and pure(n, id(n) in skip):
            found.append(n)
        for c in ast.iter_child_nodes(n):
            if isinstance(c, ast.stmt):
                continue
            visit(c, skip)

    for s in stmts:
        aug = {id(s.target)} if isinstance(s, ast.AugAssign) else set()
        for f in header_fields(s):
            visit(f, aug)
    out = []
    seen = set()
    for n in found:
        seg = ast.get_source_segment(text, n)
        if seg is None:
            continue
        seg = seg.replace("\r\n", "\n").replace("\r", "\n")
        if seg in seen:
            continue
        seen.add(seg)
        out.append((seg, _load(n, mangle_as), roles.get(id(n), set())))
        if len(out) >= _EXPRS_MAX:
            break
    return chain[-1].lineno, out


def _stmt_children(node):
    """The statements directly in `node`'s bodies, `except` and `case` bodies included."""
    import ast

    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            yield child
        elif isinstance(child, ast.excepthandler) or type(child).__name__ == "match_case":
            for c in ast.iter_child_nodes(child):
                if isinstance(c, ast.stmt):
                    yield c


def _record(item, excinfo, duration):
    import sys

    tb, exc = _crash(excinfo)
    if tb is None or isinstance(exc, PerTestTimeout):
        return None
    frame = tb.tb_frame
    path = frame.f_code.co_filename
    rel = _project_file(path)
    if rel is None:
        return None
    line = tb.tb_lineno
    L = frame.f_locals
    G = frame.f_globals
    mn = G.get("__name__")
    mf = G.get("__file__")
    msg = _values.message(exc)
    rec = {
        "test": item.nodeid,
        "file": rel,
        "line": line,
        "exc_type": _values.type_name(exc),
        "msg": msg,
        "module": mn if isinstance(mn, str) else None,
        "module_file": mf if isinstance(mf, str) else None,
        "py": list(sys.version_info[:2]),
        "locals": [],
        "exprs": [],
        "duration_ms": int(duration * 1000),
    }
    _values.add_locals(rec, L, G)
    if isinstance(exc, NameError):
        name = getattr(exc, "name", None)
        # No builtins at all reads as none here; the probe leaves such a scope out.
        rec["scope"] = _values.scope(L, G, _values.builtins_of(G) or {}, name)
        rec["scope_name"] = name if isinstance(name, str) else None
    try:
        stmt_line, exprs = _statement_exprs(path, line)
    except BaseException:
        stmt_line, exprs = None, None
    rec["statement_line"] = stmt_line
    if exprs is None:
        rec["exprs"] = None
        return rec
    import ast

    attr_err = isinstance(exc, AttributeError)
    type_err = isinstance(exc, TypeError)
    for text, node, roles in exprs:
        d = {"text": text}
        try:
            code = compile(ast.Expression(body=node), "<selfdebug-facts>", "eval")
            v = eval(code, G, L)
        except BaseException as e:
            d["error"] = _values.error(e)
            rec["exprs"].append(d)
            continue
        d.update(_values.value(v))
        if attr_err and "receiver" in roles:
            _values.add_dir(d, v, L)
        if type_err and "callee" in roles:
            _values.add_params(d, v)
        rec["exprs"].append(d)
    return rec


def _load(node, mangle_as):
    """A copy of `node` to evaluate: in load context (an augmented assignment's target is a
    store), private names mangled for class `mangle_as` (none when empty)."""
    import ast
    import copy

    def mangled(name):
        if mangle_as and name.startswith("__") and not name.endswith("__"):
            return "_" + mangle_as + name
        return name

    n = copy.deepcopy(node)
    for sub in ast.walk(n):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
        if isinstance(sub, ast.Name):
            sub.id = mangled(sub.id)
        elif isinstance(sub, ast.Attribute):
            sub.attr = mangled(sub.attr)
    return ast.fix_missing_locations(n)


def _write(rec):
    _values.write(os.path.join(_facts_dir(), "facts-%d.jsonl" % os.getpid()), rec)



_passing_ms = {}


def _rerun_safe(item):
    # Another plugin that reruns or isolates tests owns the protocol.
    pm = item.config.pluginmanager
    return not any(pm.hasplugin(n) for n in ("rerunfailures", "flaky", "forked"))


class _Facts:
    """The crash-frame facts' hooks, registered only for a baseline run (see
    pytest_configure): every other run pays nothing for them."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "call" or call.excinfo is None or not _facts_dir():
            return
        try:
            rep = outcome.get_result()
            if not rep.failed:
                return
            st = _facts_state
            if st["rerunning"]:
                st["again"] = _signature(call.excinfo)
                return
            rec = _record(item, call.excinfo, call.duration)
            if rec is not None:
                rec["signature"] = _signature(call.excinfo)
            st["pending"] = rec
        except BaseException:
            _facts_state["pending"] = None

    def pytest_runtest_logreport(self, report):
        # A report while the first run is not logged comes from inside the test (a subtest's).
        st = _facts_state
        if st.get("watch") is not None and getattr(report, "nodeid", None) == st["watch"]:
            st["direct"] = True
        # The baseline's passing time per test file: the search's runs for a hung or endlessly
        # recursing test get a per-test limit of a few times it (session/sources/limits.rs).
        if report.when == "call" and report.passed and _facts_dir():
            f = report.nodeid.split("::", 1)[0]
            _passing_ms[f] = _passing_ms.get(f, 0.0) + report.duration * 1000.0

    def pytest_sessionfinish(self, session):
        if not _passing_ms or not _facts_dir():
            return
        try:
            path = os.path.join(_facts_dir(), "passing-%d.json" % os.getpid())
            with open(path, "w", encoding="utf-8") as f:
                json.dump({k: int(v) for k, v in _passing_ms.items()}, f)
        except Exception:
            pass

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if not _facts_dir() or not _rerun_safe(item):
            return None
        from _pytest.runner import runtestprotocol

        st = _facts_state
        if st["pid"] != os.getpid():
            # A forked child counts its own reruns.
            st.update(reruns=0, pid=os.getpid())
        st["pending"] = None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        st.update(watch=item.nodeid, direct=False)
        try:
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
        finally:
            st["watch"] = None
        rec = st["pending"]
        st["pending"] = None
        if rec is not None:
            try:
                # A test that reported from inside its call (subtests do) would report twice.
                if (
                    st["direct"]
                    or st["reruns"] >= _RERUNS_MAX
                    or rec["duration_ms"] > _RERUN_SLOW * 1000
                ):
                    rec["rerun"] = "skipped"
                else:
                    st["reruns"] += 1
                    st["again"] = None
                    st["rerunning"] = True
                    try:
                        again = runtestprotocol(item, nextitem=nextitem, log=False)
                    finally:
                        st["rerunning"] = False
                    if any(r.when == "call" and r.passed for r in again):
                        rec["rerun"] = "passed"
                    elif st["again"] is not None and st["again"] == rec["signature"]:
                        rec["rerun"] = "same"
                    else:
                        rec["rerun"] = "different"
                rec.pop("signature", None)
                _write(rec)
            except BaseException:
                pass
        # Only the first run is reported: the log is the baseline as it was.
        for rep in reports:
            item.ihook.pytest_runtest_logreport(report=rep)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def pytest_configure(config):
    # Read here, per session: a warm worker's children each start one.
    if _facts_dir() and not config.pluginmanager.has_plugin("_selfdebug_facts"):
        config.pluginmanager.register(_Facts(), "_selfdebug_facts")
