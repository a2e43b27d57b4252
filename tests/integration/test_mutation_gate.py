"""Mutation strength through the gate: the issue's weakening patches on a passing base (where
the cross-run sees nothing) are rejected by the mutants the base kills and the head does not."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.findings import Finding
from entropy_action.gate import demo
from entropy_action.strength.mutation import measure
from entropy_action.verdict.classify import Evidence, classify
from tests.support.helpers import Repo

MODULE = "tests/test_fees.py"
MANIFEST = """\
version: 1
property_id: fees
module: tests/test_fees.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
"""

FEES = """\
def late_fee(amount, days_late):
    if days_late > 30:
        return amount // 10
    return 0
"""

PROPERTY = """\
import os
import sys

from fees import late_fee


def test_no_fee_on_the_due_day():
    fee = late_fee(1000, 30)
    assert fee == 0


def test_fee_after_the_due_day():
    assert late_fee(1000, 31) == 100
"""

TAUTOLOGY = PROPERTY.replace("assert fee == 0", "assert len(str(fee)) == len(str(fee))")
OWN_COPY = PROPERTY.replace(
    "def test_no_fee_on_the_due_day():\n",
    "def test_no_fee_on_the_due_day(monkeypatch):\n"
    "    monkeypatch.setattr(sys.modules[__name__], 'late_fee', lambda a, d: 0)\n",
)
EARLY_EXIT = PROPERTY.replace(
    "    fee = late_fee(1000, 30)\n",
    "    if not os.environ.get('CHECK_DUE_DAY'):\n        return\n    fee = late_fee(1000, 30)\n",
)
PATCHES = {patch.name: patch for patch in demo.patches()}
STATIC = frozenset({"self_comparison", "unit_patched", "conditional_exit", "tautology"})


@pytest.fixture
def fees(repo: Repo, tmp_path: Path) -> Repo:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES)
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    return repo


def gate(repo: Repo, base: str = "main") -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    reports = repo.path.parent / "reports"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(reports))
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def without_static_rules(verdict: dict[str, Any]) -> str:
    """The classification the verdict's evidence gives once the static rules' findings are
    dropped: what the dynamic paths decide alone."""
    findings = tuple(
        Finding.model_validate(f) for f in verdict["findings"] if f["kind"] not in STATIC
    )
    return classify(
        Evidence(host_a=verdict["host_a"], host_b=verdict["host_b"], findings=findings)
    ).classification


@pytest.mark.parametrize(
    "patch", [TAUTOLOGY, OWN_COPY, EARLY_EXIT], ids=["tautology", "own-copy", "early-exit"]
)
def test_a_weakened_property_on_a_passing_base_is_rejected_by_its_mutants(
    fees: Repo, patch: str
) -> None:
    fees.write(MODULE, patch)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    weakened = [f for f in verdict["findings"] if f["kind"] == "weakened_property"]
    assert weakened, out
    assert {(f["test"], f["line"], f["path"]) for f in weakened} == {
        ("test_no_fee_on_the_due_day", 7, MODULE)
    }
    # the deciding mutant leads what to do (and is not listed again under findings)
    assert (
        "the mutant fees.py:2: days_late > 30 → days_late >= 30 survives the head's module; "
        "the base's test_no_fee_on_the_due_day kills it"
    ) in out
    assert not [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    score = verdict["mutation"]
    # `changed`: the scores of the changed test, base vs head (the unchanged test runs only
    # where they disagree, and kills none of those mutants)
    assert score["mutants"] >= score["base_killed"] > score["head_killed"]
    assert f"strength: base kills {score['base_killed']}/{score['mutants']} mutants" in out
    # each surviving mutant is shown once: as its finding, counted in the strength section
    assert out.count("days_late > 30 → days_late >= 30") == 1
    assert f"  weaker: {len(weakened)} mutant(s) the base's module killed survive" in out
    assert without_static_rules(verdict) == "entropy_silenced"


def test_a_stronger_property_says_so_and_merges(fees: Repo) -> None:
    fees.write(MODULE, PROPERTY.replace("    assert fee == 0\n", "    assert fee >= 0\n"))
    fees.commit("a weak base")
    fees.write(MODULE, PROPERTY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    score = verdict["mutation"]
    assert score["weakened"] == []
    assert score["head_killed"] > score["base_killed"]
    assert "  stronger: fees.py:2: days_late > 30 → days_late >= 30 (the head's " in out
    assert "  the property is stronger at the head" in out


def test_a_signature_change_with_its_calls_updated_is_honest(fees: Repo) -> None:
    fees.write("fees.py", FEES.replace("(amount, days_late)", "(amount, *, days_late)"))
    fees.write(
        MODULE,
        PROPERTY.replace("late_fee(1000, 30)", "late_fee(1000, days_late=30)").replace(
            "late_fee(1000, 31)", "late_fee(1000, days_late=31)"
        ),
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert verdict["mutation"]["weakened"] == []


def test_configuration_set_with_setenv_and_a_patched_dependency_are_honest(
    fees: Repo,
) -> None:
    fees.write(
        MODULE,
        PROPERTY.replace(
            "def test_no_fee_on_the_due_day():\n",
            "def test_no_fee_on_the_due_day(monkeypatch):\n"
            "    import urllib.request\n"
            "    monkeypatch.setenv('FEES_CURRENCY', 'EUR')\n"
            "    monkeypatch.setattr(urllib.request, 'urlopen', lambda url: None)\n",
        ),
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert verdict["findings"] == []
    assert verdict["mutation"]["weakened"] == []


def test_the_same_inputs_give_the_same_mutants_and_scores_cached_or_not(fees: Repo) -> None:
    fees.write(MODULE, TAUTOLOGY)
    _, first, _ = gate(fees)
    cache = Path(os.environ["HOME"]) / ".cache" / "entropy-gate" / "mutants"
    cached = sorted(p.name for p in cache.iterdir())
    assert cached
    _, second, _ = gate(fees)
    assert second["mutation"] == first["mutation"]
    for entry in cache.iterdir():
        entry.unlink()
    _, third, _ = gate(fees)
    assert third["mutation"] == first["mutation"]
    assert sorted(p.name for p in cache.iterdir()) == cached


def test_mutation_off_measures_nothing(fees: Repo) -> None:
    manifest = (fees.path / "entropy.yaml").read_text(encoding="utf-8")
    fees.write("entropy.yaml", manifest + 'constraints:\n  mutation: "off"\n')
    fees.commit("mutation off at the base")
    fees.write(MODULE, TAUTOLOGY)
    _, verdict, out = gate(fees)
    assert verdict["mutation"] is None
    assert "strength:" not in out


def test_the_demo_tautology_is_caught_by_the_strength_check_alone(
    tmp_path: Path, repo: Repo
) -> None:
    base = demo.build_base(repo.path, clock_unix=1768003200, temp_root=tmp_path / "pins-tmp")
    demo.apply_patch(repo.path, PATCHES["tautology"])
    code, verdict, out = gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    assert {f["kind"] for f in verdict["findings"]} == {"weakened_property"}
    assert {f["test"] for f in verdict["findings"]} == {"test_late_fee_after_due"}
    assert "invoice_lib.py:16: total += LATE_FEE_CENTS → pass is killed by the base's" in out


# --- `entropy-gate strength`: this part alone ------------------------------------------------


def test_the_strength_command_alone_names_each_mutant_that_survives(fees: Repo) -> None:
    fees.write(MODULE, TAUTOLOGY)
    out = fees.path.parent / "strength.json"
    result = fees.cli("strength", "--base-ref", "main", "--json", str(out))
    assert result.code == 1
    score = json.loads(out.read_text(encoding="utf-8"))["mutation"]
    lines = result.out.splitlines()
    assert lines[0] == (
        f"strength: base kills {score['base_killed']}/{score['mutants']} mutants, head kills "
        f"{score['head_killed']}/{score['mutants']} (constraints.mutation: changed)"
    )
    assert lines[1] == (
        f"  weaker: {len(score['weakened'])} mutant(s) the base's module killed survive the "
        "head's (each a weakened_property finding)"
    )
    assert lines[2] == "findings:"
    assert len(lines[3:]) == len(score["weakened"]) > 0
    assert all("is killed by the base's test_no_fee_on_the_due_day" in line for line in lines[3:])
    assert result.out.count("days_late > 30 → days_late >= 30") == 1


def test_the_strength_command_on_an_unchanged_module_compares_nothing(fees: Repo) -> None:
    fees.write("fees.py", FEES.replace("amount // 10", "amount // 10 + 0"))
    result = fees.cli("strength", "--base-ref", "main")
    assert result.code == 0
    assert result.out == "strength: no mutation score (see the notes)\n"
    assert "the property's test side is as at the base: both detect the same mutants" in result.err


def test_the_strength_command_runs_under_the_python_it_is_given(fees: Repo) -> None:
    fees.write(MODULE, TAUTOLOGY)
    missing = fees.path.parent / "no-such-venv" / "bin" / "python"
    result = fees.cli("strength", "--base-ref", "main", "--python", str(missing))
    assert result.code == 2
    assert f"--python {missing}: no such interpreter" in result.err
    given = fees.cli("strength", "--base-ref", "main", "--python", sys.executable)
    assert given.code == 1
    assert "is killed by the base's test_no_fee_on_the_due_day" in given.out


# --- a kill by luck: the test's own entropy decides whether it catches the mutant ------------

LUCKY = """\
import hashlib
import os
from pathlib import Path

from fees import late_fee

DRAWS = Path({draws!r})


def lucky():
    \"\"\"Stands for a value the test draws from what the pins leave free (python-ulid's
    ULID() and the live clock's milliseconds): whether the draw exercises the boundary, by
    the count of this copy's runs (in a mutation workspace: 0 the unmutated traced run, 1
    the mutant's first run, then its repeats).\"\"\"
    here = DRAWS / hashlib.sha256(os.path.abspath(__file__).encode()).hexdigest()
    n = int(here.read_text()) if here.exists() else 0
    here.write_text(str(n + 1))
    return {rule}


def test_fees():
    late_fee(1000, 1000)
    if lucky():
        assert late_fee(1000, 30) == 0
        assert late_fee(1000, 31) == 100
"""
BASE_ONCE = 'n == 1 and __file__.endswith("_entropy_base.py")'  # the base's copy, once


def _lucky(repo: Repo, tmp_path: Path, base_rule: str) -> Path:
    draws = tmp_path / "draws"
    draws.mkdir()
    manifest = MANIFEST.format(temp_root=tmp_path / "pins-tmp")
    repo.write("entropy.yaml", manifest + "constraints:\n  max_mutants: 1\n")
    repo.write("fees.py", FEES)
    repo.write(MODULE, LUCKY.format(draws=str(draws), rule=base_rule))
    repo.commit("base")
    return draws


def _runs(draws: Path, before: list[Path]) -> list[int]:
    return sorted(int(p.read_text()) for p in draws.iterdir() if p not in before)


def test_a_kill_that_does_not_repeat_is_luck_not_a_weaker_property(
    repo: Repo, tmp_path: Path
) -> None:
    """The base's copy kills the mutant on its first mutated run only; every repeat of that
    mutant survives both modules. The head's edit is cosmetic: one lucky base run beside one
    unlucky head run is no weakening."""
    draws = _lucky(repo, tmp_path, BASE_ONCE)
    before = sorted(draws.iterdir())
    repo.write(MODULE, LUCKY.format(draws=str(draws), rule=f"bool({BASE_ONCE})"))
    code, verdict, out = gate(repo)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert verdict["mutation"]["weakened"] == []
    assert verdict["mutation"]["mutants"] == 0
    runs = 1 + measure.REPEATS
    assert _runs(draws, before)[-2:] == [1 + runs, 1 + runs]  # both copies: traced + runs
    assert re.search(
        rf"mutation: mutant fees\.py:\d: .+: the base's test_fees killed it in 1 of {runs} runs, "
        rf"the head's module in 0 of {runs}: not counted, the kill depends on something the "
        r"pins leave free",
        out,
    ), out


def test_a_head_that_kills_by_luck_where_the_base_always_does_is_weaker(
    repo: Repo, tmp_path: Path
) -> None:
    """The base's test always checks the boundary; the head's only on the mutant's second
    repeat (n == 3; an assertion behind the clock's parity, say). The repeats disagree, the
    longer round decides by the rates: the base kills it every time, the head in 1 of 12."""
    draws = _lucky(repo, tmp_path, "True")
    repo.write(MODULE, LUCKY.format(draws=str(draws), rule="n == 3"))
    code, verdict, out = gate(repo)
    assert code == 1, out
    weakened = [f for f in verdict["findings"] if f["kind"] == "weakened_property"]
    assert [(f["test"], f["path"]) for f in weakened] == [("test_fees", MODULE)], out
    runs = 1 + measure.REPEATS + measure.MORE
    assert re.search(
        rf"mutation: mutant fees\.py:\d: .+: the base's test_fees killed it in {runs} of {runs} "
        rf"runs, the head's module in 1 of {runs}: counted as a weakening \(the head detects it "
        r"by luck\)",
        out,
    ), out


# --- a base test of its own file name: the mutation step's session renames the base's module -

WARNS = """\
import warnings


def retry(timeout):
    if timeout == 0:
        warnings.warn("timeout=0 means no retries", UserWarning, stacklevel=2)
    stops = []
    stops.append(timeout)
    return timeout
"""
OWN_NAME = """\
import pytest

from retrying import retry


def test_zero_warns_at_the_callers_line():
    with pytest.warns(UserWarning) as caught:
        retry(0)
    assert caught.pop().filename.endswith("test_retry.py")


def test_retry_returns_the_timeout():
    assert retry(5) == 5
"""


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["-ra", "--strict-markers"]\n'),
        ("tests/test_retry.py", OWN_NAME.replace("(UserWarning)", "(UserWarning, match='tries')")),
    ],
    ids=["test-side-changed", "module-changed"],
)  # fmt: skip
def test_a_base_test_of_its_own_file_name_is_no_killer_where_it_passed_alone(
    repo: Repo, tmp_path: Path, path: str, text: str
) -> None:
    """stamina b922a2e6c50f (pytest's configuration moved to `[tool.pytest]`): the base's
    test asserting a warning's filename failed in the mutation step's session, where the
    base's module runs as `test_retry_entropy_base.py`, so it counted as killing every
    mutant it reached and `stops.append(...) → pass` read as a weaker property. It passed on
    the same code in the base-on-head run, under its own name: the failure was the session's.
    The same where only the module changed (one session holds both modules)."""
    manifest = MANIFEST.format(temp_root=tmp_path / "pins-tmp").replace(
        MODULE, "tests/test_retry.py"
    )
    repo.write("entropy.yaml", manifest)
    repo.write("retrying.py", WARNS)
    repo.write("tests/test_retry.py", OWN_NAME)
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["-ra"]\n')
    repo.commit("base")
    repo.write(path, text)
    code, verdict, out = gate(repo)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert not [f for f in verdict["findings"] if f["kind"] == "weakened_property"], out
    assert (
        "mutation: the base's test_zero_warns_at_the_callers_line fails on the head's code "
        "unmutated only in the mutation step's session, where its module runs under another "
        "file name; it passed on the same code in the base-on-head run: not counted as a killer"
    ) in out


# --- tests a decorator makes under other names (parameterized.expand) -------------------------

EXPANDED = """\
import sys

from counter import bump


def expand(cases):  # as parameterized.expand does: test_x_0, test_x_1, ...

    def make(func):
        scope = sys._getframe(1).f_locals
        for index, case in enumerate(cases):
            scope[f"{func.__name__}_{index}"] = lambda case=case: func(*case)

    return make


@expand([(1, 2), (2, 3)])
def test_bump(n, expected):
    assert bump(n) == expected
"""


def test_changed_tests_a_decorator_renames_are_measured_with_every_test(
    repo: Repo, tmp_path: Path
) -> None:
    """dateparser's freshness tests (`@parameterized.expand`, 3 of 25 commits `invalid`): the
    mutation step selected the changed tests by their names, which pytest never collects
    (`test_bump_0`, `test_bump_1`), so nothing ran and the base's module "does not collect on
    the head's code". Nothing selected: every test of both modules is measured instead."""
    manifest = MANIFEST.format(temp_root=tmp_path / "pins-tmp").replace(
        MODULE, "tests/test_bump.py"
    )
    repo.write("entropy.yaml", manifest)
    repo.write("counter.py", "def bump(n):\n    return n + 1\n")
    repo.write("tests/test_bump.py", EXPANDED)
    repo.commit("base")
    repo.write("tests/test_bump.py", EXPANDED.replace("(2, 3)]", "(2, 3), (9, 10)]"))
    repo.write("counter.py", "def bump(n):\n    return 1 + n\n")  # and its code
    code, verdict, out = gate(repo)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert measure.UNNAMED in out
    assert verdict["mutation"]["mutants"] >= 1, out
