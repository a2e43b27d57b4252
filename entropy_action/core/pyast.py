"""The one `ast.parse` of the gate's process: parses from several threads take turns.

CPython 3.11 keeps the recursion depth of the C tree's conversion into `ast` objects in
interpreter-wide state. When a collection inside that
conversion lets another thread parse, the depth is corrupted and `ast.parse` raises
"SystemError: AST constructor recursion depth mismatch" — on a valid file. The gate parses from
threads at once (the mutation workers, the strength step beside the host run, the base run), so
every parse in its process goes through this lock. A parse takes milliseconds; the lock costs
nothing measurable (the GIL serialises the work anyway).
"""

from __future__ import annotations

import ast
import threading

_TURN = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time."""
    with _TURN:
        return ast.parse(source, filename=filename)
