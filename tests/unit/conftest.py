"""The unit tier starts no process: no subprocess, no git, no pytest run in a child.

Around each phase of a unit test (setup, so module fixtures too; call; teardown) the ways to
start a process raise, and the test fails even if the code under test swallowed the error.
A test that needs a process belongs in tests/integration."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

MOVE = "the unit tier starts no process; move this test to tests/integration"


class ProcessInUnitTier(RuntimeError):
    """A unit test (or one of its fixtures) tried to start a process."""


def _guarded(
    started: list[str],
) -> dict[tuple[object, str], Callable[..., Any]]:
    def refuse(what: str) -> Callable[..., Any]:
        def blocked(*args: object, **kwargs: object) -> Any:
            given = args[1:2] if what == "subprocess.Popen" else args[:1]  # Popen's self first
            shown = given[0] if given else kwargs.get("args")
            started.append(f"{what}({shown!r})")
            raise ProcessInUnitTier(f"{what}({shown!r}): {MOVE}")

        return blocked

    return {
        (subprocess.Popen, "__init__"): refuse("subprocess.Popen"),
        **{(os, name): refuse(f"os.{name}") for name in ("system", "posix_spawn", "posix_spawnp")},
        **{(os, name): refuse(f"os.{name}") for name in ("fork", "forkpty") if hasattr(os, name)},
        **{(os, name): refuse(f"os.{name}") for name in ("execv", "execve", "execvp")},
    }


def _phase(item: pytest.Item) -> Iterator[None]:
    started: list[str] = []
    replaced = _guarded(started)
    saved = {key: getattr(*key) for key in replaced}
    for (owner, name), blocked in replaced.items():
        setattr(owner, name, blocked)
    try:
        yield
    finally:
        for (owner, name), original in saved.items():
            setattr(owner, name, original)
    if started:
        pytest.fail(f"{item.nodeid} started a process: {', '.join(started)}; {MOVE}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item))
