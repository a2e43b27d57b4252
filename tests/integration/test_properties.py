"""A manifest that lists many properties, through every command on real git repositories:
each property judged on its own and rolled up; a property dropped is a pin mutation, one
added is allowed, one whose report is missing is invalid, never outvoted by the others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from entropy_action.core.errors import GateError
from entropy_action.verdict.classify import contradictions
from entropy_action.verdict.model import Verdict
from tests.support.helpers import Repo, build_repo, copy_world

MANIFEST = """\
version: 1
pins:
  clock_unix: 1700000000
  rng_seed: 11
  tz: UTC
properties:
  - property_id: alpha
    module: tests/test_a.py
  - property_id: beta
    module: tests/test_b.py
  - property_id: gamma
    module: tests/test_c.py
    pins:
      tz: Europe/Paris
"""


def _module(name: str) -> str:
    return f"""\
from calc import add


def test_one_{name}():
    assert add(1, 2) == 3


def test_two_{name}():
    assert add(2, 2) == 4
"""


FILES = {
    "entropy.yaml": MANIFEST,
    "calc.py": "def add(a, b):\n    return a + b\n",
    "conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n",
    "tests/test_a.py": _module("a"),
    "tests/test_b.py": _module("b"),
    "tests/test_c.py": _module("c"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    place = tmp_path_factory.mktemp("properties")
    build_repo(place / "repo", FILES)
    return place


@pytest.fixture
def repo(
    world: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Repo:
    return copy_world(world, tmp_path, capsys, monkeypatch)


def _verdict(path: Path) -> Verdict:
    verdict = Verdict.model_validate_json(path.read_text(encoding="utf-8"))
    assert contradictions(verdict) == []
    return verdict


def _by_id(verdict: Verdict) -> dict[str, str]:
    return {p.property_id: p.verdict.classification for p in verdict.properties or []}


def test_validate_lists_each_property_with_its_pins(repo: Repo) -> None:
    result = repo.cli("validate")
    assert result.code == 0
    assert result.out == (
        "entropy.yaml: valid (3 properties)\n"
        "  alpha: tests/test_a.py (3 pins: clock_unix, rng_seed, tz)\n"
        "  beta: tests/test_b.py (3 pins: clock_unix, rng_seed, tz)\n"
        "  gamma: tests/test_c.py (3 pins: clock_unix, rng_seed, tz)\n"
    )


def test_validate_names_a_missing_module_at_its_entry(repo: Repo) -> None:
    repo.remove("tests/test_b.py")
    result = repo.cli("validate")
    assert result.code == 2
    assert "entropy.yaml:10: property 'beta': module 'tests/test_b.py' does not exist" in (
        result.err
    )


def test_a_dropped_property_is_a_pin_mutation_and_an_added_one_is_allowed(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write(
        "entropy.yaml", MANIFEST.replace("  - property_id: beta\n    module: tests/test_b.py\n", "")
    )
    result = repo.cli("check-pins", "--base-ref", base)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        "entropy.yaml:6: property 'beta' (tests/test_b.py, line 9 of the baseline) removed from "
        "the manifest: its tests would leave the gate (a rename removes one property and adds "
        "another)"
    )
    repo.write("tests/test_d.py", _module("d"))
    repo.write("entropy.yaml", MANIFEST + "  - property_id: delta\n    module: tests/test_d.py\n")
    result = repo.cli("check-pins", "--base-ref", base)
    assert (result.code, result.out) == (0, f"pins intact against {base}:entropy.yaml\n")
    assert "property 'delta' is new at the head" in result.err


def test_a_renamed_property_is_a_dropped_one(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("entropy.yaml", MANIFEST.replace("property_id: beta", "property_id: beta2"))
    result = repo.cli("check-pins", "--base-ref", base)
    assert result.code == 1
    assert "property 'beta' (tests/test_b.py" in result.out


def test_a_propertys_own_pin_changed_is_named_with_it(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("entropy.yaml", MANIFEST.replace("tz: Europe/Paris", "tz: Europe/Berlin"))
    result = repo.cli("check-pins", "--base-ref", base)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        'entropy.yaml:14: property \'gamma\': pin tz changed: "Europe/Paris" → "Europe/Berlin"'
    )


def test_a_shared_pin_moved_into_every_entry_is_intact(repo: Repo) -> None:
    """The views are what is compared: the same effective pins written another way pass."""
    base = repo.git("rev-parse", "HEAD")
    moved = (
        MANIFEST.replace("  tz: UTC\n", "")
        .replace(
            "    module: tests/test_a.py\n", "    module: tests/test_a.py\n    pins: {tz: UTC}\n"
        )
        .replace(
            "    module: tests/test_b.py\n", "    module: tests/test_b.py\n    pins: {tz: UTC}\n"
        )
    )
    repo.write("entropy.yaml", moved)
    result = repo.cli("check-pins", "--base-ref", base)
    assert (result.code, result.out) == (0, f"pins intact against {base}:entropy.yaml\n")


def test_the_gate_on_an_honest_patch_rolls_up_a_merge_candidate(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("README.md", "# docs\n")
    repo.commit("docs")
    out = repo.path.parent / "out"
    result = repo.cli("gate", "--base-ref", base, "--out", str(out), "--json", "v.json")
    assert result.code == 0, result.out + result.err
    verdict = _verdict(repo.path / "v.json")
    assert verdict.classification == "merge_candidate"
    assert _by_id(verdict) == dict.fromkeys(("alpha", "beta", "gamma"), "merge_candidate")
    assert len(verdict.tests) == 6
    for host in ("host-a", "host-b"):  # the layout `verdict` reads (gate --out)
        listed = sorted(p.name for p in (out / host / "properties").iterdir())
        assert listed == ["alpha", "beta", "gamma"], host
    assert not (out / "properties").exists()
    assert "property gamma (3/3): judged" in result.err


def test_a_skip_in_one_property_rejects_the_patch_and_names_it(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write(
        "tests/test_b.py",
        _module("b").replace(
            "def test_two_b", 'import pytest\n\n\n@pytest.mark.skip(reason="flaky")\ndef test_two_b'
        ),
    )
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert result.code == 1
    verdict = _verdict(repo.path / "v.json")
    assert verdict.classification == "entropy_silenced"
    assert _by_id(verdict) == {
        "alpha": "merge_candidate",
        "beta": "entropy_silenced",
        "gamma": "merge_candidate",
    }
    assert verdict.reasons[1].startswith("property beta: entropy silenced")
    assert {f.path for f in verdict.findings} == {"tests/test_b.py"}


def test_property_runs_only_the_named_ones(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    result = repo.cli("gate", "--base-ref", base, "--property", "gamma", "--json", "v.json")
    assert result.code == 0, result.err
    assert _by_id(_verdict(repo.path / "v.json")) == {"gamma": "merge_candidate"}
    result = repo.cli("gate", "--base-ref", base, "--property", "delta")
    assert result.code == 2
    assert "no property 'delta' (it lists: alpha, beta, gamma)" in result.err


def test_a_property_removed_at_the_head_rejects_the_gate(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write(
        "entropy.yaml", MANIFEST.replace("  - property_id: beta\n    module: tests/test_b.py\n", "")
    )
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert result.code == 1
    verdict = _verdict(repo.path / "v.json")
    assert verdict.classification == "pin_mutation"
    assert _by_id(verdict)["beta"] == "pin_mutation"
    assert [p.module for p in verdict.properties or [] if p.property_id == "beta"] == [None]


def test_the_workflows_commands_judge_each_property_and_a_missing_one_is_invalid(
    repo: Repo,
) -> None:
    """`run` on each host into DIR/properties/ID, then `verdict`: the workflow's path."""
    base = repo.git("rev-parse", "HEAD")
    host_a, host_b = repo.path.parent / "host-a", repo.path.parent / "host-b"
    assert repo.cli("run", "--host", "a", "--out", str(host_a), "--base-ref", base).code == 0
    assert repo.cli("run", "--host", "b", "--isolate", "--out", str(host_b)).code == 0
    assert (host_a / "properties" / "beta" / "base" / "junit.xml").is_file()
    result = repo.cli(
        "verdict",
        "--host-a",
        str(host_a),
        "--host-b",
        str(host_b),
        "--base-ref",
        base,
        "--json",
        "v.json",
    )
    assert result.code == 0, result.out
    assert _verdict(repo.path / "v.json").classification == "merge_candidate"
    # One leg's report lost: that property is invalid, the others still judged.
    shutil.rmtree(host_b / "properties" / "gamma")
    result = repo.cli(
        "verdict",
        "--host-a",
        str(host_a),
        "--host-b",
        str(host_b),
        "--base-ref",
        base,
        "--json",
        "v.json",
    )
    assert result.code == 2
    verdict = _verdict(repo.path / "v.json")
    assert _by_id(verdict) == {
        "alpha": "merge_candidate",
        "beta": "merge_candidate",
        "gamma": "invalid",
    }
    assert any(r.startswith("property gamma: invalid input: host B") for r in verdict.reasons)


def test_one_propertys_report_does_not_pass_for_anothers(repo: Repo) -> None:
    """Each property's host.json carries its own manifest digest: a leg that copies alpha's
    passing report over gamma's is caught, not judged as gamma's."""
    base = repo.git("rev-parse", "HEAD")
    host_a, host_b = repo.path.parent / "host-a", repo.path.parent / "host-b"
    assert repo.cli("run", "--host", "a", "--out", str(host_a), "--property", "alpha").code == 0
    assert repo.cli("run", "--host", "b", "--isolate", "--out", str(host_b)).code == 0
    shutil.copytree(host_a / "properties" / "alpha", host_a / "properties" / "gamma")
    shutil.copytree(host_a / "properties" / "alpha", host_a / "properties" / "beta")
    result = repo.cli(
        "verdict",
        "--host-a",
        str(host_a),
        "--host-b",
        str(host_b),
        "--base-ref",
        base,
        "--json",
        "v.json",
    )
    assert result.code == 2
    verdict = _verdict(repo.path / "v.json")
    assert _by_id(verdict) == {"alpha": "merge_candidate", "beta": "invalid", "gamma": "invalid"}
    gamma = next(p.verdict for p in verdict.properties or [] if p.property_id == "gamma")
    assert any("manifest_sha256" in reason for reason in gamma.reasons), gamma.reasons


def test_a_broken_list_at_the_head_cannot_pass(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write(
        "entropy.yaml", MANIFEST.replace("  rng_seed: 11\n", "  rng_seed: 11\n  rng_seed: 12\n")
    )
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert result.code == 2
    verdict = _verdict(repo.path / "v.json")
    assert verdict.classification == "invalid"
    assert verdict.pins_intact is False
    text = json.dumps(verdict.model_dump(mode="json"))
    assert "duplicate key 'pins.rng_seed'" in text
    # a list the head cannot read is not a list whose properties were removed
    assert [p.module for p in verdict.properties or []] == ["tests/test_a.py"]
    assert "removed from the manifest" not in result.out


def test_a_host_that_stopped_before_any_property_leads_each_with_its_cause(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    host_a, host_b = repo.path.parent / "host-a", repo.path.parent / "host-b"
    assert repo.cli("run", "--host", "a", "--out", str(host_a), "--manifest", "gone.yaml").code == 2
    assert sorted(p.name for p in host_a.iterdir()) == ["error.json"]
    assert repo.cli("run", "--host", "b", "--isolate", "--out", str(host_b)).code == 0
    result = repo.cli(
        "verdict",
        "--host-a",
        str(host_a),
        "--host-b",
        str(host_b),
        "--base-ref",
        base,
        "--json",
        "v.json",
    )
    assert result.code == 2
    verdict = _verdict(repo.path / "v.json")
    assert _by_id(verdict) == dict.fromkeys(("alpha", "beta", "gamma"), "invalid")
    for prop in verdict.properties or []:
        assert prop.verdict.reasons[0] == (
            "invalid input: host A could not run: gone.yaml: no such file (write an "
            "entropy.yaml: entropy-gate init drafts one) (step: entropy-gate run)"
        )


SINGLE = """\
version: 1
property_id: alpha
module: tests/test_a.py
pins:
  clock_unix: 1700000000
  rng_seed: 11
  tz: UTC
"""


def test_the_one_property_form_grows_into_a_list_and_back(repo: Repo) -> None:
    """From the seed's form to a list keeping its property (and adding one) is intact; from
    the list back to the seed's form drops the others: a pin mutation."""
    repo.write("entropy.yaml", SINGLE)
    single = repo.commit("the seed's form")
    repo.write("entropy.yaml", MANIFEST)
    result = repo.cli("check-pins", "--base-ref", single)
    assert (result.code, result.out) == (0, f"pins intact against {single}:entropy.yaml\n")
    listed = repo.commit("a list")
    repo.write("entropy.yaml", SINGLE)
    result = repo.cli("check-pins", "--base-ref", listed)
    assert result.code == 1
    assert [line.split(": property ")[1][:6] for line in result.out.splitlines()[:2]] == [
        "'beta'",
        "'gamma",
    ]


def test_a_memo_answers_a_repeated_question_once_and_forgets_after(repo: Repo) -> None:
    from entropy_action.core import git  # noqa: PLC0415 (this test only)

    base = repo.git("rev-parse", "HEAD")
    with git.memo():
        first = git.changed_files(repo.path, base)
        repo.write("tests/new_file.py", "x = 1\n")  # a change while the memo lives: not seen
        assert git.changed_files(repo.path, base) == first == []
        assert len(git._memo) == 2  # the diff and the untracked listing
        assert git.show(repo.path, base, "gone.py") is None
    assert git.changed_files(repo.path, base) == ["tests/new_file.py"]
    with git.memo():  # a failing read is remembered and still raises each time
        for _ in range(2):
            with pytest.raises(GateError, match="git ls-tree"):
                git.list_tree(repo.path, "0" * 40)


def test_twenty_properties_are_gated_in_one_run_and_one_skip_names_its_property(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's repository: 20 property modules, most sharing their pins."""
    entries = "".join(
        f"  - property_id: p{i:02d}\n    module: tests/test_p{i:02d}.py\n"
        + ("    pins:\n      tz: Asia/Tokyo\n" if i >= 18 else "")
        for i in range(20)
    )
    files = {
        **{k: v for k, v in FILES.items() if not k.startswith("tests/")},
        "entropy.yaml": MANIFEST.split("properties:\n", maxsplit=1)[0] + "properties:\n" + entries,
        **{f"tests/test_p{i:02d}.py": _module(f"p{i:02d}") for i in range(20)},
    }
    build_repo(tmp_path / "repo", files)
    repo = Repo(path=tmp_path / "repo", capsys=capsys, monkeypatch=monkeypatch)
    base = repo.git("rev-parse", "HEAD")
    repo.write("README.md", "# docs\n")
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert result.code == 0, result.out
    verdict = _verdict(repo.path / "v.json")
    assert _by_id(verdict) == {f"p{i:02d}": "merge_candidate" for i in range(20)}
    assert len(verdict.tests) == 40
    repo.write(
        "tests/test_p07.py",
        _module("p07").replace(
            "def test_two_p07", "import pytest\n\n\n@pytest.mark.skip\ndef test_two_p07"
        ),
    )
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert result.code == 1
    verdict = _verdict(repo.path / "v.json")
    rejected = {pid: c for pid, c in _by_id(verdict).items() if c != "merge_candidate"}
    assert rejected == {"p07": "entropy_silenced"}
    assert "entropy_silenced in property p07 (1 of 20 properties)" in result.out


HIDES = """\
from pathlib import Path

from calc import add


def test_one_b():
    assert add(1, 2) == 3


def test_two_b():
    here = Path(__file__)
    here.write_text(here.read_text().replace("assert 4 " + "== 4", "assert add(2, 2) == 4"))
    assert 4 == 4
"""


def test_the_scan_reads_the_module_before_host_a_runs_it(repo: Repo) -> None:
    """As the workflow's check job reads the PR's commit before any test runs: a property
    module that rewrites itself while host A runs it (a tautology made into a check once it
    has run) is judged by what the patch holds. The scans ran after the sessions, on the
    rewritten file, where a manifest lists many properties (merge_candidate); host B, whose
    tests run in a copy of the tree, now starts beside them, host A after."""
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_b.py", HIDES)
    result = repo.cli("gate", "--base-ref", base, "--json", "v.json")
    assert "assert add(2, 2) == 4" in (repo.path / "tests/test_b.py").read_text()  # it ran
    verdict = _verdict(repo.path / "v.json")
    assert result.code != 0, result.out
    assert _by_id(verdict)["beta"] != "merge_candidate"  # host B's copy was rewritten too
    assert [(f.kind, f.path, f.line) for f in verdict.findings if f.introduced] == [
        ("tautology", "tests/test_b.py", 13)
    ], result.out
    lines = result.err.splitlines()
    scanned = max(i for i, line in enumerate(lines) if "scanning the property module" in line)
    started_a = next(
        i for i, line in enumerate(lines) if "host A (alpha and 1 more): running" in line
    )
    assert scanned < started_a, result.err  # host A's tests start after every scan
