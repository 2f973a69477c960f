"""Confidence curves with oracle and probabilistic reference."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import curves as curve_kernels
from uqviz._array.stats import hd_quantiles
from uqviz.data.generative import get_generative
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds
from uqviz.engine.deprecation import renamed_options
from uqviz.engine.options import BootstrapOptions, streams
from uqviz.engine.parallel import (
    block_rng,
    progress_bar,
    resolve_client,
    run_blocks,
    show_progress,
    stream_rows,
)
from uqviz.engine.tree import map_datasets
from uqviz.reference.simulated import simulated_rows

__all__ = ["confidence_curve", "ERRORS"]

#: error statistics of a confidence curve
ERRORS = curve_kernels.CURVE_ERRORS
_BLOCK = 64


def _mc_block(b, shared):
    u, gen, n_mc, seed, removed, error, normalize = shared
    n = min(_BLOCK, n_mc - b * _BLOCK)
    return np.concatenate(
        [
            curve_kernels.trimmed_curves(x, removed, error=error, normalize=normalize)
            for x in simulated_rows(gen, block_rng(seed, b), n, u)
        ]
    )


def _boot_block(b, shared):
    """Resamples of block ``b``, one row of ``M`` indices at a time from its stream."""
    e, n_boot, seed, removed, error, normalize = shared
    m = e.size
    n = min(_BLOCK, n_boot - b * _BLOCK)
    g = block_rng(seed, b)
    rows = stream_rows(n, m)
    out = []
    for r0 in range(0, n, rows):
        k = min(rows, n - r0)
        idx = np.empty((k, m), dtype=np.int64)
        for r in range(k):
            idx[r] = np.sort(g.integers(0, m, m))  # sorted indices keep the uE order
        out.append(curve_kernels.trimmed_curves(e[idx], removed, error=error, normalize=normalize))
    return np.concatenate(out)


def _confidence_one(ds, *, rng, error, fractions, n_mc, generative, normalize, boot):
    """One dataset's curves; ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions`
    (``n_boot`` 0: no interval; the stream is ``rng``)."""
    check_dataset(ds)
    warn_points_independent(ds, "confidence_curve")
    n_boot, ci, client = boot.n_boot, boot.ci, boot.client
    e, u = ds["E"].values.astype(float), ds["uE"].values.astype(float)
    m = e.size
    removed = curve_kernels.n_removed(fractions, m)
    order = np.argsort(-u, kind="stable")  # decreasing uE, ties in data order
    e, u = e[order], u[order]
    gen = generative.for_data(ds)
    s = streams(rng, "mc", "boot")
    mc_seed, boot_seed = seeds.kernel_seed(s.mc), seeds.kernel_seed(s.boot)
    probs = [(1 - ci) / 2, (1 + ci) / 2]

    def curves(x):
        return curve_kernels.trimmed_curves(x, removed, error=error, normalize=normalize)

    estimate = curves(e)
    oracle = curves(e[np.argsort(-np.abs(e), kind="stable")])

    n_mc_blocks = -(-n_mc // _BLOCK)
    n_boot_blocks = -(-n_boot // _BLOCK)
    bar = progress_bar(
        n_mc_blocks + n_boot_blocks, desc=f"{error} confidence curve", progress=boot.progress
    )
    ref = np.concatenate(
        run_blocks(
            _mc_block,
            n_mc_blocks,
            client=client,
            progress=bar,
            shared=(u, gen, n_mc, mc_seed, removed, error, normalize),
        )
    )
    ref_mean = ref.mean(axis=0)
    ref_q = hd_quantiles(ref.T, probs)

    out = {
        "estimate": ("fraction", estimate, {"long_name": f"{error} of the kept data"}),
        "oracle": ("fraction", oracle, {"long_name": "oracle (largest |E| removed first)"}),
        "reference": ("fraction", ref_mean, {"long_name": "probabilistic reference (mean)"}),
        "reference_lower": ("fraction", ref_q[:, 0]),
        "reference_upper": ("fraction", ref_q[:, 1]),
    }
    if n_boot:
        reps = np.concatenate(
            run_blocks(
                _boot_block,
                n_boot_blocks,
                client=client,
                progress=bar,
                shared=(e, n_boot, boot_seed, removed, error, normalize),
            )
        )
        q = hd_quantiles(reps.T, probs)
        out["ci_lower"] = ("fraction", q[:, 0])
        out["ci_upper"] = ("fraction", q[:, 1])
    bar.close()
    dist = np.abs(ref - ref_mean).sum(axis=-1)
    dfpr = float(np.abs(estimate - ref_mean).sum())
    upper = float(hd_quantiles(dist, [ci])[0])
    p_value = (1.0 + np.count_nonzero(dist >= dfpr)) / (1.0 + dist.size)
    out.update(
        {
            "n_kept": ("fraction", m - removed),
            "uE_threshold": ("fraction", u[removed], {"long_name": "largest uE kept"}),
            "auco": (
                (),
                float(np.abs(estimate - oracle).sum()),
                {"long_name": "area between the data and oracle curves"},
            ),
            "dfpr": ((), dfpr, {"long_name": "distance from the probabilistic reference"}),
            "dfpr_limit": (
                (),
                upper,
                {"long_name": f"{ci:g} quantile of the DFPR of calibrated sets"},
            ),
            "p_value": (
                (),
                float(p_value),
                {
                    "long_name": "Monte Carlo p-value of the DFPR among calibrated sets "
                    "(one-sided: larger is worse)"
                },
            ),
            "valid": ((), dfpr <= upper),
        }
    )
    return xr.Dataset(out, coords={"fraction": np.asarray(fractions, dtype=float)})


@renamed_options(error="error_statistic")
def confidence_curve(
    data,
    *,
    error_statistic="RMSE",
    fractions=None,
    n_mc=1000,
    generative="normal",
    n_boot=1000,
    ci=0.95,
    normalize=False,
    rng=None,
    client=None,
    progress=None,
    engine=None,
):
    r"""Confidence curve of the data with its oracle and probabilistic reference.

    The error statistic after removing the fraction ``k`` of points with the largest uE; the
    oracle removes the largest ``|E|``; the reference is the mean curve of calibrated
    errors E* = uE * eps, eps ~ D, with a Monte Carlo band.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    error_statistic : {"RMSE", "MAE"}, default "RMSE"
        The error statistic of the curve (Pernot (2024c)): root mean square or mean
        absolute error (``error`` until uqviz 0.2, still accepted with a FutureWarning
        until 0.3.0).
    fractions : array_like, optional
        In [0, 1); default ``np.arange(0, 1, 0.01)``.
    n_mc : int, default 1000
        Calibrated sets of the probabilistic reference, an int >= 2.
    generative : str or Generative, default "normal"
        Generative distribution D of the calibrated pseudo-errors (``uqviz.generative``).
    n_boot : int, default 1000
        Bootstrap resamples of the data curve; 0: no band.
    normalize : bool, default False
        Divide every curve by its value at k = 0.
    ci : float, default 0.95
        Level of the bands and of the DFPR limit, in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    client : None, "local" or dask.distributed.Client, default None
        Where the work runs: None (this process, local threads), "local" (a dask LocalCluster)
        or a dask.distributed.Client; the numbers do not depend on it.
    progress : bool or None, default None
        tqdm progress bar: None shows it in a terminal or Jupyter unless the environment
        variable ``UQVIZ_PROGRESS=0`` is set, True always shows it, False never.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md). The bootstrap of the data
        curve draws its resamples from numpy streams whatever the engine: checked and
        recorded, the numbers are the same for every engine.

    Returns
    -------
    xarray.Dataset
        On ``fraction``: ``estimate``, ``ci_lower``, ``ci_upper``, ``oracle``,
        ``reference``, ``reference_lower``, ``reference_upper``, ``n_kept``,
        ``uE_threshold``; ``auco``, ``dfpr``, ``dfpr_limit`` (the ``ci`` quantile of the
        DFPR of the ``n_mc`` calibrated sets, Harrell-Davis), ``valid``
        (``dfpr <= dfpr_limit``) and ``p_value`` = (1 + #{calibrated DFPR >= dfpr}) /
        (1 + n_mc), the one-sided Monte Carlo p-value of the DFPR (``p_value <= 1 - ci``
        when ``valid`` is False, up to the interpolation of the quantile).

    See Also
    --------
    uqviz.simulated_reference : the same calibrated sets for a statistic.
    uqviz.plots.reference.confidence_curve : draws the curves and band.

    Notes
    -----
    With :math:`S(k)` the RMSE (or MAE) of the points left after removing the fraction :math:`k`
    with the largest :math:`u_E`, the oracle :math:`O(k)` removing the largest :math:`|E|`, and the
    probabilistic reference :math:`R(k)`, the mean curve of calibrated pseudo-errors
    :math:`E^* = u_E \varepsilon`, :math:`\varepsilon \sim D` (Pernot (2022)),

    .. math::

       \mathrm{AUCO} = \sum_k |S(k) - O(k)|, \qquad \mathrm{DFPR} = \sum_k |S(k) - R(k)|,

    over the fractions :math:`k`; the Monte Carlo p-value of DFPR among calibrated sets is
    :math:`(1 + \#\{\mathrm{DFPR}^* \ge \mathrm{DFPR}\}) / (1 + n_{mc})` (Hope (1968)).

    The test is one-sided: only a DFPR larger than that of calibrated sets is a
    failure. Its false-alarm rate on calibrated data is ``1 - ci`` (measured in
    ``benchmarks/bench_reference_verdicts.py``).

    References
    ----------
    - Pernot (2022): confidence curves with a probabilistic reference.
    - Hope (1968): the Monte Carlo p-value.
    - Harrell & Davis (1982): the quantile ``dfpr_limit``.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> cc = confidence_curve(uqviz.synthetic.nig(1000, nu=6, rng=0), error_statistic="MAE",
    ...                       n_mc=50, n_boot=0, rng=0)
    >>> bool(cc["oracle"].isel(fraction=50) < cc["estimate"].isel(fraction=50))
    True
    >>> bool(cc["valid"]) == bool(cc["dfpr"] <= cc["dfpr_limit"]), float(cc["p_value"]) > 0.05
    (True, True)
    """
    error = checks.choice("error_statistic", error_statistic, ERRORS)
    if fractions is None:
        fractions = np.arange(0, 1, 0.01)
    else:
        fractions = checks.fractions("fractions", fractions)
    normalize = checks.boolean("normalize", normalize)
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        zero="no interval",
        ci=ci,
        rng=rng,
        engine=engine,
        progress=show_progress(progress),
    )
    gen = get_generative(generative)
    stream = checks.rng(rng)
    n_mc = checks.count("n_mc", n_mc, minimum=2)  # last: another wrong option is named first
    boot = boot.replace(client=resolve_client(client))
    out = map_datasets(
        _confidence_one,
        data,
        rng=stream,
        error=error,
        fractions=fractions,
        n_mc=n_mc,
        generative=gen,
        normalize=normalize,
        boot=boot,
    )
    out["fraction"].attrs["long_name"] = "fraction of the largest uE removed"
    out.attrs.update(
        {
            "error_statistic": error,
            "n_mc": n_mc,
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "generative": gen.name,
            "normalize": int(normalize),
            "rng": boot.attrs["rng"],
            "engine": boot.engine,
        }
    )
    return out
