"""Discovery-document scenarios (capabilities schema, RFC 0073 root layout)."""
