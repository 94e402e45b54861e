"""The RFC 0004 MemoryAdapter surface (the put and read routes) and RFC 0113's budgeted reads."""
