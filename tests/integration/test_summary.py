"""The tests of tests/unit/test_summary.py that start a process (pytest runs, git)."""

from __future__ import annotations

from entropy_action.cli.commands.schema import manifest_schema, verdict_schema
from tests.support.helpers import Repo


def test_schema_prints_the_manifest_schema_by_default_and_the_verdict_schema_on_request(
    repo: Repo,
):
    assert repo.cli("schema").out == manifest_schema()
    assert repo.cli("schema", "--verdict").out == verdict_schema()
