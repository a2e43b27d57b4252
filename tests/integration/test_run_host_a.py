"""`entropy-gate run` on host A: the pins, host.json, exit codes, run options, bad paths.

Real pytest subprocesses in real git repositories. The helpers at the top are shared with the
other test_run_* modules.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import py_compile
import struct
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytest

from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.hosts import hostjson, launch, runsettings, testfiles
from entropy_action.manifest import pinfile
from entropy_action.testproc import plugin, protocol
from tests.support.helpers import Repo, init_repo

pytest_plugins = ["pytester"]

MODULE = "tests/properties/test_prop.py"
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
}


def manifest_yaml(
    temp_root: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    run_args: list[str] | None = None,
    extra_pins: str = "",
) -> str:
    lines = [
        "version: 1",
        "property_id: prop",
        f"module: {MODULE}",
        "pins:",
        "  clock_unix: 1768003200",
        "  rng_seed: 9173",
        "  tz: UTC",
        "  lang: C.UTF-8",
        '  umask: "0027"',
    ]
    if temp_root is not None:
        lines.append(f"  temp_root: {temp_root}")
    lines += [f"  {line}" for line in textwrap.dedent(extra_pins).splitlines() if line]
    if env:
        lines.append("  env:")
        lines += [f"    {name}: {json.dumps(value)}" for name, value in env.items()]
    if run_args is not None:
        lines += ["run:", f"  pytest_args: {json.dumps(run_args)}"]
    return "\n".join(lines) + "\n"


def make_repo(path: Path, files: Mapping[str, str]) -> Path:
    """A committed git repository at `path` holding `files` (dedented)."""
    path.mkdir(parents=True)
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    init_repo(path)  # the repository's own identity: later commits in it need one too
    env = {**os.environ, **GIT_ENV}
    for args in (["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def settings(
    root: Path, out: Path, environ: Mapping[str, str] | None = None, **options: Any
) -> runsettings.RunSettings:
    loaded = pinfile.load(root / "entropy.yaml", repo_root=root)
    host: Literal["a", "b"] = "b" if options.get("isolate") else "a"
    return runsettings.RunSettings(
        host=host,
        out=out,
        root=root,
        loaded=loaded,
        environ=dict(os.environ if environ is None else environ),
        **options,
    )


def outcomes(junit: Path) -> dict[str, str]:
    """test name -> passed/failed/error/skipped, from our own junit.xml."""
    found: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        found[case.get("name", "")] = (
            {"failure": "failed"}.get(kinds[0], kinds[0]) if kinds else ("passed")
        )
    return found


def host_json(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / HOST_JSON).read_text(encoding="utf-8"))
    return data


PINS_PROPERTY = """\
import os
import sys
import tempfile

import helper_on_pythonpath


def test_tmpdir_is_the_temp_root_and_starts_empty():
    assert tempfile.gettempdir() == os.environ["EXPECTED_TEMP_ROOT"]
    assert os.listdir(tempfile.gettempdir()) == []


def test_named_pins_are_in_the_environment():
    assert os.environ["TZ"] == "UTC"
    assert os.environ["LANG"] == os.environ["LC_ALL"] == "C.UTF-8"
    assert os.environ["PYTHONHASHSEED"] == "0"
    assert sys.flags.hash_randomization == 0
    assert os.environ["ENTROPY_CLOCK_UNIX"] == "1768003200"
    assert os.environ["ENTROPY_RNG_SEED"] == "9173"
    assert os.environ["API_URL"] == "http://127.0.0.1:9"


def test_umask_is_pinned():
    mask = os.umask(0)
    os.umask(mask)
    assert mask == 0o027


def test_host_a_inherits_the_callers_environment():
    assert os.environ["CALLER_ONLY"] == "laptop"
    assert helper_on_pythonpath.VALUE == 42
"""


def test_host_a_runs_under_the_pins_and_reports_them(tmp_path: Path) -> None:
    temp_root = tmp_path / "entropy-tmp"
    root = make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": manifest_yaml(temp_root, env={"API_URL": "http://127.0.0.1:9"}),
            MODULE: PINS_PROPERTY,
        },
    )
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper_on_pythonpath.py").write_text("VALUE = 42\n")
    caller = {
        **os.environ,
        "CALLER_ONLY": "laptop",
        "EXPECTED_TEMP_ROOT": str(temp_root),
        "PYTHONPATH": str(lib),
        "TZ": "Europe/Paris",
        "RUNNER_NAME": "runner-7",
        "ImageOS": "ubuntu24",
    }
    out = tmp_path / "out"
    info = launch.run_host(settings(root, out, caller))
    assert outcomes(out / JUNIT_XML) == {
        "test_tmpdir_is_the_temp_root_and_starts_empty": "passed",
        "test_named_pins_are_in_the_environment": "passed",
        "test_umask_is_pinned": "passed",
        "test_host_a_inherits_the_callers_environment": "passed",
    }
    assert hostjson.outcome(info) == (0, "host a: properties passed")
    data = host_json(out)
    assert data == json.loads(info.model_dump_json())
    assert data["pins_applied"] == {  # hash_seed unpinned: PYTHONHASHSEED=0 is the gate's own
        "tz": "UTC",
        "lang": "C.UTF-8",
        "clock_unix": 1768003200,
        "rng_seed": 9173,
        "temp_root": str(temp_root),
        "env.API_URL": "http://127.0.0.1:9",
        "umask": "0027",
    }
    assert data["pins_mismatch"] == []
    assert data["host"] == "a"
    assert data["returncode"] == 0
    raw = (root / "entropy.yaml").read_bytes()
    assert data["manifest_sha256"] == hashlib.sha256(raw).hexdigest()
    assert data["isolated"] is False
    assert data["isolation"] == []
    assert data["notes"] == []
    assert data["root"] == str(root)
    assert data["temp_root"] == str(temp_root)
    assert data["python"] == sys.executable
    assert data["pytest_args"] == [
        MODULE,
        "-p",
        "entropy_gate_boot",
        "-p",
        "entropy_gate_plugin",
        "-p",
        "entropy_gate_audit",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",  # the gate owns order and seeds (protocol.BLOCKED_PLUGINS)
        "-o",
        "junit_family=xunit1",
        "-p",
        "entropy_gate_assertcount",
        "-o",
        "enable_assertion_pass_hook=true",
        "--rootdir=.",
        f"--junitxml={out / JUNIT_XML}",
    ]
    assert data["audit"]["records"] == []  # the property module reads no production code
    fingerprint = data["fingerprint"]
    assert fingerprint["runner"] == {"RUNNER_NAME": "runner-7", "ImageOS": "ubuntu24"}
    assert fingerprint["python_version"] == ".".join(map(str, sys.version_info[:3]))
    assert fingerprint["tz"] == "UTC"
    assert fingerprint["locale"] == "C.UTF-8"
    assert fingerprint["uid"] == os.getuid()
    expected_hash = hashlib.sha256(os.uname().nodename.encode()).hexdigest()
    assert fingerprint["hostname_sha256"] == expected_hash
    assert data["started_at"].endswith("Z")
    assert data["started_at"] <= data["finished_at"]
    assert list(temp_root.iterdir()) == []  # emptied again, and still there


def test_the_runner_and_the_plugin_agree_on_the_variable_name() -> None:
    assert protocol.PLUGIN_ENV == plugin.CONFIG_ENV


def test_junit_records_file_and_line_for_each_test(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(None), MODULE: "def test_one():\n    pass\n"},
    )
    launch.run_host(settings(root, tmp_path / "out"))
    case = next(ET.parse(tmp_path / "out" / JUNIT_XML).getroot().iter("testcase"))
    assert (case.get("file"), case.get("line")) == (MODULE, "0")


def test_run_exits_0_when_the_properties_pass_and_1_when_one_fails(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "def test_ok():\n    assert True\n")
    repo.commit()
    passed = repo.cli("run", "--host", "a", "--out", "out")
    assert passed.code == 0
    assert "1 passed" in passed.out
    assert passed.err.splitlines()[-1] == "host a: properties passed"
    repo.write(MODULE, "def test_bad():\n    assert 1 == 2\n")
    failed = repo.cli("run", "--host", "a", "--out", "out")
    assert failed.code == 1
    assert "1 failed" in failed.out
    assert failed.err.splitlines()[-1] == "host a: a property failed"
    assert host_json(repo.path / "out")["returncode"] == 1


def mo_catalog(messages: Mapping[str, str]) -> bytes:
    """A GNU gettext catalog (.mo, little-endian) holding `messages`, as msgfmt writes it."""
    keys = sorted(messages)
    ids = strs = b""
    spans = []
    for key in keys:
        msgid, msgstr = key.encode(), messages[key].encode()
        spans.append((len(ids), len(msgid), len(strs), len(msgstr)))
        ids, strs = ids + msgid + b"\0", strs + msgstr + b"\0"
    first_id = 28 + 16 * len(keys)
    table = [(length, first_id + at) for at, length, _, _ in spans]
    table += [(length, first_id + len(ids) + at) for _, _, at, length in spans]
    header = struct.pack("<7I", 0x950412DE, 0, len(keys), 28, 28 + 8 * len(keys), 0, 0)
    return header + b"".join(struct.pack("<2I", *pair) for pair in table) + ids + strs


GETTEXT_PROPERTY = """\
import gettext
import os
import pathlib


def test_the_greeting_follows_the_pinned_locale():
    found = gettext.translation("app", pathlib.Path(__file__).parent / "locale", fallback=True)
    assert found.gettext("Hello") == os.environ["EXPECTED_GREETING"]
"""


@pytest.mark.parametrize(
    ("lang", "env", "greeting"),
    [
        ("  lang: C.UTF-8", None, "Hello"),  # the pin wins over the caller's LANGUAGE
        ("  lang: C.UTF-8", {"LANGUAGE": "de"}, "Hallo"),  # unless LANGUAGE is pinned too
        ("", None, "Hallo"),  # unpinned, host A's locale is the caller's
    ],
    ids=["lang-pinned", "language-pinned-too", "lang-unpinned"],
)
def test_a_callers_language_does_not_translate_a_property_pinned_to_a_locale(
    tmp_path: Path, lang: str, env: dict[str, str] | None, greeting: str
) -> None:
    """Python's gettext reads LANGUAGE before LC_ALL: a laptop's `LANGUAGE=de` made host A
    translate what the lang pin (LANG, LC_ALL) says is C.UTF-8, while host B, whose
    environment is scrubbed, did not."""
    manifest = manifest_yaml(None, env=env).replace("  lang: C.UTF-8\n", lang and lang + "\n")
    root = make_repo(tmp_path / "repo", {"entropy.yaml": manifest, MODULE: GETTEXT_PROPERTY})
    catalog = root / "tests/properties/locale/de/LC_MESSAGES/app.mo"
    catalog.parent.mkdir(parents=True)
    catalog.write_bytes(mo_catalog({"Hello": "Hallo"}))
    caller = {**os.environ, "LANGUAGE": "de:en", "EXPECTED_GREETING": greeting}
    out = tmp_path / "out"
    info = launch.run_host(settings(root, out, caller))
    assert outcomes(out / JUNIT_XML) == {"test_the_greeting_follows_the_pinned_locale": "passed"}
    assert hostjson.outcome(info) == (0, "host a: properties passed")
    assert host_json(out)["pins_mismatch"] == []


GREETING_LIB = """\
import gettext
import pathlib


def greeting() -> str:
    found = gettext.translation("app", pathlib.Path(__file__).parent / "locale", fallback=True)
    return found.gettext("Hello")
"""
GREETING_PROPERTY = """\
from greet import greeting


def test_the_greeting_is_the_source_text():
    assert greeting() == "Hello"
"""
GREETING_ADDED = """

def test_the_greeting_is_one_word():
    assert greeting().isalpha()
"""


def test_a_callers_language_is_judged_alike_on_every_path(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate run from a shell with `LANGUAGE=de:en` (a German desktop's default): the local
    gate (host A, the strength step's runs) and the workflow's commands (each host's job,
    then `verdict` and `compare`) judge the property as the lang pin says, and alike."""
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("greet.py", GREETING_LIB)
    repo.write(MODULE, GREETING_PROPERTY)
    catalog = repo.path / "locale/de/LC_MESSAGES/app.mo"
    catalog.parent.mkdir(parents=True)
    catalog.write_bytes(mo_catalog({"Hello": "Hallo"}))
    repo.commit("base")
    repo.git("checkout", "-qb", "patch")
    repo.write(MODULE, GREETING_PROPERTY + GREETING_ADDED)  # the strength step runs too
    repo.commit("another property")
    monkeypatch.setenv("LANGUAGE", "de:en")
    out = repo.path.parent
    judged = {"gate": repo.cli("gate", "--base-ref", "main", "--json", str(out / "gate.json"))}
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli(
            "run", "--host", host, "--out", str(out / host), "--base-ref", "main", *extra
        )
        assert ran.code == 0, ran.err
    folders = ("--host-a", str(out / "a"), "--host-b", str(out / "b"), "--base-ref", "main")
    for command in ("verdict", "compare"):
        judged[command] = repo.cli(command, *folders, "--json", str(out / f"{command}.json"))
    for command, done in judged.items():
        verdict = json.loads((out / f"{command}.json").read_text(encoding="utf-8"))
        assert (done.code, verdict["classification"]) == (0, "merge_candidate"), (
            command,
            verdict["reasons"],
        )
    # the strength step's runs are under the pin too: the base's test kills every mutant, as
    # the head's do (under the caller's LANGUAGE it failed unmutated, and killed none)
    mutation = json.loads((out / "gate.json").read_text(encoding="utf-8"))["mutation"]
    assert mutation["base_killed"] == mutation["head_killed"] == mutation["mutants"] > 0


def test_a_conftest_that_rewrites_a_pin_makes_the_run_invalid(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("tests/properties/conftest.py", 'import os\nos.environ["TZ"] = "Europe/Paris"\n')
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 2
    message = "host a: pins did not take: tz: TZ pinned 'UTC', the test process saw 'Europe/Paris'"
    assert result.err.splitlines()[-1] == message
    data = host_json(repo.path / "out")
    assert data["pins_mismatch"] == [message.split(": ", 2)[2]]
    assert data["pins_applied"]["tz"] == "Europe/Paris"
    assert data["returncode"] == 0


def test_disabling_the_gates_plugin_is_a_pin_that_did_not_take(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(
        "conftest.py",
        """\
        def pytest_configure(config):
            config.pluginmanager.unregister(name="entropy_gate_plugin")
        """,
    )
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        "host a: pins did not take: the test process reported nothing "
        "(was the gate's plugin disabled?)"
    )


WARNS = """\
import warnings


def test_warns():
    warnings.warn("deprecated thing", UserWarning)
"""


def test_run_pytest_args_neutralize_addopts_and_our_junitxml_wins(tmp_path: Path) -> None:
    ini = "[pytest]\naddopts = -W error::UserWarning --junitxml=theirs.xml\n"
    plain = make_repo(
        tmp_path / "plain",
        {"entropy.yaml": manifest_yaml(None), "pytest.ini": ini, MODULE: WARNS},
    )
    info = launch.run_host(settings(plain, tmp_path / "out-plain"))
    assert info.returncode == 1  # the project's addopts turned the warning into a failure
    assert outcomes(tmp_path / "out-plain" / JUNIT_XML) == {"test_warns": "failed"}
    assert not (plain / "theirs.xml").exists()
    neutral = make_repo(
        tmp_path / "neutral",
        {
            "entropy.yaml": manifest_yaml(None, run_args=["-o", "addopts="]),
            "pytest.ini": ini,
            MODULE: WARNS,
        },
    )
    info = launch.run_host(settings(neutral, tmp_path / "out-neutral"))
    assert info.returncode == 0
    assert outcomes(tmp_path / "out-neutral" / JUNIT_XML) == {"test_warns": "passed"}
    assert info.pytest_args[:3] == [MODULE, "-o", "addopts="]


def test_an_addopts_option_pytest_does_not_know_is_invalid_input(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("pytest.ini", "[pytest]\naddopts = --cov-fail-under=99\n")
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 2
    assert "unrecognized arguments: --cov-fail-under=99" in result.out
    assert result.err.splitlines()[-1] == (
        "host a: pytest usage error (see pytest.log); an option in addopts may need a plugin "
        'this interpreter lacks: set run.pytest_args, e.g. ["-o", "addopts="]'
    )
    assert host_json(repo.path / "out")["pins_mismatch"] == []


def test_a_module_that_fails_at_import_is_a_failed_host(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, 'raise RuntimeError("boom at import")\n\ndef test_never():\n    pass\n')
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "host a: collection failed or the run was interrupted (see junit.xml)"
    )
    junit = (repo.path / "out" / JUNIT_XML).read_text()
    assert "boom at import" in junit
    assert outcomes(repo.path / "out" / JUNIT_XML) == {"tests.properties.test_prop": "error"}


def test_a_module_without_tests_is_a_failed_host(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "VALUE = 1\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 1
    assert result.err.splitlines()[-1] == "host a: no tests were collected from the property module"
    assert host_json(repo.path / "out")["returncode"] == 5


CASSETTE_PROPERTY = """\
import hashlib
import os


def test_cassette_is_the_pinned_file():
    path = os.environ["ENTROPY_CASSETTE"]
    assert os.path.isabs(path)
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    assert digest == os.environ["ENTROPY_CASSETTE_SHA256"]
"""


def _cassette_manifest(digest: str) -> str:
    return manifest_yaml(None, extra_pins=f"cassette: cassette.json\ncassette_sha256: {digest}")


def test_a_pinned_cassette_reaches_the_test_process(repo: Repo) -> None:
    repo.write("cassette.json", '{"answer": 42}\n')
    repo.write("entropy.yaml", _cassette_manifest(hashlib.sha256(b'{"answer": 42}\n').hexdigest()))
    repo.write(MODULE, CASSETTE_PROPERTY)
    repo.commit()
    assert repo.cli("run", "--host", "a", "--out", "out").code == 0
    assert host_json(repo.path / "out")["pins_applied"]["cassette"] == str(
        repo.path / "cassette.json"
    )


def test_a_cassette_that_changed_without_its_pin_is_refused(repo: Repo) -> None:
    digest = hashlib.sha256(b"old\n").hexdigest()
    repo.write("cassette.json", "new\n")
    repo.write("entropy.yaml", _cassette_manifest(digest))
    repo.write(MODULE, CASSETTE_PROPERTY)
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 2
    actual = hashlib.sha256(b"new\n").hexdigest()
    assert result.err.splitlines()[-1] == (
        f"entropy.yaml:11: cassette cassette.json has sha256 {actual}, the pin says {digest}: "
        "cassette changed — rotate it in a reviewed change (a new cassette_sha256)"
    )
    assert not (repo.path / "out" / HOST_JSON).exists()


def test_python_without_pytest_is_a_clear_error(repo: Repo) -> None:
    python = "/root/.pyenv/versions/3.12.1/bin/python"
    if not os.path.exists(python):
        pytest.skip(f"{python} is not on this machine")
    has_pytest = subprocess.run(
        [python, "-c", "import pytest"], check=False, capture_output=True
    ).returncode
    if has_pytest == 0:
        pytest.skip(f"{python} has pytest installed")
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out", "--python", python)
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        f"--python {python}: pytest is not installed for that interpreter (Python 3.12.1); "
        f"install it there: {python} -m pip install pytest"
    )
    not_python = repo.cli("run", "--host", "a", "--out", "out", "--python", "/bin/true")
    assert (not_python.code, not_python.err.splitlines()[-1]) == (
        2,
        "--python /bin/true: does not answer like a Python interpreter (exit 0)",
    )
    missing = repo.cli("run", "--host", "a", "--out", "out", "--python", "/no/such/python")
    assert (missing.code, missing.err.splitlines()[-1]) == (
        2,
        "--python /no/such/python: no such interpreter",
    )


def test_a_hanging_property_is_killed_at_the_timeout(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": manifest_yaml(None),
            MODULE: "import time\n\ndef test_hangs():\n    time.sleep(600)\n",
        },
    )
    with pytest.raises(GateError, match=r"did not finish within 2 s and was killed"):
        launch.run_host(settings(root, tmp_path / "out", timeout=2.0))


def test_a_conftest_that_fails_to_import_is_a_failed_host(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("tests/properties/conftest.py", 'raise RuntimeError("conftest boom")\n')
    repo.write(MODULE, "def test_never():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 1
    assert result.err.splitlines()[-1] == f"host a: {hostjson.CONFTEST_NOTE}"
    assert outcomes(repo.path / "out" / JUNIT_XML) == {"conftest": "error"}
    error = next(ET.parse(repo.path / "out" / JUNIT_XML).getroot().iter("error"))
    assert error.get("message", "").startswith("ImportError while loading conftest")
    assert "RuntimeError: conftest boom" in (error.text or "")
    data = host_json(repo.path / "out")
    assert (data["returncode"], data["pins_mismatch"]) == (4, [])


def test_addopts_cannot_switch_the_gates_plugin_off(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("pytest.ini", "[pytest]\naddopts = -p no:entropy_gate_plugin\n")
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 0
    assert host_json(repo.path / "out")["pins_applied"]["tz"] == "UTC"


def test_pytest_addopts_from_the_callers_shell_is_ignored_with_a_note(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    repo.commit()
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k test_one")
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 0
    assert outcomes(repo.path / "out" / JUNIT_XML) == {"test_one": "passed", "test_two": "passed"}
    note = (
        "PYTEST_ADDOPTS from the caller's environment ignored: "
        "run options belong in run.pytest_args"
    )
    assert f"note: {note}" in result.err.splitlines()
    assert host_json(repo.path / "out")["notes"] == [note]


# A plugin this interpreter has installed (pytest-xdist, the test extra's): autoloaded on both
# hosts unless the caller's shell turns autoloading off.
AUTOLOADED = "xdist"


def test_autoload_turned_off_in_the_callers_shell_is_ignored_so_both_hosts_load_the_same_plugins(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Host B's scrub drops PYTEST_DISABLE_PLUGIN_AUTOLOAD; host A kept it, so a plugin the
    project relies on was missing on host A only (a difference no pin names). Now neither
    host gets it, and host A says so."""
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(
        MODULE,
        f"def test_plugin_loaded(pytestconfig):\n"
        f"    assert pytestconfig.pluginmanager.hasplugin({AUTOLOADED!r})\n",
    )
    repo.commit()
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for host in ("a", "b"):
        result = repo.cli("run", "--host", host, "--out", f"out-{host}")
        assert result.code == 0, result.err
        assert outcomes(repo.path / f"out-{host}" / JUNIT_XML) == {"test_plugin_loaded": "passed"}
    note = (
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD from the caller's environment ignored: "
        "run options belong in run.pytest_args"
    )
    assert host_json(repo.path / "out-a")["notes"] == [note]


def test_pytest_xdist_in_the_projects_addopts_runs_the_tests_in_the_gates_one_process(
    repo: Repo,
) -> None:
    """diskcache's addopts say `-n auto`: in xdist's workers the audit, provenance, the hook
    inventory and the test data each wrote its report over the others' (the controller's,
    empty, last), so the audit saw none of its 378 live reads. Both hosts run the tests in
    the one process the plugins watch, and say so."""
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write("pytest.ini", "[pytest]\naddopts = -n 2\n")
    repo.write("clocklib.py", "import time\n\n\ndef now():\n    return time.time()\n")
    repo.write(
        MODULE,
        "from clocklib import now\n\n\n"
        "def test_now():\n    assert now() > 0\n\n\n"
        "def test_in_one_process(request):  # an xdist worker's config has workerinput\n"
        "    assert not hasattr(request.config, 'workerinput')\n",
    )
    repo.commit()
    note = (
        "pytest-xdist (-n 2 in the project's options): the tests ran in one process, where "
        "the gate's audit, provenance and inventory see every one of them"
    )
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        result = repo.cli("run", "--host", host, "--out", f"out-{host}", *extra)
        assert result.code == 0, result.out + result.err
        assert outcomes(repo.path / f"out-{host}" / JUNIT_XML) == {
            "test_now": "passed",
            "test_in_one_process": "passed",
        }
        info = host_json(repo.path / f"out-{host}")
        reads = {(r["api"], r["path"]) for r in info["audit"]["records"]}
        assert ("time.time()", "clocklib.py") in reads, info["audit"]
        assert note in info["notes"]


def test_a_pinned_locale_this_machine_lacks_is_a_pin_that_did_not_take(repo: Repo) -> None:
    repo.write("entropy.yaml", manifest_yaml(None).replace("C.UTF-8", "zz_ZZ.UTF-8"))
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        "host a: pins did not take: lang: zz_ZZ.UTF-8 is not available here; the test process "
        "runs in C (install the locale or pin C.UTF-8)"
    )


def test_the_plugin_copies_bring_the_gates_bytecode(tmp_path: Path) -> None:
    """The test process loads the copied modules from the gate's compiled bytecode instead of
    compiling them again in every run."""
    source = testfiles.TESTPROC / "audit.py"
    py_compile.compile(str(source), doraise=True)  # what an install does
    testfiles.copy_module(source, tmp_path, "copied_audit")
    testfiles.copy_module(testfiles.TESTPROC / "protocol.py", tmp_path, protocol.PROTOCOL_MODULE)
    testfiles.copy_module(testfiles.TESTPROC / "wrappers.py", tmp_path, protocol.WRAPPERS_MODULE)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-v", "-c", "import copied_audit"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    cached = tmp_path / "__pycache__" / f"copied_audit.{sys.implementation.cache_tag}.pyc"
    assert f"code object from '{cached}'" in done.stderr
    assert (tmp_path / "copied_audit.py").read_bytes() == source.read_bytes()


def test_a_copy_without_the_gates_bytecode_is_compiled_as_usual(tmp_path: Path) -> None:
    source = tmp_path / "src" / "lonely.py"
    source.parent.mkdir()
    source.write_text("VALUE = 3\n")
    testfiles.copy_module(source, tmp_path, "copied")
    assert not (tmp_path / "__pycache__").exists()
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", "import copied; print(copied.VALUE)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "3\n"


def test_bytecode_the_user_may_not_read_is_left_to_the_test_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """environs' backtest as a user other than the one who installed the gate: stat of the
    gate's own `__pycache__` said EACCES, and every commit ended in an internal error. Root
    (these tests' user on CI) never meets EACCES, so the stat is made to say it."""
    source = tmp_path / "src" / "guarded.py"
    source.parent.mkdir()
    source.write_text("VALUE = 4\n")
    py_compile.compile(str(source), doraise=True)
    compiled = Path(importlib.util.cache_from_source(str(source)))
    real = Path.is_file

    def is_file(path: Path) -> bool:
        if path == compiled:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "is_file", is_file)
    testfiles.copy_module(source, tmp_path, "copied")
    assert (tmp_path / "copied.py").read_text() == "VALUE = 4\n"
    assert not (tmp_path / "__pycache__").exists()


def test_the_runs_plugins_load_as_plain_modules_without_a_warning(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boot module imports them before pytest could rewrite them: their bytecode is used,
    and pytest, told by PYTEST_DONT_REWRITE, does not warn that they were imported early; each
    is still registered by its own `-p`, which undoes a block in the project's addopts."""
    folder = testfiles.install_plugin(pytester.path)  # with the names they share
    modules = testfiles.plugin_modules(audit=True, count=True)
    assert modules == ["entropy_gate_plugin", "entropy_gate_audit", "entropy_gate_assertcount"]
    testfiles.write_boot(folder, modules)
    pytester.makepyfile(test_one="def test_one():\n    assert 1 == 1\n")
    monkeypatch.setenv("PYTHONPATH", str(folder))
    junit = pytester.path / "junit.xml"
    pytester.makeini("[pytest]\naddopts = -p no:entropy_gate_assertcount\n")
    result = pytester.runpytest_subprocess(
        "-p", "entropy_gate_boot", *(arg for name in modules for arg in ("-p", name)),
        "-o", "enable_assertion_pass_hook=true", "-W", "error", f"--junitxml={junit}",
        "-p", "no:cacheprovider", "--entropy-gate-seed", "5",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert "PytestAssertRewriteWarning" not in result.stdout.str() + result.stderr.str()
    text = junit.read_text()
    assert '<property name="entropy_assertions" value="1"' in text  # assertcount ran
    assert '<property name="entropy_rng_seed" value="5"' in text  # and the plugin
    assert testfiles.plugin_modules(audit=False, count=False) == ["entropy_gate_plugin"]


def test_a_configuration_pytest_cannot_read_is_invalid_and_every_path_says_where(
    repo: Repo,
) -> None:
    """shortuuid c993da274e1d: a tox.ini with a duplicate section stops pytest (exit 4) before
    any test; plain pytest fails the same way. The gate, and verdict and compare on the host
    jobs' folders, give one reason per host: pytest's own error, without the addopts hint
    (not what went wrong here) and without "junit.xml: no such file" (what `verdict` said)."""
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "def test_ok():\n    pass\n")
    base = repo.commit()
    repo.write("tox.ini", "[testenv:py38]\nx = 1\n\n[testenv:py38]\nx = 2\n")
    repo.commit()
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    judged = {"gate": (result.code, json.loads(out.read_text(encoding="utf-8")))}
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--base-ref", base, "--out", f"out-{host}", *extra)
        assert ran.code == 2, ran.err
    judged.update(repo.verdict_and_compare("out-a", "out-b", base))
    said = "invalid input: host {}: pytest usage error (see pytest.log) — ERROR: {}/tox.ini:4: "
    for command, (code, verdict) in judged.items():
        assert (code, verdict["classification"]) == (2, "invalid"), command
        reasons = verdict["reasons"]
        assert reasons[0] == said.format("A", repo.path) + "duplicate section 'testenv:py38'"
        assert reasons[1].startswith(said.format("B", "").split(" /")[0]), reasons
        assert reasons[1].endswith("/tox.ini:4: duplicate section 'testenv:py38'"), command
        assert not any("junit.xml" in r or "addopts" in r for r in reasons), (command, reasons)
