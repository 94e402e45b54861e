"""RFC 0012 compaction scenarios."""
