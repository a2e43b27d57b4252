"""`publish` publishes only the gate's own verdict over the host folders beside it.

A hand-written verdict, one edited after the gate wrote it, and one judged from other
reports are refused with one line and exit 2, before anything goes over the wire.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from entropy_action.cli.main import main
from entropy_action.core.errors import GateError
from entropy_action.evidence import inputs
from entropy_action.github import publish
from entropy_action.render.summary import render_json
from entropy_action.verdict.model import Verdict
from tests.support.github_api import GitHubAPI
from tests.support.verdict_samples import verdict_of

HEAD = "feedfacefeedfacefeedfacefeedfacefeedface"

# The issue's hand-written verdict: 12 lines, no tests, no inputs digest.
HAND_WRITTEN = """\
{
  "classification": "merge_candidate",
  "merge": true,
  "row": "pass | pass | pins intact | no silencing \u2192 merge candidate",
  "host_a": "pass", "host_b": "pass",
  "pins_intact": true,
  "pin_changes": {},
  "strict_baseline": false,
  "findings": [],
  "reasons": ["host A: pass", "host B: pass"],
  "tests": []
}
"""


def _hosts(root: Path) -> dict[str, Path]:
    folders = {}
    for label in ("a", "b"):
        folder = root / f"host-{label}"
        (folder / "base").mkdir(parents=True, exist_ok=True)
        (folder / "junit.xml").write_text(f"<testsuites name='{label}'/>", encoding="utf-8")
        (folder / "base" / "host.json").write_text("{}", encoding="utf-8")
        folders[label] = folder
    return folders


def _stamped(verdict: Verdict, folders: dict[str, Path]) -> Verdict:
    named = inputs.with_reports(verdict.inputs, folders["a"], folders["b"])
    return verdict.model_copy(update={"inputs": named, "inputs_sha256": inputs.digest(named)})


@pytest.fixture
def env(tmp_path: Path, github_api: GitHubAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "GITHUB_API_URL": github_api.url,
        "GITHUB_REPOSITORY": "octo/widgets",
        "GITHUB_SHA": HEAD,
        "GITHUB_TOKEN": github_api.token,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _publish(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["publish", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# -- the pure checks, case by case ----------------------------------------------------------


def test_a_verdict_with_no_tests_and_no_inputs_is_hand_written():
    verdict = Verdict.model_validate_json(HAND_WRITTEN)
    assert publish.provenance(verdict) == (
        "it carries no tests and no inputs (a hand-written verdict, not the gate's)"
    )


def test_inputs_sha256_must_be_the_digest_of_the_inputs(tmp_path):
    good = _stamped(verdict_of("merge_candidate"), _hosts(tmp_path))
    assert publish.provenance(good) is None
    edited = good.model_copy(update={"inputs": {**good.inputs, "head_tree": "0" * 64}})
    assert "inputs_sha256 is not the digest of its inputs" in str(publish.provenance(edited))
    unset = good.model_copy(update={"inputs_sha256": None})
    assert "inputs_sha256 is not the digest" in str(publish.provenance(unset))


@pytest.mark.parametrize(
    ("drop", "named"),
    [(("reports_a", "reports_b"), "reports_a or reports_b"), (("reports_b",), "reports_b")],
)
def test_inputs_without_the_report_digests_say_to_re_run(tmp_path, drop, named):
    good = _stamped(verdict_of("env_coupled"), _hosts(tmp_path))
    kept = {k: v for k, v in good.inputs.items() if k not in drop}
    old = good.model_copy(update={"inputs": kept, "inputs_sha256": inputs.digest(kept)})
    problem = str(publish.provenance(old))
    assert problem.startswith(f"its inputs carry no {named} ")
    assert "re-run `verdict` or `gate` with entropy-gate" in problem


def test_an_old_verdict_with_tests_but_no_inputs_is_refused_too():
    verdict = verdict_of("merge_candidate")
    assert verdict.tests
    assert not verdict.inputs
    assert "inputs_sha256 is not the digest" in str(publish.provenance(verdict))


def test_report_digests_must_match_the_folders(tmp_path):
    folders = _hosts(tmp_path)
    good = _stamped(verdict_of("merge_candidate"), folders)
    found = {label: inputs.report_digest(folder) for label, folder in folders.items()}
    where = {label: str(folder) for label, folder in folders.items()}
    assert publish.report_mismatch(good, found, where) is None
    problem = publish.report_mismatch(good, {**found, "b": "f" * 64}, where)
    assert problem is not None
    assert problem.startswith(f"inputs.reports_b ({good.inputs['reports_b'][:12]}) does not")
    assert f"host B's report folder {folders['b']} (ffffffffffff)" in problem


# -- report_digest ----------------------------------------------------------------------------


def test_a_missing_folder_is_missing_and_an_empty_one_is_not(tmp_path):
    assert inputs.report_digest(tmp_path / "nope") == inputs.MISSING
    (tmp_path / "empty").mkdir()
    assert inputs.report_digest(tmp_path / "empty") not in (inputs.MISSING, "")


def test_every_file_below_the_folder_counts_by_path_and_content(tmp_path):
    folder = _hosts(tmp_path)["a"]
    first = inputs.report_digest(folder)
    assert inputs.report_digest(folder) == first
    (folder / "base" / "host.json").write_text("{ }", encoding="utf-8")
    changed = inputs.report_digest(folder)
    assert changed != first
    (folder / "base" / "host.json").rename(folder / "base" / "host2.json")
    assert inputs.report_digest(folder) not in (first, changed)
    (folder / "strength").mkdir()  # an empty folder adds no file
    renamed = inputs.report_digest(folder)
    (folder / "strength" / "mutants.json").write_text("[]", encoding="utf-8")
    assert inputs.report_digest(folder) != renamed


@pytest.mark.parametrize("where", ["file", "folder", "nested", "root"])
def test_a_symlink_anywhere_is_refused_never_followed(tmp_path, where):
    folder = _hosts(tmp_path)["a"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("x", encoding="utf-8")
    target: Path = folder
    if where == "file":
        (folder / "junit2.xml").symlink_to(outside / "secret")
    elif where == "folder":
        (folder / "evidence").symlink_to(outside)
    elif where == "nested":
        (folder / "base" / "link").symlink_to(outside / "secret")
    else:
        target = tmp_path / "linked"
        target.symlink_to(folder)
    with pytest.raises(GateError, match="a symlink in a host report"):
        inputs.report_digest(target)


def test_a_fifo_is_refused(tmp_path):
    folder = _hosts(tmp_path)["a"]
    os.mkfifo(folder / "pipe")
    with pytest.raises(GateError, match="pipe is neither a file nor a folder"):
        inputs.report_digest(folder)


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    (tmp_path / "host-a").write_text("", encoding="utf-8")
    with pytest.raises(GateError, match="a host report folder, but it is neither"):
        inputs.report_digest(tmp_path / "host-a")


def test_the_file_count_is_capped(tmp_path, monkeypatch):
    folder = _hosts(tmp_path)["a"]
    monkeypatch.setattr(inputs, "MAX_REPORT_FILES", 2)
    assert inputs.report_digest(folder)
    (folder / "third").write_text("", encoding="utf-8")
    with pytest.raises(GateError, match=f"{folder}: more than 2 files in a host report"):
        inputs.report_digest(folder)


def test_the_bytes_are_capped(tmp_path, monkeypatch):
    folder = _hosts(tmp_path)["a"]
    monkeypatch.setattr(inputs, "MAX_REPORT_BYTES", 4 * 1024 * 1024)
    (folder / "big").write_bytes(b"\0" * (4 * 1024 * 1024 - 100))
    assert inputs.report_digest(folder)
    (folder / "big").write_bytes(b"\0" * (4 * 1024 * 1024 + 1))
    with pytest.raises(GateError, match=f"{folder}: more than 4 MiB in a host report"):
        inputs.report_digest(folder)


# -- the command -----------------------------------------------------------------------------


def test_the_issues_hand_written_verdict_is_refused_with_one_line(
    tmp_path, env, github_api, capsys
):
    _hosts(tmp_path)
    path = tmp_path / "verdict.json"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    assert len(HAND_WRITTEN.splitlines()) == 12
    code, out, err = _publish(capsys, "--verdict", str(path))
    assert (code, out, github_api.requests) == (2, "", [])
    assert err == (
        f"{path}: publish refuses it: it carries no tests and no inputs (a hand-written "
        "verdict, not the gate's)\n"
    )


def test_a_verdict_edited_after_the_gate_is_refused(tmp_path, env, github_api, capsys):
    verdict = _stamped(verdict_of("env_coupled"), _hosts(tmp_path))
    edited = json.loads(render_json(verdict))
    edited["inputs"]["reports_b"] = "0" * 64  # pointed at other reports, digest left as is
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    code, _, err = _publish(capsys, "--verdict", str(path))
    assert (code, github_api.requests) == (2, [])
    assert err.count("\n") == 1
    assert "inputs_sha256 is not the digest of its inputs" in err


def test_reports_changed_after_the_verdict_are_refused(tmp_path, env, github_api, capsys):
    folders = _hosts(tmp_path)
    path = tmp_path / "verdict.json"
    path.write_text(render_json(_stamped(verdict_of("merge_candidate"), folders)), "utf-8")
    (folders["a"] / "junit.xml").write_text("<testsuites name='forged'/>", encoding="utf-8")
    code, _, err = _publish(capsys, "--verdict", str(path))
    assert (code, github_api.requests) == (2, [])
    assert err.count("\n") == 1
    assert f"does not match host A's report folder {folders['a']} (" in err


def test_missing_folders_beside_the_verdict_are_refused(tmp_path, env, github_api, capsys):
    elsewhere = tmp_path / "elsewhere"
    folders = _hosts(elsewhere)
    path = tmp_path / "verdict.json"
    path.write_text(render_json(_stamped(verdict_of("merge_candidate"), folders)), "utf-8")
    code, _, err = _publish(capsys, "--verdict", str(path))
    assert (code, github_api.requests) == (2, [])
    assert f"host A's report folder {tmp_path / 'host-a'} (missing)" in err
    assert "(pass --host-a DIR)" in err
    code, out, err = _publish(
        capsys, "--verdict", str(path),
        "--host-a", str(folders["a"]), "--host-b", str(folders["b"]),
    )  # fmt: skip
    assert code == 0, err
    assert "check run 'entropy-gate' (success) published" in out
    assert [call[0] for call in github_api.calls()] == ["POST"]


def test_a_symlink_in_a_host_folder_is_one_line(tmp_path, env, github_api, capsys):
    folders = _hosts(tmp_path)
    path = tmp_path / "verdict.json"
    path.write_text(render_json(_stamped(verdict_of("merge_candidate"), folders)), "utf-8")
    (folders["b"] / "link").symlink_to(path)
    code, _, err = _publish(capsys, "--verdict", str(path))
    assert (code, github_api.requests) == (2, [])
    assert err == f"{folders['b']}: a symlink in a host report (link); never followed\n"


def test_help_documents_both_folders(capsys):
    assert main(["publish", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--host-a DIR host A's report folder" in text
    assert "--host-b DIR host B's report folder" in text
    assert "beside the verdict file" in text
