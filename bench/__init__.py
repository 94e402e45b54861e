"""Benchmarks that report figures (`python -m bench`); they assert nothing about speed.

Two things are measured, because they are what a user waits for:

* `suite_wall_time`: how long the conformance suite takes against the embedded reference host,
  exactly as a user runs it (`openwop-memory-conformance run`);
* `compaction_throughput`: how the reference host's compaction engine scales with the number of
  live entries in one memoryRef, with the redaction harness measured on its own alongside.

The figures are printed as a table and written to `reports/bench.json`.
"""
