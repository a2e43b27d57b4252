"""The pin check: the baseline manifest against the patch's manifest, as a typed diff."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from entropy_action.manifest.pinfile import LoadedManifest

ChangeKind = Literal["missing", "changed", "added", "weakened", "invalid"]


class PinChange(BaseModel):
    """One difference between the baseline manifest and the head manifest."""

    model_config = ConfigDict(frozen=True)

    kind: ChangeKind
    key: str  # dotted: pins.rng_seed, pins.env.API_URL, constraints.require_host_b, module
    old: Any = None
    new: Any = None
    path: str  # the manifest file, repository-relative
    line: int  # where a reviewer reads it in the head manifest
    message: str
    rejects: bool  # False for additions and for drops the baseline allows


class PinDiff(BaseModel):
    """The result of the pin check; `compare`, `gate` and the check run reuse it."""

    model_config = ConfigDict(frozen=True)

    baseline: str  # where the baseline came from: "REF:PATH" or a file
    baseline_found: bool
    changes: list[PinChange] = []

    @property
    def intact(self) -> bool:
        return not any(change.rejects for change in self.changes)

    def of_kind(self, kind: ChangeKind) -> list[PinChange]:
        return [change for change in self.changes if change.kind == kind]

    def summary(self) -> dict[str, list[str]]:
        """`{missing, changed, added, weakened}` -> dotted keys, for the verdict."""
        kinds: tuple[ChangeKind, ...] = ("missing", "changed", "added", "weakened", "invalid")
        return {kind: [change.key for change in self.of_kind(kind)] for kind in kinds}


class _Changes:
    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[PinChange] = []

    def add(
        self,
        kind: ChangeKind,
        key: str,
        old: Any,
        new: Any,
        line: int,
        message: str,
        rejects: bool = True,
    ) -> None:
        self.items.append(
            PinChange(
                kind=kind,
                key=key,
                old=old,
                new=new,
                path=self.path,
                line=line,
                message=message,
                rejects=rejects,
            )
        )


_Add = Callable[..., None]


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def diff(
    base: LoadedManifest,
    head: LoadedManifest | None,
    path: str,
    baseline: str,
    problems: list[tuple[int, str]] | None = None,
) -> PinDiff:
    """Everything that changed from `base` to `head`; any change but an addition rejects.

    `problems` are what makes the head manifest invalid (duplicate keys, unknown keys):
    each is a change too. `head` is None when it could not be read at all.
    """
    changes = _Changes(path)
    add = changes.add
    for line, text in problems or []:
        add("invalid", "manifest", None, None, line, f"{text} (the patch broke the pin file)")
    if head is None:
        return PinDiff(baseline=baseline, baseline_found=True, changes=changes.items)
    old_m, new_m = base.manifest, head.manifest
    for field in ("version", "property_id", "module"):
        old, new = getattr(old_m, field), getattr(new_m, field)
        if old != new:
            add(
                "changed",
                field,
                old,
                new,
                head.line_of(field),
                f"{field} changed: {_show(old)} → {_show(new)} (the gate would judge another "
                "property)",
            )
    _diff_pins(base, head, add)
    _diff_constraints(base, head, add)
    _diff_off(base, head, add)
    _diff_budget(base, head, add)
    if old_m.run.pytest_args != new_m.run.pytest_args:
        add(
            "changed",
            "run.pytest_args",
            old_m.run.pytest_args,
            new_m.run.pytest_args,
            head.line_of("run", "pytest_args"),
            f"run.pytest_args changed: {_show(old_m.run.pytest_args)} → "
            f"{_show(new_m.run.pytest_args)}",
        )
    _diff_limits(base, head, add)
    return PinDiff(baseline=baseline, baseline_found=True, changes=changes.items)


def _diff_limits(base: LoadedManifest, head: LoadedManifest, add: _Add) -> None:
    """run.timeout_seconds and run.temp_root_max_mb: listed, never rejecting — a run that
    hits a limit is killed and the verdict is invalid, so no limit can turn red into green."""
    for name in ("timeout_seconds", "temp_root_max_mb"):
        old, new = getattr(base.manifest.run, name), getattr(head.manifest.run, name)
        if old != new:
            add(
                "changed",
                f"run.{name}",
                old,
                new,
                head.line_of("run", name),
                f"run.{name} changed: {_show(old)} → {_show(new)} (a run past it is invalid, "
                "never a pass)",
                rejects=False,
            )


def _pin_path(key: str) -> tuple[str, ...]:
    return ("pins", *key.split(".", 1))


def _diff_pins(base: LoadedManifest, head: LoadedManifest, add: _Add) -> None:
    old_pins, new_pins = base.manifest.pins.flat(), head.manifest.pins.flat()
    allow_drops = not base.manifest.constraints.forbid_dropped_pins
    for key, old in old_pins.items():
        base_line = base.line_of(*_pin_path(key))
        if key not in new_pins:
            note = " (allowed: forbid_dropped_pins is false at the base)" if allow_drops else ""
            add(
                "missing",
                f"pins.{key}",
                old,
                None,
                head.line_of(*_pin_path(key)),
                f"pin {key} removed (was {_show(old)} at line {base_line} of the baseline){note}",
                rejects=not allow_drops,
            )
        elif new_pins[key] != old:
            add(
                "changed",
                f"pins.{key}",
                old,
                new_pins[key],
                head.line_of(*_pin_path(key)),
                f"pin {key} changed: {_show(old)} → {_show(new_pins[key])}",
            )
    for key, new in new_pins.items():
        if key not in old_pins:
            add(
                "added",
                f"pins.{key}",
                None,
                new,
                head.line_of(*_pin_path(key)),
                f"pin {key} added: {_show(new)}",
                rejects=False,
            )


def _diff_constraints(base: LoadedManifest, head: LoadedManifest, add: _Add) -> None:
    old_c, new_c = base.manifest.constraints, head.manifest.constraints
    for key in ("forbid_skip_markers", "protected_paths"):
        _diff_entries(key, getattr(old_c, key), getattr(new_c, key), head, add)
    for flag in ("forbid_dropped_pins", "require_host_b", "strict_baseline", "forbid_live_entropy"):
        old, new = getattr(old_c, flag), getattr(new_c, flag)
        if old == new:
            continue
        where = head.line_of("constraints", flag)
        if old and not new:
            add(
                "weakened",
                f"constraints.{flag}",
                old,
                new,
                where,
                f"constraint weakened: {flag} turned from true to false",
            )
        else:
            add(
                "added",
                f"constraints.{flag}",
                old,
                new,
                where,
                f"constraint tightened: {flag} turned from false to true",
                rejects=False,
            )


def _diff_entries(
    key: str, old: list[str], new: list[str], head: LoadedManifest, add: _Add
) -> None:
    """A list constraint: an entry removed narrows it (weakened), one added tightens it."""
    line = head.line_of("constraints", key)
    for entry in old:
        if entry not in new:
            message = f"constraint weakened: {entry!r} removed from {key}"
            add("weakened", f"constraints.{key}", entry, None, line, message)
    for entry in new:
        if entry not in old:
            message = f"constraint tightened: {entry!r} added to {key}"
            add("added", f"constraints.{key}", None, entry, line, message, rejects=False)


def _diff_off(base: LoadedManifest, head: LoadedManifest, add: _Add) -> None:
    """constraints.host_b_off: a variation turned off at the head is a weakened constraint
    (host B would silently vary less); one turned back on tightens it; a reworded reason is
    no change."""
    old, new = base.manifest.constraints.host_b_off, head.manifest.constraints.host_b_off
    for name, reason in new.items():
        if name not in old:
            add(
                "weakened",
                f"constraints.host_b_off.{name}",
                None,
                reason,
                head.line_of("constraints", "host_b_off", name),
                f"constraint weakened: host B no longer varies {name} (host_b_off: "
                f"{_show(reason)})",
            )
    for name, reason in old.items():
        if name not in new:
            add(
                "added",
                f"constraints.host_b_off.{name}",
                reason,
                None,
                head.line_of("constraints", "host_b_off"),
                f"constraint tightened: host B varies {name} again (removed from host_b_off)",
                rejects=False,
            )


MUTATION_RANK = {"off": 0, "changed": 1, "all": 2}


def _diff_budget(base: LoadedManifest, head: LoadedManifest, add: _Add) -> None:
    """The mutation budget: a lower mode, fewer mutants or less time is a weakening."""
    old_c, new_c = base.manifest.constraints, head.manifest.constraints
    for key in ("mutation", "max_mutants", "time_budget_seconds"):
        old, new = getattr(old_c, key), getattr(new_c, key)
        if old == new:
            continue
        lower = _budget_rank(key, new) < _budget_rank(key, old)
        add(
            "weakened" if lower else "added",
            f"constraints.{key}",
            old,
            new,
            head.line_of("constraints", key),
            f"constraint {'weakened' if lower else 'tightened'}: {key} {_show(old)} → {_show(new)}",
            rejects=lower,
        )


def _budget_rank(key: str, value: Any) -> int:
    return MUTATION_RANK[value] if key == "mutation" else int(value)
