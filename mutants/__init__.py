"""Defective variants of the reference host, for the suite's self-validation (mutation testing).

Each mutant names the requirements it breaks and the outcome the suite must give each; the project's
tests prove every mutant is caught that way and changes nothing else. Lives outside the host and
outside the wheel: the host knows no defect by name (`reference_host/parts.py` is the only seam).
"""
