import sys

from jaxtour.cli import main

sys.exit(main())
