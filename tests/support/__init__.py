"""Shared test support: the GitHub API stand-in, the e2e kit, helpers, samples."""
