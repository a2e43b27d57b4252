"""One pytest session per group of properties (hosts.sessions, hosts.split, gate.grouped):
real git repositories, real pytest on host A and an isolated host B.

Three properties: alpha and beta share every pin (one session on each host), gamma has its
own time zone (a session of its own). The grouped gate must judge each property exactly as
the gate judges it alone (`--property ID`: a session of one), for an honest patch and for
each way a patch goes wrong in one module of the shared session.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.main import main
from entropy_action.core.errors import GateError
from entropy_action.evidence import hostreport
from entropy_action.manifest import pinfile
from tests.support.helpers import Repo

MANIFEST = """\
version: 1
pins:
  clock_unix: 1700000000
  rng_seed: 7
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

LIB = """\
def total(amounts):
    return sum(amounts)


def mean(amounts):
    return total(amounts) / len(amounts)
"""


def _module(name: str) -> str:
    return f"""\
from lib.calc import mean, total


def test_{name}_total():
    assert total([1, 2, 3]) == 6


def test_{name}_empty():
    assert total([]) == 0


def test_{name}_mean():
    assert mean([2, 4]) == 3
"""


IDS = ("alpha", "beta", "gamma")
MODULES = {"alpha": "tests/test_a.py", "beta": "tests/test_b.py", "gamma": "tests/test_c.py"}
# what a verdict says that must not depend on how the sessions were cut
COMPARED = ("classification", "findings", "reasons", "errors", "host_a", "host_b")


@pytest.fixture
def three(repo: Repo) -> tuple[Repo, str]:
    """The three-property repository, committed; its base commit."""
    repo.write("entropy.yaml", MANIFEST)
    repo.write("lib/__init__.py", "")
    repo.write("lib/calc.py", LIB)
    for pid in IDS:
        repo.write(MODULES[pid], _module(pid))
    return repo, repo.commit("base")


def _gate(repo: Repo, base: str, name: str, *extra: str) -> dict[str, Any]:
    out = repo.path.parent / f"{name}.json"
    folder = repo.path.parent / f"{name}-out"
    repo.capsys.readouterr()
    repo.monkeypatch.chdir(repo.path)
    code = main(["gate", "--base-ref", base, "--json", str(out), "--out", str(folder), *extra])
    err = repo.capsys.readouterr().err
    assert code in (0, 1, 2), err
    verdict: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    verdict["_err"] = err  # a collection error's own "Traceback:" is in the verdict's text
    return verdict


def _by_property(verdict: dict[str, Any]) -> dict[str, dict[str, Any]]:
    judged = {}
    for entry in verdict["properties"] or []:
        one = entry["verdict"]
        tests = [
            {k: v for k, v in test.items() if not k.startswith("message")} for test in one["tests"]
        ]
        judged[entry["property_id"]] = {key: one[key] for key in COMPARED} | {"tests": tests}
        judged[entry["property_id"]]["errors"] = [_scratch(text) for text in one["errors"]]
    return judged


def _scratch(text: str) -> str:
    """Host B's copy of the tree lies in a new temporary folder on every run, grouped or not
    (a collection error's message names it)."""
    return re.sub(r"entropy-gate-b-[A-Za-z0-9_]+", "entropy-gate-b-*", text)


def _parity(repo: Repo, base: str) -> dict[str, dict[str, Any]]:
    """The grouped gate's verdict of every property, after checking it is each property's
    verdict alone; the grouped one's roll-up beside them (key "")."""
    grouped = _gate(repo, base, "grouped")
    assert "host A (alpha and 1 more)" in grouped["_err"]  # one session for alpha and beta
    assert "host B (gamma)" in grouped["_err"]
    together = _by_property(grouped)
    for pid in IDS:
        alone = _by_property(_gate(repo, base, f"alone-{pid}", "--property", pid))
        assert alone[pid] == together[pid], pid
    return together | {"": grouped}


def test_an_honest_patch_passes_grouped_as_each_property_alone(three: tuple[Repo, str]) -> None:
    repo, base = three
    repo.write("lib/calc.py", LIB.replace("return sum(amounts)", "return sum(amounts, 0)"))
    repo.commit("honest")
    judged = _parity(repo, base)
    assert judged[""]["classification"] == "merge_candidate"
    assert {judged[pid]["classification"] for pid in IDS} == {"merge_candidate"}
    assert [len(judged[pid]["tests"]) for pid in IDS] == [3, 3, 3]


SHARED_CASES = """\
from lib.calc import total


class SharedCases:
    amounts = [1, 2, 3]

    def test_total(self):
        assert total(self.amounts) == sum(self.amounts)

    def test_empty(self):
        assert total([]) == 0
"""


def test_tests_inherited_from_a_shared_class_stay_with_the_module_that_collected_them(
    three: tuple[Repo, str],
) -> None:
    """workalendar's shape: each module's test classes inherit their tests from a class in
    tests/__init__.py, so pytest's report names that file for them. In one session over
    alpha's and beta's modules, beta's inherited tests were named by neither module: the
    session's report disagreed with the channel and all nine properties of workalendar's
    session were invalid on a docs-only patch. Each is named by the module that collected it,
    grouped and alone, on the local gate's path and on the workflow's."""
    repo, _ = three
    repo.write("tests/__init__.py", SHARED_CASES)
    for pid, amounts in (("alpha", "[1, 2, 3]"), ("beta", "[4, 5]")):
        repo.write(
            MODULES[pid],
            f"from tests import SharedCases\n\n\nclass Test{pid.title()}(SharedCases):\n"
            f"    amounts = {amounts}\n",
        )
    base = repo.commit("shared cases")
    repo.write("README.md", "docs\n")
    repo.commit("docs")
    judged = _parity(repo, base)
    assert judged[""]["classification"] == "merge_candidate", judged[""]["_err"]
    assert sorted(t["id"] for t in judged["beta"]["tests"]) == [
        "tests/test_b.py::TestBeta::test_empty",
        "tests/test_b.py::TestBeta::test_total",
    ]
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 0, err
    for pid, name in (("alpha", "TestAlpha"), ("beta", "TestBeta")):
        report = hostreport.read_host(_folder(out, pid))
        assert sorted(test.id for test in report.tests) == [
            f"{MODULES[pid]}::{name}::test_empty",
            f"{MODULES[pid]}::{name}::test_total",
        ]
        assert report.outcome == "pass"


def test_a_skip_in_a_shared_module_rejects_and_names_only_its_property(
    three: tuple[Repo, str],
) -> None:
    repo, base = three
    text = _module("alpha").replace("def test_alpha_mean", "@pytest.mark.skip\ndef test_alpha_mean")
    repo.write(MODULES["alpha"], "import pytest\n" + text)
    repo.commit("skip")
    judged = _parity(repo, base)
    assert judged["alpha"]["classification"] != "merge_candidate"
    assert judged["beta"]["classification"] == "merge_candidate"
    assert judged[""]["classification"] == judged["alpha"]["classification"]
    assert any(reason.startswith("property alpha: ") for reason in judged[""]["reasons"])
    assert not any(reason.startswith("property beta: ") for reason in judged[""]["reasons"])


def test_a_test_failing_only_on_host_b_is_env_coupled_in_its_property_only(
    three: tuple[Repo, str],
) -> None:
    repo, base = three
    coupled = _module("beta") + (
        "\n\ndef test_beta_home():\n"
        "    import os\n"
        "    assert os.environ.get('SESSIONS_MARK') == 'host-a'\n"
    )
    repo.write(MODULES["beta"], coupled)
    repo.commit("coupled")
    repo.monkeypatch.setenv("SESSIONS_MARK", "host-a")  # the developer's shell: host A only
    judged = _parity(repo, base)
    assert judged["beta"]["classification"] == "env_coupled"
    assert judged["alpha"]["classification"] == "merge_candidate"
    assert judged["gamma"]["classification"] == "merge_candidate"
    assert judged[""]["classification"] == "env_coupled"


def test_a_collection_error_fails_its_property_and_leaves_its_session_mate_judged(
    three: tuple[Repo, str],
) -> None:
    """A module that cannot be imported fails its own property with the error in its
    verdict; the other property of its session still runs all its tests (the session goes
    on past collection errors) and is judged on them, as alone."""
    repo, base = three
    repo.write(MODULES["alpha"], "import no_such_module\n" + _module("alpha"))
    repo.commit("broken import")
    judged = _parity(repo, base)
    alpha, beta = judged["alpha"], judged["beta"]
    assert alpha["classification"] != "merge_candidate"
    assert "host A: fail" in alpha["reasons"]
    assert "no_such_module" in json.dumps(alpha)
    assert beta["classification"] == "merge_candidate"
    assert len(beta["tests"]) == 3
    assert "no_such_module" not in json.dumps(beta)
    assert judged[""]["classification"] == alpha["classification"]


# --- `run --host` on a list manifest: the split folders, and sessions that go wrong ----------


def _run(repo: Repo, out: Path, *extra: str) -> tuple[int, str]:
    repo.capsys.readouterr()
    repo.monkeypatch.chdir(repo.path)
    code = main(["run", "--host", "a", "--out", str(out), *extra])
    return code, repo.capsys.readouterr().err


def _folder(out: Path, pid: str) -> Path:
    return out / "properties" / pid


def test_each_property_folder_holds_only_its_own_module_as_a_run_alone_would(
    three: tuple[Repo, str],
) -> None:
    repo, _ = three
    repo.write("lib/clock.py", "import time\n\n\ndef stamp():\n    return time.time()\n")
    repo.write(MODULES["beta"], _module("beta") + (
        "\n\ndef test_beta_stamp():\n    from lib.clock import stamp\n\n    assert stamp() > 0\n"
    ))  # fmt: skip
    repo.commit("a live read in beta only")
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 0, err
    assert "one pytest session for properties alpha, beta" in err
    loaded = pinfile.parse_file((repo.path / "entropy.yaml").read_bytes(), "entropy.yaml")
    for pid, tests in (("alpha", 3), ("beta", 4), ("gamma", 3)):
        folder = _folder(out, pid)
        info = json.loads((folder / "host.json").read_text(encoding="utf-8"))
        assert (info["property_id"], info["module"]) == (pid, MODULES[pid])
        assert info["manifest_sha256"] == loaded.select(pid).sha256
        assert info["returncode"] == 0
        assert info["channel"]["tests"] == tests
        record = json.loads((folder / "outcomes.json").read_text(encoding="utf-8"))
        assert {raw.split("::")[0] for raw in record["tests"]} == {MODULES[pid]}
        assert record["counts"] == {"passed": tests}
        report = hostreport.read_host(folder)
        assert {test.id.split("::")[0] for test in report.tests} == {MODULES[pid]}
        assert len(report.tests) == tests
        assert report.outcome == "pass"
        reads = {r["api"] for r in info["audit"]["records"]}
        assert reads == ({"time.time()"} if pid == "beta" else set()), pid


def test_a_test_that_ends_the_session_passes_no_property_of_it(three: tuple[Repo, str]) -> None:
    """pytest.exit in alpha's module stops beta's tests too: beta is not a pass on the
    tests that did not run, nor on none. pytest's report of such a run is unusable (as for
    alpha alone): the session's is copied to both, and both are invalid."""
    repo, _ = three
    repo.write(
        MODULES["alpha"], "import pytest\n\n\ndef test_alpha_stop():\n    pytest.exit('bye', 3)\n"
    )
    repo.commit("exit")
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 1, err
    for pid in ("alpha", "beta"):
        info = json.loads((_folder(out, pid) / "host.json").read_text(encoding="utf-8"))
        assert info["returncode"] == 3, pid
        with pytest.raises(GateError, match="not a report pytest wrote"):
            hostreport.read_host(_folder(out, pid))
    assert hostreport.read_host(_folder(out, "gamma")).outcome == "pass"


def test_a_session_stopped_at_a_failure_by_the_projects_addopts_fails_the_unrun_property(
    three: tuple[Repo, str],
) -> None:
    """-x in pytest.ini (the manifest refuses it in run.pytest_args): alpha's failure stops
    the session before beta's tests; beta's folder holds none of them and does not pass."""
    repo, _ = three
    repo.write("pytest.ini", "[pytest]\naddopts = -x\n")
    repo.write(MODULES["alpha"], _module("alpha").replace("== 6", "== 7"))
    repo.commit("-x and a failure")
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 1, err
    beta = hostreport.read_host(_folder(out, "beta"))
    assert beta.outcome == "fail"
    assert beta.info.returncode == 1
    assert hostreport.read_host(_folder(out, "alpha")).outcome == "fail"


def test_a_session_that_could_not_finish_is_every_member_propertys_error(
    three: tuple[Repo, str],
) -> None:
    """Killed past its time: each property of the session has error.json and no report;
    the session of its own (gamma) is untouched."""
    repo, _ = three
    slow = _module("beta") + "\n\ndef test_beta_slow():\n    import time\n\n    time.sleep(30)\n"
    repo.write(MODULES["beta"], slow)
    repo.write("entropy.yaml", MANIFEST + "run:\n  timeout_seconds: 4\n")
    repo.commit("slow")
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 2, err
    for pid in ("alpha", "beta"):
        error = json.loads((_folder(out, pid) / "error.json").read_text(encoding="utf-8"))
        assert "timeout" in error["message"] or "killed" in error["message"], error
        assert not (_folder(out, pid) / "host.json").exists()
    assert hostreport.read_host(_folder(out, "gamma")).outcome == "pass"


def test_a_session_report_rewritten_after_the_tests_is_unusable_for_every_member(
    three: tuple[Repo, str],
) -> None:
    """A conftest adds a test to junit.xml that never ran: the session's report cannot be
    read, so neither can any of its properties' (each gets the session's files unsplit)."""
    repo, _ = three
    repo.write("tests/conftest.py", """\
        def pytest_unconfigure(config):
            path = config.option.xmlpath
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            ghost = '<testcase classname="tests.test_a" name="test_ghost" file="tests/test_a.py"/>'
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text.replace("</testsuite>", ghost + "</testsuite>"))
    """)  # fmt: skip
    repo.commit("forged")
    out = repo.path.parent / "out"
    _run(repo, out)
    for pid in IDS:  # gamma's own session is rewritten by the same conftest
        with pytest.raises(GateError, match="never saw run"):
            hostreport.read_host(_folder(out, pid))


def _workflow(repo: Repo, base: str) -> tuple[dict[str, Any], str]:
    """The workflow's path: host A's and host B's legs (`run --base-ref`), then `verdict`."""
    folder = repo.path.parent
    errs = []
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        repo.capsys.readouterr()
        repo.monkeypatch.chdir(repo.path)
        argv = ["run", "--host", host, "--out", str(folder / f"wf-{host}"), "--base-ref", base]
        main([*argv, *extra])
        errs.append(repo.capsys.readouterr().err)
    verdict_json = folder / "wf-verdict.json"
    main(["verdict", "--host-a", str(folder / "wf-a"), "--host-b", str(folder / "wf-b"),
          "--base-ref", base, "--json", str(verdict_json)])  # fmt: skip
    repo.capsys.readouterr()
    return json.loads(verdict_json.read_text(encoding="utf-8")), "\n".join(errs)


@pytest.mark.parametrize("patch", ["honest", "collection error"])
def test_the_workflow_legs_judge_each_property_as_the_local_gate_does(
    three: tuple[Repo, str], patch: str
) -> None:
    """`run --host a|b --base-ref` runs the host session and the base's session once per
    group; `verdict` then reads DIR/properties/ID and judges each property as `gate` does."""
    repo, base = three
    if patch == "honest":
        repo.write("lib/calc.py", LIB.replace("return sum(amounts)", "return sum(amounts, 0)"))
    else:
        repo.write(MODULES["alpha"], "import no_such_module\n" + _module("alpha"))
    repo.commit(patch)
    verdict, err = _workflow(repo, base)
    assert "one pytest session for properties alpha, beta" in err
    assert "base run on host A: running pytest on tests/test_a.py, tests/test_b.py" in err
    local = _by_property(_gate(repo, base, "local"))
    workflow = _by_property(verdict)
    for pid in IDS:
        assert workflow[pid]["classification"] == local[pid]["classification"], pid
        assert workflow[pid]["findings"] == local[pid]["findings"], pid
        assert len(workflow[pid]["tests"]) == len(local[pid]["tests"]), pid
    expected = "merge_candidate" if patch == "honest" else local["alpha"]["classification"]
    assert verdict["classification"] == expected
    assert workflow["beta"]["classification"] == "merge_candidate"


def test_in_the_local_gate_a_session_that_could_not_finish_makes_its_members_invalid(
    three: tuple[Repo, str],
) -> None:
    """The local gate's side of a killed session: each member property is invalid (never a
    pass, nor a fail judged on a partial report); the other session's property is judged."""
    repo, base = three
    slow = _module("beta") + "\n\ndef test_beta_slow():\n    import time\n\n    time.sleep(30)\n"
    repo.write(MODULES["beta"], slow)
    repo.write("entropy.yaml", MANIFEST + "run:\n  timeout_seconds: 4\n")
    repo.commit("slow")
    verdict = _gate(repo, base, "killed", "--no-base-run")
    judged = _by_property(verdict)
    assert judged["alpha"]["classification"] == "invalid"
    assert judged["beta"]["classification"] == "invalid"
    assert judged["gamma"]["classification"] == "merge_candidate"
    assert verdict["classification"] == "invalid"


def test_two_modules_of_one_name_in_folders_without_init_run_in_sessions_of_their_own(
    repo: Repo,
) -> None:
    """tests/unit/test_calc.py and tests/e2e/test_calc.py, no `__init__.py` (a project that
    runs each folder in a pytest of its own): pytest's default import mode names both
    `test_calc`, so one session over both stops the second at "import file mismatch". Equal
    pins no longer put them in one session: each property passes, as it does alone, on the
    local gate's path and on the workflow's."""
    modules = {"alpha": "tests/unit/test_calc.py", "beta": "tests/e2e/test_calc.py"}
    two = MANIFEST.split("  - property_id: gamma", maxsplit=1)[0]
    two = two.replace("tests/test_a.py", modules["alpha"])
    repo.write("entropy.yaml", two.replace("tests/test_b.py", modules["beta"]))
    repo.write("lib/__init__.py", "")
    repo.write("lib/calc.py", LIB)
    for pid, module in modules.items():
        repo.write(module, _module(pid))
    base = repo.commit("base")
    repo.write("README.md", "docs\n")
    repo.commit("docs")
    verdict = _gate(repo, base, "clash")
    assert "host A (alpha)" in verdict["_err"]
    assert "host A (beta)" in verdict["_err"]
    judged = _by_property(verdict)
    assert verdict["classification"] == "merge_candidate", verdict["_err"]
    for pid in modules:
        assert judged[pid]["classification"] == "merge_candidate", pid
        assert len(judged[pid]["tests"]) == 3, pid
    out = repo.path.parent / "out"
    code, err = _run(repo, out)
    assert code == 0, err
    assert "one pytest session for properties" not in err
    for pid, module in modules.items():
        report = hostreport.read_host(_folder(out, pid))
        assert {test.id.split("::")[0] for test in report.tests} == {module}
        assert report.outcome == "pass"
