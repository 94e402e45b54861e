"""RFC 0062 distillation scenarios."""
