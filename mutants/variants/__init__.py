"""Conforming variants: reference hosts shaped differently from the bundled one, each in a way the spec
(or the suite's documented host extensions) leaves to the host: other number spellings, shorter pages,
smaller advertised limits, other retention settings, other HTTP framing.

A mutant proves the suite catches a defect; a variant proves it does not mistake the reference host's
own choices for the standard. `tests/selfvalidation/test_variants.py` runs every scenario against each
variant and holds every requirement to the clean host's outcome, except the rows a variant declares
(a setting that turns a criterion off makes its row UNSUPPORTED). Like the mutants, this package is
never in a wheel and the host never imports it.
"""
