"""`python -m mutants serve --fault NAME … [reference host options]` and `python -m mutants list`."""

from __future__ import annotations

import sys

from mutants.cli import main

if __name__ == "__main__":
    sys.exit(main())
