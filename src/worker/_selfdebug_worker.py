"""selfdebug's warm pytest worker (embedded in the binary, written to its private directory).

Started as `python _selfdebug_worker.py SOCKET` from a directory outside every project. It
imports pytest, the plugins pytest would load (entry points) and selfdebug's own plugin once,
then serves requests on the Unix socket SOCKET: one JSON line {argv, cwd, env, stdout, stderr}
per connection. For each it forks a child that becomes its own process group, takes the run's
environment, working directory, sys.path and bytecode settings, and runs pytest as
`python -m pytest ARGV` would. The server answers `pid N`, then `exit CODE` or `signal N` when
the child is gone (after killing what the child left in its group), or `refuse REASON` when it
cannot serve the run the way a cold run would (the tool then runs it cold).

The server never imports project code: it starts outside the project, and a request whose cwd
holds a module the server has loaded is refused. It exits when its stdin closes (the tool is
gone), killing the runs still going.
"""

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

# The environment variables the child applies itself; any other PYTHON* variable is read by the
# interpreter at startup only, so a run that sets it differently must run cold.
_APPLIED = ("PYTHONPATH", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")


def _startup_python_env():
    return {k: v for k, v in os.environ.items() if k.startswith("PYTHON") and k not in _APPLIED}


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

    fresh = set()
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
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
    return None, fresh


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
        import pytest
        import pytest.__main__ as main_mod

        sys.argv = [main_mod.__file__] + list(req["argv"])
        sys.stdout = open(1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)
        sys.stderr = open(2, "w", encoding=sys.stderr.encoding, errors="backslashreplace", closefd=False)
        try:
            # What `python -m pytest` runs (its `console_main` reads sys.argv, and names the
            # program as a cold run's messages do: "python -m pytest: error: ...").
            console = getattr(pytest, "console_main", None)
            code = int(console() if console is not None else pytest.main(list(req["argv"])))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
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


def _refusal(req, loaded, startup_env):
    cwd = os.path.realpath(req["cwd"])
    if any(f == cwd or f.startswith(cwd + os.sep) for f in loaded):
        return "the worker has a module from the run's directory loaded (a plugin imports project code)"
    env = req["env"]
    wanted = {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _APPLIED}
    if wanted != startup_env:
        diff = sorted(set(wanted.items()) ^ set(startup_env.items()))
        return "the run sets %s, which Python reads only at startup" % diff[0][0]
    return None


def main():
    sock_path = sys.argv[1]
    base_path = _base_path()
    startup_env = _startup_python_env()
    why, fresh = _preload()
    loaded = _loaded_files()
    # What the server holds is pytest's and the stdlib's, never garbage a run needs collected:
    # frozen, a child's collections (pytest forces several at its end) skip it. Measured on
    # the demo: a child run 62 -> 39 ms with the preload above.
    gc.collect()
    gc.freeze()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(64)
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    ready = {"ready": True, "refuse": why, "pid": os.getpid(), "paths": [p for p in base_path if p]}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    me = os.getpid()
    running = {}  # pid -> connection
    stdin = sys.stdin.fileno()
    while True:
        try:
            ready, _, _ = select.select([srv, rfd, stdin], [], [])
        except InterruptedError:
            ready = []
        if stdin in ready and not os.read(stdin, 4096):
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
                reason = why or _refusal(req, loaded, startup_env)
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
