"""End to end under act: issue 34 — a success check run means the PR's merge was judged, by
code the PR never ran, in every mode (the templates of workflow-templates/, verbatim).

The repositories are built as GitHub holds them (tests/support/pr_world.py): a bare origin
with the branches and GitHub's refs (`refs/pull/N/head`, `refs/pull/N/merge`, the merge made
by git), and one working copy per act run, whose HEAD is what GitHub checks out: the merge
commit for a `pull_request` run (act copies the working tree instead of running
actions/checkout), the default branch for the trusted `workflow_run` run. Every copy's
`origin` URL is GitHub's, pointed at the bare origin with `url.<path>.insteadOf`, so the
trusted job's `git fetch origin refs/pull/N/merge` really fetches by ref. The GitHub API
stand-in answers the pull requests' reads and the base branch's blob shas from the origin.

Every repository has the files a PR can plant to run its code in a job that only reads it
(tests/support/planted.py: `venv.py` — the exploit of case 1, which makes the check run a
success when it runs while the gate's venv is built —, `pip/`, `sitecustomize.py`, `site.py`,
a `.pth`, ...) at its root and in the property's folder, on the default branch too (such a PR
merged). Each records where it ran: never in a job that judges or posts (check, legs,
verdict), never in the gate's own interpreter; in the host jobs, where the PR's code runs by
design, they do run (the control that shows they are live).

Runs (act, 1-4 min each here): the required workflow on a pull request into a branch that
holds the fix while another with the same head targets main (case 5); the split's hosts and
trusted side on an honest same-repo pull request behind its base (cases 6, 7), the trusted
side again while a second pull request with that head targets another branch (case 4), and
posting as a GitHub App (the job that holds its key), the split on an honest fork pull
request (case 6); and the README's workflow on a pull request
whose setup.py undoes its defect in the working tree (case 2).

What act cannot show, and how the code handles it: GitHub's own computation of
refs/pull/N/merge (built here with git's merge, which GitHub's equals for a clean merge; a
merge GitHub made again after the base moved is confirmed by git's merge-tree, see
tests/integration/test_trigger_binding.py); a fork's read-only token (the fork's hosts run
here with the sample's token, and post nothing either way); the ruleset itself; GitHub's
own App (the stand-in checks the JWT and answers an installation token, GitHub binds the
required check to the App that posts it); an environment secret (act passes `-s`); a runner
where a host job's PR code has root (act runs every job as this user).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import e2e_kit, planted, pr_world
from tests.support.e2e_kit import DEMO, OWNER_REPO, PYPROJECT, ActRun, ApiServer, Sample
from tests.support.github_reads import World

pytestmark = pytest.mark.e2e
TEMPLATES = e2e_kit.ROOT / "workflow-templates"
HOSTS = ".github/workflows/entropy-gate-split-hosts.yml"
JUDGING_JOBS = {"check", "legs", "verdict"}  # the jobs that judge, plan or post: no PR code
PROPERTY_FOLDER = "tests/properties"


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    e2e_kit.require_prerequisites()


@dataclass
class Kit:
    root: Path
    project: Path
    toolcache: Path
    wheels: Path
    markers: Path


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    root = tmp_path_factory.mktemp("e2e-trust")
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels)
    yield Kit(
        root, e2e_kit.project_copy(root / "entropy-gate"), toolcache, wheels, root / "markers"
    )
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


# --- the repositories -------------------------------------------------------------------------


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")


def _commit(repo: Path, message: str) -> str:
    pr_world.git(repo, "add", "-A")
    pr_world.git(repo, "commit", "-q", "-m", message)
    return pr_world.git(repo, "rev-parse", "HEAD")


def _invoice_repo(kit: Kit, github: Path, *, lib: str | None = None) -> str:
    """GitHub's side of the invoice example at the root (a template's defaults), with the
    templates and the planted files; its first commit on main (`lib`: invoice_lib.py's)."""
    shutil.copytree(DEMO / "base", github)
    manifest = github / "entropy.yaml"
    clock = str(int(time.time()) // 86_400 * 86_400)
    text = manifest.read_text(encoding="utf-8").replace("{clock_unix}", clock)
    manifest.write_text(text.replace("{temp_root}", str(kit.root / "pins-tmp")), "utf-8")
    _write(github, {"pyproject.toml": PYPROJECT, **({"invoice_lib.py": lib} if lib else {})})
    for template in sorted(TEMPLATES.glob("*.yml")):
        _write(github, {f".github/workflows/{template.name}": template.read_text("utf-8")})
    planted.plant(github, kit.markers, exploit=True)
    planted.plant(github / PROPERTY_FOLDER, kit.markers)
    pr_world.git(github, "init", "-q", "-b", "main")
    return _commit(github, "base: the invoice example under the gate")


def _copy(origin: Path, target: Path, checkout: str, *fetch: str) -> Path:
    """A working copy of `origin` as act sees GitHub's checkout: GitHub's origin URL (the jobs'
    git points it at the bare origin: `gitconfig`), `fetch` refspecs fetched, `checkout`
    checked out."""
    # --no-local: only what the origin's branches reach, as actions/checkout fetches (a local
    # clone would copy every object, the merges refs/pull/N/merge names included).
    pr_world.git(origin.parent, "clone", "-q", "--no-local", str(origin), str(target))
    if fetch:
        pr_world.git(target, "fetch", "-q", "origin", *fetch)
    pr_world.git(target, "remote", "set-url", "origin", f"https://github.com/{OWNER_REPO}.git")
    pr_world.git(target, "checkout", "-q", "--detach", checkout)
    return target


def _pull_event(path: Path, number: int, head: str, head_ref: str, base: str, base_ref: str,
                head_repo: str = OWNER_REPO) -> Path:  # fmt: skip
    side = {"ref": head_ref, "sha": head, "repo": {"full_name": head_repo}}
    payload = {
        "number": number,
        "pull_request": {
            "number": number, "head": side,
            "base": {"ref": base_ref, "sha": base, "repo": {"full_name": OWNER_REPO}},
        },
        "repository": {"full_name": OWNER_REPO},
    }  # fmt: skip
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


# --- one act run ------------------------------------------------------------------------------


@dataclass
class Done:
    run: ActRun
    requests: list[dict[str, Any]]
    folder: Path

    def posted(self) -> list[dict[str, Any]]:
        """The check runs created (an App's token request is a POST too)."""
        return [
            r["body"] for r in self.requests
            if r["method"] == "POST" and r["path"].endswith("/check-runs")
        ]  # fmt: skip

    def verdict(self, name: str = "verdict") -> dict[str, Any]:
        folders = sorted((self.folder / "artifacts" / "1").glob(f"entropy-gate-*-{name}"))
        with zipfile.ZipFile(next(folders[0].glob("*.zip"))) as archive:
            found: dict[str, Any] = json.loads(archive.read("verdict.json"))
        return found


def act(kit: Kit, name: str, copy: Path, workflow: str, event: str, event_file: Path, *,
        world: World, origin: Path, api_args: tuple[str, ...] = (),
        act_args: tuple[str, ...] = ()) -> Done:  # fmt: skip
    folder = kit.root / name
    folder.mkdir()
    config = pr_world.gitconfig(folder, origin, OWNER_REPO)
    jobs_git: tuple[str, ...] = ("--env", f"GIT_CONFIG_GLOBAL={config}", *act_args)
    api = ApiServer.start(folder, *api_args, world=world, git=origin)
    try:
        run = e2e_kit.run_act(
            Sample(copy, "", "", event_file, {}), workflow, folder, kit=e2e_kit.kit_dir(),
            project=kit.project, api=api, toolcache=kit.toolcache, wheels=kit.wheels,
            cache_server=kit.root / "cache-server", event=event, event_file=event_file,
            venv_cache=False, extra=jobs_git,
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act {name}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    return Done(run, api.requests(), folder)


def no_pr_code_in_the_judging_jobs(kit: Kit) -> None:
    """What ran of the planted files: in host jobs only (host B's test processes, their own
    and their attribution re-runs, have an environment scrubbed of GITHUB_JOB: they load the
    gate's plugin), never in the gate's own interpreter. The host jobs' records are the
    control that the files are live."""
    ran = planted.records(kit.markers)
    judged = [r for r in ran if r["job"] in JUDGING_JOBS]
    assert judged == [], judged
    gate = [r for r in ran if "entropy-gate-venv" in r["prefix"] + r["executable"]]
    assert gate == [], gate
    host_b = [r for r in ran if r["job"] == "" and "entropy_gate_plugin" in r["argv"]]
    assert {r["job"] for r in ran if r not in host_b} == {"hosts"}, ran


# --- case 5 (and case 1) in the ruleset's required workflow ----------------------------------


@dataclass
class Shared:
    """main has a defect; `fixed` holds the fix; H (a docs change off main) heads #7 into
    main and #8 into fixed."""

    origin: Path
    main: str
    fixed: str
    head: str
    merge_7: str  # GitHub's merge of H into main: the defect stands
    merge_8: str  # ... into fixed: honestly a merge candidate

    def world(self) -> World:
        return World([
            pr_world.pull_request(OWNER_REPO, 7, head=self.head, head_ref="docs",
                                  base=self.main, merge_commit=self.merge_7),
            pr_world.pull_request(OWNER_REPO, 8, head=self.head, head_ref="docs",
                                  base=self.fixed, base_ref="fixed", merge_commit=self.merge_8),
        ])  # fmt: skip


@pytest.fixture(scope="module")
def shared(kit: Kit) -> Shared:
    github = kit.root / "shared-github"
    off_by_one = (DEMO / "patches" / "off-by-one" / "invoice_lib.py").read_text("utf-8")
    main = _invoice_repo(kit, github, lib=off_by_one)
    pr_world.git(github, "checkout", "-q", "-b", "fixed")
    _write(github, {"invoice_lib.py": (DEMO / "base" / "invoice_lib.py").read_text("utf-8")})
    fixed = _commit(github, "the fix")
    pr_world.git(github, "checkout", "-q", "-b", "docs", main)
    _write(github, {"README.md": "# invoices\n\nTotals.\n"})
    head = _commit(github, "docs")
    merge_7, merge_8 = pr_world.merge(github, main, head), pr_world.merge(github, fixed, head)
    origin = pr_world.bare(github, kit.root / "shared-origin.git")
    pr_world.push(github, origin, {
        "refs/pull/7/head": head, "refs/pull/7/merge": merge_7,
        "refs/pull/8/head": head, "refs/pull/8/merge": merge_8,
    })  # fmt: skip
    return Shared(origin, main, fixed, head, merge_7, merge_8)


def _required(kit: Kit, shared: Shared, number: int, merge: str, base: str, base_ref: str) -> Done:
    name = f"shared-{number}"
    copy = _copy(shared.origin, kit.root / name, merge,
                 f"+refs/pull/{number}/merge:refs/pull/{number}/merge")  # fmt: skip
    event = _pull_event(kit.root / f"{name}.json", number, shared.head, "docs", base, base_ref)
    return act(kit, f"{name}-run", copy, "entropy-gate-required.yml", "pull_request", event,
               world=shared.world(), origin=shared.origin)  # fmt: skip


@pytest.fixture(scope="module")
def failing(kit: Kit, shared: Shared) -> Done:
    """Case 1: #7, H merged into main, fails on both hosts; the exploit venv.py is planted."""
    return _required(kit, shared, 7, shared.merge_7, shared.main, "main")


def test_a_planted_venv_py_does_not_make_a_failing_pull_request_a_success(
    kit: Kit, failing: Done
) -> None:
    """Before: the check job's `python -m venv` ran the PR's venv.py, which left a hook in
    the packed venv, and the verdict job's publish posted success on failing properties."""
    assert failing.verdict()["classification"] == "real_defect"
    assert [b["conclusion"] for b in failing.posted()] == ["failure"], failing.run.log[-6000:]
    no_pr_code_in_the_judging_jobs(kit)


@pytest.fixture(scope="module")
def shared_head(kit: Kit, shared: Shared) -> Done:
    """Case 5: the required workflow runs for #8 on GitHub's merge of H into fixed: honestly
    a merge candidate, and a success on H would pass #7 too."""
    return _required(kit, shared, 8, shared.merge_8, shared.fixed, "fixed")


def test_a_success_another_pull_request_with_the_same_head_would_share_is_withheld(
    shared_head: Done,
) -> None:
    assert shared_head.verdict()["classification"] == "merge_candidate"
    assert [(b["name"], b["conclusion"]) for b in shared_head.posted()] == [
        ("entropy-gate", "failure")
    ], shared_head.run.log[-6000:]
    (body,) = shared_head.posted()
    summary = body["output"]["summary"]
    assert "is also the head of pull request \\#7 into main" in summary.splitlines()[0]
    assert "**Judged:** pull request #8" in summary
    assert [r for r in shared_head.requests if r["violations"]] == []


def test_the_required_workflows_judging_jobs_run_none_of_the_prs_files(
    kit: Kit, shared_head: Done
) -> None:
    """Case 1: the exploit `venv.py` would have made the check run a success."""
    no_pr_code_in_the_judging_jobs(kit)


# --- cases 6, 7 and 4: the split on an honest same-repo pull request behind its base --------


@dataclass
class Split:
    github: Path
    origin: Path
    main: str  # main's tip, after the head forked: the pull request is behind its base
    honest: str
    merge: str
    fork_head: str
    fork_merge: str
    evil_merge: str
    defect: str  # #11's head: a defect
    defect_merge: str  # GitHub's merge of it into main: fails
    shaped: str  # a pushed branch's commit with parents [main, defect] and main's tree

    def world(self, *extra: dict[str, Any]) -> World:
        return World([
            pr_world.pull_request(OWNER_REPO, 7, head=self.honest, head_ref="honest",
                                  base=self.main, merge_commit=self.merge),
            pr_world.pull_request(OWNER_REPO, 10, head=self.fork_head, head_ref="patch-1",
                                  base=self.main, merge_commit=self.fork_merge,
                                  head_repo="forker/invoices"),
            pr_world.pull_request(OWNER_REPO, 11, head=self.defect, head_ref="defect",
                                  base=self.main, merge_commit=self.defect_merge),
            *extra,
        ])  # fmt: skip


@pytest.fixture(scope="module")
def split(kit: Kit) -> Split:
    github = kit.root / "split-github"
    first = _invoice_repo(kit, github)
    pr_world.git(github, "checkout", "-q", "-b", "honest")
    _write(github, {"invoice_lib.py": (DEMO / "patches" / "honest-fix" / "invoice_lib.py")
                    .read_text("utf-8")})  # fmt: skip
    honest = _commit(github, "honest fix")
    pr_world.git(github, "checkout", "-q", "--detach", first)
    _write(github, {"README.md": "# invoices\n\nFrom a fork.\n"})
    fork_head = _commit(github, "a fork's docs")  # on no branch: only refs/pull/10/head
    pr_world.git(github, "checkout", "-q", "-b", "evil", first)
    _write(github, {"EVIL.md": "a base whose hosts workflow uploads what it likes\n"})
    evil = _commit(github, "evil base")
    pr_world.git(github, "checkout", "-q", "-b", "defect", first)
    _write(github, {"invoice_lib.py": (DEMO / "patches" / "off-by-one" / "invoice_lib.py")
                    .read_text("utf-8")})  # fmt: skip
    defect = _commit(github, "a defect")
    pr_world.git(github, "checkout", "-q", "main")
    _write(github, {"CHANGES.md": "main moved on\n"})
    main = _commit(github, "main moves on")
    merge, fork_merge = (
        pr_world.merge(github, main, honest),
        pr_world.merge(github, main, fork_head),
    )
    evil_merge = pr_world.merge(github, evil, honest)
    defect_merge = pr_world.merge(github, main, defect)
    shaped = pr_world.commit_tree(github, main, main, defect, f"Merge {defect} into {main}")
    origin = pr_world.bare(github, kit.root / "split-origin.git")
    pr_world.push(github, origin, {
        "refs/pull/7/head": honest, "refs/pull/7/merge": merge,
        "refs/pull/9/head": honest, "refs/pull/9/merge": evil_merge,
        "refs/pull/10/head": fork_head, "refs/pull/10/merge": fork_merge,
        "refs/pull/11/head": defect, "refs/pull/11/merge": defect_merge,
        "refs/heads/looks-merged": shaped,  # anyone who can push a branch
    })  # fmt: skip
    return Split(github, origin, main, honest, merge, fork_head, fork_merge, evil_merge,
                 defect, defect_merge, shaped)  # fmt: skip


@dataclass(frozen=True)
class Caller:
    """The trusted side's caller workflow (default: the template), what act and the API
    stand-in get besides."""

    workflow: str = "entropy-gate-split-trusted.yml"
    text: str | None = None  # written into the default branch's working copy (act runs it)
    act_args: tuple[str, ...] = ()
    api_args: tuple[str, ...] = ()


def _trusted(kit: Kit, split: Split, name: str, hosts: Done, head: str, branch: str,
             head_repo: str = OWNER_REPO, *extra: dict[str, Any],
             caller: Caller = Caller()) -> Done:  # fmt: skip
    copy = _copy(split.origin, kit.root / f"{name}-copy", "main")
    pr_world.git(copy, "checkout", "-q", "main")
    if caller.text is not None:
        _write(copy, {f".github/workflows/{caller.workflow}": caller.text})
    event = kit.root / f"{name}.json"
    payload = pr_world.workflow_run(OWNER_REPO, head=head, head_branch=branch, path=HOSTS,
                                    head_repo=head_repo)  # fmt: skip
    event.write_text(json.dumps(payload), encoding="utf-8")
    return act(kit, name, copy, caller.workflow, "workflow_run", event,
               world=split.world(*extra), origin=split.origin,
               api_args=("--artifacts", str(hosts.folder / "artifacts"), *caller.api_args),
               act_args=caller.act_args)  # fmt: skip


@pytest.fixture(scope="module")
def honest_hosts(kit: Kit, split: Split) -> Done:
    copy = _copy(split.origin, kit.root / "honest-7", split.merge,
                 "+refs/pull/7/merge:refs/pull/7/merge")  # fmt: skip
    event = _pull_event(kit.root / "honest-7.json", 7, split.honest, "honest", split.main, "main")
    return act(kit, "honest-hosts", copy, "entropy-gate-split-hosts.yml", "pull_request",
               event, world=split.world(), origin=split.origin)  # fmt: skip


@pytest.fixture(scope="module")
def honest_trusted(kit: Kit, split: Split, honest_hosts: Done) -> Done:
    return _trusted(kit, split, "honest-trusted", honest_hosts, split.honest, "honest")


def test_the_split_posts_for_an_honest_pull_request_behind_its_base(
    split: Split, honest_hosts: Done, honest_trusted: Done
) -> None:
    """Cases 6 and 7: the hosts ran GitHub's merge; the trusted side fetched it by ref,
    judged it against the tip it was merged into (not the fork point) and posted on the head."""
    assert honest_hosts.run.code == 0, honest_hosts.run.log[-6000:]
    assert honest_hosts.posted() == []
    assert honest_trusted.run.code == 0, honest_trusted.run.log[-8000:]
    assert [(b["name"], b["head_sha"], b["conclusion"]) for b in honest_trusted.posted()] == [
        ("entropy-gate", split.honest, "success")
    ]
    (body,) = honest_trusted.posted()
    assert body["output"]["summary"].startswith(
        f"**Judged:** pull request #7, (`{split.honest[:12]}`) merged into `main` at "
        f"`{split.main[:12]}`, merge commit `{split.merge[:12]}`."
    )
    assert re.search(rf"the hosts ran {split.merge}, GitHub's merge of pull request #7",
                     honest_trusted.run.log)  # fmt: skip
    assert [r for r in honest_trusted.requests if r["violations"]] == []


def test_the_trusted_job_runs_none_of_the_files_the_default_branch_holds(
    kit: Kit, honest_trusted: Done
) -> None:
    """Case 1 in the job that holds the App's key: the planted files are on main too."""
    no_pr_code_in_the_judging_jobs(kit)


def test_a_second_pull_request_with_the_head_into_another_branch_withholds_the_success(
    kit: Kit, split: Split, honest_hosts: Done
) -> None:
    """Case 4: #9 has the same head into `evil`, whose copy of the hosts workflow could upload
    any folders under #7's merge: the check run on the head would speak for #9 too."""
    evil = pr_world.pull_request(OWNER_REPO, 9, head=split.honest, head_ref="honest",
                                 base=split.main, base_ref="evil",
                                 merge_commit=split.evil_merge)  # fmt: skip
    done = _trusted(kit, split, "evil-trusted", honest_hosts, split.honest, "honest",
                    OWNER_REPO, evil)  # fmt: skip
    conclusions = [b["conclusion"] for b in done.posted()]
    assert conclusions == ["failure"], done.run.log[-6000:]
    summary = done.posted()[0]["output"]["summary"]
    assert "is also the head of pull request \\#9 into evil" in summary.splitlines()[0]


def test_the_split_posts_for_an_honest_fork_pull_request(kit: Kit, split: Split) -> None:
    """Case 6, a fork: no pull_requests in the event, the head in no branch of the origin;
    the trusted side finds #10 through the API and fetches its merge by ref."""
    copy = _copy(split.origin, kit.root / "fork-10", split.fork_merge,
                 "+refs/pull/10/merge:refs/pull/10/merge")  # fmt: skip
    event = _pull_event(kit.root / "fork-10.json", 10, split.fork_head, "patch-1", split.main,
                        "main", head_repo="forker/invoices")  # fmt: skip
    hosts = act(kit, "fork-hosts", copy, "entropy-gate-split-hosts.yml", "pull_request", event,
                world=split.world(), origin=split.origin)  # fmt: skip
    assert hosts.run.code == 0, hosts.run.log[-6000:]
    done = _trusted(kit, split, "fork-trusted", hosts, split.fork_head, "patch-1",
                    "forker/invoices")  # fmt: skip
    assert done.run.code == 0, done.run.log[-8000:]
    assert [(b["head_sha"], b["conclusion"]) for b in done.posted()] == [
        (split.fork_head, "success")
    ]


def test_hosts_that_ran_a_pushed_commit_shaped_like_the_merge_get_no_check_run(
    kit: Kit, split: Split
) -> None:
    """Case 3: #11's head has a defect; a branch holds a commit with parents [main, head] and
    main's tree (no defect), and the hosts ran it (a forged run: GitHub's checkout is
    refs/pull/11/merge). Before: the trusted side took the shape for GitHub's merge (the
    branch is in its clone) and posted success on the head; now it binds refs/pull/11/merge,
    fetched by ref, and refuses."""
    copy = _copy(split.origin, kit.root / "shaped-11", split.shaped)
    event = _pull_event(kit.root / "shaped-11.json", 11, split.defect, "defect", split.main,
                        "main")  # fmt: skip
    hosts = act(kit, "shaped-hosts", copy, "entropy-gate-split-hosts.yml", "pull_request",
                event, world=split.world(), origin=split.origin)  # fmt: skip
    assert hosts.run.code == 0, hosts.run.log[-6000:]
    done = _trusted(kit, split, "shaped-trusted", hosts, split.defect, "defect")
    assert done.posted() == [], done.run.log[-6000:]
    assert done.run.code != 0
    assert (
        f"which is not GitHub's merge of pull request #11 (merge_commit_sha {split.defect_merge}"
        in done.run.log
    ), done.run.log[-6000:]


# --- case 1 in the split with a GitHub App: the job that holds the App's key ----------------

APP_ID = "123456"
APP_SECRET = "ENTROPY_GATE_APP_PRIVATE_KEY"


def _app_caller(public_key: Path, private_key: str) -> Caller:
    """The split's trusted template as docs/ci.md has it for an App: `app-id` and the secret
    `app-private-key`; the API stand-in knows the App (its public key, installed here)."""
    template = (TEMPLATES / "entropy-gate-split-trusted.yml").read_text("utf-8")
    last = "      caller-workflow: .github/workflows/entropy-gate-split-hosts.yml\n"
    assert template.endswith(last), "the template's last line moved: update this test"
    text = template + (
        f'      app-id: "{APP_ID}"\n'
        "    secrets:\n"
        f"      app-private-key: ${{{{ secrets.{APP_SECRET} }}}}\n"
    )
    return Caller(
        "entropy-gate-split-trusted-app.yml", text, ("-s", f"{APP_SECRET}={private_key}"),
        ("--app-id", APP_ID, "--app-public-key", str(public_key), "--app-installed", OWNER_REPO),
    )  # fmt: skip


def _key_pair() -> tuple[str, bytes]:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode("ascii")  # fmt: skip
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def test_the_split_with_a_github_app_posts_as_the_app_and_runs_no_file_of_the_pr(
    kit: Kit, split: Split, honest_hosts: Done
) -> None:
    """The job that holds the App's private key (the default branch holds the planted files,
    as a merged PR's would be): the check run is written with the App's installation token,
    the pull requests are read with the workflow's, and no planted file runs there."""
    private, public = _key_pair()
    (kit.root / "app-public.pem").write_bytes(public)
    done = _trusted(kit, split, "app-trusted", honest_hosts, split.honest, "honest",
                    caller=_app_caller(kit.root / "app-public.pem", private))  # fmt: skip
    assert done.run.code == 0, done.run.log[-8000:]
    created = [
        (r["body"]["head_sha"], r["body"]["conclusion"], r["credential"], r["status"])
        for r in done.requests if r["method"] == "POST" and r["path"].endswith("/check-runs")
    ]  # fmt: skip
    assert created == [(split.honest, "success", "app", 201)], done.run.log[-8000:]
    tokens = [r for r in done.requests if r["path"].endswith("/access_tokens")]
    assert [r["status"] for r in tokens] == [201]
    reads = {r["credential"] for r in done.requests if "/pulls" in r["path"]}
    assert reads == {"workflow"}
    assert [r for r in done.requests if r["violations"]] == []
    key_line = private.splitlines()[1]
    assert key_line not in done.run.log
    no_pr_code_in_the_judging_jobs(kit)


# --- case 2: a setup.py that undoes the defect in the working tree -----------------------------

SETUP_PY = '''\
"""Issue 34, case 2: at install, the defect is undone in the working tree only, and the gate's
own venv (when it is already there) gets a file of the PR's."""
import os
import pathlib

from setuptools import setup

pathlib.Path("greeter.py").write_text(
    "def greeting(name):\\n    return f\\"hello, {name.strip() or 'stranger'}\\"\\n"
)
venv = pathlib.Path(os.environ.get("RUNNER_TEMP", "/nonexistent")) / "entropy-gate-venv"
for site in venv.glob("lib/python*/site-packages"):
    (site / "zz_setup_py.pth").write_text("import os\\n")
setup()
'''


def test_a_setup_py_that_undoes_the_defect_in_the_working_tree_gets_no_success(kit: Kit) -> None:
    """The README's workflow (its default install runs setup.py). Before: both hosts passed on
    the rewritten tree, host.json named the head, and the check run said success."""
    from tests.e2e.test_e2e_readme import LIBRARY, readme_workflow  # noqa: PLC0415

    github = kit.root / "greeter-github"
    _write(github, {**LIBRARY, ".github/workflows/entropy-gate.yml": readme_workflow()})
    pr_world.git(github, "init", "-q", "-b", "main")
    base = _commit(github, "greeter under the gate")
    pr_world.git(github, "checkout", "-q", "-b", "fix")
    _write(
        github, {"greeter.py": 'def greeting(name):\n    return "hello"\n', "setup.py": SETUP_PY}
    )
    head = _commit(github, "simplify the greeting")
    origin = pr_world.bare(github, kit.root / "greeter-origin.git")
    copy = _copy(origin, kit.root / "greeter-7", head)
    pr_world.git(copy, "update-ref", "refs/remotes/origin/main", base)
    event = _pull_event(kit.root / "greeter-7.json", 7, head, "fix", base, "main")
    done = act(kit, "setup-py", copy, "entropy-gate.yml", "pull_request", event,
               world=e2e_kit.pulls_of(base, head), origin=origin)  # fmt: skip
    conclusions = [b["conclusion"] for b in done.posted()]
    assert "success" not in conclusions, done.run.log[-8000:]
    verdict = done.verdict()
    assert verdict["classification"] == "invalid", verdict["reasons"]
    reasons = json.dumps(verdict["reasons"])
    assert "did not run the commit it names" in reasons or "verify entropy-gate" in reasons
    findings = {(f["kind"], f["path"]) for f in verdict.get("findings", [])}
    assert ("report_tampering", "setup.py") in findings
    assert ("unit_replaced", "setup.py") in findings
