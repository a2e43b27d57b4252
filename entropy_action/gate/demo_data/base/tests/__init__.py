"""The invoice example's tests: a package, so `tests.support` is found here first."""
