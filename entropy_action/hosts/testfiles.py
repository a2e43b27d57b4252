"""The gate's files in the test process: the testproc/ modules copied into a private folder
on its PYTHONPATH, under the names the test process imports them by."""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
from pathlib import Path

from entropy_action.testproc import protocol
from entropy_action.testproc.protocol import ASSERTCOUNT_MODULE, AUDIT_MODULE, PLUGIN_MODULE

NSINIT_FILE = f"{protocol.NSINIT_MODULE}.py"


TESTPROC = Path(__file__).parent.parent / "testproc"  # the files copied into the test process


def drop_rewritten_pycs(root: Path, module: str) -> None:
    """Remove pytest's cached rewrites of the property module and the conftests above it.

    A rewrite cached by a run without the assertion-pass hook (a developer's own pytest run
    in this checkout) is reused as it is, and its assertions would count as none executed.
    pytest rewrites them again (its documentation says to delete them when turning the hook
    on); host B's copy and the base's worktree hold no caches.
    """
    target = root / module
    found = [(target.parent, target.stem)]
    for folder in (target.parent, *target.parent.parents):
        if folder != root and root not in folder.parents:
            break
        found.append((folder, "conftest"))
    for folder, stem in found:
        for pyc in (folder / "__pycache__").glob(f"{stem}.*-pytest-*.pyc"):
            with contextlib.suppress(OSError):
                pyc.unlink()


def install_plugin(scratch: Path) -> Path:
    """The plugin folder's copies (protocol.COPIES: the plugin, the audit, the counting,
    nsinit, the names they share) alone in a private directory: the gate's site stays out."""
    return install(scratch, protocol.PLUGIN_FOLDER)


def install(scratch: Path, folder_name: str) -> Path:
    """`scratch/folder_name` holding every file protocol.COPIES puts in that folder."""
    folder = scratch / folder_name
    folder.mkdir(exist_ok=True)
    for source, module in protocol.copies(folder_name):
        copy_module(TESTPROC / source, folder, module)
    return folder


def copy_module(source: Path, folder: Path, name: str) -> None:
    """`source` as module `name` in `folder`, with the gate's own bytecode of it when there is
    one (an install compiles it): else the test process compiles the ~1,000 lines of the three
    modules again in every run (~35 ms). The copy keeps the source's mtime, which the
    bytecode's header records; bytecode that does not match is recompiled by Python as usual,
    and another interpreter (`--python`) looks for its own tag and does not find it."""
    target = folder / f"{name}.py"
    shutil.copy2(source, target)
    compiled = Path(importlib.util.cache_from_source(str(source)))
    with contextlib.suppress(OSError):  # none, or unreadable (an install owned by another user)
        if compiled.is_file():
            cached = Path(importlib.util.cache_from_source(str(target)))
            cached.parent.mkdir(exist_ok=True)
            shutil.copyfile(compiled, cached)


def plugin_modules(*, audit: bool, count: bool) -> list[str]:
    """The gate's plugins a run loads, in order: the plugin, the audit, the counting."""
    return [
        PLUGIN_MODULE,
        *([AUDIT_MODULE] if audit else []),
        *([ASSERTCOUNT_MODULE] if count else []),
    ]


def write_boot(folder: Path, modules: list[str]) -> None:
    """The module pytest loads first with `-p`: it imports the run's plugins as plain modules,
    from the gate's bytecode. pytest then registers each from its own `-p` (which also undoes
    a `-p no:NAME` in the project's addopts) and finds it imported: loaded by `-p` alone, pytest
    would rewrite their asserts, parsing and compiling their ~1,000 lines again in every run.
    Their docstrings say PYTEST_DONT_REWRITE, so pytest does not warn that they were imported
    before it could rewrite them."""
    imports = "".join(f"import {name}  # noqa: F401\n" for name in modules)
    text = f'"""The gate\'s plugins, imported first (runner.write_boot)."""\n\n{imports}'
    (folder / f"{protocol.BOOT_MODULE}.py").write_text(text, encoding="utf-8")


def install_childsite(scratch: Path) -> Path:
    """childsite.py as sitecustomize.py in a directory of its own (children run it at start),
    with the names it shares (protocol.py)."""
    return install(scratch, protocol.CHILDSITE_FOLDER)
