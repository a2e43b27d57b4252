"""The hostile-input corpus (see README.md): builders and generators for test_hostile.py."""
