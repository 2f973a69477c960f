"""The tail-allowing test of the average-calibration verdicts (issue 36).

Pernot (2024b) shows that the bootstrap interval of a mean square is too narrow when the
errors are heavy-tailed (its validation probability falls to 0.65 at nu_D = 2.1) and gives
safety limits of beta_GM above which the statistics "should be questioned" (Table II,
"indicative"). Heavy tails widen the zone of doubt around the reference; they do not make a
large departure meaningless. The test here allows for them: the statistic is compared with its
law on calibrated data whose z-scores have the heaviest Student-t shape the data's own
z-scores are consistent with (Pernot (2024b)'s TIG model of D; :func:`uqviz._array.tails.tail_df`),
rescaled to the reference (unit variance). It is exact when D is a Student-t and conservative
for lighter-tailed shapes of the same bulk (a Laplace D is fitted by a t of about 3 degrees of
freedom).

- ZMS and NLL (whose excess over its reference is half the ZMS's): log ZMS against the table of
  log ZMS of M unit-variance t z-scores;
- ZVar: log ZVar against its own table;
- RCE and RCE2: S = <E^2>/<uE^2> = <w Z^2> with w = uE^2/<uE^2> is a weighted mean of the
  Z^2: log S against the ZMS table at Kish's effective size (sum w)^2 / sum w^2 (exact for a
  constant uE, an approximation otherwise, measured by ``benchmarks/bench_verdicts.py``).

Statistics without a reference have no such test (NaN).
"""

from __future__ import annotations

import numpy as np

from uqviz._array import tails as tail_kernels

__all__ = ["TAIL_TESTED", "null_p_values", "tail_shape"]

#: the statistics with a Student-t null: statistic -> the table it reads
TAIL_TESTED = {"ZMS": "ZMS", "NLL": "ZMS", "ZVar": "ZVar", "RCE": "RCE", "RCE2": "RCE"}


def tail_shape(e, u):
    """``(estimate, lower)``: the t degrees of freedom of the z-scores E/uE and the heaviest
    consistent with them (one-sided 95 % likelihood-ratio bound; NaN if degenerate).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = np.exp(rng.normal(size=3000))
    >>> est, low = tail_shape(u * rng.standard_t(3, 3000), u)
    >>> bool(2.3 < low < 3.2)
    True
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.asarray(e, dtype=float) / np.asarray(u, dtype=float)
    return tail_kernels.tail_df(z)


def _log_statistic(name, e, u):
    """(log of the mean-square form of the statistic, the size its null is read at)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        z2 = (e / u) ** 2
        m = e.size
        if TAIL_TESTED[name] == "ZMS":
            return np.log(np.mean(z2)), m
        if TAIL_TESTED[name] == "ZVar":
            z = e / u
            return np.log(np.var(z, ddof=1)), m
        v = u * u
        return np.log(np.mean(e * e) / np.mean(v)), tail_kernels.effective_size(v)


def null_p_values(names, e, u, df):
    """Two-sided p-value of each statistic under the Student-t null of ``df`` degrees of freedom.

    Parameters
    ----------
    names : sequence of str
        Statistic names; those not in ``TAIL_TESTED`` get NaN.
    e, u : ndarray
        Errors and uncertainties.
    df : float
        Degrees of freedom of the null (inf: normal), usually the lower bound of
        :func:`tail_shape`.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> u = np.ones(5000)
    >>> e = 1.5 * rng.standard_t(3, 5000) / np.sqrt(3.0)   # uE 1.5 times too small
    >>> p = null_p_values(["ZMS", "MSE"], e, u, 3.0)
    >>> bool(p[0] < 0.01), bool(np.isnan(p[1]))
    (True, True)
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    out = np.full(len(names), np.nan)
    if np.isnan(df):
        return out
    for k, name in enumerate(names):
        if name not in TAIL_TESTED:
            continue
        x, m = _log_statistic(name, e, u)
        table = "ZVar" if TAIL_TESTED[name] == "ZVar" else "ZMS"
        out[k] = tail_kernels.null_p_value(x, m, df, table)
    return out
