"""Harness-side oracles: independent checks of what a host returned (never shared with a host)."""
