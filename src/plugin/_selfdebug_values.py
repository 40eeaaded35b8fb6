"""How selfdebug records Python values: one source for the pytest plugin's crash-frame facts
(which imports it as `_selfdebug_values`) and for the probe (which inlines it into the code it
injects, src/probe/pysrc.rs), so both write the same JSON for the same values.

Inlined, this runs at every probe hit, outside the probe's own `try`: it only defines
constants and functions, and imports inside them.
"""

# The cuts; src/probe/pysrc.rs has them for the Rust side (a Rust test keeps them equal).
REPR_MAX = 400
LOCALS_MAX = 100
NAMES_MAX = 800


def type_name(v):
    t = type(v)
    m = getattr(t, "__module__", None)
    q = getattr(t, "__qualname__", None) or getattr(t, "__name__", "?")
    if isinstance(m, str) and m != "builtins":
        return m + "." + q
    return q


def value(v):
    try:
        r = repr(v)
        if not isinstance(r, str):
            r = "<repr returned " + type_name(r) + ">"
    except BaseException as e:
        r = "<repr failed: " + type_name(e) + ">"
    d = {"type": type_name(v), "repr": r[:REPR_MAX]}
    if len(r) > REPR_MAX:
        d["truncated"] = True
    return d


def message(e):
    """`str(e)`, cut; empty when it fails."""
    try:
        msg = str(e)
    except BaseException:
        msg = ""
    return msg[:REPR_MAX]


def error(e):
    return {"type": type_name(e), "msg": message(e)}


def internal(k):
    """Names that are not the user's: pytest's assertion-rewrite temporaries (`@py_assert1`,
    `@py_format10`, `@py_builtins`, `@pytest_ar`; no identifier starts with `@`) and
    selfdebug's own. Noise for the model and for an agent reading the values."""
    return k.startswith("@") or k.startswith("_selfdebug")


def keys(m):
    ks = [k for k in m.keys() if isinstance(k, str) and not internal(k)]
    return {"names": ks[:NAMES_MAX], "total": len(ks)}


def builtins_of(G):
    import types

    B = G.get("__builtins__")
    if isinstance(B, types.ModuleType):
        B = vars(B)
    return B


def scope(L, G, B, name):
    """The names a NameError for `name` had to choose from (CPython's candidates), with the
    builtins `B` (see `builtins_of`)."""
    sc = {"locals": keys(L), "globals": keys(G), "builtins": keys(B)}
    if "self" in L and isinstance(name, str):
        sc["self_has_attr"] = name in dir(L["self"])
    return sc


def add_locals(rec, L, G):
    """Appends the frame's locals to `rec["locals"]` (at module level, not its dunders and
    modules), at most LOCALS_MAX of them."""
    import types

    for k in list(L.keys()):
        if not isinstance(k, str) or internal(k):
            continue
        try:
            v = L[k]
        except BaseException:
            continue
        if L is G and (k.startswith("__") or isinstance(v, types.ModuleType)):
            continue
        if len(rec["locals"]) >= LOCALS_MAX:
            rec["locals_truncated"] = True
            break
        d = value(v)
        d["name"] = k
        rec["locals"].append(d)


def add_dir(d, v, L):
    """`dir(v)` (a failing attribute's receiver) into the value record `d`."""
    try:
        ns = [n for n in dir(v) if isinstance(n, str)]
        d["dir"] = {
            "names": ns[:NAMES_MAX],
            "total": len(ns),
            "is_self": "self" in L and L["self"] is v,
        }
    except BaseException:
        pass


def add_params(d, v):
    """The parameters of callee `v` into the value record `d`."""
    try:
        import inspect

        ps = inspect.signature(v).parameters.values()
        d["params"] = [[p.name, p.kind.name] for p in ps][:NAMES_MAX]
    except BaseException:
        pass


def write(path, rec):
    """Appends `rec` to `path` as one ASCII JSON line."""
    import json

    line = json.dumps(rec, ensure_ascii=True, default=str) + "\n"
    with open(path, "a", encoding="ascii") as f:
        f.write(line)
