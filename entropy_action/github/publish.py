"""Publishing a verdict: as a check run on the PR's head commit, or by the fallback.

The fallback (job summary plus workflow-command annotations) is used when the token cannot
write checks or the API keeps failing. Once the check run is written, the job summary gets
one line pointing at it: `entropy-gate verdict` already appended the full summary there.
`entropy-gate publish` (commands/publish.py) parses argv into PublishSettings with
`settings_from` and calls `publish`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from entropy_action import __version__
from entropy_action.core.errors import GateError
from entropy_action.evidence import inputs
from entropy_action.evidence.bounded import field_problem, read_capped, read_json_object
from entropy_action.github import api, sharing, workflow
from entropy_action.github.api import ApiSettings, PublishError, Secret
from entropy_action.render import checkrun, markdown
from entropy_action.render.checkrun import Annotation, CheckRunPlan, JudgedMerge
from entropy_action.verdict.classify import contradictions
from entropy_action.verdict.model import Verdict

MAX_VERDICT = 32 * 1024 * 1024  # bytes of a verdict file
MAX_EVENT = 64 * 1024 * 1024  # bytes of $GITHUB_EVENT_PATH
DEFAULT_API = "https://api.github.com"
FORK_HINT = (
    "To get the full check run on pull requests from forks, publish from a workflow "
    "triggered by workflow_run (the fork workflow in entropy-gate's docs/ci.md, 'Pull "
    "requests from forks'): it runs with a token that can write checks and never checks out "
    "PR code."
)
_LEVELS: dict[str, workflow.Severity] = {
    "failure": "error",
    "warning": "warning",
    "notice": "notice",
}


@dataclass(frozen=True)
class PublishSettings:
    """Everything `publish` needs, read once from argv and the environment."""

    verdict: Verdict
    head_sha: str
    check_name: str
    manifest_path: str | None
    api: ApiSettings | None  # None: no token, so straight to the fallback
    environ: Mapping[str, str] = field(default_factory=dict)  # for GITHUB_STEP_SUMMARY
    judged: JudgedMerge | None = None  # the merge the verdict judged (the event's, or given)
    read_api: ApiSettings | None = None  # reads the pull requests (sharing); default: api
    accept_action: bool = False  # a rejection offers "Accept after review" (github.acceptance)


def settings_from(args: argparse.Namespace, environ: Mapping[str, str]) -> PublishSettings:
    verdict = read_verdict(args.verdict)
    beside = args.verdict.parent
    folders = {"a": args.host_a or beside / "host-a", "b": args.host_b or beside / "host-b"}
    problem = refusal(verdict, folders)
    if problem:
        raise GateError(f"{args.verdict}: publish refuses it: {problem}")
    head = args.head_sha or head_sha(environ)
    return PublishSettings(
        verdict=verdict,
        head_sha=head,
        check_name=args.check_name,
        manifest_path=_manifest_path(args.manifest),
        api=api_settings(environ, args.token_env),
        environ=environ,
        judged=judged_merge(args, environ, head),
        read_api=api_settings(environ, args.read_token_env),
        accept_action=bool(getattr(args, "accept_action", False)),
    )


def api_settings(environ: Mapping[str, str], token_env: str) -> ApiSettings | None:
    """Where and with which token (the variable `token_env` names) to call the API; None
    without a token."""
    token = Secret(environ.get(token_env, ""))
    if not token:
        return None
    return ApiSettings(
        api_url=api_url(environ.get("GITHUB_API_URL") or DEFAULT_API),
        repository=repository(environ.get("GITHUB_REPOSITORY", "")),
        token=token,
    )


def judged_merge(
    args: argparse.Namespace, environ: Mapping[str, str], head: str
) -> JudgedMerge | None:
    """The merge the verdict judged: --pull-request, --base-branch and --base-sha (the
    trusted workflow passes resolve-run's), else the event's pull request or merge group."""
    event = _event(Path(environ["GITHUB_EVENT_PATH"])) if environ.get("GITHUB_EVENT_PATH") else {}
    found = _from_event(event, environ)
    number = args.pull_request if args.pull_request is not None else found.get("number")
    base_ref = args.base_branch or found.get("base_ref")
    base_sha = args.base_sha or found.get("base_sha")
    if not isinstance(base_ref, str) or not isinstance(base_sha, str) or not base_ref:
        return None
    return JudgedMerge(
        base_ref=base_ref.removeprefix("refs/heads/"),
        base_sha=base_sha,
        head_sha=head,
        pull_request=number if isinstance(number, int) else None,
        head_ref=str(found.get("head_ref") or ""),
        merge_commit=args.merge_commit or str(found.get("merge_commit") or ""),
    )


def _from_event(event: Mapping[str, object], environ: Mapping[str, str]) -> dict[str, object]:
    pr, group = event.get("pull_request"), event.get("merge_group")
    if isinstance(pr, dict):
        base, head = pr.get("base"), pr.get("head")
        return {
            "number": pr.get("number"),
            "base_ref": base.get("ref") if isinstance(base, dict) else None,
            "base_sha": base.get("sha") if isinstance(base, dict) else None,
            "head_ref": head.get("ref") if isinstance(head, dict) else None,
            "merge_commit": environ.get("GITHUB_SHA", ""),
        }
    if isinstance(group, dict):
        return {"base_ref": group.get("base_ref"), "base_sha": group.get("base_sha")}
    return {}


def read_verdict(path: Path) -> Verdict:
    """The verdict file, as data: size-capped and validated against the Verdict model."""
    loaded = read_json_object(path, MAX_VERDICT, "the verdict `compare --json` writes")
    try:
        verdict = Verdict.model_validate(loaded)
    except ValidationError as exc:
        raise GateError(f"{path}: not a verdict: {field_problem(exc)}") from None
    wrong = contradictions(verdict)
    if wrong:
        raise GateError(f"{path}: not a verdict the gate wrote: {'; '.join(wrong)}")
    return verdict


def refusal(verdict: Verdict, folders: Mapping[str, Path]) -> str | None:
    """Why `publish` refuses a verdict that read as one, or None: the verdict must be the
    gate's own, over the host folders beside it. `folders` maps a host's label to its
    report folder (hashed only when the verdict is otherwise intact)."""
    problem = provenance(verdict)
    if problem:
        return problem
    found = {label: inputs.report_digest(folder) for label, folder in folders.items()}
    return report_mismatch(verdict, found, {k: str(v) for k, v in folders.items()})


def provenance(verdict: Verdict) -> str | None:
    """Pure: what about the verdict alone says the gate did not write it as it stands."""
    named = verdict.inputs
    if not verdict.tests and not named:
        return "it carries no tests and no inputs (a hand-written verdict, not the gate's)"
    if verdict.inputs_sha256 != inputs.digest(named):
        return "its inputs_sha256 is not the digest of its inputs (edited after the gate)"
    missing = [f"reports_{label}" for label in ("a", "b") if f"reports_{label}" not in named]
    if missing:
        return (
            f"its inputs carry no {' or '.join(missing)} (the digest of the host reports): "
            f"re-run `verdict` or `gate` with entropy-gate {__version__}"
        )
    return None


def report_mismatch(
    verdict: Verdict, found: Mapping[str, str], where: Mapping[str, str]
) -> str | None:
    """Pure: the first host folder whose digest is not the one the verdict was judged from."""
    for label, digest in sorted(found.items()):
        recorded = verdict.inputs.get(f"reports_{label}")
        if recorded != digest:
            return (
                f"inputs.reports_{label} ({str(recorded)[:12]}) does not match host "
                f"{label.upper()}'s report folder {where[label]} ({digest[:12]}): the verdict "
                f"was not judged from these reports (pass --host-{label} DIR)"
            )
    return None


def head_sha(environ: Mapping[str, str]) -> str:
    """The pull request's head (or a merge group's, or a workflow_run's), else GITHUB_SHA."""
    event_path = environ.get("GITHUB_EVENT_PATH")
    if event_path:
        event = _event(Path(event_path))
        for outer, inner in (
            ("pull_request", "head"),
            ("merge_group", None),
            ("workflow_run", None),
        ):
            node = event.get(outer)
            node = node.get(inner) if isinstance(node, dict) and inner else node
            sha = node.get("sha" if inner else "head_sha") if isinstance(node, dict) else None
            if isinstance(sha, str) and sha:
                return sha
    sha = environ.get("GITHUB_SHA", "")
    if not sha:
        raise GateError(
            "publish: no head commit: GITHUB_EVENT_PATH has no pull_request.head.sha and "
            "GITHUB_SHA is unset (pass --head-sha)"
        )
    return sha


def _event(path: Path) -> dict[str, object]:
    try:
        loaded = json.loads(read_capped(path, MAX_EVENT).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise GateError(f"{path}: the event file (GITHUB_EVENT_PATH) is not JSON") from None
    return loaded if isinstance(loaded, dict) else {}


def api_url(url: str, command: str = "publish") -> str:
    """GITHUB_API_URL, checked: http(s) with a host, no trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise GateError(f"{command}: GITHUB_API_URL must be an http(s) URL, not {url[:100]!r}")
    return url.rstrip("/")


def repository(value: str, command: str = "publish") -> str:
    """GITHUB_REPOSITORY, checked: OWNER/NAME and nothing a URL path would read otherwise."""
    owner, _, name = value.partition("/")
    if not owner or not name or "/" in name or any(c in value for c in "?#% "):
        raise GateError(f"{command}: GITHUB_REPOSITORY must be OWNER/NAME, not {value!r}")
    return value


def _manifest_path(manifest: str) -> str | None:
    """Repository-relative POSIX, or None when it is absolute or leaves the repository."""
    posix = manifest.replace("\\", "/")
    if posix.startswith("/") or ".." in posix.split("/") or ":" in posix:
        return None
    return posix.removeprefix("./")


def publish(settings: PublishSettings) -> int:
    """Send the plan; on failure publish by the fallback. Exit 0 either way."""
    verdict = settings.verdict
    summary = markdown.render(verdict, limit=workflow.SUMMARY_CHARS)  # the fallback's
    withheld = _withheld(settings)
    plan = checkrun.plan(  # its own summary: a many-property one is fitted to GitHub's limit
        verdict,
        head_sha=settings.head_sha,
        check_name=settings.check_name,
        manifest_path=settings.manifest_path,
        judged=settings.judged,
        withheld=withheld,
        accept_action=settings.accept_action,
    )
    if settings.api is None:
        return _fallback(plan, summary, settings, "no token (set GITHUB_TOKEN or --token-env)")
    try:
        sent = api.send(plan, settings.api)
    except PublishError as exc:
        why = _scrub(exc.message, settings.api.token)
        if exc.created is not None:
            why += f" (check run {exc.created} was created; its later annotations are missing)"
        return _fallback(plan, summary, settings, why)
    where = f": {sent.html_url}" if sent.html_url else ""
    print(
        f"entropy-gate: check run {settings.check_name!r} ({plan.conclusion}) published on "
        f"{settings.head_sha[:12]} with {sent.annotations} annotation(s) in "
        f"{sent.requests} request(s){where}"
    )
    workflow.append_summary(
        pointer(settings.check_name, plan.conclusion, sent.html_url), settings.environ
    )
    if withheld is not None:
        print(f"entropy-gate: the merge candidate is not a success on this commit: {withheld}")
        return 1
    return 0


def _withheld(settings: PublishSettings) -> str | None:
    """Why a merge candidate is not posted as a success (github.sharing), or None."""
    reader = settings.read_api or settings.api
    if settings.verdict.classification != "merge_candidate" or settings.judged is None:
        return None
    if reader is None:
        return None  # no token at all: the fallback writes no check run
    return sharing.withheld(reader, settings.judged)


_URL = re.compile(r"https://[^\s<>`]+")


def pointer(check_name: str, conclusion: str, html_url: str) -> str:
    """The job summary's one line once the check run carries the verdict."""
    where = f": <{html_url}>" if _URL.fullmatch(html_url) else ""
    return (
        f"entropy-gate: the verdict is in the check run {markdown.code(check_name)} "
        f"({markdown.text(conclusion)}){where}\n"
    )


def _fallback(plan: CheckRunPlan, summary: str, settings: PublishSettings, why: str) -> int:
    print(
        f"entropy-gate: cannot write the check run ({why}); publishing the verdict to the "
        "job summary and as annotations instead",
        file=sys.stderr,
    )
    for annotation in plan.annotations:
        print(_command(annotation))
    print(workflow.annotation("notice", FORK_HINT, title="entropy-gate: no check run"))
    note = f"\n> **No check run was written** ({markdown.text(why)}). {FORK_HINT}\n"
    if not workflow.append_summary(summary + note, settings.environ):
        print("entropy-gate: GITHUB_STEP_SUMMARY is unset; the summary follows", file=sys.stderr)
        print(summary)
    return 0


def _command(annotation: Annotation) -> str:
    return workflow.annotation(
        _LEVELS[annotation.level],
        annotation.message,
        file=annotation.path,
        line=annotation.line,
        title=annotation.title,
    )


def _scrub(message: str, token: Secret) -> str:
    secret = token.reveal()
    return message.replace(secret, "***") if secret else message
