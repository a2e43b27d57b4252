"""Contract tests for action.yml and the shipped workflows: inputs wired and documented,
nothing interpolated into scripts, actions pinned, permissions least, the lock complete."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = ROOT / ".github" / "workflows"
SHIPPED = (  # the reusable workflows the templates call
    "entropy-gate.yml",
    "entropy-gate-hosts.yml",
    "entropy-gate-trusted.yml",
    "entropy-gate-accept.yml",
)
TEMPLATES = ROOT / "workflow-templates"  # what users copy
CI_DOCS = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")  # the input tables
OWN_ACTION = "entropy-gate/entropy-gate"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")


def _load(path: Path) -> dict[Any, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [step for job in doc["jobs"].values() for step in job.get("steps", [])]


def _all_yaml() -> list[Path]:
    return [
        ACTION,
        *sorted(WORKFLOWS.glob("*.yml")),
        *sorted(TEMPLATES.glob("*.yml")),
        *sorted((ROOT / "tests/data").rglob("*.yml")),
    ]


def _script_text(step: dict[str, Any]) -> str:
    """The step's script, with the text of every scripts/*.sh it calls."""
    run = str(step.get("run", ""))
    called = re.findall(r"scripts/([\w-]+\.sh)", run)
    return run + "".join((ROOT / "scripts" / name).read_text(encoding="utf-8") for name in called)


@pytest.mark.parametrize("name", list(_load(ACTION)["inputs"]))
def test_every_action_input_reaches_a_script_through_env_and_is_documented(name: str) -> None:
    wiring = [
        (variable, step)
        for step in _steps(_load(ACTION))
        for variable, value in (step.get("env") or {}).items()
        if value == f"${{{{ inputs.{name} }}}}"
    ]
    assert wiring, f"input {name} is mapped to no env variable"
    for variable, step in wiring:
        # A secret is passed by the name of its variable, never expanded into the script.
        by_name = r"--token-env |--private-key-env "
        assert re.search(rf"(\$\{{?|{by_name}){variable}\b", _script_text(step)), (
            f"{variable} (input {name}) is not used by step {step.get('name')!r}"
        )
    assert f"| `{name}` |" in CI_DOCS, f"input {name} is not in docs/ci.md's input table"


@pytest.mark.parametrize("workflow", SHIPPED)
def test_every_workflow_input_is_documented(workflow: str) -> None:
    doc = _load(WORKFLOWS / workflow)
    inputs = (doc.get("on") or doc[True])["workflow_call"]["inputs"]
    assert inputs
    missing = [name for name in inputs if f"| `{name}` |" not in CI_DOCS]
    assert missing == [], f"{workflow}: inputs missing from docs/ci.md: {missing}"


@pytest.mark.parametrize("path", _all_yaml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_expression_is_interpolated_into_a_script(path: Path) -> None:
    scripts = [str(step["run"]) for step in _steps(_load(path)) if "run" in step]
    assert [s for s in scripts if "${{" in s] == []


def test_every_composite_step_runs_in_bash_and_the_gate_is_verified_after_the_prs_code() -> None:
    """The gate's install, the manifest's validation and the leg's plan (plan-leg) come before
    the project's install (the first of the PR's code in a host job); the step right after it
    verifies the gate."""
    steps = _steps(_load(ACTION))
    assert steps
    scripts = [s for s in steps if "uses" not in s]
    assert [s.get("name") for s in scripts if s.get("shell") != "bash"] == []
    ids = [s.get("id") for s in scripts]
    assert ids[: ids.index("project") + 2] == [
        "venv-key",
        "install",
        "venv-out",
        "property",
        "matrix",
        "project",
        "verify",
    ]
    verify = scripts[ids.index("verify")]
    assert verify["env"]["TREE"] == "${{ steps.install.outputs.venv-tree }}"
    assert {s["uses"].split("@")[0] for s in steps if "uses" in s} == {
        "actions/cache/restore",
        "actions/cache/save",
    }


def test_the_base_evidence_is_restored_and_saved_where_run_keeps_it_under_its_key() -> None:
    """One folder, named alike by restore, run and save: relative to the checkout, since
    actions/cache versions an entry by its path's spelling (the runner's temp folder is
    spelled differently per job under act) and refuses `..`; git is told to ignore it. The
    key only ever comes from `cache-key`."""
    steps = {s.get("id") or s["name"]: s for s in _steps(_load(ACTION))}
    restore, save = (
        steps["restore"],
        steps["save the base evidence (a first run of this base on this host)"],
    )
    folders = {
        restore["with"]["path"],
        save["with"]["path"],
        steps["run"]["env"]["EVIDENCE_DIR"],
        steps["cache-key"]["env"]["EVIDENCE_DIR"],
    }
    assert folders == {".entropy-gate-evidence"}
    assert '/$EVIDENCE_DIR/" >> "$git_dir/info/exclude"' in steps["cache-key"]["run"]
    key = "${{ steps.cache-key.outputs.key }}"
    assert restore["with"]["key"] == steps["run"]["env"]["CACHE_KEY"] == key
    # saved under the key `run` filed the entry under (taken after everything that changes the
    # interpreter: host B may install time-machine into one both hosts share)
    assert save["with"]["key"] == "${{ steps.run.outputs.key }}"
    assert 'echo "key=$filed" >> "$GITHUB_OUTPUT"' in (ROOT / "scripts" / "run-host.sh").read_text()
    assert "cache-key" in steps["cache-key"]["run"]
    # saved only when nothing was restored and the run filed the entry (a miss, a sound run)
    assert "steps.restore.outputs.cache-hit != 'true'" in save["if"]
    assert "steps.run.outputs.cached == 'true'" in save["if"]
    # the key is taken after the host is prepared (time-machine is one of the distributions)
    order = list(steps)
    assert (
        order.index("host") < order.index("cache-key") < order.index("restore") < order.index("run")
    )


def test_only_the_host_jobs_restore_the_gates_venv_from_the_cache() -> None:
    """A cache entry under the venv's key is one a PR's run could have saved (its host jobs
    run its code): only the jobs that run the PR's code anyway may restore one. The check and
    verdict jobs never ask (the verdict unpacks the check's venv by its sha256), the action
    refuses the input for any other command, and no workflow job uses actions/cache itself."""
    asked = {
        (workflow, name)
        for workflow in SHIPPED
        for name, job in _load(WORKFLOWS / workflow)["jobs"].items()
        for step in job.get("steps", [])
        if "gate-venv-cache" in (step.get("with") or {})
    }
    hosts = ("entropy-gate.yml", "entropy-gate-hosts.yml")  # the split's PR half too
    assert asked == {(w, job) for w in hosts for job in ("hosts", "hosts-more")}
    for workflow in hosts:
        jobs = _load(WORKFLOWS / workflow)["jobs"]
        for name in ("hosts", "hosts-more"):
            (run,) = [s for s in jobs[name]["steps"] if s.get("uses") == f"{OWN_ACTION}@v1"]
            assert run["with"]["command"] == "run"
            assert run["with"]["gate-venv-cache"] == "${{ inputs.cache-gate-venv }}"
    for workflow in SHIPPED:
        for job in _load(WORKFLOWS / workflow)["jobs"].values():
            uses = [str(s.get("uses", "")) for s in job.get("steps", [])]
            assert [u for u in uses if u.startswith("actions/cache")] == [], workflow
    steps = {s.get("id") or s["name"]: s for s in _steps(_load(ACTION))}
    assert steps["venv-key"]["if"].startswith("inputs.command == 'run' && ")
    assert "inputs.gate-venv == ''" in steps["venv-key"]["if"]
    assert steps["venv-restore"]["if"] == "steps.venv-key.outputs.key != ''"
    assert 'true:*) echo "::error' in steps["install"]["run"]  # gate-venv-cache: run only
    # The key from the runner and the action's own files; restored, checked, saved and
    # removed in one folder of the checkout, before the project's install (the PR's code).
    entry = ".entropy-gate-cached-venv"
    assert steps["venv-key"]["env"]["VENV_ENTRY"] == entry
    assert steps["venv-restore"]["with"]["path"] == entry
    save = steps["save entropy-gate's venv (host jobs, a first build under this key)"]
    assert save["with"] == {"path": entry, "key": "${{ steps.venv-key.outputs.key }}"}
    assert save["if"] == "steps.install.outputs.venv-save == 'true'"
    assert steps["venv-out"]["run"] == f"rm -rf {entry}"
    order = list(steps)
    assert order.index("venv-out") < order.index("project")


@pytest.mark.parametrize("path", _all_yaml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_action_is_pinned_by_sha_with_its_version(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
        if not match or match[1] == "./":
            continue
        ref, comment = match[1], match[2].strip()
        if ref.startswith(f"{OWN_ACTION}@") or ref.startswith(f"{OWN_ACTION}/"):
            assert ref.endswith("@v1"), line  # this repository's own release
            continue
        assert SHA_PIN.match(ref), f"{path.name}: not pinned to a full SHA: {line.strip()}"
        assert re.match(r"^# v\d+\.\d+\.\d+$", comment), f"{path.name}: no version: {line}"


@pytest.mark.parametrize("workflow", SHIPPED)
def test_permissions_are_empty_at_the_top_and_granted_per_job(workflow: str) -> None:
    doc = _load(WORKFLOWS / workflow)
    assert doc["permissions"] == {}
    for name, job in doc["jobs"].items():
        granted = job["permissions"]
        writes = {scope for scope, level in granted.items() if level == "write"}
        assert writes <= {"checks"}, f"{name}: {granted}"
        if writes:
            assert name in ("verdict", "publish", "accept"), f"{name} may not write checks"
        if workflow == "entropy-gate-hosts.yml":
            assert granted == {"contents": "read"}, f"{name}: the hosts run PR code"


def test_every_checkout_is_data_only_with_the_full_history() -> None:
    checkouts = [
        step
        for step in _steps(_load(WORKFLOWS / "entropy-gate.yml"))
        if str(step.get("uses", "")).startswith("actions/checkout@")
    ]
    assert len(checkouts) == 4  # check, hosts (leg 1), hosts-more, verdict
    for step in checkouts:
        assert step["with"] == {"persist-credentials": False, "fetch-depth": 0}


def test_the_trusted_workflow_judges_and_never_takes_a_verdict_file() -> None:
    doc = _load(WORKFLOWS / "entropy-gate-trusted.yml")
    job = doc["jobs"]["verdict"]
    assert job["if"] == "github.event_name == 'workflow_run'"
    steps = job["steps"]
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"persist-credentials": False, "fetch-depth": 0}  # no ref: base
    downloads = [s for s in steps if str(s.get("uses", "")).startswith("actions/download")]
    assert [(d["with"]["pattern"], d["with"]["merge-multiple"]) for d in downloads] == [
        ("entropy-gate-${{ inputs.property-id }}-host-a-*", True),  # every leg of host A
        ("entropy-gate-${{ inputs.property-id }}-host-b-*", True),
    ]
    assert {d["with"]["run-id"] for d in downloads} == {"${{ github.event.workflow_run.id }}"}
    commands = [s["with"]["command"] for s in steps if s.get("uses") == f"{OWN_ACTION}@v1"]
    assert commands == ["resolve-run", "matrix", "verdict", "publish"]
    assert steps[-2]["with"]["matrix"] == "${{ steps.legs.outputs.matrix }}"
    verdict, publish = steps[-2], steps[-1]
    assert verdict["with"]["base-ref"] == "${{ steps.resolve.outputs.base }}"
    assert verdict["with"]["manifest"] == "${{ steps.resolve.outputs.resolved-manifest }}"
    assert "verdict-path" not in publish["with"]  # what verdict wrote, never a download
    assert publish["with"]["head-sha"] == "${{ github.event.workflow_run.head_sha }}"
    assert not (WORKFLOWS / "entropy-gate-fork.yml").exists()


def test_the_hosts_workflow_posts_nothing() -> None:
    steps = _steps(_load(WORKFLOWS / "entropy-gate-hosts.yml"))
    commands = [s["with"]["command"] for s in steps if s.get("uses") == f"{OWN_ACTION}@v1"]
    # leg 1's run (planning its own share), the legs read from the manifest, a later leg's run
    # (the project's install inside each run)
    assert commands == ["run", "matrix", "run"]


def test_the_leg_1_jobs_start_beside_the_check_and_plan_their_own_share() -> None:
    """Two stages on the critical path for a one-leg plan: the leg-1 host jobs need no job,
    plan their share from the head manifest (plan-leg, the check's legs-per-host), and the
    verdict waits for every host job and takes the check's matrix."""
    for workflow, more_needs in (("entropy-gate.yml", "check"), ("entropy-gate-hosts.yml", "legs")):
        jobs = _load(WORKFLOWS / workflow)["jobs"]
        hosts, more = jobs["hosts"], jobs["hosts-more"]
        assert "needs" not in hosts
        assert hosts["strategy"]["matrix"] == {"host": ["a", "b"], "leg": ["1"]}
        (run,) = [s for s in hosts["steps"] if s.get("uses") == f"{OWN_ACTION}@v1"]
        assert run["with"]["plan-leg"] is True
        assert run["with"]["legs-per-host"] == "${{ inputs.legs-per-host }}"
        assert "properties" not in run["with"]
        assert more["needs"] == more_needs
        assert "matrix-more" in str(jobs[more_needs]) or "more" in str(jobs[more_needs])
    verdict = _load(WORKFLOWS / "entropy-gate.yml")["jobs"]["verdict"]
    assert verdict["needs"] == ["check", "hosts", "hosts-more"]
    assert verdict["if"] == "always()"


@pytest.mark.parametrize(
    ("template", "events", "called"),
    [
        ("entropy-gate-required.yml", {"pull_request", "merge_group"}, "entropy-gate.yml"),
        ("entropy-gate-split-hosts.yml", {"pull_request"}, "entropy-gate-hosts.yml"),
        ("entropy-gate-split-trusted.yml", {"workflow_run"}, "entropy-gate-trusted.yml"),
        (
            "entropy-gate-accept.yml",
            {"check_run", "pull_request_target"},
            "entropy-gate-accept.yml",
        ),
    ],
)
def test_each_template_calls_its_workflow_on_its_events(
    template: str, events: set[str], called: str
) -> None:
    doc = _load(TEMPLATES / template)
    assert set(doc.get("on") or doc[True]) == events
    assert doc["name"]
    assert (TEMPLATES / template).read_text(encoding="utf-8").startswith("# ")
    (job,) = doc["jobs"].values()
    assert job["uses"] == f"{OWN_ACTION}/.github/workflows/{called}@v1"


def test_the_accept_workflow_checks_nothing_out_and_runs_only_on_its_two_events() -> None:
    """The override runs from the default branch (check_run, pull_request_target) with a
    token that writes checks: no checkout, no step but the gate's own `accept`."""
    doc = _load(WORKFLOWS / "entropy-gate-accept.yml")
    (job,) = doc["jobs"].values()
    assert "github.event_name == 'check_run'" in job["if"]
    assert "github.event_name == 'pull_request_target'" in job["if"]
    assert "github.event.label.name == inputs.label" in job["if"]
    assert job["permissions"] == {"checks": "write", "pull-requests": "read"}
    (step,) = job["steps"]
    assert step["uses"] == f"{OWN_ACTION}@v1"
    assert step["with"]["command"] == "accept"
    template = _load(TEMPLATES / "entropy-gate-accept.yml")
    triggers = template.get("on") or template[True]
    assert triggers == {
        "check_run": {"types": ["requested_action"]},
        "pull_request_target": {"types": ["labeled"]},
    }
    assert "actions/checkout" not in (TEMPLATES / "entropy-gate-accept.yml").read_text("utf-8")


def test_the_split_templates_name_each_other() -> None:
    hosts = _load(TEMPLATES / "entropy-gate-split-hosts.yml")
    trusted = _load(TEMPLATES / "entropy-gate-split-trusted.yml")
    trigger = (trusted.get("on") or trusted[True])["workflow_run"]
    assert trigger == {"workflows": [hosts["name"]], "types": ["completed"]}
    (job,) = trusted["jobs"].values()
    assert job["with"]["caller-workflow"] == ".github/workflows/entropy-gate-split-hosts.yml"


def test_the_action_defaults_to_the_pull_requests_or_the_merge_groups_commits() -> None:
    inputs = _load(ACTION)["inputs"]
    assert inputs["base-ref"]["default"] == (
        "${{ github.event.pull_request.base.sha || github.event.merge_group.base_sha }}"
    )
    assert inputs["head-sha"]["default"] == (
        "${{ github.event.pull_request.head.sha || github.event.merge_group.head_sha }}"
    )


def _names(text: str) -> set[str]:
    found = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, flags=re.MULTILINE)
    return {re.sub(r"[-_.]+", "-", name).lower() for name in found}


def test_the_lock_pins_every_runtime_dependency_and_the_backend_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = {
        re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!;\[~]", dep, maxsplit=1)[0]).lower()
        for dep in project["project"]["dependencies"]
    }
    for lock in ("action.lock", "host-b.lock", "uv.lock"):
        text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
        entries = re.findall(
            r"^\S+==\S+(?: ;[^\\]*)? \\\n((?:\s+--hash=sha256:[0-9a-f]{64}.*\n)+)", text, re.M
        )
        assert len(entries) == len(re.findall(r"^\S+==", text, re.M)), (
            f"{lock}: a pin without hashes"
        )
    action = _names((ROOT / "requirements" / "action.lock").read_text(encoding="utf-8"))
    assert wanted | {"setuptools"} <= action
    assert _names((ROOT / "requirements" / "host-b.lock").read_text(encoding="utf-8")) == {
        "time-machine"
    }
