"""Profile-neutral scenarios: what every advertised memory seam owes (auth, the error envelope)."""
