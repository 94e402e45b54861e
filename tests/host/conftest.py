"""Fixtures of the host's tests that more than one file uses (the rest are in tests/conftest.py)."""

from standalone_support import launch  # noqa: F401 (the standalone host process, a fixture)
