"""`python -m rubriceval.cli …` runs the command line."""
import sys

from rubriceval.cli import main

sys.exit(main())
