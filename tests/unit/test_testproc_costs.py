"""The test process's cheaper answers give the answers of the calls they stand in for: the
folder-cached realpath (provenance.realpath), the platform without `uname -p`
(listing.platform_name), the plugin's environment roots worked out once."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest

from entropy_action.testproc import listing, plugin, provenance


@pytest.fixture
def fresh_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance, "_real_folders", {})


def _layout(tmp_path: Path) -> dict[str, str]:
    real = tmp_path / "real" / "pkg"
    real.mkdir(parents=True)
    (real / "mod.py").write_text("x = 1\n")
    (real / "other.py").write_text("y = 2\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (real / "alias.py").symlink_to(real / "other.py")
    return {
        "plain": str(real / "mod.py"),
        "through a linked folder": str(tmp_path / "link" / "pkg" / "mod.py"),
        "a linked file": str(tmp_path / "link" / "pkg" / "alias.py"),
        "a missing file": str(tmp_path / "link" / "pkg" / "gone.py"),
        "dot-dot": str(tmp_path / "link" / "pkg" / ".."),
        "a folder": str(tmp_path / "link" / "pkg"),
    }


@pytest.mark.usefixtures("fresh_folders")
@pytest.mark.parametrize(
    "case",
    ["plain", "through a linked folder", "a linked file", "a missing file", "dot-dot", "a folder"],
)
def test_the_cached_realpath_is_os_realpath(tmp_path: Path, case: str) -> None:
    path = _layout(tmp_path)[case]
    assert provenance.realpath(path) == os.path.realpath(path)
    assert provenance.realpath(path) == os.path.realpath(path)  # the cached answer too


@pytest.mark.usefixtures("fresh_folders")
def test_a_relative_path_is_resolved_from_the_working_directory_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("one", "two"):
        (tmp_path / name / "pkg").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "one")
    assert provenance.realpath("pkg/mod.py") == str(tmp_path / "one" / "pkg" / "mod.py")
    monkeypatch.chdir(tmp_path / "two")
    assert provenance.realpath("pkg/mod.py") == str(tmp_path / "two" / "pkg" / "mod.py")
    assert provenance._real_folders == {}


@pytest.mark.usefixtures("fresh_folders")
def test_each_folder_is_resolved_once(tmp_path: Path) -> None:
    paths = _layout(tmp_path)
    provenance.realpath(paths["through a linked folder"])
    provenance.realpath(str(tmp_path / "link" / "pkg" / "other.py"))
    assert provenance._real_folders == {
        str(tmp_path / "link" / "pkg"): str(tmp_path.resolve() / "real" / "pkg")
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux formatting")
def test_the_platform_is_platforms_own_formatting_less_the_processor() -> None:
    name = os.uname()
    libc = "".join(platform.libc_ver())
    expected = platform._platform(  # type: ignore[attr-defined]
        name.sysname, name.release, name.machine, "with", libc
    )
    assert listing.platform_name() == expected
    assert listing.platform_name().startswith(f"Linux-{name.release}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux formatting")
def test_odd_uname_fields_are_cleaned_as_platform_cleans_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = os.uname_result(("Linux", "node", "6.1-unknown (custom)/x:y;z", "#1", "x86_64"))
    monkeypatch.setattr(os, "uname", lambda: fake)
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.36"))
    expected = platform._platform(  # type: ignore[attr-defined]
        "Linux", "6.1-unknown (custom)/x:y;z", "x86_64", "with", "glibc2.36"
    )
    assert listing.platform_name() == expected == "Linux-6.1-_-custom-x-y-z-x86_64-with-glibc2.36"


def test_elsewhere_the_platform_is_platforms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platform, "platform", lambda: "macOS-15.1-arm64-arm-64bit")
    assert listing.platform_name() == "macOS-15.1-arm64-arm-64bit"


def test_the_runs_environment_roots_are_worked_out_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"tree": str(tmp_path), "environments": [str(tmp_path / ".venv")]}
    monkeypatch.setattr(plugin, "_config", config)
    monkeypatch.setattr(plugin, "_roots", [])
    calls: list[int] = []
    real = plugin._interpreter_places

    def counted() -> list[str]:
        calls.append(1)
        return real()

    monkeypatch.setattr(plugin, "_interpreter_places", counted)
    first = plugin._environment_roots(config)
    assert str((tmp_path / ".venv").resolve()) in first
    first.append("changed by a caller")
    assert plugin._environment_roots(config) == first[:-1]
    assert len(calls) == 1
    other = {"tree": str(tmp_path), "environments": []}
    assert str((tmp_path / ".venv").resolve()) not in plugin._environment_roots(other)
    assert len(calls) == 2  # another config is worked out anew
