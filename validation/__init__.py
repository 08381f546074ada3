"""The validation layer: the same PTX on a real GPU (through CuPy) and in gpusim, side by side.

Owns (one module per concept):

* :mod:`validation.gpu` -- finding CuPy, a GPU and ``ncu``; provenance stamps
  (GPU name and clocks, driver, CUDA, CuPy, ncu, gpusim version and git commit);
* :mod:`validation.hardware` -- collecting the hardware side of the suite and
  sweeps (outputs, CUDA-event times, occupancy against the driver, Nsight
  Compute counters) into one raw JSON bundle, and reading such bundles back;
* :mod:`validation.experiment` -- the same for a user's PTX kernel described by an
  experiment TOML (``gpusim validate --experiment``);
* :mod:`validation.sweeps` -- which what-if sweeps the report draws, as
  (case, size, launch) points of the kernel suite;
* :mod:`validation.simulate` -- the simulator side of the same launches;
* :mod:`validation.score` -- Accel-Sim-style agreement scores (Pearson r,
  Spearman, MAE, NRMSE, share within 10 %, sweep ordering);
* :mod:`validation.report` -- joining both sides by Nsight metric name and
  writing the raw JSON and the self-contained HTML report;
* :mod:`validation.calibrate` -- CuPy micro-benchmarks that fit a config
  override file to the GPU they ran on;
* :mod:`validation.ncu` -- Nsight Compute's options, finding it and reading its
  CSV (standard library only: the probe scripts import it);
* :mod:`validation.probekit` -- what the probe scripts share: loading the suite and
  sibling probes by file path, the device's properties (standard library only);
* ``validation/probes/`` -- the standalone probe scripts whose output is
  committed under ``validation/reports/`` (``hardware`` reuses them);
* ``validation/compare_timing.py`` -- the earlier launch-by-launch table.

This is the only package of the repository that imports ``cupy``, and only
inside functions (lazily): importing ``validation`` or any of its modules
needs no GPU, so the report can be rebuilt from committed JSON anywhere.
Nothing outside ``validation`` imports it at module level either
(``gpusim/cli/validate.py`` and ``calibrate.py`` import it inside their
command functions).
"""
