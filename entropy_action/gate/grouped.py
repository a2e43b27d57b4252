"""The local gate's host runs of a manifest that lists its properties: one pytest session per
group (hosts.sessions) on host A and on host B, as many at once as there are cores, each
property's report split into OUT/properties/ID/host-a and host-b; then each property's own
pipeline (local.py) goes on from those reports as if its hosts had run alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action.core import layout
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.evidence import hostreport
from entropy_action.hosts import hostjson, runsettings, sessions
from entropy_action.manifest import groups
from entropy_action.manifest.pinfile import LoadedManifest

HOSTS = ("a", "b")
BASE_JOB = "base run on host A"


@dataclass
class HostsRan:
    """One property's host runs, made in its group's sessions: what `local._run_hosts` would
    have gathered running them itself."""

    failures: dict[str, str] = field(default_factory=dict)  # "host A" -> why it is unusable
    notes: list[str] = field(default_factory=list)
    invalid: bool = False  # a host run was invalid (the base run is then not started)
    read: dict[str, hostreport.HostReport | None] = field(default_factory=dict)
    based: bool = False  # the base's module ran on host A beside them (`base_a` below)
    base_error: str | None = None  # why that base run could not run (None: it ran)


# a session's run settings: its properties, the host, the first property's host folder
Settings = Callable[[Sequence[LoadedManifest], str, Path], runsettings.RunSettings]
Execute = Callable[[Mapping[str, Callable[[], object]]], dict[str, str]]


def run_groups(
    views: Sequence[LoadedManifest],
    out: Path,
    settings: Settings,
    execute: Execute,
    base_a: Callable[[], Sequence[str | None]] | None = None,
) -> dict[str, HostsRan]:
    """Every group's sessions on both hosts (`execute` runs the jobs concurrently and returns
    the GateError of each that failed); each property's HostsRan by its id. `base_a`, when
    given, runs beside them: the base's module of every property on host A (baserun.run_many
    over `views`' checks, in their order), its error for each."""
    ran = {view.property_id: HostsRan() for view in views}
    jobs: dict[str, Callable[[], object]] = {}
    if base_a is not None:
        jobs[BASE_JOB] = lambda: _based(ran, views, base_a())
    for group in groups.groups(views):
        for members in sessions.sessions(group):
            for host in HOSTS:
                name = _job_name(members, host)
                jobs[name] = _job(members, host, out, settings, ran)
    failures = execute(jobs)
    if BASE_JOB in failures:
        for view in views:
            ran[view.property_id].based = True
            ran[view.property_id].base_error = failures[BASE_JOB]
    for group in groups.groups(views):
        for members in sessions.sessions(group):
            for host in HOSTS:
                why = failures.get(_job_name(members, host))
                if why is None:
                    continue
                for view in members:  # the session could not run: every property's failure
                    ran[view.property_id].failures[f"host {host.upper()}"] = why
    return ran


def _based(
    ran: dict[str, HostsRan], views: Sequence[LoadedManifest], errors: Sequence[str | None]
) -> None:
    for view, error in zip(views, errors, strict=True):
        ran[view.property_id].based = True
        ran[view.property_id].base_error = error


def _job_name(members: Sequence[LoadedManifest], host: str) -> str:
    return f"host {host.upper()} ({label(members)})"


def label(members: Sequence[LoadedManifest]) -> str:
    """A session as progress lines name it: its property, or its first and how many more."""
    ids = [view.property_id for view in members]
    return ids[0] if len(ids) == 1 else f"{ids[0]} and {len(ids) - 1} more"


def _job(
    members: tuple[LoadedManifest, ...],
    host: str,
    out: Path,
    settings: Settings,
    ran: dict[str, HostsRan],
) -> Callable[[], object]:
    folders = [host_folder(out, view.property_id, host) for view in members]

    def job() -> None:
        infos = sessions.run_session(settings(members, host, folders[0]), members, folders)
        for view, folder, info in zip(members, folders, infos, strict=True):
            _take(ran[view.property_id], info, folder)

    return job


def host_folder(out: Path, property_id: str, host: str) -> Path:
    """Where a property's host run lies in the local gate's folder."""
    return layout.property_folder(out, property_id) / f"host-{host}"


def _take(ran: HostsRan, info: HostInfo, folder: Path) -> None:
    """A property's host run, as local._run_host takes one: an unusable run makes the gate
    stop the rest (the judge says why, from host.json, as compare does), a usable one is
    read once."""
    host = f"host {info.host.upper()}"
    ran.notes.extend(f"{host}: {note}" for note in info.notes)
    code, _ = hostjson.outcome(info)
    if code == ExitCode.INVALID:
        ran.invalid = True
        return
    try:
        ran.read[info.host] = hostreport.read_host(folder)
    except GateError:  # unusable: the judge says why
        ran.read[info.host] = None
