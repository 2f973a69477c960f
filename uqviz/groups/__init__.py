"""Groups: how the uncertainties hold across subsets of the points.

``adversarial.py``: :func:`adversarial_validation` and :func:`adversarial_group_calibration`,
the calibration of random groups of decreasing size; ``coverage.py``: :func:`group_coverage`,
the coverage of the intervals across groups (coverage gap, worst-slab coverage, HSIC between
width and coverage) against calibrated data.
"""

from uqviz.groups.adversarial import adversarial_group_calibration, adversarial_validation
from uqviz.groups.coverage import group_coverage

__all__ = ["adversarial_group_calibration", "adversarial_validation", "group_coverage"]
