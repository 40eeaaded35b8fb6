# selfdebug's standard-library index: which public names each standard-library module has.
# Run as `python -I -S -c SOURCE OUT SKIP` in an empty temp dir with stdin closed and no display:
# -I keeps the project's directory and PYTHON* variables out of sys.path, -S keeps site-packages
# (and their .pth hooks) out. Writes JSON lines to OUT (never stdout: a module may print on
# import), flushed per module, so a crash or hang names the module that caused it:
#   {"python": {...}}                         first, what interpreter this is
#   {"start": "m"}                            before importing m
#   {"m": "m", "all": bool, "deprecated": bool, "names": {...}}   m's public names, each
#       "FLAGS" or "FLAGS:OWNER" (OWNER: obj.__module__ when it is another module), FLAGS of
#       x exported (in __all__; without __all__: not a module, not imported from elsewhere
#         than the module's own C accelerator `_m`, and for data without __module__ only in
#         top-level modules: a dotted module without __all__ leaves loop variables and helpers
#         at top level)
#       d defined here (obj.__module__ == m)   c callable   m a module
#     deprecated: importing m warned that m is deprecated.
#   {"done": true}                            last
# SKIP: comma-separated module names not to import (ones that crashed or hung before).
import sys

sys.dont_write_bytecode = True
out = open(sys.argv[1], "w", encoding="utf-8")
skip = set(filter(None, (sys.argv[2] if len(sys.argv) > 2 else "").split(",")))

import importlib
import json
import pkgutil
import re
import signal
import warnings

warnings.simplefilter("ignore")

# Never imported: side effects on import (a browser, a print, an interactive loop), GUI
# toolkits (no display here; their names are not what a forgotten import means), the test
# suite, and lib2to3, whose import may write grammar pickles into the installation.
DENY = {
    "antigravity", "this", "idlelib", "turtledemo", "tkinter", "turtle", "test", "lib2to3",
}
# Submodule components never walked into: tests, `python -m` entry points (they run on
# import), codec modules (a hundred copies of `Codec`), private modules.
NO_WALK = {"test", "tests", "idle_test", "__main__", "encodings"}
PER_MODULE_SECONDS = 10


def stdlib_module_names():
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return set(names)
    # Python < 3.10: what the installation's stdlib directories hold, plus the builtins.
    import os
    import sysconfig
    paths = sysconfig.get_paths()
    dirs = {paths["stdlib"], paths["platstdlib"], os.path.join(paths["stdlib"], "lib-dynload")}
    found = set(sys.builtin_module_names)
    found.update(i.name for i in pkgutil.iter_modules(sorted(dirs)))
    return found - {"site-packages", "dist-packages"}


MODULES = sorted(stdlib_module_names())
TOPS = [m for m in MODULES if not m.startswith("_") and m not in DENY]


def emit(obj):
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


class Slow(Exception):
    pass


def on_alarm(signum, frame):
    raise Slow()


signal.signal(signal.SIGALRM, on_alarm)


def public(name):
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_")


def flags_of(modname, mod, name, in_all):
    try:
        obj = getattr(mod, name)
    except BaseException:
        return None
    try:
        is_mod = type(obj).__name__ == "module"
        owner = getattr(obj, "__module__", None) if not is_mod else None
        owner = owner if isinstance(owner, str) else None
        defined = owner == modname
        # Without __all__, what the module re-exports from its own C accelerator (`_bisect`
        # for `bisect`) is its public API all the same: `bisect.bisect_left`.
        accelerated = owner == "_" + modname.rpartition(".")[2]
        f = ""
        if in_all is not None:
            exported = name in in_all
        else:
            exported = not is_mod and (
                defined or accelerated or (owner is None and "." not in modname)
            )
        if exported:
            f += "x"
        if defined:
            f += "d"
        if callable(obj):
            f += "c"
        if is_mod:
            f += "m"
        if owner is not None and not defined:
            f += ":" + owner
        return f
    except BaseException:
        return None


def index(modname):
    emit({"start": modname})
    signal.alarm(PER_MODULE_SECONDS)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            mod = importlib.import_module(modname)
    except BaseException:
        return None
    finally:
        signal.alarm(0)
    for w in seen:
        note_deprecations(str(w.message), modname)
    deprecated = modname in DEPRECATED or modname.split(".")[0] in DEPRECATED
    try:
        all_ = getattr(mod, "__all__", None)
        in_all = set(n for n in all_ if isinstance(n, str)) if all_ is not None else None
    except BaseException:
        in_all = None
    names = {}
    try:
        keys = list(vars(mod))
    except BaseException:
        keys = []
    for name in list(keys) + sorted(in_all or ()):
        if public(name) and name not in names:
            f = flags_of(modname, mod, name, in_all)
            if f is not None:
                names[name] = f
    emit({"m": modname, "all": in_all is not None, "deprecated": deprecated, "names": names})
    return mod


DEPRECATED = set()


def note_deprecations(message, modname):
    # `'cgi' is deprecated`, `The asyncore module is deprecated ... use asyncio`: the module
    # named before the word is the deprecated one (the one imported, or one it imports in turn:
    # asynchat imports asyncore); a name after it is the replacement.
    at = message.lower().find("deprecat")
    if at < 0:
        return
    head = message[:at]
    for name in set(TOPS) | {modname}:
        if name in head and re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w.])", head):
            DEPRECATED.add(name)


def walkable(name):
    parts = name.split(".")
    return not any(p in NO_WALK or p.startswith("_") for p in parts[1:])


emit({"python": {"version": list(sys.version_info[:3]), "executable": sys.executable,
                 "modules": MODULES}})
done = set()
for top in TOPS:
    if top in skip:
        continue
    mod = index(top)
    done.add(top)
    path = getattr(mod, "__path__", None) if mod is not None else None
    if not path or top in NO_WALK:
        continue
    # walk_packages imports subpackages to look inside them: same marker, same time limit.
    emit({"start": top})
    signal.alarm(PER_MODULE_SECONDS)
    try:
        subs = sorted(i.name for i in pkgutil.walk_packages(path, top + ".", onerror=lambda n: None))
    except BaseException:
        subs = []
    finally:
        signal.alarm(0)
    for sub in subs:
        if sub in skip or sub in done or not walkable(sub):
            continue
        index(sub)
        done.add(sub)
# Modules imported along the way under a public dotted name (`os.path` is `posixpath`).
for name in sorted(n for n in list(sys.modules) if "." in n):
    top = name.split(".")[0]
    if top in TOPS and name not in done and name not in skip and walkable(name):
        index(name)
        done.add(name)
emit({"done": True})
