"""The hostile-input corpus (see README.md): builders and generators for tests/test_hostile.py."""
