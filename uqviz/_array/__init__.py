"""The kernels: numpy arrays in and out (no xarray), core axis last, vectorised over leading
axes; numba-compiled where numba is installed (``jit.py``), numpy forms otherwise."""
