"""The closure of a patch (scan.closure.between): both revisions' test sides, read from git
objects at the base and the work tree at the head, and what differs."""

from __future__ import annotations

from pathlib import Path

from entropy_action.scan import closure
from entropy_action.strength import base_on_head
from tests.support.helpers import Repo

MODULE = "tests/test_invoices.py"


def _between(repo: Repo, base: str, data: tuple[str, ...] = ()) -> closure.Closure:
    revisions = closure.Revisions(repo.path, base, MODULE, MODULE)
    return closure.between(revisions, data)


def test_a_conftest_added_and_a_helper_dropped_are_changes_with_the_base_s_bytes(
    repo: Repo,
) -> None:
    repo.write(MODULE, "from tests.support import old, kept\n")
    repo.write("tests/support/old.py", "OLD = 1\n")
    repo.write("tests/support/kept.py", "KEPT = 1\n")
    repo.write("tests/data/rows.json", "[1]\n")
    base = repo.commit("base")
    repo.write(MODULE, "from tests.support import kept\n")
    repo.remove("tests/support/old.py")
    repo.write("tests/conftest.py", "import pytest\n")
    repo.write("tests/data/rows.json", "[]\n")
    found = _between(repo, base, ("tests/data/rows.json",))
    assert found.files[0] == MODULE
    assert set(found.files) == {
        MODULE,
        "tests/conftest.py",
        "tests/support/kept.py",
        "tests/support/old.py",
        "tests/data/rows.json",
    }
    assert set(found.changed) == {
        MODULE,
        "tests/conftest.py",
        "tests/support/old.py",
        "tests/data/rows.json",
    }
    assert found.side_changed == tuple(p for p in found.changed if p != MODULE)
    assert dict(found.base) == {
        "tests/conftest.py": None,
        "tests/support/old.py": b"OLD = 1\n",
        "tests/data/rows.json": b"[1]\n",
    }


def test_the_digest_is_the_base_s_test_side_whatever_the_head_holds(repo: Repo) -> None:
    repo.write(MODULE, "from tests.support import kept\n")
    repo.write("tests/support/kept.py", "KEPT = 1\n")
    base = repo.commit("base")
    unchanged = _between(repo, base)
    assert unchanged.changed == ()
    repo.write("tests/support/kept.py", "KEPT = 2\n")
    changed = _between(repo, base)
    assert changed.changed == ("tests/support/kept.py",)
    assert changed.digest == unchanged.digest  # the base's side, as it runs
    repo.commit("head")
    other = repo.commit("again")
    assert _between(repo, other).digest != unchanged.digest


def test_pytest_s_own_section_decides_for_the_configuration(repo: Repo, tmp_path: Path) -> None:
    repo.write(MODULE, "")
    repo.write("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n")
    base = repo.commit("base")
    repo.write("setup.cfg", "[metadata]\nname = y\n\n[tool:pytest]\naddopts = -q\n")
    assert _between(repo, base).changed == ()
    repo.write("pytest.ini", "[pytest]\naddopts = -q -p no:randomly\n")  # pytest reads it first
    found = _between(repo, base)
    assert found.changed == ("pytest.ini",)
    assert dict(found.base) == {"pytest.ini": None}


def test_a_helper_linked_from_elsewhere_is_compared_by_its_link(repo: Repo) -> None:
    """python-semver's tests/coerce.py links to docs/advanced/coerce.py: git holds the link's
    target path, the work tree its bytes; a link the patch left as it was is no change."""
    repo.write(MODULE, "from tests.coerce import coerce\n")
    repo.write("docs/coerce.py", "def coerce(v):\n    return v\n")
    (repo.path / "tests" / "coerce.py").symlink_to("../docs/coerce.py")
    repo.write("docs/other.py", "def coerce(v):\n    return str(v)\n")
    base = repo.commit("base")
    assert _between(repo, base).changed == ()
    (repo.path / "tests" / "coerce.py").unlink()
    (repo.path / "tests" / "coerce.py").symlink_to("../docs/other.py")
    found = _between(repo, base)
    assert found.changed == ("tests/coerce.py",)
    assert found.links == frozenset({"tests/coerce.py"})
    assert dict(found.base) == {"tests/coerce.py": b"../docs/coerce.py"}
    copy = repo.path.parent / "copy"
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "coerce.py").symlink_to("../docs/other.py")
    base_on_head.write_files(copy, found.base.items(), found.links)
    assert (copy / "tests" / "coerce.py").readlink() == Path("../docs/coerce.py")
