"""Conditional calibration: local statistics per bin, f_v, ACF, ordering study, running
statistics, reliability diagram."""

from uqviz.conditional.local import (
    acf,
    binned_errors,
    fraction_valid,
    local_calibration,
    local_interval_coverage,
)
from uqviz.conditional.ordering import ordering_study
from uqviz.conditional.reliability import reliability
from uqviz.conditional.running import running_statistics

__all__ = [
    "acf",
    "binned_errors",
    "fraction_valid",
    "local_calibration",
    "local_interval_coverage",
    "ordering_study",
    "reliability",
    "running_statistics",
]
