"""The functional engine: WHAT a kernel computes, vectorised over many threads.

Modules: ``memory`` (global memory, address windows), ``regfile`` (registers
and typed operand access), ``engine`` (SIMT control, barriers, counters),
``memops`` (ld/st/atom), ``warpops`` (shfl/vote), ``launch`` (chunks, metrics).
Must never import simpy or cupy: the timing engine calls into this package,
never the other way round.
"""
