"""A uqviz dataset from a fitted regression model: :func:`from_estimator`.

The model's point predictions and standard uncertainties on ``X`` are computed here,
then :func:`uqviz.from_predictions` builds the dataset (same checks, same attributes).
scikit-learn, NGBoost and MAPIE are imported lazily: uqviz does not depend on them.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.data.model import DROP_HINT
from uqviz.data.predictions import SAMPLES_DDOF, from_predictions
from uqviz.engine import checks

__all__ = ["from_estimator"]

#: most rows per block of the member loop (bounds the temporaries; with threads, the rows are
#: split into at least four blocks per thread)
BLOCK_ROWS = 65_536

_SUPPORTED = (
    "a scikit-learn regressor whose predict takes return_std=True "
    "(GaussianProcessRegressor, BayesianRidge, ARDRegression), a bagging ensemble "
    "(RandomForestRegressor, ExtraTreesRegressor, BaggingRegressor), a Pipeline or "
    "TransformedTargetRegressor around one of them, an NGBoost regressor (pred_dist) "
    "or a MAPIE interval regressor (predict_interval)"
)


def _name(est) -> str:
    return type(est).__name__


def _n_threads(est) -> int:
    """The estimator's own ``n_jobs`` (as its predict uses), at most the number of CPUs."""
    n_jobs = getattr(est, "n_jobs", None)
    cpus = os.cpu_count() or 1
    if n_jobs is None or n_jobs == 0:
        return 1
    if n_jobs < 0:
        return max(1, cpus + 1 + int(n_jobs))
    return max(1, min(int(n_jobs), cpus))


def _validate_data(est, X, **kw):
    try:
        from sklearn.utils.validation import validate_data  # scikit-learn >= 1.6
    except ImportError:  # pragma: no cover - older scikit-learn
        return est._validate_data(
            X, reset=False, **{k: v for k, v in kw.items() if k != "ensure_all_finite"}
        )
    return validate_data(est, X, reset=False, **kw)


def member_moments(members, X, *, columns=None, tree_input=False, n_threads=1):
    """Mean and sd (``ddof=1``) over ensemble members of their predictions on ``X``.

    One pass per member over blocks of rows, with Welford's running mean and sum of
    squares (float64): memory O(rows), never O(rows x members). Blocks run on
    ``n_threads`` threads (tree prediction releases the GIL). An ensemble of fewer than two
    members has no spread: a ValueError.

    Parameters
    ----------
    members : sequence of fitted regressors
    X : array or sparse matrix, validated for the members
    columns : sequence of index arrays, optional
        The feature subset of each member (``BaggingRegressor.estimators_features_``).
    tree_input : bool
        The members are scikit-learn trees and ``X`` is already float32:
        ``predict(..., check_input=False)``, as the forests' own predict.
    n_threads : int

    Returns
    -------
    (mean, sd) : two float64 arrays of shape (rows,)
    """
    if len(members) < 2:
        raise ValueError(
            f"estimator: an ensemble of {len(members)} member(s) (n_estimators="
            f"{len(members)}) has no spread between its members' predictions to "
            "give uE; fit at least 2 (the sd of the members, ddof=1)"
        )
    n = X.shape[0]
    m = len(members)
    mean = np.zeros(n)
    m2 = np.zeros(n)
    kwargs = {"check_input": False} if tree_input else {}

    def run(start, stop):
        xb = X[start:stop]
        mu, s2 = mean[start:stop], m2[start:stop]  # views: updated in place
        delta, tmp = np.empty(stop - start), np.empty(stop - start)
        for k, est in enumerate(members, start=1):
            xk = xb if columns is None else xb[:, columns[k - 1]]
            p = np.asarray(est.predict(xk, **kwargs), dtype=np.float64)
            if p.ndim != 1:
                if p.ndim == 2 and p.shape[1] == 1:
                    p = p[:, 0]
                else:
                    raise ValueError(
                        f"estimator: member {k - 1} predicts shape {p.shape}; "
                        "multi-output models are not supported"
                    )
            # Welford: mu_k = mu + (p - mu) / k; s2 += (p - mu_(k-1)) (p - mu_k), in place
            np.subtract(p, mu, out=delta)
            np.multiply(delta, 1.0 / k, out=tmp)
            mu += tmp
            np.subtract(p, mu, out=tmp)
            tmp *= delta
            s2 += tmp

    size = BLOCK_ROWS if n_threads == 1 else min(BLOCK_ROWS, -(-n // (4 * n_threads)))
    size = max(size, 1)
    starts = list(range(0, n, size)) or [0]
    blocks = [(a, min(a + size, n)) for a in starts]
    if n_threads > 1 and len(blocks) > 1:
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            list(pool.map(lambda ab: run(*ab), blocks))
    else:
        for a, b in blocks:
            run(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(m2 / (m - SAMPLES_DDOF))
    return mean, sd


def _predict(est, X) -> tuple[dict, list, dict]:
    """``(from_predictions keyword arguments, description path, attrs)`` of ``est`` on X."""
    mod = type(est).__module__ or ""
    if hasattr(est, "best_estimator_") and hasattr(est, "cv_results_"):  # a fitted search
        kw, path, attrs = _predict(est.best_estimator_, X)
        return kw, [_name(est), *path], attrs
    try:
        from sklearn.compose import TransformedTargetRegressor
        from sklearn.ensemble import BaggingRegressor
        from sklearn.ensemble._forest import ForestRegressor
        from sklearn.pipeline import Pipeline
        from sklearn.utils.validation import check_is_fitted
    except ImportError:  # pragma: no cover - duck typing below still works
        Pipeline = TransformedTargetRegressor = ForestRegressor = BaggingRegressor = ()
        check_is_fitted = None

    if Pipeline and isinstance(est, Pipeline):
        xt = est[:-1].transform(X) if len(est.steps) > 1 else X
        kw, path, attrs = _predict(est[-1], xt)
        return kw, [_name(est), *path], attrs
    if TransformedTargetRegressor and isinstance(est, TransformedTargetRegressor):
        check_is_fitted(est)
        kw, path, attrs = _predict(est.regressor_, X)
        return _inverse_target(est, kw), [_name(est), *path], attrs
    if hasattr(est, "predict_interval") and mod.startswith("mapie"):
        return _mapie(est, X)
    if mod.startswith("mapie"):
        raise TypeError(
            f"estimator: {_name(est)} (MAPIE < 1.0) takes its coverage at predict "
            "time: compute y_pred, y_pis = estimator.predict(X, alpha=0.1) and pass "
            "lower=y_pis[:, 0, 0], upper=y_pis[:, 1, 0], level=0.9 to "
            "uqviz.from_predictions"
        )
    if hasattr(est, "pred_dist"):  # NGBoost
        dist = est.pred_dist(X)
        y_pred = np.asarray(est.predict(X), dtype=float)
        sd = (
            np.asarray(dist.std(), dtype=float)
            if hasattr(dist, "std")
            else np.asarray(dist.params["scale"], dtype=float)
        )
        return {"y_pred": y_pred, "std": sd}, [_name(est)], {"uE_from": "pred_dist(X).std()"}
    if ForestRegressor and isinstance(est, ForestRegressor):
        xv = est._validate_X_predict(X)
        mean, sd = member_moments(est.estimators_, xv, tree_input=True, n_threads=_n_threads(est))
        return (
            {"y_pred": mean, "std": sd},
            [_name(est)],
            {
                "uE_from": f"sd of the {len(est.estimators_)} trees' predictions "
                f"(ddof={SAMPLES_DDOF}); y_pred = their mean (= predict(X))",
                "n_members": len(est.estimators_),
                "ddof": SAMPLES_DDOF,
            },
        )
    if BaggingRegressor and isinstance(est, BaggingRegressor):
        check_is_fitted(est)
        xv = _validate_data(
            est, X, accept_sparse=["csr", "csc"], dtype=None, ensure_all_finite=False
        )
        mean, sd = member_moments(
            est.estimators_, xv, columns=est.estimators_features_, n_threads=_n_threads(est)
        )
        return (
            {"y_pred": mean, "std": sd},
            [_name(est)],
            {
                "uE_from": f"sd of the {len(est.estimators_)} members' predictions, each on "
                f"its feature subset (ddof={SAMPLES_DDOF}); y_pred = their mean "
                "(= predict(X))",
                "n_members": len(est.estimators_),
                "ddof": SAMPLES_DDOF,
            },
        )
    predict = getattr(est, "predict", None)
    if predict is not None and _takes_return_std(predict):
        out = predict(X, return_std=True)
        y_pred, sd = out[0], out[1]
        return (
            {"y_pred": np.asarray(y_pred, dtype=float), "std": np.asarray(sd, dtype=float)},
            [_name(est)],
            {"uE_from": "predict(X, return_std=True)"},
        )
    if predict is None:
        raise TypeError(
            f"estimator: expected a fitted regressor, got {_name(est)} (no predict method)"
        )
    raise TypeError(
        f"estimator: {_name(est)} gives no uncertainty; uqviz takes {_SUPPORTED}. "
        "For another model compute the predictions and uncertainties yourself and "
        "pass them to uqviz.from_predictions"
    )


def _takes_return_std(predict) -> bool:
    import inspect

    try:
        return "return_std" in inspect.signature(predict).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False


def _inverse_target(ttr, kw: dict) -> dict:
    """Carry predictions and uncertainties through a TransformedTargetRegressor's inverse.

    ``y_pred = inverse(mu)`` (what ``ttr.predict`` returns); a standard deviation is
    multiplied by ``|d inverse / d t|`` at ``mu`` (delta method; exact for a linear
    transformer such as StandardScaler); interval limits are mapped through the inverse.
    """

    def inv(t):
        out = ttr.transformer_.inverse_transform(np.asarray(t, dtype=float).reshape(-1, 1))
        return np.asarray(out, dtype=float).reshape(-1)

    out = dict(kw)
    mu = np.asarray(kw["y_pred"], dtype=float)
    out["y_pred"] = inv(mu)
    if "std" in kw:
        s = np.asarray(kw["std"], dtype=float)
        h = np.where(s > 0, 1e-3 * s, 1e-6 * (1.0 + np.abs(mu)))
        slope = (inv(mu + h) - inv(mu - h)) / (2.0 * h)
        out["std"] = np.abs(slope) * s
    else:
        lo, hi = inv(kw["lower"]), inv(kw["upper"])
        out["lower"], out["upper"] = np.minimum(lo, hi), np.maximum(lo, hi)
    return out


def _mapie_levels(est):
    """Confidence levels of a MAPIE >= 1 regressor: public ``confidence_level`` when kept,
    else ``1 - alpha`` of the ``_alphas`` MAPIE 1.x stores (it does not keep the argument)."""
    if getattr(est, "confidence_level", None) is not None:
        return np.atleast_1d(np.asarray(est.confidence_level, dtype=float))
    if getattr(est, "_alphas", None) is not None:
        return 1.0 - np.atleast_1d(np.asarray(est._alphas, dtype=float))
    raise TypeError(
        f"estimator: {_name(est)} keeps no confidence level; call "
        "uqviz.from_predictions(y, y_pred, lower=..., upper=..., level=...) with "
        "the output of its predict_interval"
    )


def _mapie(est, X):
    y_pred, pis = est.predict_interval(X)
    pis = np.asarray(pis, dtype=float)
    levels = _mapie_levels(est)
    if pis.ndim == 2:
        pis = pis[:, :, None]
    if pis.ndim != 3 or pis.shape[1] != 2 or pis.shape[2] != levels.size:
        raise ValueError(
            f"estimator: {_name(est)}.predict_interval returned intervals of shape "
            f"{pis.shape} for confidence levels {levels.tolist()}"
        )
    k = int(np.argmin(np.abs(levels - 0.6827)))  # the level nearest one standard deviation
    return (
        {
            "y_pred": np.asarray(y_pred, dtype=float),
            "lower": pis[:, 0, k],
            "upper": pis[:, 1, k],
            "level": float(levels[k]),
        },
        [_name(est)],
        {"uE_from": f"predict_interval(X) at confidence level {levels[k]:g}"},
    )


def _features_of(X, features) -> dict:
    """The features of the dataset: columns of a DataFrame X (numeric ones by default)."""
    if isinstance(X, pd.DataFrame):
        if features is None:
            cols = [
                c
                for c in X.columns
                if pd.api.types.is_numeric_dtype(X[c].dtype)
                and not pd.api.types.is_complex_dtype(X[c].dtype)
            ]
        else:
            cols = list(checks.names("features", features))
            missing = [c for c in cols if c not in X.columns]
            if missing:
                raise ValueError(
                    f"features: not columns of X: {', '.join(map(repr, missing))} "
                    f"(columns: {', '.join(map(str, X.columns))})"
                )
        return {str(c): X[c].reset_index(drop=True) for c in cols}
    if features is None:
        return {}
    names = checks.names("features", features)
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise ValueError(
            f"features: with an array X, name every column: X has shape "
            f"{arr.shape}, got {len(names)} names"
        )
    return {str(n): arr[:, j] for j, n in enumerate(names)}


_DROP_HINT = (
    "drop these rows from X and y, or pass the predictions to "
    "uqviz.from_predictions(..., drop_invalid=True)"
)


def _from_predictions(y, y_pred, kw, features, name):
    """:func:`from_predictions`; its advice to pass ``drop_invalid=True``, an option
    ``from_estimator`` does not take, becomes what to do instead."""
    try:
        return from_predictions(y, y_pred, **kw, features=features, name=name)
    except ValueError as exc:
        if len(exc.args) == 1 and DROP_HINT in str(exc.args[0]):
            exc.args = (exc.args[0].replace(DROP_HINT, _DROP_HINT),)
        raise


def from_estimator(estimator, X, y, *, features=None, name=None) -> xr.Dataset:
    r"""Build a uqviz dataset from a fitted regression model, its inputs and the observed values.

    The model predicts ``X``; ``E = y - y_pred`` and ``uE`` is the model's standard
    uncertainty, taken as follows:

    - ``predict(X, return_std=True)`` (scikit-learn's ``GaussianProcessRegressor``,
      ``BayesianRidge``, ``ARDRegression``): the returned std. A Gaussian process
      without a ``WhiteKernel`` returns the std of the latent function, not of ``y``
      (no noise term): uqviz validates what the model reports;
    - a bagging ensemble (``RandomForestRegressor``, ``ExtraTreesRegressor``,
      ``BaggingRegressor``): ``y_pred`` is the mean of the members' predictions (what
      the ensemble's ``predict`` returns) and ``uE`` their standard deviation with
      ``ddof=1``, as for ``samples`` in :func:`uqviz.from_predictions`. Forest trees
      predict ``X`` itself; each member of a ``BaggingRegressor`` predicts its own
      feature subset (``estimators_features_``). The members run in one loop over
      blocks of rows with a running mean and variance (memory of a few arrays of the
      size of ``y``, not members x points), on the estimator's ``n_jobs`` threads;
    - a ``Pipeline``: ``X`` goes through every step but the last, which must qualify;
      a ``TransformedTargetRegressor``: the inner regressor's prediction ``mu`` goes
      through the inverse transform (``y_pred = predict(X)``) and its std is multiplied
      by ``|d inverse / d t|`` at ``mu`` (delta method, exact for linear transformers);
      a fitted ``GridSearchCV``/``RandomizedSearchCV``: its ``best_estimator_``;
    - NGBoost (``pred_dist``): ``y_pred = predict(X)``, ``uE = pred_dist(X).std()``;
    - MAPIE >= 1.0 interval regressors (``predict_interval``): the interval at the
      ``confidence_level`` (nearest 68.27 % when there are several) through the
      interval form of :func:`uqviz.from_predictions` (normal D).

    NGBoost and MAPIE are not dependencies of uqviz; they are used when the estimator
    comes from them.

    Parameters
    ----------
    estimator : fitted regressor
        One of the kinds above.
    X : array_like, pandas.DataFrame or sparse matrix
        Inputs, as for ``estimator.predict``.
    y : array_like, 1-D
        Observed values.
    features : sequence of str, optional
        A DataFrame ``X``: the columns kept as features (default: every numeric column).
        An array ``X``: one name per column, all kept. Default for an array: none.
    name : str, optional
        Default: the estimator's class name.

    Returns
    -------
    xarray.Dataset
        As :func:`uqviz.from_predictions`; ``attrs["estimator"]`` names the model
        (``"Pipeline > RandomForestRegressor"``), ``attrs["uE_from"]`` says how uE was
        obtained; ensembles add ``n_members`` and ``ddof``.

    Raises
    ------
    TypeError
        An estimator that gives no uncertainty (with the list of supported kinds).
    ValueError
        Bad data, with the messages of :func:`uqviz.from_predictions`; an unfitted
        estimator (scikit-learn's ``NotFittedError`` is a ValueError).

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> from sklearn.linear_model import BayesianRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.3, 300)
    >>> model = BayesianRidge().fit(X[:200], y[:200])
    >>> ds = uqviz.from_estimator(model, X[200:], y[200:], features=["a", "b", "c"])
    >>> ds.sizes["point"], ds.attrs["estimator"], sorted(ds.data_vars)
    (100, 'BayesianRidge', ['E', 'a', 'b', 'c', 'uE'])

    A random forest: the spread of its trees.

    >>> from sklearn.ensemble import RandomForestRegressor
    >>> rf = RandomForestRegressor(50, random_state=0).fit(X[:200], y[:200])
    >>> ds = uqviz.from_estimator(rf, X[200:], y[200:])
    >>> ds.attrs["n_members"], bool(np.allclose(y[200:] - ds["E"], rf.predict(X[200:])))
    (50, True)
    """
    if isinstance(estimator, type):
        raise TypeError(
            f"estimator: expected a fitted estimator instance, got the class {estimator.__name__}"
        )
    if isinstance(X, pd.DataFrame) and isinstance(y, pd.Series) and not X.index.equals(y.index):
        raise ValueError(
            "X and y: pandas objects with different indexes; uqviz pairs rows by "
            "position, which would mix them: align them first (y.reindex(X.index))"
        )
    feats = _features_of(X, features)
    try:
        kw, path, attrs = _predict(estimator, X)
    except ValueError as exc:
        if type(exc).__name__ != "NotFittedError":
            raise
        raise type(exc)(f"estimator: {exc}") from None
    y_pred = kw.pop("y_pred")
    if isinstance(y, pd.Series):
        y = y.reset_index(drop=True)
    ds = _from_predictions(y, y_pred, kw, feats, _name(estimator) if name is None else name)
    ds.attrs.update({"estimator": " > ".join(path), **attrs})
    return ds
