r"""Joint scores of several targets: the energy and variogram scores of ensembles (samples), the
Dawid-Sebastiani and energy scores of Gaussian forecasts with a covariance.

The data: observations ``y`` with dims (point, target) and the forecast of each point, an
ensemble ``samples`` (point, target, sample) or a mean (point, target) and a covariance
``cov`` (point, target, target2). They come as numpy arrays in that order, as xarray
DataArrays with those dims (the target dim named ``target`` or ``variable``, the contract's
dim of a multivariate target; the second dim of ``cov`` any other name), or as one Dataset
holding them (``y`` and ``samples``; ``y``, ``mean`` and ``cov``, or a three-dim ``scale`` as
:func:`uqviz.nees` reads it). Each score is a mean over the points of a per-point score,
negatively oriented (smaller is better); the result holds both.

Kernels: :mod:`uqviz._array.multivariate_scores`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array.lazy import lazy_module
from uqviz.engine import checks, seeds
from uqviz.engine.parallel import resolve_client, run_task

multivariate_scores_kernels = lazy_module("uqviz._array.multivariate_scores")

__all__ = [
    "energy_score",
    "variogram_score",
    "dawid_sebastiani_score",
    "energy_score_normal",
    "joint_samples",
    "joint_gaussian",
    "TARGET_DIMS",
]

#: the names of the target dim of the inputs (``variable``: the contract's name)
TARGET_DIMS = ("target", "variable")
ORIENTATION = "negative (smaller is better)"


def _target_dim(da, name):
    found = [d for d in TARGET_DIMS if d in da.dims]
    if len(found) != 1:
        raise ValueError(
            f"{name}: expected one target dim named {' or '.join(map(repr, TARGET_DIMS))}, "
            f"got dims {da.dims}"
        )
    return found[0]


def _as_dims(da, name, dims):
    """``da`` transposed to ``dims`` (a ValueError naming the dims it has otherwise)."""
    if set(da.dims) != set(dims):
        raise ValueError(f"{name}: expected dims {tuple(dims)}, got {da.dims}")
    return da.transpose(*dims)


def _labels(y, n):
    """The point labels of a DataArray y, else ``arange(n)``."""
    if isinstance(y, xr.DataArray) and "point" in y.coords:
        return np.asarray(y["point"].values)
    return np.arange(n)


def joint_samples(y, samples=None):
    """``(y (n, t), samples (n, t, S), point labels)`` of the accepted inputs.

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations (point, target), or a Dataset holding ``y`` and ``samples``.
    samples : array_like or xarray.DataArray, optional
        Ensemble (point, target, sample); None with a Dataset.

    Examples
    --------
    >>> da = xr.DataArray(np.zeros((2, 3, 4)), dims=("target", "sample", "point"))
    >>> yy = xr.DataArray(np.zeros((4, 2)), dims=("point", "target"))
    >>> [a.shape for a in joint_samples(yy, da)[:2]]
    [(4, 2), (4, 2, 3)]
    """
    if isinstance(y, xr.Dataset):
        if samples is not None:
            raise ValueError("samples: leave it unset with a Dataset (its variable is used)")
        missing = [v for v in ("y", "samples") if v not in y.variables]
        if missing:
            raise ValueError(
                f"the Dataset needs the variables y (point, target) and samples (point, "
                f"target, sample); missing {missing}"
            )
        y, samples = y["y"], y["samples"]
    if samples is None:
        raise ValueError("samples: the ensemble (point, target, sample) is missing")
    if isinstance(y, xr.DataArray):
        t = _target_dim(y, "y")
        y = _as_dims(y, "y", ("point", t))
        if not isinstance(samples, xr.DataArray):
            raise TypeError("samples: a DataArray with y a DataArray (dims are matched by name)")
        samples = _as_dims(samples, "samples", ("point", t, "sample"))
    elif isinstance(samples, xr.DataArray):
        raise TypeError("y: a DataArray with samples a DataArray (dims are matched by name)")
    yv, xv = multivariate_scores_kernels.check_joint_ensemble(np.asarray(y), np.asarray(samples))
    return yv, xv, _labels(y, yv.shape[0])


def joint_gaussian(y, mean=None, cov=None):
    """``(y (n, t), mean (n, t), cov (n, t, t), point labels)`` of the accepted inputs.

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations (point, target), or a Dataset holding ``y``, ``mean`` and ``cov`` (or
        a three-dim ``scale``, the covariances of :func:`uqviz.nees`).
    mean : array_like or xarray.DataArray, optional
    cov : array_like or xarray.DataArray, optional
        Dims (point, target, any other name).

    Examples
    --------
    >>> yy = xr.DataArray(np.zeros((3, 2)), dims=("point", "variable"))
    >>> c = xr.DataArray(np.broadcast_to(np.eye(2), (3, 2, 2)),
    ...                  dims=("point", "variable", "variable2"))
    >>> [a.shape for a in joint_gaussian(yy, yy, c)[:3]]
    [(3, 2), (3, 2), (3, 2, 2)]
    """
    if isinstance(y, xr.Dataset):
        if mean is not None or cov is not None:
            raise ValueError("mean, cov: leave them unset with a Dataset (its variables are used)")
        ds = y
        cov_name = "cov" if "cov" in ds.variables else "scale"
        missing = [v for v in ("y", "mean", cov_name) if v not in ds.variables]
        if missing or ds[cov_name].ndim != 3:
            raise ValueError(
                "the Dataset needs the variables y, mean (point, target) and cov (or a "
                f"covariance scale: point, target, target2); missing {missing or [cov_name]}"
            )
        y, mean, cov = ds["y"], ds["mean"], ds[cov_name]
    if mean is None or cov is None:
        raise ValueError("mean and cov: the Gaussian forecast (mean, covariance) is missing")
    arrays = [isinstance(a, xr.DataArray) for a in (y, mean, cov)]
    if any(arrays) and not all(arrays):
        raise TypeError("y, mean, cov: all DataArrays or none (dims are matched by name)")
    if all(arrays):
        t = _target_dim(y, "y")
        y = _as_dims(y, "y", ("point", t))
        mean = _as_dims(mean, "mean", ("point", t))
        other = [d for d in cov.dims if d not in ("point", t)]
        if len(other) != 1 or cov.ndim != 3:
            raise ValueError(
                f"cov: expected dims ('point', {t!r}, <a second target dim>), got {cov.dims}"
            )
        cov = cov.transpose("point", t, other[0])
    yv, mv, cv = multivariate_scores_kernels.check_gaussian(
        np.asarray(y), np.asarray(mean), np.asarray(cov)
    )
    return yv, mv, cv, _labels(y, yv.shape[0])


def _result(per_point, point, *, what, t, attrs, citation):
    out = xr.Dataset(
        {
            "estimate": ((), float(np.mean(per_point)), {"long_name": f"mean {what}"}),
            "point_score": (("point",), per_point, {"long_name": f"{what} of each point"}),
            "n_points": ((), int(per_point.size), {"long_name": "number of points"}),
        },
        coords={"point": point},
    )
    out.attrs.update(
        {**attrs, "n_variables": int(t), "orientation": ORIENTATION, "citation": citation}
    )
    return out


def energy_score(y, samples=None, *, fair=False, engine=None):
    r"""Energy score of ensembles of several targets (Gneiting & Raftery 2007).

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations, shape (n, t) or dims (point, target); or a Dataset holding ``y`` and
        ``samples``.
    samples : array_like or xarray.DataArray, optional
        Ensemble members, shape (n, t, S) or dims (point, target, sample), S >= 2, finite.
    fair : bool, default False
        The fair estimator, over the S(S - 1) distinct pairs of members (unbiased for the
        score of the distribution the members are drawn from), instead of the score of the
        ensemble's empirical distribution (S^2 pairs).
    engine : {"numba", "numpy"}, optional
        The kernel: numba (parallel over points; default where installed) or numpy.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (the mean over the points), ``point_score`` (dim ``point``),
        ``n_points``; attrs ``fair``, ``engine``, ``n_variables`` (t), ``orientation``,
        ``citation``.

    Raises
    ------
    ValueError
        Shapes or dims that do not match; fewer than 2 members; non-finite members or
        observations (the points counted).

    See Also
    --------
    uqviz.variogram_score : sensitive to the correlations the energy score barely sees.
    uqviz.predictive_scores : the CRPS of each target alone.

    Notes
    -----
    .. math::

       \mathrm{ES} = \frac1S \sum_k \lVert x_k - y \rVert
           - \frac{1}{2 S^2} \sum_{k, l} \lVert x_k - x_l \rVert, \qquad
       \mathrm{ES}_\mathrm{fair} = \frac1S \sum_k \lVert x_k - y \rVert
           - \frac{1}{2 S (S - 1)} \sum_{k \ne l} \lVert x_k - x_l \rVert

    (Gneiting & Raftery (2007), eq. 22 with beta = 1); scoringrules 0.10's
    ``es_ensemble`` (alias ``energy_score``) with ``estimator="nrg"`` and ``"fair"``, to
    1e-13 (tests/fixtures/joint.npz). One target: the CRPS of the ensemble. The Euclidean
    norm mixes the targets' units: scale them first when they differ. O(S^2 t) per point,
    numba parallel over the points (each point summed alone and in a fixed order: the
    numbers do not depend on the threads).

    References
    ----------
    - Gneiting & Raftery (2007): the energy score.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(200, 3))
    >>> res = uqviz.energy_score(y, rng.normal(size=(200, 3, 20)))
    >>> res["point_score"].shape, bool(res["estimate"] > 0)
    ((200,), True)
    >>> wide = uqviz.energy_score(y, 3 * rng.normal(size=(200, 3, 20)))
    >>> bool(wide["estimate"] > res["estimate"])
    True
    """
    fair = checks.boolean("fair", fair)
    engine = checks.engine(engine)
    yv, xv, point = joint_samples(y, samples)
    per = multivariate_scores_kernels.energy_score_points(
        yv, xv, fair=fair, use_numba=engine == "numba"
    )
    return _result(
        per,
        point,
        what="fair energy score" if fair else "energy score",
        t=yv.shape[1],
        attrs={"fair": fair, "engine": engine},
        citation="Gneiting & Raftery (2007), eq. 22 (energy score)",
    )


def variogram_score(y, samples=None, *, p=0.5, weights=None, fair=False, engine=None):
    r"""Variogram score of order ``p`` of ensembles of several targets (Scheuerer & Hamill 2015).

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations, shape (n, t) or dims (point, target); or a Dataset holding ``y`` and
        ``samples``.
    samples : array_like or xarray.DataArray, optional
        Ensemble members, shape (n, t, S) or dims (point, target, sample), S >= 2, finite.
    p : float, default 0.5
        Order of the variogram (> 0); Scheuerer & Hamill (2015) found 0.5 the most
        discriminating.
    weights : array_like, shape (t, t), optional
        Weights ``w_ab >= 0`` of the pairs of targets (default all 1); a DataArray is read
        in its given order.
    fair : bool, default False
        The fair estimator (the distinct pairs of members) instead of the plain one.
    engine : {"numba", "numpy"}, optional
        The kernel: numba (parallel over points; default where installed) or numpy.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (the mean over the points), ``point_score`` (dim ``point``),
        ``n_points``; attrs ``p``, ``weights`` (None or the matrix as nested lists),
        ``fair``, ``engine``, ``n_variables``, ``orientation``, ``citation``.

    Raises
    ------
    ValueError
        As :func:`uqviz.energy_score`; ``p <= 0``; weights of another shape, negative or
        non-finite (counted).

    See Also
    --------
    uqviz.energy_score

    Notes
    -----
    With :math:`r_{k,ab} = |x_{k,a} - x_{k,b}|^p`, :math:`\bar r_{ab}` their mean over the
    members and :math:`r_{ab} = |y_a - y_b|^p`,

    .. math::

       \mathrm{VS}_p = \sum_{a, b} w_{ab} (r_{ab} - \bar r_{ab})^2, \qquad
       \mathrm{VS}_{p,\mathrm{fair}} = \mathrm{VS}_p - \frac1S \sum_{a, b} w_{ab} s^2_{ab}

    summed over all ordered pairs of targets (each unordered pair twice, as scoringrules
    does), :math:`s^2_{ab}` the variance (ddof 1) of :math:`r_{k,ab}` over the members:
    the fair form equals scoringrules' pairwise one,
    :math:`\frac1S \sum_k \sum_{ab} w_{ab} (r_{k,ab} - r_{ab})^2 - \frac{1}{2S(S-1)}
    \sum_{k \ne l} \sum_{ab} w_{ab} (r_{k,ab} - r_{l,ab})^2`, in O(S t^2) per point.
    scoringrules 0.10's ``vs_ensemble`` (alias ``variogram_score``) with
    ``estimator="nrg"`` and ``"fair"``, to 1e-13 (tests/fixtures/joint.npz). One target:
    0 (the score sees differences between targets only).

    References
    ----------
    - Scheuerer & Hamill (2015): the variogram score.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(0)
    >>> common = rng.normal(size=(300, 1, 1))
    >>> y = (common + 0.3 * rng.normal(size=(300, 3, 1)))[:, :, 0]  # correlated targets
    >>> joint = common + 0.3 * rng.normal(size=(300, 3, 30))  # the same correlation
    >>> indep = rng.normal(size=(300, 3, 30)) * np.sqrt(1.09)  # the margins, independent
    >>> a = uqviz.variogram_score(y, joint)["estimate"]
    >>> b = uqviz.variogram_score(y, indep)["estimate"]
    >>> bool(a < b)
    True
    """
    fair = checks.boolean("fair", fair)
    engine = checks.engine(engine)
    yv, xv, point = joint_samples(y, samples)
    w = (
        None
        if weights is None
        else multivariate_scores_kernels.check_weights(np.asarray(weights), yv.shape[1])
    )
    per = multivariate_scores_kernels.variogram_score_points(
        yv, xv, p=p, weights=w, fair=fair, use_numba=engine == "numba"
    )
    return _result(
        per,
        point,
        what=f"{'fair ' if fair else ''}variogram score of order {float(p):g}",
        t=yv.shape[1],
        attrs={
            "p": float(p),
            "weights": None if w is None else w.tolist(),
            "fair": fair,
            "engine": engine,
        },
        citation="Scheuerer & Hamill (2015) (variogram score)",
    )


def dawid_sebastiani_score(y, mean=None, cov=None):
    r"""Dawid-Sebastiani score of Gaussian forecasts of several targets with a covariance.

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations, shape (n, t) or dims (point, target); or a Dataset holding ``y``,
        ``mean`` and ``cov`` (or ``scale`` with three dims, as :func:`uqviz.nees` reads).
    mean : array_like or xarray.DataArray, optional
        Predicted means, as y.
    cov : array_like or xarray.DataArray, optional
        Predicted covariances, shape (n, t, t) or dims (point, target, <another dim>),
        symmetric positive definite.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (the mean over the points), ``point_score`` (dim ``point``),
        ``n_points``; attrs ``n_variables``, ``orientation``, ``citation``.

    Raises
    ------
    ValueError
        Shapes that do not match; non-finite values, non-symmetric or not positive
        definite covariances (the points counted).

    See Also
    --------
    uqviz.nees : the Mahalanobis term alone, and its chi-square test.
    uqviz.energy_score_normal : the energy score of the same forecast.

    Notes
    -----
    :math:`\mathrm{DSS} = \log\det\Sigma + (y - \mu)^\top \Sigma^{-1} (y - \mu)`
    (Dawid & Sebastiani (1999)): proper for every forecast with that mean and covariance,
    and twice the Gaussian negative log-likelihood less :math:`t \log 2\pi`. The
    convention of scoringrules 0.10's ``dssmv_ensemble`` and ``dssuv_ensemble``, which
    take the mean and covariance (``bias=False``: ddof 1) of an ensemble: given those,
    the same numbers to 1e-13 (tests/fixtures/joint.npz). From the Cholesky factor.

    References
    ----------
    - Dawid & Sebastiani (1999): the score.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> cov = np.array([[[4.0, 0.0], [0.0, 1.0]]])
    >>> res = uqviz.dawid_sebastiani_score([[2.0, 1.0]], [[0.0, 0.0]], cov)
    >>> round(float(res["estimate"]), 6)  # log 4 + 2^2/4 + 1
    3.386294
    """
    yv, mv, cv, point = joint_gaussian(y, mean, cov)
    per = multivariate_scores_kernels.dawid_sebastiani_points(yv, mv, cv)
    return _result(
        per,
        point,
        what="Dawid-Sebastiani score",
        t=yv.shape[1],
        attrs={},
        citation="Dawid & Sebastiani (1999) (Dawid-Sebastiani score)",
    )


def energy_score_normal(y, mean=None, cov=None, *, n_mc=1_000, rng=None, client=None):
    r"""Energy score of Gaussian forecasts of several targets with a covariance (Monte Carlo).

    Parameters
    ----------
    y : array_like, xarray.DataArray or xarray.Dataset
        Observations, shape (n, t) or dims (point, target); or a Dataset holding ``y``,
        ``mean`` and ``cov`` (or ``scale`` with three dims).
    mean : array_like or xarray.DataArray, optional
        Predicted means, as y.
    cov : array_like or xarray.DataArray, optional
        Predicted covariances, shape (n, t, t) or dims (point, target, <another dim>).
    n_mc : int, default 1000
        Normal draws per point (>= 2).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream (docs/conventions.md, "Randomness"): the same ``rng`` gives the same
        numbers.
    client : None, "local" or dask.distributed.Client, default None
        Where the draws run (one task); the numbers do not depend on it.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (the mean over the points), ``point_score`` (dim ``point``), ``se``
        (the Monte Carlo standard error of ``estimate``), ``n_points``; attrs ``n_mc``, ``rng``,
        ``n_variables``, ``orientation``, ``citation``.

    Raises
    ------
    ValueError
        As :func:`uqviz.dawid_sebastiani_score`; ``n_mc < 2``.

    See Also
    --------
    uqviz.energy_score : the score of an ensemble.
    uqviz.dawid_sebastiani_score : a closed-form score of the same forecast.

    Notes
    -----
    No closed form exists for t > 1 (scoringrules 0.10 has none either; it scores
    ensembles only). With :math:`X = \mu + L Z`, L the Cholesky factor of Sigma and
    :math:`X - X' \sim N(0, 2\Sigma)`,

    .. math::

       \widehat{\mathrm{ES}} = \frac1K \sum_{k=1}^K \Big(\lVert \mu + L z_k - y \rVert
           - \tfrac{1}{\sqrt 2} \lVert L z_k \rVert\Big), \qquad z_k \sim N(0, I_t)

    is unbiased for :math:`E\lVert X - y\rVert - \tfrac12 E\lVert X - X'\rVert`
    (Gneiting & Raftery (2007), eq. 22): K = ``n_mc`` independent draws per point, drawn
    in the order of the points (``rng.standard_normal((n, n_mc, t))``). ``se`` is the
    Monte Carlo standard error of the mean over the points (the sd of each point's K
    terms over sqrt(K), combined); it shrinks as 1/sqrt(n K). One target: the CRPS of the
    normal, :func:`uqviz.proper_scores`'s closed form, within that error.

    References
    ----------
    - Gneiting & Raftery (2007): the energy score.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> y = np.zeros((50, 1)); mean = np.zeros((50, 1)); cov = np.ones((50, 1, 1))
    >>> res = uqviz.energy_score_normal(y, mean, cov, n_mc=4000, rng=0)
    >>> round(float(res["estimate"]), 2)  # the CRPS of N(0, 1) at 0: 0.2337
    0.23
    >>> bool(res["se"] < 0.001)
    True
    """
    n_mc = checks.count("n_mc", n_mc, minimum=2)
    stream = checks.rng(rng)
    client = resolve_client(client)
    yv, mv, cv, point = joint_gaussian(y, mean, cov)
    per, se = run_task(
        multivariate_scores_kernels.energy_score_normal_points,
        yv,
        mv,
        cv,
        n_mc=n_mc,
        rng=stream,
        client=client,
    )
    out = _result(
        per,
        point,
        what="energy score (Monte Carlo)",
        t=yv.shape[1],
        attrs={"n_mc": n_mc, "rng": seeds.seed_attr(rng)},
        citation="Gneiting & Raftery (2007), eq. 22 (energy score)",
    )
    mc_se = float(np.sqrt(np.sum(se**2)) / se.size)
    out["se"] = ((), mc_se, {"long_name": "Monte Carlo standard error of the estimate"})
    return out
