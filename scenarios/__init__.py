"""Conformance scenarios, grouped by profile. They talk to a host over HTTP only."""
