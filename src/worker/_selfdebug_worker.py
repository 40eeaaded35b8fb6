"""selfdebug's warm pytest worker (embedded in the binary, written to its private directory).

Started as `python _selfdebug_worker.py SOCKET [ROOT]` from a directory outside every project
(ROOT: the project the tool works on). It imports pytest, the plugins pytest would load (entry
points, through one pytest session of an empty directory, so that pytest's assertion rewriter
imports them as in every run) and selfdebug's own plugin once, then serves requests on the
Unix socket SOCKET: one JSON line {argv, cwd, env, stdout, stderr} per connection. For each it
forks a child that becomes its own process group, takes the run's environment, working
directory, sys.path and bytecode settings, and runs pytest as `python -m pytest ARGV` would. The server answers `pid N`, then `exit CODE` or `signal N` when
the child is gone (after killing what the child left in its group), or `refuse REASON` when it
cannot serve the run the way a cold run would (the tool then runs it cold).

The server never imports project code: it starts outside the project, refuses to start when a
pytest plugin it would preload is a module of ROOT, and refuses a request whose cwd holds a
module of the project that it has loaded, or a module named like one the server holds (a cold
run would import the project's in its place). A module of an environment that lives under the
project (`.venv/`, `venv/`, `.tox/`, `.nox/`, any site-packages) is not the project's. It exits
when its stdin closes (the tool is gone), killing the runs still going. A run whose connection
closes before its end (the tool that asked for it was killed) is killed.

Kept alive (`--idle SECONDS --state FILE --stamp FILE...` after ROOT): stdin is not watched;
once ready it writes FILE (its pid, socket, and the stamps of the given files and of its path
directories, for the tool to compare), and it exits after SECONDS without a run, when its
socket is removed, or, with SELFDEBUG_WORKER_OWNER=PID (an MCP server's calls), once that
process is gone, taking its socket and FILE along.

It must parse on every Python the tool supports (3.6+), so that an old one is refused with a
reason instead of a syntax error.
"""

import sys

# What the interpreter imported before this script's first line: a cold `python -m pytest`
# holds these too before its path is set, so a project's module of the same name never
# replaces them (see `_shadowing`).
_STARTUP = frozenset(n.split(".", 1)[0] for n in sys.modules)

import atexit
import ctypes
import gc
import importlib
import json
import linecache
import os
import select
import signal
import socket
import sys
import time

# The environment variables the child applies itself; any other PYTHON* variable is read by the
# interpreter at startup only, so a run that sets it differently must run cold.
_APPLIED = ("PYTHONPATH", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")


def _startup_python_env():
    return {k: v for k, v in os.environ.items() if k.startswith("PYTHON") and k not in _APPLIED}


# Directory names that hold an environment's modules, never the project's own.
_ENV_NAMES = ("site-packages", "dist-packages", ".tox", ".nox", "__pypackages__")


def _env_roots():
    """The interpreter's and the environment's own directories (real paths)."""
    roots = [sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", ""), getattr(sys, "base_exec_prefix", "")]
    try:
        import site

        roots += list(site.getsitepackages()) + [site.getusersitepackages()]
    except Exception:
        pass
    return {os.path.realpath(r) for r in roots if isinstance(r, str) and r}


def _under(path, top):
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _of_project(path, top, roots):
    """Whether the real path `path` is a module of the project at `top` (a real path): under
    it, and not in an environment that lives there (a venv: `pyvenv.cfg` in a directory on the
    way; a site-packages; a tox/nox env; the interpreter's own prefix)."""
    if not _under(path, top):
        return False
    # A prefix that holds the whole project (a project inside the interpreter's tree) says
    # nothing about which of its files are the project's.
    if any(_under(path, r) and not _under(top, r) for r in roots):
        return False
    parts = os.path.relpath(path, top).split(os.sep)[:-1]
    if any(p in _ENV_NAMES for p in parts):
        return False
    d = top
    for p in parts:
        d = os.path.join(d, p)
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return False
    return True


def _unsupported():
    """Why this interpreter cannot host the worker, decided before pytest is imported (the
    start's real cost), or None."""
    if sys.version_info < (3, 8):
        # The children apply PYTHONPYCACHEPREFIX through sys.pycache_prefix (3.8+), and the
        # server needs gc.freeze (3.7+) and importlib.metadata (3.8+).
        return "Python %d.%d is older than 3.8, the oldest the worker serves" % sys.version_info[:2]
    if not hasattr(os, "fork"):
        return "no fork on this platform"
    try:
        from importlib import metadata

        version = metadata.version("pytest")
    except Exception:
        return None
    try:
        major_minor = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        return None
    if major_minor < (3, 10):
        return "pytest %s is older than 3.10, the oldest the worker serves" % version
    return None


def _project_plugins(top, roots):
    """The pytest plugins (entry points) whose module is a file of the project at `top`: the
    server would import them before any run (found without importing them)."""
    if not top or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return []
    out = []
    try:
        from importlib import metadata
        import importlib.util

        eps = metadata.entry_points()
        eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
        for ep in eps:
            parts = ep.value.split(":", 1)[0].strip().split(".")
            try:
                # The top-level name only: a dotted one would import its parents.
                spec = importlib.util.find_spec(parts[0])
            except Exception:
                continue
            if spec is None:
                continue
            where = [spec.origin] if spec.origin and spec.has_location else []
            # The submodule itself, looked up on disk under the package's directories.
            for loc in spec.submodule_search_locations or []:
                base = os.path.join(loc, *parts[1:])
                where[:0] = [f for f in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(f)]
                where.append(loc)
            for w in where:
                w = os.path.realpath(w)
                if _of_project(w, top, roots):
                    out.append("%s (%s)" % (ep.name, os.path.relpath(w, top)))
                    break
    except Exception:
        pass
    return out


def _base_path():
    """sys.path without the script's directory and the server's own PYTHONPATH entries: what
    every run's path is built on (site-packages and .pth additions included)."""
    own = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [p for p in sys.path[1:] if os.path.abspath(p or ".") not in own]


def _preload():
    """Imports what every run imports; returns why the worker cannot serve (or None) and the
    names of the plugin modules the child must import afresh."""
    before = list(sys.path)
    import pytest  # noqa: F401

    _memo_metadata(_base_path())
    # The plugins pytest would load (entry points), loaded the way pytest loads them: through a
    # session of pytest's own (see `_warm_session`), so that pytest's assertion rewriter imports
    # them. A child's pytest then finds them imported by a rewriter and neither warns nor needs
    # them afresh; re-importing them in every child was a third of its time (anyio's plugin).
    fresh = _warm_session()
    if fresh is None:
        fresh = _entry_point_modules()
    # pytest's own plugin modules (and the stdlib they pull in: unittest, pdb, xml.etree)
    # are imported by every run's config; pytest registers whatever is in sys.modules and
    # rewrites none of them, so importing them here changes nothing but the child's time.
    try:
        from _pytest import config as _config

        for name in tuple(getattr(_config, "essential_plugins", ())) + tuple(
            getattr(_config, "default_plugins", ())
        ):
            try:
                importlib.import_module("_pytest." + name)
            except Exception:
                pass
    except Exception:
        pass
    # What a failing test's report imports (pytest's traceback and assertion explanations).
    for name in ("pdb", "difflib", "pprint", "inspect", "tokenize", "faulthandler", "_pytest._argcomplete"):
        try:
            importlib.import_module(name)
        except Exception:
            pass
    for name in ("_selfdebug_pytest", "_selfdebug_trace", "_selfdebug_cover"):
        try:
            importlib.import_module(name)
        except Exception:
            pass
        fresh.add(name)
    if list(sys.path) != before:
        return "a plugin changed sys.path while it was imported", fresh
    if not hasattr(os, "fork"):
        return "no fork on this platform", fresh
    _warm_inspect()
    return None, fresh


def _entry_point_modules():
    """The old way, when a warm session cannot be had: the entry points imported plainly, and
    their distributions' modules (which pytest rewrites) left for the child to import afresh."""
    fresh = set()
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return fresh
    try:
        from importlib import metadata

        from _pytest.config import _iter_rewritable_modules

        eps = metadata.entry_points()
        eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
        for ep in eps:
            try:
                ep.load()
                files = [str(f) for f in (ep.dist.files or [])] if ep.dist else []
                # pytest rewrites asserts in a plugin's own modules, and warns when they
                # are already imported: those the child imports itself (their
                # dependencies stay warm).
                fresh.update(_iter_rewritable_modules(files))
            except Exception:
                # pytest will report it in the child, as a cold run would.
                pass
    except Exception:
        pass
    return fresh


def _warm_session():
    """One `pytest --collect-only` of an empty directory in the server: pytest loads the
    entry-point plugins through its assertion rewriter, as every run's pytest would. Returns
    the modules the child must still import afresh (those a child's pytest would warn about as
    imported before its rewriter: an older pytest that checks the rewriter's own list only), or
    None when the session did not go as planned (the caller falls back)."""
    import tempfile

    marked = []

    class _Spy:
        def pytest_configure(self, config):
            hook = getattr(config.pluginmanager, "rewrite_hook", None)
            marked.append((hook, set(getattr(hook, "_must_rewrite", None) or ())))

    saved_env = {k: os.environ.pop(k) for k in ("PYTEST_PLUGINS", "PYTEST_ADDOPTS") if k in os.environ}
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    empty = tempfile.mkdtemp(prefix="selfdebug-warm-")
    out = os.dup(1)
    err = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(null, 1)
        os.dup2(null, 2)
        import pytest

        # The server's cwd is its private directory: pytest finds no ini there, and loads no
        # conftest (an older pytest would look in every parent directory of the empty one).
        code = pytest.main(
            ["-q", "-p", "no:cacheprovider", "--noconftest", "--collect-only", "--rootdir", empty, empty],
            plugins=[_Spy()],
        )
    except BaseException:
        code = None
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (out, err, null):
            os.close(fd)
        try:
            os.rmdir(empty)
        except OSError:
            pass
        os.environ.update(saved_env)
        sys.path[:] = saved_path
    # 5: nothing collected, the expected end.
    if code is None or int(code) not in (0, 5) or not marked:
        return None
    hook, names = marked[0]
    if hook is None or not hasattr(hook, "mark_rewrite"):
        # Assertion rewriting off (`--assert=plain` cannot be here; an old pytest): the old way.
        return None
    names = {n for n in names if n in sys.modules}
    # Ask a fresh rewriter of the same type which of them it would warn about.
    warned = set()
    try:
        probe = object.__new__(type(hook))
        probe.__dict__.update(
            config=getattr(hook, "config", None),
            _rewritten_names={},
            _rewritten_modules=set(),
            _must_rewrite=set(),
            _marked_for_rewrite_cache={},
        )
        probe._warn_already_imported = warned.add
        probe.mark_rewrite(*names)
    except Exception:
        return None
    # Modules the session imported that are not the plugins' (pytest's lazy imports) stay.
    del saved_modules
    return {n.split(".", 1)[0] for n in warned}


def _memo_metadata(dirs):
    """Every pytest reads the entry points and file lists of every installed distribution
    (pluggy's plugin loading, pytest's rewrite marks): a file read per distribution, in every
    child. The texts of distributions in the interpreter's own path directories are kept once
    read, here and in the children: the server is replaced when one of those directories
    changes (a pip install adds or removes a `.dist-info`), so they cannot go stale. Other
    directories (the project's, PYTHONPATH's) are read afresh every time."""
    try:
        from importlib import metadata

        cls = metadata.PathDistribution
        orig = cls.read_text
    except Exception:
        return
    kept = {os.path.abspath(d) for d in dirs if d}
    memo = {}

    def read_text(self, filename):
        path = getattr(self, "_path", None)
        key = (str(path), filename)
        try:
            return memo[key]
        except KeyError:
            pass
        text = orig(self, filename)
        if path is not None and os.path.dirname(os.path.abspath(str(path))) in kept:
            memo[key] = text
        return text

    read_text.__doc__ = orig.__doc__
    cls.read_text = read_text


def _warm_inspect():
    """Fills `inspect.getmodule`'s file cache for every module the server holds: pytest's
    traceback of a failing test asks it, and a cold cache costs a realpath of every loaded
    module in every child. Only with absolute module files, whose mapping is the same from
    any working directory."""
    try:
        import inspect

        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if isinstance(f, str) and not os.path.isabs(f):
                return
        inspect.getmodule(compile("0", os.path.join(os.sep, "nonexistent", "_selfdebug_warm.py"), "eval"))
    except Exception:
        pass


def _loaded_files():
    out = []
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            out.append(os.path.realpath(f))
    return out


_libc = None


def _die_with_parent():
    """PR_SET_PDEATHSIG(SIGKILL) on Linux: the run dies with the server."""
    global _libc
    if not sys.platform.startswith("linux"):
        return
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        _libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def _child(req, base_path, server_pid, fresh):
    """The forked run: never returns."""
    code = 70
    try:
        os.setpgid(0, 0)
        _die_with_parent()
        if os.getppid() != server_pid:
            os._exit(137)
        signal.set_wakeup_fd(-1)
        for s in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err):
            os.close(fd)
        env = req["env"]
        os.environ.clear()
        os.environ.update(env)
        os.chdir(req["cwd"])
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        # `python -m pytest` puts the working directory first, then PYTHONPATH.
        sys.path[:] = [os.getcwd()] + [os.path.abspath(p) for p in extra] + base_path
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        sys.path_importer_cache.clear()
        importlib.invalidate_caches()
        linecache.clearcache()
        # selfdebug's plugins read their settings from the environment when imported, and
        # pytest rewrites entry-point plugins as it imports them: the child imports those
        # afresh (what they import stays warm).
        for name in list(sys.modules):
            if name.split(".", 1)[0] in fresh:
                del sys.modules[name]
        import runpy

        sys.argv = ["pytest"] + list(req["argv"])
        sys.stdout = open(1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)
        sys.stderr = open(2, "w", encoding=sys.stderr.encoding, errors="backslashreplace", closefd=False)
        try:
            # Exactly what `python -m pytest` runs, on every pytest: `pytest/__main__.py`
            # (which names the program "python -m pytest" in usage errors), or pytest 3's
            # `pytest.py` run as __main__. Never `pytest.console_main()`, deprecated in 9.1.
            runpy.run_module("pytest", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = _exit_code(e.code)
        try:
            atexit._run_exitfuncs()
        except BaseException:
            pass
    except BaseException:
        try:
            import traceback

            traceback.print_exc()
        except BaseException:
            pass
        code = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(int(code) & 0xFF)


def _exit_code(code):
    """The process status `raise SystemExit(code)` gives, as Python's own exit does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write("%s\n" % (code,))
    except Exception:
        pass
    return 1


def _refusal(req, loaded, roots, startup_env, held=None):
    cwd = os.path.realpath(req["cwd"])
    mine = [f for f in loaded if _of_project(f, cwd, roots)]
    if mine:
        return "a pytest plugin imported the project's own module %s into the worker" % os.path.relpath(mine[0], cwd)
    env = req["env"]
    wanted = {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _APPLIED}
    if wanted != startup_env:
        diff = sorted(set(wanted.items()) ^ set(startup_env.items()))
        return "the run sets %s, which Python reads only at startup" % diff[0][0]
    shadow = _shadowing(req, held)
    if shadow:
        return "the project's %s has the name of a module the worker holds (%s), which a cold run would import instead" % shadow
    return None


def _shadowing(req, held):
    """A module the run's path puts ahead of the one the server holds (a project's own
    `packaging/` or `difflib.py` in its directory or PYTHONPATH): a cold `python -m pytest`
    would import the project's, the child would use the server's. (file, name) or None."""
    if not held:
        return None
    dirs = [req["cwd"]] + [os.path.join(req["cwd"], p) for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            stem = n[:-3] if n.endswith(".py") else n
            if stem not in held:
                continue
            f = os.path.join(d, n)
            if not n.endswith(".py"):
                f = os.path.join(f, "__init__.py")
            # The very file the server imported (selfdebug's plugin directory on PYTHONPATH)
            # is no other module.
            if os.path.isfile(f) and os.path.realpath(f) != held[stem]:
                return os.path.relpath(f, req["cwd"]), stem
    return None


def _held(fresh, startup):
    """The top-level modules the server imported from files that a cold run imports only after
    its path is set (not at the interpreter's startup), by name, with their files (real
    paths); the plugins the child imports afresh left out."""
    out = {}
    for name, m in list(sys.modules.items()):
        if "." in name or name in startup or name in fresh:
            continue
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            out[name] = os.path.realpath(f)
    return out


def _say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _stamp_of(path):
    """What a kept-alive server records of a file or directory: `MTIME_NS:SIZE`, `-` when it
    is missing (compared by the tool, which computes the same)."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return "%d:%d" % (st.st_mtime_ns, st.st_size)


def _write_state(state, sock_path, files, paths):
    """A kept-alive server's record, written atomically once it is ready: its pid, its socket,
    and the stamps of what invalidates it (the files the tool named, the path directories)."""
    if not state:
        return
    entries = [[f, _stamp_of(f)] for f in files] + [[p, _stamp_of(p)] for p in paths]
    tmp = "%s.%d.tmp" % (state, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"pid": os.getpid(), "socket": sock_path, "stamp": entries}, f)
    os.replace(tmp, state)


def _still_mine(sock_path, sock_ino):
    try:
        return os.lstat(sock_path).st_ino == sock_ino
    except OSError:
        return False


def _start_time(pid):
    """A process's start time (field 22 of /proc/PID/stat), or None when it is gone: with the
    pid, it names that process and not a later one that reuses the pid."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError, ValueError):
        return None


def _owner():
    """SELFDEBUG_WORKER_OWNER: the process a kept-alive server lives no longer than (the MCP
    server whose calls share it), as (pid, start time); None when unset or unreadable."""
    try:
        pid = int(os.environ.get("SELFDEBUG_WORKER_OWNER") or 0)
    except ValueError:
        return None
    started = _start_time(pid) if pid > 0 else None
    return (pid, started) if started else None


def _leave(state, sock_path, sock_ino):
    """A kept-alive server's exit: its socket and its record go, unless a newer server's
    replaced them."""
    try:
        if os.lstat(sock_path).st_ino == sock_ino:
            os.unlink(sock_path)
    except OSError:
        pass
    try:
        with open(state) as f:
            mine = json.load(f).get("pid") == os.getpid()
        if mine:
            os.unlink(state)
    except (OSError, ValueError):
        pass
    os._exit(0)


def main():
    args = sys.argv[1:]
    # Kept alive (`--idle SECONDS --state FILE --stamp FILE...`): the server outlives the tool
    # that started it, and exits after SECONDS without a run.
    idle = state = None
    files = []
    if "--idle" in args:
        i = args.index("--idle")
        idle = float(args[i + 1])
        state = args[i + 3]
        files = args[i + 5 :]
        args = args[:i]
    sock_path = args[0]
    top = os.path.realpath(args[1]) if len(args) > 1 else None
    roots = _env_roots()
    early = _unsupported()
    plugins = [] if early else _project_plugins(top, roots)
    if plugins:
        early = "the pytest plugin %s is the project's own code, which the worker would import before every run" % ", ".join(plugins)
    if early:
        _say({"ready": False, "refuse": early, "pid": os.getpid(), "paths": []})
        return
    base_path = _base_path()
    startup_env = _startup_python_env()
    why, fresh = _preload()
    loaded = _loaded_files()
    held = _held(fresh, _STARTUP)
    # What the server holds is pytest's and the stdlib's, never garbage a run needs collected:
    # frozen, a child's collections (pytest forces several at its end) skip it. Measured on
    # the demo: a child run 62 -> 39 ms with the preload above.
    gc.collect()
    gc.freeze()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    os.chmod(sock_path, 0o600)
    srv.listen(64)
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # The directories whose change (a pip install) makes the preloaded modules stale. A project
    # directory on the path (an editable install's .pth) is left out: the server holds none of
    # its modules (it refuses when it does), and every file the tool writes there changes its
    # mtime.
    stamped = [p for p in base_path if p and not (top and _of_project(os.path.join(os.path.realpath(p), "x"), top, roots))]
    if not why:
        _write_state(state, sock_path, files, stamped)
    try:
        _say({"ready": True, "refuse": why, "pid": os.getpid(), "paths": stamped})
    except OSError:
        # A kept-alive server whose starter is gone: its record says it is ready.
        pass
    if why and idle is not None:
        _leave(state, sock_path, os.lstat(sock_path).st_ino)
    me = os.getpid()
    running = {}  # pid -> connection
    # A kept-alive server's stdin is /dev/null: only the idle timeout ends it.
    stdin = sys.stdin.fileno() if idle is None else None
    sock_ino = os.lstat(sock_path).st_ino
    owner = _owner() if idle is not None else None
    last = time.monotonic()
    while True:
        if idle is not None and not running and time.monotonic() - last >= idle:
            _leave(state, sock_path, sock_ino)
        if owner is not None and not running and _start_time(owner[0]) != owner[1]:
            # The MCP server whose calls it served is gone (its client with it): no trace.
            _leave(state, sock_path, sock_ino)
        if idle is not None and not running and not _still_mine(sock_path, sock_ino):
            # Its socket was removed (its directory deleted): nobody can reach it any more.
            _leave(state, sock_path, sock_ino)
        # A kept-alive server looks at its socket every few seconds.
        wait = None if idle is None else min(2.0, max(0.05, idle - (time.monotonic() - last)))
        try:
            watched = [f for f in (srv, rfd, stdin) if f is not None] + list(running.values())
            ready, _, _ = select.select(watched, [], [], wait)
        except InterruptedError:
            ready = []
        if running or ready:
            last = time.monotonic()
        if stdin is not None and stdin in ready and not os.read(stdin, 4096):
            # The tool is gone: so are its runs.
            for pid in running:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(0)
        if rfd in ready:
            try:
                os.read(rfd, 4096)
            except OSError:
                pass
        _reap(running)
        # A run's connection closes before its end only when the tool that asked for it is
        # gone (killed): its run goes with it, as a cold run's would (its process group).
        for pid, conn in list(running.items()):
            if conn in ready:
                try:
                    gone = not conn.recv(1)
                except OSError:
                    gone = True
                if gone:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
        if srv in ready:
            conn, _ = srv.accept()
            conn.settimeout(5)
            try:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(1 << 20)
                    if not chunk:
                        break
                    data += chunk
                req = json.loads(data.decode("utf-8"))
                reason = why or _refusal(req, loaded, roots, startup_env, held)
                if reason:
                    conn.sendall(("refuse %s\n" % reason).encode("utf-8"))
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    for c in [srv, conn] + list(running.values()):
                        c.close()
                    _child(req, base_path, me, fresh)
                conn.sendall(b"pid %d\n" % pid)
                running[pid] = conn
            except Exception as e:
                try:
                    conn.sendall(("refuse the request could not be read: %s\n" % e).encode("utf-8"))
                except OSError:
                    pass
                conn.close()


def _reap(running):
    """Reports every finished run; what it left in its group is killed before it is reaped, so
    its pid (the group id) cannot have been reused by then."""
    for pid in list(running):
        try:
            if hasattr(os, "waitid"):
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if info is None:
                    continue
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                _, status = os.waitpid(pid, 0)
            else:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == 0:
                    continue
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
        except ChildProcessError:
            status = None
        conn = running.pop(pid)
        if status is None:
            msg = b"exit 70\n"
        elif os.WIFSIGNALED(status):
            msg = b"signal %d\n" % os.WTERMSIG(status)
        else:
            msg = b"exit %d\n" % os.WEXITSTATUS(status)
        try:
            conn.sendall(msg)
        except OSError:
            pass
        conn.close()


if __name__ == "__main__":
    main()
