"""The release's version, one definition for the scripts that need it (scripts/action.py,
scripts/release-check, scripts/pre-commit-mirror): Cargo.toml's `[package] version`, and its
PEP 440 spelling, which the wheels carry (`0.2.0-rc.1` -> `0.2.0rc1`)."""

import re

PEP440_PRE = {"rc": "rc", "alpha": "a", "beta": "b"}


def cargo_version(cargo_toml_text):
    """`[package] version` of a Cargo.toml's text, or None."""
    package = re.search(r"^\[package\]\s*$(.*?)(?=^\[|\Z)", cargo_toml_text, re.M | re.S)
    m = package and re.search(r'^version\s*=\s*"([^"]+)"', package.group(1), re.M)
    return m.group(1) if m else None


def pep440(version):
    """Cargo's `X.Y.Z[-rc.N|-alpha.N|-beta.N]` as PEP 440 spells it; anything else unchanged."""
    m = re.match(r"^(\d+\.\d+\.\d+)(?:-(rc|alpha|beta)\.?(\d+))?$", version)
    if not m:
        return version
    if not m.group(2):
        return m.group(1)
    return "%s%s%s" % (m.group(1), PEP440_PRE[m.group(2)], m.group(3))
