"""The live-entropy audit's mechanism on Python 3.10-3.11: each target replaced by a wrapper.

Copied into the test process as `entropy_gate_wrappers` beside the audit (hosts.testfiles),
standard library only. Each wrapper records its caller and calls the original, so calls to
anything else cost nothing (sys.setprofile sees every call: 1.4x on a 1,000-test module).
Module attributes are rebound; datetime's class methods are set in the type's own dict (read
through gc, then PyType_Modified); os.environ gets a subclass whose __getitem__ records.

A C extension that holds the clock functions by their C structs must get the builtins
themselves: time-machine's `_time_machine` reads `time.time`, `datetime.datetime.now`,
`date.today` and the rest when it is imported, casts each to a builtin function and, on every
`travel`, rewrites the C function pointer inside it. Handed a wrapper (a Python function, or a
bound method of one), it writes that pointer into the wrapper's globals dict or the function
object itself, and the next call through it dies with SIGSEGV. So while such a module imports
(HOLDERS, a meta path finder that goes first), the originals are back in place; afterwards the
wrappers sit above time-machine's patched builtins and still see every read, inside a travel
too. A holder imported before the audit loaded (host B's clock shift imports time-machine
first) already holds the builtins.

PYTEST_DONT_REWRITE: imported before pytest could rewrite it (it has no assert to rewrite).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.abc import Loader
from importlib.machinery import ModuleSpec
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import ModuleType
from typing import Any

# Modules that keep the clock functions' C structs and patch them (see above).
HOLDERS = frozenset({"_time_machine"})
_CLASS_METHODS = (
    (datetime.datetime, "now"),
    (datetime.datetime, "utcnow"),
    (datetime.date, "today"),
)
# What a mechanism cannot see (host.json `audit.unseen`): this one's, and both's.
FROZEN = "a read while freezegun's freeze_time is active (its fakes stand in for the functions)"
UNSEEN = (
    "a read through a reference taken before the audit loaded (a module imported before "
    "pytest's plugins)",
    FROZEN,
)


def _type_dict(owner: type) -> dict[str, Any]:
    """The type's own dict, writable (a mappingproxy's referent)."""
    found: dict[str, Any] = gc.get_referents(owner.__dict__)[0]
    return found


class Wrappers:
    """The wrappers of one audit, installed at construction; `aside()` takes them out."""

    name = "wrappers"
    unseen = UNSEEN

    def __init__(self, auditor: Any) -> None:
        self.auditor = auditor
        self._attrs: list[tuple[Any, str, Any, Any]] = []  # (module, attribute, real, wrapper)
        self._methods: list[tuple[type, str, Any, Any]] = []  # (owner, name, real, wrapper)
        for module, attribute, api in auditor.catalog.attrs:
            real = getattr(module, attribute)
            self._attrs.append((module, attribute, real, self._wrap(real, api)))
        for owner, name in _CLASS_METHODS:
            real = owner.__dict__[name]
            self._methods.append((owner, name, real, self._class_method(real, name)))
        self._install(wrapped=True)
        sys.meta_path.insert(0, StepAside(self))
        _audit_environ(auditor)

    def _wrap(self, real: Callable[..., Any], api: str) -> Callable[..., Any]:
        auditor = self.auditor

        @functools.wraps(real)
        def audited(*args: Any, **kwargs: Any) -> Any:
            if auditor.test is not None:
                auditor.record(api, None, _getframe(1), 0)
            return real(*args, **kwargs)

        return audited

    def _class_method(self, real: Any, name: str) -> classmethod[Any, Any, Any]:
        auditor = self.auditor

        def audited(cls: type, *args: Any, **kwargs: Any) -> Any:
            if auditor.test is not None:
                prefix = "datetime" if issubclass(cls, datetime.datetime) else "date"
                auditor.record(f"{prefix}.{name}()", None, _getframe(1), 0)
            return real.__get__(None, cls)(*args, **kwargs)

        audited.__name__ = audited.__qualname__ = name
        audited.__doc__ = real.__doc__
        return classmethod(audited)

    def _install(self, *, wrapped: bool) -> None:
        """The wrappers in place of the originals (or back); one another library rebound in
        the meantime stays its own."""
        for module, attribute, real, wrapper in self._attrs:
            old, new = (real, wrapper) if wrapped else (wrapper, real)
            if getattr(module, attribute, None) is old:
                setattr(module, attribute, new)
        for owner, name, real, wrapper in self._methods:
            old, new = (real, wrapper) if wrapped else (wrapper, real)
            namespace = _type_dict(owner)
            if namespace.get(name) is old:
                namespace[name] = new
                ctypes.pythonapi.PyType_Modified(ctypes.py_object(owner))

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The originals in place while the body runs (a holder importing)."""
        self._install(wrapped=False)
        try:
            yield
        finally:
            self._install(wrapped=True)


class StepAside:
    """A meta path finder, first on sys.meta_path: a holder's module is found by the finders
    after it and loaded with the wrappers aside; every other name costs one set lookup."""

    def __init__(self, wrappers: Wrappers) -> None:
        self.wrappers = wrappers
        self._finding = False  # another finder that asks every finder (host B's) asks us too

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in HOLDERS or self._finding:
            return None
        self._finding = True
        try:
            spec = self._found_elsewhere(name, path, target)
        finally:
            self._finding = False
        if spec is not None and spec.loader is not None:
            spec.loader = _AsideLoader(spec.loader, self.wrappers)
        return spec

    def _found_elsewhere(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None
    ) -> ModuleSpec | None:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = None if finder is self or find is None else find(name, path, target)
            if spec is not None:
                return spec  # type: ignore[no-any-return]
        return None


class _AsideLoader(Loader):
    """The holder's own loader, run with the wrappers aside; the module keeps its own loader."""

    def __init__(self, loader: Any, wrappers: Wrappers) -> None:
        self.loader, self.wrappers = loader, wrappers

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        with self.wrappers.aside():
            created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        spec = module.__spec__
        if spec is not None:
            spec.loader = self.loader
        module.__loader__ = self.loader
        with self.wrappers.aside():
            self.loader.exec_module(module)


def _audit_environ(auditor: Any) -> None:
    environ_class = type(os.environ)

    class AuditedEnviron(environ_class):  # type: ignore[misc, valid-type]
        def __getitem__(self, key: Any) -> Any:
            if auditor.test is not None:
                auditor.environ_read(key, _getframe(1))
            return super().__getitem__(key)

        def __iter__(self) -> Iterator[str]:
            if auditor.test is not None:
                auditor.environ_listed(_getframe(1))
            yield from super().__iter__()

    AuditedEnviron.__name__ = AuditedEnviron.__qualname__ = environ_class.__name__
    os.environ.__class__ = AuditedEnviron
