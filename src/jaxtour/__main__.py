"""`python -m jaxtour`: the `jaxtour` command."""

import sys

from jaxtour.cli import main

sys.exit(main())
