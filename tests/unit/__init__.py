"""Fast tier: pure functions, parsers, models; no subprocess, no git (see conftest.py)."""
