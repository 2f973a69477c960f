"""Groups: how the uncertainties hold across subsets of the points.

``coverage.py``: :func:`group_coverage`, the coverage of the intervals across groups (coverage
gap, worst-slab coverage, HSIC between width and coverage) against calibrated data.
"""

from uqviz.groups.coverage import group_coverage

__all__ = ["group_coverage"]
