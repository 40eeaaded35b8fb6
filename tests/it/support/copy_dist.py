"""Copies an installed distribution and everything it requires (for this interpreter) into a
directory, so that another interpreter, or another user who cannot read this one's
site-packages, can import it with PYTHONPATH=DEST. Usage: copy_dist.py DIST DEST"""

import importlib.metadata as md
import os
import shutil
import sys

from packaging.requirements import Requirement


def main(dist, dest):
    todo, seen = [dist], set()
    while todo:
        d = md.distribution(todo.pop())
        name = d.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for r in d.requires or []:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
        for f in d.files or []:
            if str(f).startswith("..") or "__pycache__" in f.parts:
                continue
            target = os.path.join(dest, str(f))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(f.locate(), target)
    print(" ".join(sorted(seen)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
