"""`run:` in entropy.yaml: how the property module is run on both hosts, and what may not be.

Run options are pinned like the pins (any change against the base is a pin mutation), and
options that select, stop or reroute tests are refused outright: the gate runs the whole
property module, and a `-k` in the manifest would silence properties as surely as a skip.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

# `-p no:NAME` is allowed only for plugins that report or measure, never select or retry.
REPORTING_PLUGINS = frozenset(
    {
        "cov",
        "cacheprovider",
        "html",
        "sugar",
        "instafail",
        "benchmark",
        "pretty",
        "clarity",
        "rerunfailures",
        "flaky",
        "metadata",
        "json-report",
        "timer",
        "emoji",
        "codspeed",
    }
)
_SELECTING = (
    "-k",
    "-m",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--sw",
    "--stepwise",
    "--stepwise-skip",
    "--nf",
    "--new-first",
    "-x",
    "--exitfirst",
    "--maxfail",
    "--co",
    "--collect-only",
    "--junitxml",
    "--junit-xml",
    "--pyargs",
    "--trace-config",
)
_TAKES_VALUE = (
    "-o",
    "--override-ini",
    "-p",
    "-c",
    "--rootdir",
    "--confcutdir",
    "-W",
    "--pythonwarnings",
    "--basetemp",
    "--tb",
    "-r",
    "--import-mode",
    "--durations",
    "--log-level",
    "--cov",
    "--cov-report",
    "--cov-config",
)


def refused_pytest_arg(args: list[str]) -> str | None:
    """Why one of `args` may not stand in `run.pytest_args`, or None when all may."""
    index = 0
    while index < len(args):
        arg = args[index]
        option, has_value, value = arg.partition("=")
        if not arg.startswith("--") and arg.startswith("-") and len(arg) > 2:
            option, has_value, value = _cluster(arg)  # -kEXPR, -pno:cov, -ra, -vx
        if option in _SELECTING:
            return f"{arg!r} selects, stops or reroutes tests; the gate runs the whole module"
        if option in _TAKES_VALUE and not has_value:
            index += 1
            value = args[index] if index < len(args) else ""
        if option == "-p" and value.startswith("no:") and value[3:] not in REPORTING_PLUGINS:
            return f"'-p {value}' disables a plugin that can change which tests run"
        if not arg.startswith("-"):
            return f"{arg!r} is a test path or id; the gate runs the manifest's module only"
        index += 1
    return None


def _cluster(arg: str) -> tuple[str, str, str]:
    """A short-option cluster as (option, "=", value): the first letter that selects or takes
    a value decides (`-vx` is `-x`, `-vkEXPR` is `-k EXPR`, `-ra` is `-r a`); a cluster of
    plain flags (`-vv`, `-sq`) is its first letter."""
    for index in range(1, len(arg)):
        option = f"-{arg[index]}"
        if option in _SELECTING or option in _TAKES_VALUE or option not in _FLAGS:
            rest = arg[index + 1 :]
            return option, "=" if rest or index == 1 else "", rest
    return arg[:2], "=", arg[2:]


_FLAGS = frozenset({"-v", "-q", "-s", "-l"})  # short flags that take no value


class RunOptions(BaseModel):
    """How the property module is run, on both hosts. Pinned like the pins; the limits may
    change (a run past a limit makes the verdict invalid, never a pass)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    pytest_args: list[str] = Field(
        default_factory=list,
        description='Extra pytest arguments, e.g. ["-o", "addopts=", "-p", "no:cov"].',
    )

    timeout_seconds: int | SkipJsonSchema[None] = Field(
        None,
        gt=0,
        le=86400,
        description="Seconds a host run may take before its process group is killed and the "
        "verdict is invalid (default 1800; `--timeout` overrides it).",
    )
    temp_root_max_mb: int | SkipJsonSchema[None] = Field(
        None,
        gt=0,
        description="MB the pinned temp_root may hold before the run is killed and the verdict "
        "is invalid (default 4096).",
    )

    @field_validator("pytest_args")
    @classmethod
    def _no_selection(cls, value: list[str]) -> list[str]:
        why = refused_pytest_arg(value)
        if why:
            raise ValueError(why)
        return value
