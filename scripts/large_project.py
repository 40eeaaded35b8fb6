"""The generated project of scripts/bench-large and scripts/bench-plugin: MODULES modules of 40
functions each, a test module per module with 40 passing tests each, and one failing test (None
reaches str.split in pkg/text.py).

    python3 scripts/large_project.py ROOT MODULES
"""
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{root}/pkg"); os.makedirs(f"{root}/tests")
open(f"{root}/pkg/__init__.py", "w").close()
for i in range(n):
    body = "".join(
        f"def f{j}(x):\n    if x > {j}:\n        return x * {j} + {i}\n"
        f"    return [k for k in range(x) if k % 3 == {j % 3}]\n\n\n"
        for j in range(40))
    open(f"{root}/pkg/m{i}.py", "w").write(f'"""Module {i}."""\n\n\n' + body)
    tests = "".join(
        f"def test_{j}():\n    assert m{i}.f{j}({j + 1}) == {(j + 1) * j + i}\n"
        f"    assert isinstance(m{i}.f{j}(0), list)\n\n\n"
        for j in range(40))
    open(f"{root}/tests/test_m{i}.py", "w").write(f"from pkg import m{i}\n\n\n" + tests)
open(f"{root}/pkg/text.py", "w").write("def headline(text):\n    return text.split()[0]\n")
open(f"{root}/tests/test_text.py", "w").write(
    "from pkg.text import headline\n\n\ndef test_headline():\n    assert headline('a b') == 'a'\n"
    "\n\ndef test_none():\n    assert headline(None) == ''\n")
