"""Which properties share a pytest session (hosts.sessions): groups of equal pins and run
options, split when their run options stop pytest at a failure."""

from __future__ import annotations

import pytest

from entropy_action.hosts import sessions
from entropy_action.manifest import groups, pinfile, safe_yaml

MANIFEST = """\
version: 1
pins:
  tz: UTC
run:
  pytest_args: {args}
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


def _sessions(args: str) -> list[list[str]]:
    raw = MANIFEST.format(args=args).encode()
    views = pinfile.parse_file(raw, "entropy.yaml").views
    return [
        [view.property_id for view in members]
        for group in groups.groups(views)
        for members in sessions.sessions(group)
    ]


def test_properties_with_equal_pins_share_one_session_and_the_others_have_their_own() -> None:
    assert _sessions('["-q"]') == [["alpha", "beta"], ["gamma"]]


@pytest.mark.parametrize("args", ['["-vx"]', '["-qx", "-v"]'])
def test_a_stop_hidden_in_a_cluster_is_refused_by_the_manifest(args: str) -> None:
    """One module's failure must not stop another property's tests in a shared session:
    the manifest refuses -x in a cluster too (run_options), and `stops_early` still tells it
    (below) for a session planned from anything else."""
    with pytest.raises(safe_yaml.LocatedError, match="selects, stops or reroutes tests"):
        _sessions(args)


@pytest.mark.parametrize(
    "args",
    [["-x"], ["-vx"], ["--exitfirst"], ["--maxfail=2"], ["--maxfail", "2"], ["--sw"],
     ["--stepwise"], ["--sw-skip"], ["--stepwise-skip"]],
)  # fmt: skip
def test_every_way_to_stop_at_a_failure_is_told(args: list[str]) -> None:
    assert sessions.stops_early(args)


@pytest.mark.parametrize("args", [["-kx"], ["-k", "x"], ["-px"], ["-v"], ["--tb=short"], []])
def test_options_that_only_look_like_x_do_not_stop_early(args: list[str]) -> None:
    assert not sessions.stops_early(args)


CLASH = """\
version: 1
pins:
  tz: UTC
properties:
  - property_id: unit
    module: tests/unit/test_calc.py
  - property_id: e2e
    module: tests/e2e/test_calc.py
  - property_id: other
    module: tests/unit/test_other.py
  - property_id: third
    module: tests/test_calc.py
  - property_id: suffix
    module: tests/unit/xtest_calc.py
"""


def test_modules_of_one_file_name_are_kept_in_different_sessions_in_the_manifests_order() -> None:
    """pytest's default import mode names a module outside a package after its file: two
    `test_calc.py` in one session stop the second at "import file mismatch"."""
    views = pinfile.parse_file(CLASH.encode(), "entropy.yaml").views
    (group,) = groups.groups(views)
    cut = [[view.property_id for view in members] for members in sessions.sessions(group)]
    assert cut == [["unit", "other", "suffix"], ["e2e"], ["third"]]
