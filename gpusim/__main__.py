"""``python -m gpusim``: the same as the ``gpusim`` script."""

import sys

from gpusim.cli import main

sys.exit(main())
