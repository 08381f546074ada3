"""The generalization corpus of issue #28: CUDA C kernels of 14 families the suite lacks, written from
textbook descriptions, with GPU-filling launch cases, a fit/test split decided before any timing,
runners for the GPU (``on_gpu.py``, CuPy under Nsight Compute) and for gpusim (``simulate.py``), and
the scorer (``score.py``), joined by ``validate.py`` for ``gpusim validate --corpus``. See
docs/validation/corpus.md.

``cases`` and ``runner`` import numpy only; ``on_gpu`` imports cupy inside its functions,
``simulate`` and ``validate`` import gpusim.
"""
