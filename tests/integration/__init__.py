"""Integration tier: real pytest runs, real git, real subprocesses."""
