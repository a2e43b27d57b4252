"""One adoption-trial patch (docs/adoption-trials.md, issue 20), applied to a checkout:
    python bench/trial_patch.py KIND MODULE PRODUCTION_FILE
KIND: docs, refactor, added, prod, skip (honest and a skip), hookswallow, pinread (attacks),
ordercache, hashorder (tests that pass only in file order or under PYTHONHASHSEED=0: issue 22's
host B must make them env_coupled on a real suite)."""

import ast
import sys
from pathlib import Path

if len(sys.argv) != 4:
    raise SystemExit(__doc__)
kind, module, production = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
HELPER = """

def _reviewed_helper(value):
    \"\"\"Added by a reviewed change.\"\"\"
    return value
"""


def first_test(tree: ast.Module) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            return node
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and sub.name.startswith("test"):
                    return sub
    raise SystemExit("no test function")


if kind == "docs":
    readme = next((p for p in sorted(Path(".").glob("README*"))), Path("README.md"))
    with readme.open("a", encoding="utf-8") as f:
        f.write("\nA docs line.\n")
elif kind in ("refactor", "added"):
    text = module.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    func = first_test(ast.parse(text))
    if kind == "refactor":
        body = func.body[0]
        if isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant):
            body = func.body[1] if len(func.body) > 1 else body
        indent = " " * body.col_offset
        lines.insert(body.lineno - 1, f"{indent}_ = None  # reviewed: no change\n")
    else:
        start = (func.decorator_list[0].lineno if func.decorator_list else func.lineno) - 1
        end = func.end_lineno
        copy = lines[start:end]
        head = func.lineno - 1 - start
        copy[head] = copy[head].replace(f"def {func.name}(", f"def {func.name}_again(", 1)
        lines[end:end] = ["\n", *copy]
    module.write_text("".join(lines), encoding="utf-8")
elif kind == "skip":
    text = module.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    func = first_test(ast.parse(text))
    start = (func.decorator_list[0].lineno if func.decorator_list else func.lineno) - 1
    indent = " " * func.col_offset
    lines.insert(start, f'{indent}@pytest.mark.skip(reason="flaky on CI")\n')
    if not any(row.startswith(("import pytest", "from pytest")) for row in lines):
        lines.insert(0, "import pytest\n")
    module.write_text("".join(lines), encoding="utf-8")
elif kind == "hookswallow":  # attack, class 2: a wrapper under another name swallows failures
    conftest = module.parent / "conftest.py"
    old = conftest.read_text(encoding="utf-8") if conftest.exists() else ""
    conftest.write_text(
        old
        + """

import pytest as _pytest_steady


@_pytest_steady.hookimpl(wrapper=True, specname="pytest_runtest_call")
def pytest_steady_call(item):
    try:
        return (yield)
    except Exception:
        return None
""",
        encoding="utf-8",
    )
elif kind == "pinread":  # attack, class 4: production reads the gate's clock pin
    text = production.read_text(encoding="utf-8")
    text += (
        "\n\ndef _gate_now():\n    import os, time\n"
        "    return float(os.environ.get('ENTROPY_CLOCK_UNIX') or time.time())\n"
    )
    production.write_text(text, encoding="utf-8")
elif kind == "prod":
    # an honest production change: a new helper nothing calls yet, and a comment
    text = production.read_text(encoding="utf-8")
    text += HELPER
    production.write_text(text, encoding="utf-8")
elif kind == "ordercache":  # a test that reads what the test before it cached
    text = module.read_text(encoding="utf-8")
    text += """

_TRIAL_CACHE = {}


class TestTrialCache:
    def test_trial_fill(self):
        _TRIAL_CACHE["size"] = len("cached")
        assert _TRIAL_CACHE["size"] == 6

    def test_trial_read(self):
        assert _TRIAL_CACHE["size"] == 6
"""
    module.write_text(text, encoding="utf-8")
elif kind == "hashorder":  # a set's order, written down as PYTHONHASHSEED=0 showed it
    import os
    import subprocess

    code = "print(list({f'code-{i}' for i in range(16)}))"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    seen = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    text = module.read_text(encoding="utf-8")
    text += f"""

def test_trial_codes_in_order():
    assert list({{f"code-{{i}}" for i in range(16)}}) == {seen}
"""
    module.write_text(text, encoding="utf-8")
else:
    raise SystemExit(f"unknown kind {kind}")
