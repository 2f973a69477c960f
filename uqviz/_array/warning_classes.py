"""The warning classes of uqviz: one class per kind of finding, all subclasses of UserWarning.

A leaf module (it imports nothing of uqviz), so that the kernels can use the classes too;
``uqviz.engine.warning_classes`` re-exports them and ``uqviz`` exports them at top level.
docs/conventions.md, "Warnings", says which class means what. Every ``warnings.warn`` of
uqviz names one of these classes (``tests/engine/test_warnings.py`` reads the source to check it),
so that users, the CLI and the report filter warnings by class, never by message text.

A uqviz warning is shown as its class and message only (``UnreliableWarning: ...``), without
the file, line and source line of the code that raised it: those name a place inside uqviz (a
machine path and a line number inside ``uqviz/reference/simulated.py``), which tells the reader of
a notebook or a log nothing (:func:`format_warning`, installed when this module is imported;
other warnings keep Python's format).

Examples
--------
>>> import warnings
>>> issubclass(BinningWarning, UqvizWarning) and issubclass(UqvizWarning, UserWarning)
True
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", BinningWarning)  # silence one kind only
...     warnings.warn("3 of 20 bins have fewer than 100 points", BinningWarning)
"""

from __future__ import annotations

import warnings

__all__ = [
    "UqvizWarning",
    "UnreliableWarning",
    "BinningWarning",
    "DataWarning",
    "NumericalWarning",
    "NumbaMissingWarning",
    "format_warning",
]


class UqvizWarning(UserWarning):
    """Base class of every warning issued by uqviz.

    ``warnings.simplefilter("ignore", uqviz.UqvizWarning)`` silences uqviz and nothing else;
    ``"error"`` turns its findings into exceptions (as the tests of a strict pipeline may).

    Examples
    --------
    >>> import uqviz, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", uqviz.UqvizWarning)
    ...     res = uqviz.validate_average(uqviz.synthetic.nig(300, nu=3, rng=0), n_boot=200,
    ...                                  rng=0)
    """


class UnreliableWarning(UqvizWarning):
    """A verdict that cannot be trusted, or that could not be reached.

    Issued when a screen questions a test (heavy tails: the tailedness screen of
    Pernot (2024b), Table II, a heavy-tailed bin; an unstable BCa limit, ``|z0| > 1``), and
    when an interval, a reference or a p-value cannot be computed (a degenerate bootstrap
    distribution, non-finite simulated values, a statistic without a predefined reference):
    the verdict is then "unreliable" or "not tested" (docs/conventions.md, "Verdicts"), and
    ``valid`` is False, never NaN. The result records the same finding (``reliable``,
    ``heavy_tail``, NaN ``ci_lower``/``ci_upper``), so the warning may be silenced where the
    result is read.

    Examples
    --------
    >>> import uqviz, pytest
    >>> heavy = uqviz.synthetic.nig(2000, nu=3, rng=0)  # uE^2 heavy-tailed: RCE is screened
    >>> with pytest.warns(uqviz.UnreliableWarning, match="tailedness screen"):
    ...     res = uqviz.validate_average(heavy, statistics=("RCE",), n_boot=200, rng=0)
    >>> bool(res["reliable"].item())
    False
    """


class BinningWarning(UqvizWarning):
    """The bins, as cut, weaken what is computed on them.

    Issued when equal-count bins split groups of tied values (``binning="stratified"`` bins
    by value), and when bins hold fewer than 100 points (Pernot (2023)): the intervals of a
    local statistic and the factors of a bin-wise variance scaling are then noisy. The remedy
    is a binning option: fewer bins (``n_bins``), another ``binning``, a larger ``min_count``.

    Examples
    --------
    >>> import numpy as np, pytest
    >>> from uqviz.engine.binning import compute_bins
    >>> with pytest.warns(BinningWarning, match="tied"):
    ...     bins = compute_bins(np.repeat([1.0, 2.0, 3.0], 10), n_bins=4)
    """


class DataWarning(UqvizWarning):
    """Input data were filtered or reinterpreted by a documented rule.

    Issued when rows are dropped (``drop_invalid=True``, ``min_uncertainty``), and when the
    predictions of a model cannot be represented exactly by E and uE (asymmetric intervals
    reduced to a half-width, crossing quantiles); the counts are also in ``attrs``
    (``n_dropped``, ``n_filtered``, ``n_asymmetric``, ``n_crossing``).

    Examples
    --------
    >>> import uqviz, pytest
    >>> with pytest.warns(uqviz.DataWarning, match="drop_invalid: dropped 1"):
    ...     ds = uqviz.from_arrays([0.1, float("nan"), 0.3], [1.0, 1.0, 1.0],
    ...                            drop_invalid=True)
    >>> ds.sizes["point"]
    2
    """


class NumericalWarning(UqvizWarning):
    """A value is not representable in float64 for these data (an overflow or underflow).

    Issued when a statistic in the units of the data (UCE, MSE, ...) overflows or
    underflows float64 on finite data of extreme magnitude; the estimate is returned as
    computed (``inf`` or 0). A scale-free statistic (ZMS, RCE, ENCE), or E and uE expressed
    in other units, avoid it.

    Examples
    --------
    >>> import numpy as np, uqviz, pytest
    >>> rng = np.random.default_rng(0)
    >>> u = 1e300 * np.exp(rng.standard_normal(400))
    >>> big = uqviz.from_arrays(u * rng.standard_normal(400), u)
    >>> with pytest.warns(uqviz.NumericalWarning, match="UCE overflows"):
    ...     res = uqviz.binned_errors(big, statistics=("UCE",), n_bins=4)
    """


class NumbaMissingWarning(UqvizWarning):
    """numba is not installed: uqviz runs its numpy kernels (same results, slower).

    Issued once, when uqviz is imported (docs/conventions.md, "Without numba").

    Examples
    --------
    >>> issubclass(NumbaMissingWarning, UqvizWarning)
    True
    """


def format_warning(message, category, filename, lineno, line=None):
    r""":func:`warnings.formatwarning` for uqviz's warnings: ``"<class>: <message>"``, without
    the location and source line of the ``warnings.warn`` call; any other warning is formatted
    by the function this one replaced.

    Examples
    --------
    >>> format_warning("3 of 20 bins have fewer than 100 points", BinningWarning,
    ...                "/somewhere/uqviz/engine/binning.py", 96)
    'BinningWarning: 3 of 20 bins have fewer than 100 points\n'
    >>> format_warning("x", UserWarning, "f.py", 1, "warn()")
    'f.py:1: UserWarning: x\n  warn()\n'
    """
    if isinstance(category, type) and issubclass(category, UqvizWarning):
        return f"{category.__name__}: {message}\n"
    return format_warning._previous(message, category, filename, lineno, line)


def _install_format():
    current = warnings.formatwarning
    if getattr(current, "__name__", "") == "format_warning" and hasattr(current, "_previous"):
        return  # installed already (a reloaded module)
    format_warning._previous = current
    warnings.formatwarning = format_warning


_install_format()
