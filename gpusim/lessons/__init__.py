"""The course notes' lessons as one-command demos (``gpusim lesson NAME``; issue #14).

One lesson per idea of the notes (divergence, bank conflicts, coalescing, occupancy, ILP,
the reduction sequence, tiled matmul): it runs the suite variants in timing mode at the sizes
the H100 was measured at (the validation's scale tier), prints a table beside the H100's
committed measurements with the counter that explains the difference, and writes one HTML
page with the pictures of :mod:`gpusim.viz`.

* :mod:`gpusim.lessons.specs` -- the table of lessons (data only);
* :mod:`gpusim.lessons.counters` -- the explaining counters, for both sides;
* :mod:`gpusim.lessons.h100` -- the shipped subset of the H100 measurements;
* :mod:`gpusim.lessons.runner` -- running a lesson, its table and its ordering check;
* :mod:`gpusim.lessons.page` -- the HTML page (jinja2) and the pictures.

Must not import: simpy, cupy (timing mode is reached through ``gpusim.Device``).
"""

from gpusim.lessons import page
from gpusim.lessons.runner import LessonResult, Row, run
from gpusim.lessons.specs import LESSONS, Lesson, Variant, get

__all__ = ["LESSONS", "Lesson", "Variant", "LessonResult", "Row", "get", "run", "page"]
