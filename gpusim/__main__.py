"""``python -m gpusim``: the same as the ``gpusim`` script."""

import sys

from gpusim.cli import main

if __name__ == "__main__":  # guarded: worker processes started by 'spawn' (Dask) import this module
    sys.exit(main())
