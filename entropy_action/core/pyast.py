"""The one `ast.parse` of the gate's process: parses from several threads take turns.

CPython 3.11 keeps the recursion depth of the C tree's conversion into `ast` objects in
interpreter-wide state. When a collection inside that conversion lets another thread parse,
the depth is corrupted and `ast.parse` raises
"SystemError: AST constructor recursion depth mismatch" — on a valid file. The gate parses from
threads at once (the mutation workers, the strength step beside the host run, the base run), so
every parse in its process goes through this lock. A parse takes milliseconds; the lock costs
nothing measurable (the GIL serialises the work anyway). The same lock keeps the warnings
filter it swaps (a repository's `"\\d"` is a SyntaxWarning, not the gate's to print) from
being restored out of order by two threads, which would leave every warning silenced.
"""

from __future__ import annotations

import ast
import threading
import warnings

_TURN = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time, its warnings not shown."""
    with _TURN, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)
