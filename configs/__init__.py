"""The GPU configurations shipped with gpusim, one TOML file per GPU.

``h100.toml`` (the default), ``a100.toml``, ``v100.toml``, ``rtx3090.toml`` and
``a5000.toml``. Load them with ``gpusim.config.load("h100")``; list them with
``gpusim.config.available()``. Every number carries a comment with its source
key from ``shared/reference/hardware-facts.md`` (§0 resolves the keys to URLs);
numbers marked ``ASSUMED`` have no source and are model choices.

This package holds data only: no code, no imports. The schema (field names,
units, bounds) is :mod:`gpusim.config.models`. To make your own GPU, copy a file,
edit it and pass its path wherever a configuration name is accepted
(``gpusim occupancy --gpu ./my_gpu.toml``).
"""
