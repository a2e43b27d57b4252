"""The pinned temp_root: fresh and empty per run, private to each run, and never a directory
the gate did not create wiped."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.hosts import launch, temproot
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

PRIVATE_PROPERTY = """\
import os
import tempfile
import time


def test_tmpdir_is_mine_alone():
    folder = tempfile.gettempdir()
    assert os.listdir(folder) == []
    with open(os.path.join(folder, os.environ["RUN_NAME"]), "w") as handle:
        handle.write("mine")
    time.sleep(0.6)  # long enough for the other run to write its own file here
    assert os.listdir(folder) == [os.environ["RUN_NAME"]]
"""


@pytest.mark.parametrize("namespaces", [True, False], ids=["private-mount", "lock"])
def test_two_concurrent_runs_on_one_temp_root_see_only_their_own_files(
    tmp_path: Path, namespaces: bool
) -> None:
    temp_root = tmp_path / "shared-tmp"
    root = make_repo(
        tmp_path / "repo", {"entropy.yaml": manifest_yaml(temp_root), MODULE: PRIVATE_PROPERTY}
    )
    results: dict[str, HostInfo | BaseException] = {}

    def run(name: str) -> None:
        environ = {**os.environ, "RUN_NAME": name}
        try:
            results[name] = launch.run_host(
                settings(root, tmp_path / name, environ, namespaces=namespaces)
            )
        except BaseException as exc:  # reported below
            results[name] = exc

    threads = [threading.Thread(target=run, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("one", "two"):
        info = results[name]
        assert isinstance(info, HostInfo), info
        assert (info.returncode, info.pins_mismatch) == (0, []), name
        assert info.temp_root == str(temp_root)
    assert list(temp_root.iterdir()) == []


def test_a_non_empty_temp_root_the_gate_did_not_create_is_refused(tmp_path: Path) -> None:
    temp_root = tmp_path / "precious"
    temp_root.mkdir()
    (temp_root / "thesis.tex").write_text("years of work")
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(temp_root), MODULE: "def test_ok():\n    pass\n"},
    )
    with pytest.raises(GateError) as caught:
        launch.run_host(settings(root, tmp_path / "out", namespaces=False))
    assert str(caught.value) == (
        f"temp_root {temp_root}: exists, is not empty and was not created by entropy-gate; "
        "empty or remove it yourself, or pin another temp_root"
    )
    assert (temp_root / "thesis.tex").read_text() == "years of work"


def test_the_gate_empties_a_temp_root_it_created(tmp_path: Path) -> None:
    target = tmp_path / "made-by-gate"
    claim = temproot.Claim(target)
    with temproot.claimed(claim):
        (target / "left-over").mkdir()
        (target / "left-over" / "file").write_text("x")
        os.chmod(target / "left-over", 0o500)  # read-only: emptying must still work
    assert list(target.iterdir()) == []
    record = json.loads(temproot.marker_of(target).read_text())
    assert (record["dev"], record["ino"]) == (target.stat().st_dev, target.stat().st_ino)
    (target / "crash-debris").write_text("from a killed run")
    with temproot.claimed(claim):
        assert list(target.iterdir()) == []


def test_a_marker_for_another_directory_of_that_name_does_not_count(tmp_path: Path) -> None:
    target = tmp_path / "reused-name"
    with temproot.claimed(temproot.Claim(target)):
        pass
    target.rename(tmp_path / "moved-away")
    target.mkdir()  # someone else's directory now, with the old marker beside it
    (target / "theirs").write_text("keep")
    with (
        pytest.raises(GateError, match="was not created by entropy-gate"),
        temproot.claimed(temproot.Claim(target)),
    ):
        pass
    assert (target / "theirs").read_text() == "keep"


def test_an_empty_existing_temp_root_is_adopted(tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    with temproot.claimed(temproot.Claim(target)):
        (target / "made-by-the-test").write_text("x")
    assert list(target.iterdir()) == []
    assert temproot.marker_of(target).exists()


def test_a_temp_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("not a dir")
    with pytest.raises(GateError) as caught, temproot.claimed(temproot.Claim(target)):
        pass
    assert str(caught.value) == (
        f"temp_root {target}: exists and is not a directory; pin another path"
    )


def test_with_a_private_mount_the_temp_root_is_only_created(tmp_path: Path) -> None:
    target, private = tmp_path / "pinned", tmp_path / "private"
    (tmp_path / "pinned").mkdir()
    (target / "someone-elses").write_text("untouched")
    with temproot.claimed(temproot.Claim(target, private)):
        assert private.is_dir()
    assert (target / "someone-elses").read_text() == "untouched"


def test_the_gates_scratch_is_never_inside_the_temp_root(tmp_path: Path) -> None:
    default = Path(tempfile.gettempdir()).resolve()
    assert temproot.scratch_parent(None) == str(default)
    assert temproot.scratch_parent(str(default)) == str(default.parent)
    assert temproot.scratch_parent(str(default.parent)) == str(default.parent.parent)
    assert temproot.scratch_parent(str(tmp_path / "x")) == str(default)


# --- the gate's own scratch: discarded in the background ----------------------------------


def _gone(path: Path, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


def test_a_scratch_folder_is_removed_after_the_run_even_where_a_test_made_it_read_only(
    tmp_path: Path,
) -> None:
    """A copied tree is thousands of unlinks (holidays: ~0.9 s on host B), left to a detached
    `rm`; a folder a test made read-only goes too, as TemporaryDirectory's clean-up did."""
    with temproot.scratch("entropy-gate-test-", str(tmp_path)) as scratch:
        for n in range(200):
            (scratch / "tree" / str(n % 7)).mkdir(parents=True, exist_ok=True)
            (scratch / "tree" / str(n % 7) / f"{n}.py").write_text("x = 1\n", encoding="utf-8")
        locked = scratch / "tree" / "locked"
        locked.mkdir()
        (locked / "file").write_text("kept?\n", encoding="utf-8")
        locked.chmod(0o500)
    assert _gone(scratch)
    assert list(tmp_path.iterdir()) == []


def test_without_a_shell_the_scratch_folder_is_removed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no sh: the removal is here and now
    with temproot.scratch("entropy-gate-test-", str(tmp_path)) as scratch:
        (scratch / "file").write_text("x\n", encoding="utf-8")
    assert not scratch.exists()
