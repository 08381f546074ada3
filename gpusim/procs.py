"""Worker processes: what every process gpusim starts does first.

Owns :func:`die_with_parent`, used by a launch's workers (:mod:`gpusim.functional.parallel`) and
by a sweep's pool (:mod:`gpusim.sweep.runner`). Imports the standard library only.
"""

from __future__ import annotations

import os

__all__ = ["die_with_parent"]


def die_with_parent(parent: int) -> None:
    """In a worker process: ask Linux to kill it when the process that started it (pid ``parent``)
    dies, so that a launch or sweep killed with SIGKILL leaves no worker waiting forever
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``; elsewhere nothing is asked). Exits at once if the
    parent died before the request took effect."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return  # not Linux: nothing to ask for
    if os.getppid() != parent:
        os._exit(1)
