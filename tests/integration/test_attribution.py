"""Attributing env-coupling to its source: the bounded search, and real gates whose host B
fails for the clock, for a leaked shell variable, and for the network."""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from entropy_action.core.findings import Finding
from entropy_action.gate import attribution, demo, local, orderdep
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, Verdict
from tests.integration.test_run_host_a import make_repo
from tests.support.helpers import Repo

TEST = "tests/properties/test_p.py::test_p"


def coupled(a: str = "passed", b: str = "failed", test_id: str = TEST) -> Verdict:
    result = TEST_RESULT.validate_python({"id": test_id, "host_a": a, "host_b": b})
    outcome = {"passed": "pass", "failed": "fail"}
    return classify(
        Evidence(host_a=outcome[a], host_b=outcome[b], tests=(result,))  # type: ignore[arg-type]
    )


class Host:
    """Host B as a function of what it leaves out: fails unless `cause` is reverted."""

    def __init__(self, cause: str, variable: str | None = None) -> None:
        self.cause, self.variable, self.trials = cause, variable, []  # type: ignore[var-annotated]

    def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
        self.trials.append(trial)
        fixed = self.cause in trial.revert or (self.variable in trial.keep_env)
        if self.cause == "env" and "env" in trial.revert:
            fixed = True
        return {TEST: "passed" if fixed else "failed"}


DIMS = ["clock", "env", "network", "path"]


def test_one_rerun_per_perturbation_names_the_one_that_flips():
    host = Host("clock")
    assert attribution.attribute(coupled(), host, ["A", "B"], DIMS) == ["clock"]
    assert [(sorted(t.revert), t.repeat) for t in host.trials] == [
        (["clock"], 0),
        (["clock"], 1),  # the one that flips, once more: the same outcome, so it counts
        (["env"], 0),
        (["network"], 0),
        (["path"], 0),
    ]


def test_the_environment_is_bisected_by_halves_to_one_variable():
    names = [f"VAR_{n:02d}" for n in range(32)]
    host = Host("env", variable="VAR_21")
    assert attribution.attribute(coupled(), host, names, DIMS) == ["env:VAR_21"]
    bisection = [t.keep_env for t in host.trials if t.keep_env]
    assert len(bisection) == 6  # log2(32) halvings, then the one variable confirmed alone
    assert bisection[-1] == ("VAR_21",)


def test_when_no_single_variable_flips_it_the_environment_as_a_whole_is_named():
    host = Host("env", variable=None)
    assert attribution.attribute(coupled(), host, ["A", "B", "C"], DIMS) == ["env"]


def test_nothing_flips_it_and_the_reason_says_so():
    host = Host("moon")
    found = attribution.attribute(coupled(), host, [], DIMS)
    assert found == []
    assert attribution.explain(found, []) == (
        "no single perturbation of host B explains the difference (clock, environment, "
        "network, checkout path, interpreter each reverted alone)"
    )


def test_the_reverse_case_flips_back_to_host_as_failure():
    class Reverse(Host):
        def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
            self.trials.append(trial)
            return {TEST: "failed" if "path" in trial.revert else "passed"}

    assert attribution.attribute(coupled("failed", "passed"), Reverse("path"), [], DIMS) == ["path"]


def test_agreeing_hosts_and_tests_with_a_checkout_path_in_their_id_rerun_nothing():
    host = Host("clock")
    assert attribution.attribute(coupled("passed", "passed"), host, [], DIMS) == []
    assert attribution.attribute(coupled(test_id=f"{TEST}[<root>/x]"), host, [], DIMS) == []
    assert host.trials == []


def test_the_reason_names_the_source_and_the_audited_line():
    read = Finding(
        kind="live_entropy",
        path="billing/fees.py",
        line=41,
        message="reads `datetime.now()` while the property pins the clock: take a Clock",
        level="warning",
    )
    assert attribution.explain(["clock"], [read]) == (
        "the failure follows the clock: pin it (clock_unix) and pass it through a Clock port; "
        "`billing/fees.py:41` reads `datetime.now()`"
    )
    assert attribution.explain(["env:REGION", "path"], [read]) == (
        "the failure follows the variable REGION: pin it (pins.env.REGION) or pass it in; "
        "the failure follows the checkout path: build paths from the repository root, not "
        "absolute ones"
    )


# -- real gates -------------------------------------------------------------------------------


def _demo(tmp_path: Path, name: str, environ: Mapping[str, str]) -> Verdict:
    rows = demo.run_demo(tmp_path, dict(environ), int(time.time()), only=name)
    return rows[0].verdict


def test_the_live_clock_patch_is_coupled_to_the_clock(tmp_path: Path) -> None:
    verdict = _demo(tmp_path, "live-clock", {"PATH": "/usr/bin:/bin"})
    assert verdict.classification == "env_coupled"
    assert verdict.coupled_to == ["clock"]
    # the read the failure follows, with what it saw on each host (host B's clock: ~5 years on)
    assert re.fullmatch(
        r"the failure follows the clock; `invoice_lib\.py:14` reads `datetime\.now\(\)` \(read "
        r"by the code under test\): (\d{4})-\d\d-\d\dT[\d:]+Z on host A, (\d{4})-[\dT:-]+Z on "
        r"host B",
        verdict.reasons[-1],
    ), verdict.reasons[-1]
    [read] = verdict.coupled_reads
    assert int(str(read.seen_b)[:4]) - int(str(read.seen_a)[:4]) in (5, 6)


def test_a_leaked_shell_variable_is_named(tmp_path: Path) -> None:
    environ = {"PATH": "/usr/bin:/bin", "EDITOR": "vi", "LC_TERMINAL": "x", "SHLVL": "2"}
    verdict = _demo(tmp_path, "leaked-env", environ)
    assert verdict.classification == "env_coupled_reverse"
    assert verdict.coupled_to == ["env:INVOICE_LEGACY_FEES"]
    assert verdict.reasons[-1].startswith(
        "the failure follows the variable INVOICE_LEGACY_FEES; `invoice_lib.py:15` reads "
        "`os.environ['INVOICE_LEGACY_FEES']` (read by the code under test): set (value not "
        "recorded) on host A, unset on host B"
    )


def _outside_address() -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 80))  # no packet is sent: it picks the route's address
        address = str(probe.getsockname()[0])
    except OSError:
        pytest.skip("no route off this machine: no non-loopback address to serve on")
    finally:
        probe.close()
    if address.startswith("127."):
        pytest.skip("no non-loopback address to serve on")
    return address


@pytest.fixture
def rates_server() -> Iterator[str]:
    """An HTTP server on a non-loopback address of this machine: host A reaches it, host B's
    own network namespace (or the in-process lock) does not."""
    address = _outside_address()

    class Rates(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"1.25")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Rates)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{address}:{server.server_address[1]}/rate"
    finally:
        server.shutdown()
        server.server_close()


NETWORK_MANIFEST = """\
version: 1
property_id: rates
module: tests/properties/test_rates.py
pins:
  tz: UTC
  env:
    RATES_URL: "{url}"
run:
  pytest_args: ["-o", "addopts=", "-p", "no:cacheprovider"]
"""
RATES = """\
import os
import urllib.request


def rate():
    with urllib.request.urlopen(os.environ["RATES_URL"], timeout=5) as response:
        return float(response.read())
"""
RATES_PROPERTY = """\
from rates import rate


def test_rate_is_positive():
    assert rate() > 0
"""


def test_a_property_that_needs_the_network_is_coupled_to_it(
    tmp_path: Path, rates_server: str
) -> None:
    root = make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": NETWORK_MANIFEST.replace("{url}", rates_server),
            "rates.py": RATES,
            "tests/properties/test_rates.py": RATES_PROPERTY,
        },
    )
    result = local.run_gate(
        local.GateSettings(
            manifest=root / "entropy.yaml",
            base_ref="HEAD",
            environ={"PATH": "/usr/bin:/bin"},
            out=tmp_path / "out",
            base_run=False,
        )
    )
    verdict = result.verdict
    assert verdict.classification == "env_coupled", verdict.reasons
    assert verdict.coupled_to == ["network"]
    host = rates_server.split("//")[1].split(":", maxsplit=1)[0]
    assert [(f.location(), f.message) for f in verdict.findings if f.kind == "live_entropy"] == [
        (
            "rates.py:6",
            f"reaches the network (`socket.{call}('{host}')`): pin a cassette or take a client "
            "as a parameter",
        )
        for call in ("connect", "getaddrinfo")
    ]
    assert verdict.reasons[-1] == (
        f"the failure follows the network; `rates.py:6` reads `socket.getaddrinfo('{host}')` "
        "(read by the code under test)"
    )


def test_an_outcome_that_does_not_repeat_is_the_tests_luck_not_a_source():
    """pybreaker 14139fd4bc31: a thread-safety test that fails now and then failed once on
    host A; each re-run that gave host A's outcome was luck, and the attribution named the
    test order ("two or more earlier tests"). Each such re-run now runs once more: an outcome
    that does not repeat names nothing, and the reason says what the test turns on."""

    class Flaky(Host):  # every trial gives host A's outcome the first time, not its repeat
        def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
            self.trials.append(trial)
            return {TEST: "failed" if trial.repeat else "passed"}

    host = Flaky("none")
    made = attribution.record(host, {TEST: "passed"}, ["A", "B"], DIMS)
    assert [(sorted(t.revert), t.repeat) for t, _ in made] == [
        (["clock"], 0), (["clock"], 1), (["env"], 0), (["env"], 1),
        (["network"], 0), (["network"], 1), (["path"], 0), (["path"], 1),
    ]  # fmt: skip
    replayed = attribution.replay(made)
    assert attribution.attribute(coupled(), replayed, ["A", "B"], DIMS) == []
    unsteady = orderdep.unsteady(made, {TEST: "passed"})
    assert unsteady == {TEST: ("passed", "failed")}
    verdict = attribution.with_attribution(coupled(), [], None, None, (), unsteady)
    assert verdict.coupled_to == []
    assert verdict.reasons[-2:] == [
        "no single perturbation of host B explains the difference (clock, environment, "
        "network, checkout path, interpreter each reverted alone)",
        f"{TEST}: the same re-run on host B gave passed, then failed: its outcome turns on "
        "something the pins leave free (threads' timing, a live clock's fraction of a second), "
        "so it is not attributed to what host B varies",
    ]
    steady = Host("clock")  # the same outcome twice: a source, and nothing unsteady
    again = attribution.record(steady, {TEST: "passed"}, [], DIMS)
    assert attribution.attribute(coupled(), attribution.replay(again), [], DIMS) == ["clock"]
    assert orderdep.unsteady(again, {TEST: "passed"}) == {}


RACE = """\
import socket
from pathlib import Path

RUNS = Path({runs!r})


def test_half_open_once():
    assert socket.gethostname() != {host_a!r}, "host A's name"  # a source, every time
    RUNS.mkdir(exist_ok=True)
    count = len(list(RUNS.iterdir()))
    (RUNS / str(count)).write_text("")
    assert count % 2 == 0, "lost the race"  # host B: its own run passes, then every other
"""


def test_a_gate_names_the_source_that_repeats_and_not_the_luck_that_does_not(
    repo: Repo, tmp_path: Path
) -> None:
    """The same through the gate: host A fails the test for its host name, and of host B's
    other re-runs every other one fails. Reverting the host name (host B's network namespace
    holds it) fails it twice; each other re-run that failed passes when repeated, so the
    clock, the environment and the rest are not named, and the reason says why."""
    manifest = "version: 1\nproperty_id: race\nmodule: tests/test_race.py\npins:\n  tz: UTC\n"
    repo.write("entropy.yaml", manifest)
    repo.write("tests/test_race.py", "def test_half_open_once():\n    assert True\n")
    repo.commit("base")
    runs = tmp_path / "runs"
    repo.write("tests/test_race.py", RACE.format(runs=str(runs), host_a=socket.gethostname()))
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", "main", "--json", str(out))
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (result.code, verdict["classification"]) == (1, "env_coupled_reverse"), result.out
    assert verdict["coupled_to"], result.out
    assert set(verdict["coupled_to"]) <= {"network", "hostname"}, result.out
    test = "tests/test_race.py::test_half_open_once"
    assert (
        f"{test}: the same re-run on host B gave failed, then passed: its outcome turns on "
        "something the pins leave free (threads' timing, a live clock's fraction of a second), "
        "so it is not attributed to what host B varies"
    ) in verdict["reasons"], result.out
    assert len(list(runs.iterdir())) >= 3  # host B's run, a re-run and its repeat
