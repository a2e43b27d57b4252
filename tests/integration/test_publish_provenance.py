"""The tests of tests/unit/test_publish_provenance.py that start a process (pytest runs, git)."""

from __future__ import annotations

from tests.unit.test_publish_provenance import _publish, env  # noqa: F401 - env is a fixture


def test_gate_then_publish_is_the_local_path(repo, tmp_path, env, github_api, capsys):  # noqa: F811
    """`gate --json FILE --out DIR`, then `publish --host-a DIR/host-a --host-b DIR/host-b`."""
    repo.write("entropy.yaml", f"version: 1\nproperty_id: p\nmodule: tests/test_p.py\n"
               f"pins:\n  temp_root: {tmp_path / 'pins-tmp'}\n")  # fmt: skip
    repo.write("tests/test_p.py", "def test_plain():\n    assert 1\n")
    base = repo.commit("base")
    repo.write("README.md", "docs only\n")
    out, verdict = tmp_path / "reports", tmp_path / "verdict.json"
    result = repo.cli(
        "gate", "--base-ref", base, "--no-base-run", "--json", str(verdict), "--out", str(out)
    )
    assert result.code == 0, result.out + result.err
    folders = ("--host-a", str(out / "host-a"), "--host-b", str(out / "host-b"))
    code, stdout, err = _publish(capsys, "--verdict", str(verdict), *folders)
    assert code == 0, err
    assert "check run 'entropy-gate' (success) published" in stdout
    (out / "host-a" / "junit.xml").write_text("<testsuites/>", encoding="utf-8")
    code, _, err = _publish(capsys, "--verdict", str(verdict), *folders)
    assert code == 2
    assert f"does not match host A's report folder {out / 'host-a'}" in err
    assert len(github_api.calls()) == 1
