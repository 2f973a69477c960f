"""Numpy kernels (no xarray): core axis last, vectorised over leading axes."""
