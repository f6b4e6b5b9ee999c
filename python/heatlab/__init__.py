"""heatlab from Python: GPU heat diffusion with NumPy, CuPy, PyTorch and Numba.

A :class:`Simulation` steps the tutorial's plate (the notebook's jagged field), a heat problem
from a scenario file or the gallery, or a saved state, on the GPU (CUDA) when one works and on
the CPU otherwise, bit for bit alike. Its ``temperature`` is a NumPy array on the CPU and a
zero-copy :class:`DeviceArray` on the GPU, which CuPy, PyTorch and Numba read in place::

    import heatlab
    sim = heatlab.Simulation(2000, 2000)        # the notebook's plate
    sim.step(1000)                              # the GIL is released; Ctrl-C stops it
    t = sim.temperature                         # NumPy (CPU) or DeviceArray (CUDA)

    import cupy, torch
    a = cupy.asarray(sim.temperature)           # same GPU memory, no copy
    b = torch.from_dlpack(sim.temperature)      # same GPU memory, no copy
    sim.set_temperature(a * 0.5)                # copied on the GPU

Errors are ``ValueError`` (bad arguments or arrays), ``RuntimeError`` (the device failed),
``MemoryError``, ``OSError`` (files) and :class:`SimulationHalted` (a run that went
non-finite or below absolute zero).
"""

from ._heatlab import (
    DeviceArray,
    Simulation,
    SimulationHalted,
    __version__,
    generate_field,
)

__all__ = [
    "DeviceArray",
    "Simulation",
    "SimulationHalted",
    "__version__",
    "generate_field",
]
