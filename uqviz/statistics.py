"""The registry of calibration statistics: name -> kernel, reference value, kind.

The public namespace ``uqviz.statistics``; the implementation is
:mod:`uqviz.engine.statistics` (one registry: a statistic registered here is known to every
analysis that accepts registered statistics of its kind, docs/architecture.md "A statistic").

Examples
--------
>>> from uqviz.statistics import get_statistic
>>> get_statistic("ZMS").reference
1.0
"""

from uqviz.engine.statistics import (
    DEFAULT_N_BINS,
    Statistic,
    excess_over_reference,
    get_statistic,
    list_statistics,
    point_estimate,
    reference_value,
    register_statistic,
    unregister_statistic,
)

__all__ = [
    "Statistic",
    "get_statistic",
    "list_statistics",
    "register_statistic",
    "unregister_statistic",
    "reference_value",
    "point_estimate",
    "excess_over_reference",
    "DEFAULT_N_BINS",
]
