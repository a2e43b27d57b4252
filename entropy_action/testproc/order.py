"""Host B's test order: a seeded shuffle of the collected tests, or an exact order to replay.

Standard library only (pytest is imported inside `hooks()`, never when this module is): the
runner copies it as `entropy_gate_order.py` beside the plugin (protocol.COPIES), which
registers `hooks()` when plugin.json names `test_order_seed` or `order`.

The shuffle works in pytest-randomly's buckets: the modules, then the classes (and the
module's own functions, as one bucket) inside each module, then the tests inside each of
those. A bucket's members are ranked by a hash of the run's seed and their name without the
module's path, so adding a test moves no other: the base's module and the head's, run apart
(the base-on-head check, under another file name), put the tests they share in the same
order, and an order-dependent test the patch left alone passes or fails in both alike (a
shuffle per bucket reordered the whole module when the patch added one test: tzlocal
fa95c1d0a5da's unchanged `test_assert_tz_offset` then failed with the base's module only, and
read as a test the patch changed to pass). A bucket of two or more that the ranking left as
it was is reversed, so every bucket really differs from host A's collection order. A test's
own seed (plugin.test_seed, from its node id) does not depend on its position.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

_state: dict[str, Any] = {}  # "seed", "order", "collected", "ran"
MAX_LISTED = 10_000  # node ids per list in the report (report.json is read with a size cap)


def _rank(key: str, seed: int) -> bytes:
    """A member's place in its bucket: its name inside the module (`Class::test[case]`, or a
    module's path), hashed with the seed."""
    name = key.split("::", 1)[1] if "::" in key else key
    return hashlib.blake2b(f"{seed}:{name}".encode(), digest_size=8).digest()


def _shuffled(keys: list[str], seed: int) -> list[str]:
    """`keys` in a seeded order that differs from the given one whenever it can."""
    out = sorted(keys, key=lambda key: _rank(key, seed))
    if len(out) > 1 and out == keys:
        out.reverse()
    return out


def _grouped(ids: Sequence[str], key: Any) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for nodeid in ids:
        groups.setdefault(key(nodeid), []).append(nodeid)
    return groups


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _parent(nodeid: str) -> str:
    """The class path a test sits in ("" for a module's own functions)."""
    return "::".join(nodeid.split("::")[1:-1])


def shuffled(ids: Sequence[str], seed: int) -> list[str]:
    """The node ids in host B's order: modules, classes in a module, tests in a class."""
    modules = _grouped(ids, _module)
    out: list[str] = []
    for module in _shuffled(list(modules), seed):
        parents = _grouped(modules[module], _parent)
        for parent in _shuffled(list(parents), seed):
            out += _shuffled(parents[parent], seed)
    return out


def configure(seed: object, order: object) -> bool:
    """Take plugin.json's `test_order_seed` and `order`; whether the hooks are needed."""
    _state.clear()
    if isinstance(order, list) and all(isinstance(n, str) for n in order):
        _state["order"] = list(order)
    if isinstance(seed, int) and not isinstance(seed, bool):
        _state["seed"] = seed & 0xFFFFFFFF
    return bool(_state)


def seed() -> int | None:
    """The shuffle's seed in force (None: collection order, or an exact order given)."""
    return None if "order" in _state else _state.get("seed")


def reorder(config: Any, items: list[Any]) -> None:
    """Put `items` in host B's order in place (deselecting what an exact order leaves out)."""
    collected = [str(item.nodeid) for item in items]
    by_id = {str(item.nodeid): item for item in items}
    if "order" in _state:
        wanted = list(dict.fromkeys(n for n in _state["order"] if n in by_id))
        kept = set(wanted)
        dropped = [item for item in items if str(item.nodeid) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = [by_id[n] for n in wanted]
    elif "seed" in _state and len(by_id) == len(items):  # duplicate ids: leave them be
        items[:] = [by_id[n] for n in shuffled(collected, _state["seed"])]
    _state["collected"] = collected
    _state["ran"] = [str(item.nodeid) for item in items]


def report() -> dict[str, Any] | None:
    """report.json's `test_order`: the seed, the collection order and the order run in."""
    if "collected" not in _state:
        return None
    collected, ran = _state["collected"], _state["ran"]
    return {
        "seed": seed(),
        "collected": collected[:MAX_LISTED],
        "ran": ran[:MAX_LISTED],
        "truncated": max(len(collected), len(ran)) > MAX_LISTED,
    }


def hooks() -> object:
    """The plugin object the gate's plugin registers (trylast: it orders what others did)."""
    import pytest  # noqa: PLC0415

    class Hooks:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
            reorder(config, items)

    return Hooks()
