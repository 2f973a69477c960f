"""Verdict words and the family-wise decision of several tests.

One set of words for the report, the CLI and the JSON (docs/conventions.md, "Verdicts"):

- ``"OK"``: the test does not reject (its reference lies inside its interval, after the
  multiplicity adjustment of the family it belongs to);
- ``"fails"``: the test rejects, and nothing questions it;
- ``"unreliable"``: the test cannot conclude. Either a screen says it cannot be trusted at
  all (an interval that cannot be computed, an unstable bootstrap): never "OK", never
  "fails"; or a tail screen failed (heavy tails, Pernot (2024b), Table II) and the departure
  lies in the zone of doubt the tails open: the test that allows for the tails (a widened
  interval, a null with the data's own z-shape) does not reject. Under a failed tail screen a
  departure larger than the tails can explain still "fails", and nothing reads "OK";
- ``"not tested"``: the test could not be run (a constant variable, too few points).

A report or a CI gate runs several tests on one dataset; each alone has a false-alarm rate
``alpha = 1 - ci``, so the chance that at least one of them cries wolf on calibrated data grows
with their number. :func:`holm` controls that family-wise rate at ``alpha`` (Holm 1979): the
smallest p-value is compared with ``alpha / m``, the next with ``alpha / (m - 1)``, and so on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OK", "FAILS", "UNRELIABLE", "NOT_TESTED", "VERDICTS", "holm", "decide", "overall"]

OK, FAILS, UNRELIABLE, NOT_TESTED = "OK", "fails", "unreliable", "not tested"
VERDICTS = (OK, FAILS, UNRELIABLE, NOT_TESTED)


def holm(p_values, alpha=0.05):
    """Holm's step-down adjustment: ``(rejected, adjusted)`` for a family of p-values.

    NaN p-values (tests not run) take no part and are never rejected.

    Parameters
    ----------
    p_values : array_like
    alpha : float, default 0.05
        Family-wise error rate.

    Returns
    -------
    rejected : ndarray of bool
    adjusted : ndarray of float
        Holm-adjusted p-values (``rejected == adjusted <= alpha``).

    Examples
    --------
    >>> rej, adj = holm([0.01, 0.04, 0.03, 0.5])
    >>> rej.tolist(), [round(float(a), 2) for a in adj]
    ([True, False, False, False], [0.04, 0.09, 0.09, 0.5])
    """
    p = np.asarray(p_values, dtype=float).ravel()
    adjusted = np.full(p.size, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        steps = p[order] * (m - np.arange(m))
        adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return np.nan_to_num(adjusted, nan=np.inf) <= alpha, adjusted


def decide(rejected, *, reliable=True, tested=True, heavy_tail=False) -> str:
    """The verdict word of one test.

    Parameters
    ----------
    rejected : bool
        The test rejects. Under ``heavy_tail`` it must be the tail-allowing test (the widened
        null of :func:`uqviz.average.tails.null_p_values`, a null simulated with the
        data's own z-shape), not the plain one.
    reliable : bool, default True
        False when the test cannot be trusted at all (no interval, an unstable bootstrap):
        "unreliable" whatever ``rejected``.
    tested : bool, default True
        False when the test could not be run: "not tested".
    heavy_tail : bool, default False
        A tail screen that questions the test failed (Pernot (2024b), Table II): "fails" when
        ``rejected``, else "unreliable" (the zone of doubt), never "OK".

    Examples
    --------
    >>> decide(False), decide(True), decide(True, reliable=False), decide(False, tested=False)
    ('OK', 'fails', 'unreliable', 'not tested')
    >>> decide(True, heavy_tail=True), decide(False, heavy_tail=True)
    ('fails', 'unreliable')
    """
    if not tested:
        return NOT_TESTED
    if not bool(reliable):
        return UNRELIABLE
    if bool(heavy_tail):
        return FAILS if bool(rejected) else UNRELIABLE
    return FAILS if bool(rejected) else OK


def overall(words) -> str:
    """The verdict of a family: "fails" if one fails, else "unreliable" if one is, else "OK"
    ("not tested" when none was tested).

    Examples
    --------
    >>> overall(["OK", "unreliable"]), overall(["OK", "fails", "unreliable"]), overall([])
    ('unreliable', 'fails', 'not tested')
    """
    words = [w for w in words if w != NOT_TESTED]
    if not words:
        return NOT_TESTED
    for w in (FAILS, UNRELIABLE):
        if w in words:
            return w
    return OK
