"""The engine: statistics registry, bootstrap, binning, seeds, dispatch, argument checks.

Every analysis package builds on these modules; none of them knows about plots,
widgets or reports. Numerical kernels live in :mod:`uqviz._array`.
"""
