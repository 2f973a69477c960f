"""Synthetic calibrated datasets: NIG/TIG models and the teaching example.

The public namespace ``uqviz.synthetic``; the implementation is :mod:`uqviz.data.synthetic`.

Examples
--------
>>> import uqviz.synthetic
>>> uqviz.synthetic.nig(100, rng=0).sizes["point"]
100
"""

import uqviz.data.synthetic as _impl
from uqviz.data.synthetic import (
    calibrated,
    default_example,
    draw_calibrated,
    nig,
    potential_committee,
    student_t_scaled,
    tig,
)

__all__ = list(_impl.__all__)  # exactly the implementation's public names
