r"""The probability integral transform (PIT) of the forecast as given, and its uniformity.

The PIT of a point is its predictive CDF at the observed value, ``F(y)``; for a calibrated
probabilistic forecast the PIT values are uniform on (0, 1) (Gneiting et al. (2007)). Where the
CDF jumps at ``y`` (ensemble members tied with y, tied quantiles) the PIT is randomised,
uniform between ``F(y-)`` and ``F(y)``, which keeps it exactly uniform under calibration
(Gneiting et al. (2007)). A forecast given by quantiles (or an interval) fixes its CDF at the
given levels only: its PIT is drawn uniformly between the two given levels that bracket
``y`` (0 and 1 beyond the extreme ones), which is uniform for a calibrated forecast whatever
its shape between the quantiles; the piecewise-linear CDF of
:func:`uqviz.predictive.predictive_cdf` would add a shape the forecast does not give (with five
levels, calibrated normal forecasts of 3000 points then fail the band test).
:func:`validate_pit` tests the uniformity: histogram with binomial bands, Kolmogorov–Smirnov
and Cramér–von Mises tests, the mean and variance against 1/2 and 1/12, and the ECDF with a
simultaneous band (Säilynoja et al. (2022)), whose verdict is ``valid``; :func:`local_pit`
does so per bin of uE or of a feature.

Examples
--------
>>> import uqviz
>>> res = uqviz.validate_pit(uqviz.synthetic.default_example(), rng=0)
>>> bool(res["valid"]), res.sizes["pit_grid"]
(True, 99)
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import pit as pit_kernels
from uqviz._array.lazy import lazy_module
from uqviz.engine import checks, seeds
from uqviz.engine.binning import bin_coords, compute_bins, conditioning_values, default_n_bins
from uqviz.engine.options import data_group_codes, warn_points_independent
from uqviz.engine.tree import map_datasets
from uqviz.predictive.forecast import (
    forecast_form,
    observed,
    quantile_table,
    standard_cdf,
    standard_distribution,
)

special = lazy_module("scipy.special")
clusters_kernels = lazy_module("uqviz._array.clusters")
sps = lazy_module("scipy.stats")

__all__ = ["pit", "validate_pit", "local_pit", "PIT_GRID", "N_BAND", "default_histogram_bins"]

#: Values of the PIT at which its ECDF is compared with the identity (dim ``pit_grid``).
PIT_GRID = np.round(np.linspace(0.01, 0.99, 99), 10)
#: Simulated uniform ECDFs that calibrate the simultaneous band.
N_BAND = 3000
CITATION = (
    "Gneiting et al. (2007) (PIT, randomised where the CDF jumps); "
    "Säilynoja et al. (2022) (simultaneous ECDF band)"
)


def default_histogram_bins(m: int) -> int:
    """Bins of the PIT histogram: 20, fewer so that each expects at least 10 points.

    Examples
    --------
    >>> default_histogram_bins(10**6), default_histogram_bins(50)
    (20, 5)
    """
    return int(max(1, min(20, int(m) // 10)))


def pit_values(ds, generative, rng) -> np.ndarray:
    """PIT values of one dataset (randomised within atoms, one uniform drawn per point)."""
    form = forecast_form(ds)
    y, _ = observed(ds)
    y = y.values.astype(float)
    v = rng.random(y.size)
    if form == "samples":
        lo, hi = pit_kernels.rank_bounds(y, ds["samples"].transpose("point", "sample").values)
        return pit_kernels.randomised(lo, hi, v)
    if form in ("std", "variance"):
        gen = standard_distribution(generative)
        z = ds["E"].values.astype(float) / ds["uE"].values.astype(float)
        return special.ndtr(z) if gen.kind == "normal" else standard_cdf(gen)(z)
    if form == "interval":  # only the limits are given: the prediction need not be a median
        level = float(ds["lower"].attrs.get("level", ds.attrs.get("level")))
        q = np.stack([ds["lower"].values, ds["upper"].values], axis=1).astype(float)
        p = np.array([(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    else:
        q, p = quantile_table(ds, form)
    lo, hi = pit_kernels.segment_bounds(y, q, p)
    return pit_kernels.randomised(lo, hi, v)


def _pit_one(ds, *, rng, generative):
    values = pit_values(ds, generative, checks.rng(rng))
    return xr.Dataset({"PIT": ("point", values)}, coords={"point": ds["point"].values})


def _settings(generative, rng, **more):
    gen = standard_distribution(generative)
    return {"generative": gen.name, "rng": seeds.seed_attr(rng), **more, "citation": CITATION}


def pit(data, *, generative="normal", rng=None):
    r"""PIT values of the forecast as given: each point's predictive CDF at its observed value.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        A dataset of :func:`uqviz.from_predictions` (the forecast as given: std, variance,
        interval, quantiles or samples) or of :func:`uqviz.from_arrays` (the forecast
        ``uE * D``); a DataTree gives one result per dataset, on dim ``dataset``.
    generative : str or Generative, default "normal"
        D of the forecast ``uE * D`` (std, variance) and of the tails of quantiles and
        intervals (:func:`uqviz.predictive.predictive_cdf`): ``"normal"``, ``"t<nu>"``,
        ``"laplace"``, ``"uniform"``.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Stream of the randomisation within atoms (one uniform drawn per point).

    Returns
    -------
    xarray.Dataset
        ``PIT`` on dim ``point``; attrs ``generative``, ``rng``, ``forecast``.

    Raises
    ------
    ValueError
        Bad data (the rules of :func:`uqviz.check_dataset`), a forecast form whose variables
        are missing, a D without a closed-form CDF.

    See Also
    --------
    uqviz.validate_pit : uniformity of the PIT.
    uqviz.predictive.predictive_cdf : the CDF of each form.

    Notes
    -----
    :math:`\mathrm{PIT}_i = F_i(y_i^-) + V_i\,(F_i(y_i) - F_i(y_i^-))`, :math:`V_i \sim U(0, 1)`
    (Gneiting et al. (2007)): where :math:`F_i` is continuous at :math:`y_i` this is
    :math:`F_i(y_i)` exactly (the forecast :math:`u_E D`: :math:`F_D(E/u_E)`).

    A forecast given as quantiles :math:`q_1 < \dots < q_K` at levels
    :math:`p_1 < \dots < p_K` fixes :math:`F_i(q_k) = p_k` and nothing between: with
    :math:`q_b < y_i < q_{b+1}` (:math:`p_0 = 0`, :math:`p_{K+1} = 1`),
    :math:`\mathrm{PIT}_i \sim U(p_b, p_{b+1})`, whose distribution is uniform when
    :math:`P(q_b < y \le q_{b+1}) = p_{b+1} - p_b` (a calibrated forecast), whatever the
    distribution between the quantiles; :math:`y_i = q_{b+1} = \dots = q_c` gives
    :math:`U(p_{b+1}, p_c)`. An interval of level L is the two quantiles
    :math:`(1 \mp L)/2` (the prediction is not assumed to be a median). ``generative``
    then plays no part.

    For an ensemble of S members, :math:`F_i` is the empirical CDF of the members *and*
    :math:`y_i` (S + 1 values): with :math:`b` members below :math:`y_i` and :math:`t` equal
    to it, :math:`\mathrm{PIT}_i \sim U(b/(S+1), (b + t + 1)/(S+1))`, the randomised rank of
    :math:`y_i` among the S + 1 values (ties broken at random), scaled to (0, 1). When
    :math:`y_i` and the members are exchangeable (a calibrated ensemble) that rank is uniform
    on :math:`\{0, \dots, S\}`, so the PIT is exactly U(0, 1), ties or not. (The empirical CDF
    of the members alone would give the atoms 0 and 1 a probability :math:`1/(S+1)` each.)

    References
    ----------
    - Gneiting et al. (2007): the PIT of a calibrated forecast is uniform; its randomised
      form where the predictive CDF jumps.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_arrays([0.0, 1.0], [1.0, 2.0])
    >>> uqviz.pit(ds)["PIT"].values.round(4).tolist()
    [0.5, 0.6915]
    >>> ens = uqviz.from_predictions([1.0], None, samples=[[0.0, 1.0, 1.0, 2.0]])
    >>> 0.2 <= float(uqviz.pit(ens, rng=0)["PIT"][0]) <= 0.8  # rank 1, 2 or 3 of 0..4
    True
    """
    out = map_datasets(_pit_one, data, rng=rng, generative=generative)
    out.attrs.update(_settings(generative, rng, forecast=_forms(data)))
    return out


def _forms(data):
    if isinstance(data, xr.Dataset):
        return data.attrs.get("forecast", "std")
    forms = {c.to_dataset().attrs.get("forecast", "std") for c in data.children.values()}
    return forms.pop() if len(forms) == 1 else "mixed"


def _effective_tests(tests, n, n_eff):
    """The KS and Cramér-von Mises p-values of grouped points: their statistics referred to
    the null distributions of ``n_eff`` independent points (Kish): KS's exact ``kstwo`` of
    ``n_eff``, the CvM statistic scaled by ``n_eff / n`` against its limit."""
    return {
        **tests,
        "ks_p_value": float(np.clip(sps.kstwo.sf(tests["ks_statistic"], n_eff), 0.0, 1.0)),
        "cvm_p_value": pit_kernels.cvm_sf_asymptotic(tests["cvm_statistic"] * n_eff / n),
    }


def _moments(u, ci, deff=1.0):
    """``(mean, lo, hi, var, lo, hi)``: normal-approximation intervals of the PIT moments
    (their se inflated by ``sqrt(deff)`` for grouped points)."""
    n = u.size
    z = float(special.ndtri((1.0 + ci) / 2.0))
    mean = float(np.mean(u))
    dev = u - mean
    var = float(np.sum(dev * dev) / max(n - 1, 1))
    m4 = float(np.mean(dev**4))
    se_mean = np.sqrt(var * deff / n)
    se_var = np.sqrt(max(m4 - var * var, 0.0) * deff / n)
    return mean, mean - z * se_mean, mean + z * se_mean, var, var - z * se_var, var + z * se_var


def _band(n, ci, n_band, seed):
    lo, hi, gamma = pit_kernels.simultaneous_band(n, PIT_GRID, ci, n_band, seed)
    return lo, hi, gamma


def pit_design_effect(u, codes):
    """The design effect of the PIT ECDF of grouped points: the largest over ``PIT_GRID`` of
    the cluster-robust design effects of the shares ``F_n(z)`` (>= 1;
    :func:`uqviz._array.clusters.design_effect_of_counts`).

    Examples
    --------
    >>> u = np.repeat(np.linspace(0.05, 0.95, 10), 3)  # three copies in each group
    >>> round(float(pit_design_effect(u, np.repeat(np.arange(10), 3))), 3)
    3.333
    """
    counts = clusters_kernels.group_counts_below(u, codes, PIT_GRID)
    sizes = np.bincount(codes)
    return float(np.max(clusters_kernels.design_effect_of_counts(counts, sizes[sizes > 0])))


def _grouped(u, ds):
    """``(n_eff, deff)``: the effective number of points M / deff (Kish) of grouped points,
    else ``(M, None)``."""
    codes = data_group_codes(ds)
    if codes is None:
        return u.size, None
    deff = pit_design_effect(u, codes)
    return max(2, int(np.rint(u.size / deff))), deff


def _validate_one(ds, *, rng, generative, n_bins, ci, n_band):
    rng = checks.rng(rng)
    u = pit_values(ds, generative, rng)
    n = u.size
    if n < 2:
        raise ValueError(f"validate_pit: need at least 2 points, got {n}")
    n_eff, deff = _grouped(u, ds)
    us = np.sort(u)
    k = default_histogram_bins(n) if n_bins is None else n_bins
    counts = pit_kernels.histogram_counts(u, k)
    c_lo, c_hi = pit_kernels.binomial_band(n_eff, 1.0 / k, ci)
    tests = pit_kernels.uniformity(us)
    mean, m_lo, m_hi, var, v_lo, v_hi = _moments(u, ci, 1.0 if deff is None else n / n_eff)
    seed = seeds.kernel_seed(rng)
    band_lo, band_hi, gamma = _band(n_eff, ci, n_band, seed)
    ecdf = pit_kernels.ecdf_counts(us, PIT_GRID)
    extra = {}
    if deff is not None:  # the band of n_eff points, the ECDF as shares
        band_lo, band_hi = band_lo * n / n_eff, band_hi * n / n_eff
        c_lo, c_hi = c_lo * n / n_eff, c_hi * n / n_eff
        tests = _effective_tests(tests, n, n_eff)
        extra["design_effect"] = ((), deff)
    valid = bool(np.all((band_lo <= ecdf) & (ecdf <= band_hi)))
    ecdf_eff = ecdf if deff is None else np.rint(ecdf * n_eff / n).astype(np.int64)
    band_p = pit_kernels.band_p_value(ecdf_eff, n_eff, PIT_GRID, n_band, seed)
    edges = np.linspace(0.0, 1.0, k + 1)
    out = xr.Dataset(
        {
            "pit_count": ("bin", counts.astype(np.int64)),
            "pit_count_lower": ("bin", np.full(k, float(c_lo))),
            "pit_count_upper": ("bin", np.full(k, float(c_hi))),
            **{name: ((), value) for name, value in tests.items()},
            "pit_mean": ((), mean),
            "pit_mean_lower": ((), m_lo),
            "pit_mean_upper": ((), m_hi),
            "pit_var": ((), var),
            "pit_var_lower": ((), v_lo),
            "pit_var_upper": ((), v_hi),
            "ecdf_difference": ("pit_grid", ecdf / n - PIT_GRID),
            "ecdf_difference_lower": ("pit_grid", band_lo / n - PIT_GRID),
            "ecdf_difference_upper": ("pit_grid", band_hi / n - PIT_GRID),
            "valid": ((), valid),
            "band_p_value": ((), band_p),
            "n_points": ((), n),
            **extra,
        },
        coords={
            "bin": np.arange(k),
            "bin_lower": ("bin", edges[:-1]),
            "bin_upper": ("bin", edges[1:]),
            "bin_center": ("bin", (edges[:-1] + edges[1:]) / 2),
            "pit_grid": PIT_GRID,
        },
    )
    out.attrs["band_level"] = gamma
    if deff is not None:
        out.attrs["n_groups"] = int(np.unique(data_group_codes(ds)).size)
    return out


def validate_pit(data, *, n_bins=None, ci=0.95, generative="normal", rng=None, n_band=N_BAND):
    r"""Is the PIT uniform? Histogram, KS and Cramér–von Mises tests, moments, ECDF band.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        As in :func:`pit`; a DataTree gives one result per dataset, on dim ``dataset``.
    n_bins : int, optional
        Bins of the PIT histogram; ``None``: 20, fewer so that each bin expects at least 10
        points (``min(20, M // 10)``, at least 1).
    ci : float, default 0.95
        Level of the binomial band of each bin, of the moment intervals and of the
        simultaneous ECDF band.
    generative : str or Generative, default "normal"
        D of the forecast ``uE * D`` and of the tails of quantiles and intervals
        (:func:`pit`).
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Stream of the PIT randomisation, then of the band's simulation.
    n_band : int, default 3000
        Simulated uniform ECDFs that calibrate the simultaneous band (>= 2).

    Returns
    -------
    xarray.Dataset
        - on ``bin`` (coords ``bin_lower``, ``bin_upper``, ``bin_center``): ``pit_count``,
          the histogram, and ``pit_count_lower``, ``pit_count_upper``, the central ``ci``
          interval of a bin's count under uniformity (per bin, not simultaneous);
        - ``ks_statistic``, ``ks_p_value`` (:func:`scipy.stats.kstest` against U(0, 1)),
          ``cvm_statistic``, ``cvm_p_value`` (:func:`scipy.stats.cramervonmises`);
        - ``pit_mean`` and ``pit_var`` with their ``_lower``/``_upper`` intervals (compare
          with 1/2 and 1/12);
        - on ``pit_grid`` (99 values 0.01, ..., 0.99): ``ecdf_difference`` (ECDF minus
          identity) and its simultaneous band ``ecdf_difference_lower``,
          ``ecdf_difference_upper``;
        - ``valid``: the ECDF lies inside the simultaneous band at every grid value (the
          verdict: "OK" when True, "fails" when False); ``band_p_value``, the Monte Carlo
          p-value of the same test (consistent with ``valid``, Notes); ``n_points``;
          for grouped points, ``design_effect`` (Notes).

        attrs: the settings, ``band_level`` (the pointwise level that makes the band
        simultaneous), ``forecast``, ``citation``; ``n_groups`` for grouped points.

    Raises
    ------
    ValueError
        As in :func:`pit`; fewer than 2 points; bad options.

    See Also
    --------
    uqviz.pit : the PIT values.
    uqviz.local_pit : the same per bin of uE or of a feature.
    uqviz.plots.pit.pit_histogram, uqviz.plots.pit.pit_ecdf_difference : the figures.

    Notes
    -----
    With :math:`u_{(1)} \le \dots \le u_{(n)}` the sorted PIT values (one sort),

    .. math::

       D = \max_i \max\left(\frac{i}{n} - u_{(i)}, u_{(i)} - \frac{i-1}{n}\right), \qquad
       W = \frac{1}{12n} + \sum_{i=1}^n \left(\frac{2i-1}{2n} - u_{(i)}\right)^2,

    with p-values :math:`P(D_n \ge D)` (exact, ``scipy.stats.kstwo``, as ``kstest``) and
    that of ``cramervonmises``. The histogram band is the central ``ci`` interval of
    Binomial(n, 1/K) (``scipy.stats.binom.ppf`` at :math:`(1 \mp \mathrm{ci})/2`), per bin.
    The moment intervals are normal approximations (central limit theorem):
    :math:`\bar u \pm z\,s/\sqrt n` and :math:`s^2 \pm z\sqrt{(m_4 - s^4)/n}`,
    :math:`z = \Phi^{-1}((1 + \mathrm{ci})/2)`, :math:`m_4` the fourth central moment; a
    uniform PIT has mean 1/2 and variance 1/12 (larger: an overconfident forecast, smaller:
    an underconfident one).

    The simultaneous band (Säilynoja et al. (2022), the simulation method): the count
    :math:`nF_n(z_k)` of a uniform sample is Binomial(n, :math:`z_k`); ``n_band`` uniform
    ECDFs are simulated on the grid (multinomial counts of the grid's intervals), each gives
    the smallest pointwise level :math:`1 - 2\min_k \min(P(X_k \le c_k), P(X_k \ge c_k))`
    whose central binomial intervals contain it all, and the ``ci`` quantile of these levels,
    :math:`\gamma` (``band_level``), makes the central :math:`\gamma` intervals of
    Binomial(n, :math:`z_k`) a band that holds the whole ECDF of a uniform sample with
    probability ``ci``. This is the simulation method of Säilynoja et al. (2022), as in
    ArviZ's ``ecdf_confidence_band(method="simulated")``; the band is cached per (n, grid, ci,
    n_band, seed), and its false-alarm rate on uniform PIT values is ``1 - ci`` up to the
    Monte Carlo error of ``n_band`` simulations (over seeds, an sd of about 0.004 for 3 000,
    0.007 for 1 000).

    Points in groups (a ``group`` coordinate) are not independent: the ECDF of M grouped
    points varies as that of :math:`n = M / d` independent ones (Kish), :math:`d \ge 1` the
    largest over the grid of the cluster-robust design effects of the shares
    :math:`F_n(z_k)` (``design_effect``, ``uqviz.predictive.pit.pit_design_effect``;
    Cameron & Miller (2015)). The bands, ``band_p_value`` (of the ECDF rescaled to n
    points), the moments' intervals (se times :math:`\sqrt{M / n}`) and the KS (``kstwo``
    of n) and Cramér-von Mises (the statistic times n / M, against its limit) p-values are
    then those of n points. On calibrated groups of 30 points with z-scores correlated by
    0.5 the band fails 0 of 20 sets, against 16 of 20 with M points
    (docs/guide/verdicts.md).

    ``band_p_value`` is the p-value of that band test, for a family of tests (the report's
    and the CLI gate's Holm adjustment): with :math:`\gamma_{\mathrm{data}}` the smallest
    pointwise level whose central binomial intervals hold the data's ECDF and
    :math:`\gamma_1, \dots, \gamma_N` those of the ``n_band`` simulated uniform ECDFs (the
    same ones that set ``band_level``),

    .. math::

       p = \frac{1 + \#\{j : \gamma_j \ge \gamma_{\mathrm{data}}\}}{1 + N}

    (Hope (1968): exact, :math:`P(p \le \alpha) \le \alpha` for uniform PIT values). It
    agrees with ``valid`` up to the discreteness of the simulated levels: ``valid`` is
    :math:`\gamma_{\mathrm{data}} \le \gamma` (``band_level``, the ``ci`` quantile of the
    :math:`\gamma_j`), so a valid ECDF has :math:`p > 1 - \mathrm{ci}`, and an ECDF outside
    the band has :math:`p \le 1 - \mathrm{ci} + 2/(1 + N)` (``p`` = 151/3001 = 0.0503
    is the boundary of the defaults, on both sides).

    References
    ----------
    - Gneiting et al. (2007): PIT histograms and calibration.
    - Säilynoja et al. (2022): the simultaneous ECDF band.
    - Hope (1968): the Monte Carlo p-value.
    - Cameron & Miller (2015): the cluster-robust variance of grouped points.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> res = uqviz.validate_pit(uqviz.synthetic.default_example(), rng=0)
    >>> int(res["pit_count"].sum()), res.sizes["bin"], bool(res["valid"])
    (5000, 20, True)
    >>> 0.05 < float(res["ks_p_value"]) and 0.05 < float(res["cvm_p_value"])
    True
    """
    n_bins = checks.optional_count("n_bins", n_bins, minimum=1)
    ci = checks.probability("ci", ci)
    n_band = checks.count("n_band", n_band, minimum=2)
    standard_distribution(generative)
    out = map_datasets(
        _validate_one, data, rng=rng, generative=generative, n_bins=n_bins, ci=ci, n_band=n_band
    )
    used = int(out.sizes["bin"]) if "dataset" not in out.dims else n_bins
    out.attrs.update(
        _settings(
            generative,
            rng,
            n_bins=used,
            ci=ci,
            n_band=n_band,
            forecast=_forms(data),
            binomial_interval="central ci interval of Binomial(n, 1/n_bins), per bin",
            test="Kolmogorov-Smirnov and Cramer-von Mises against U(0, 1)",
        )
    )
    return out


def _local_one(ds, *, rng, generative, conditioning, n_bins, binning, min_count, edges, ci, n_band):
    warn_points_independent(ds, "local_pit")
    rng = checks.rng(rng)
    u = pit_values(ds, generative, rng)
    _, x = conditioning_values(ds, conditioning)
    n = (
        default_n_bins(x.size)
        if n_bins is None and binning in ("equal_count", "equal_width")
        else n_bins
    )
    bins = compute_bins(x, n_bins=n, binning=binning, min_count=min_count, edges=edges)
    seed = seeds.kernel_seed(rng)
    k = bins.n_bins
    rows = {
        name: np.full(k, np.nan)
        for name in (
            "pit_mean",
            "pit_mean_lower",
            "pit_mean_upper",
            "pit_var",
            "pit_var_lower",
            "pit_var_upper",
            "ks_statistic",
            "ks_p_value",
            "cvm_statistic",
            "cvm_p_value",
        )
    }
    valid = np.zeros(k, dtype=bool)
    for b in range(k):
        sel = bins.order[bins.starts[b] : bins.starts[b] + bins.sizes[b]]
        ub = np.sort(u[sel])
        if ub.size < 2:
            continue
        for name, value in zip(
            (
                "pit_mean",
                "pit_mean_lower",
                "pit_mean_upper",
                "pit_var",
                "pit_var_lower",
                "pit_var_upper",
            ),
            _moments(ub, ci),
        ):
            rows[name][b] = value
        for name, value in pit_kernels.uniformity(ub).items():
            rows[name][b] = value
        lo, hi, _ = _band(ub.size, ci, n_band, seed)
        ecdf = pit_kernels.ecdf_counts(ub, PIT_GRID)
        valid[b] = bool(np.all((lo <= ecdf) & (ecdf <= hi)))
    n_valid = int(valid.sum())
    out = xr.Dataset(
        {
            **{name: ("bin", v) for name, v in rows.items()},
            "valid": ("bin", valid),
            "fv": ((), n_valid / k),
            "n_valid": ((), n_valid),
            "n_bins": ((), k),
            "n_points": ((), u.size),
        },
        coords=bin_coords(bins),
    )
    out.attrs.update(bins.attrs)
    return out


def local_pit(
    data,
    *,
    conditioning="uE",
    n_bins=None,
    binning="equal_count",
    min_count=None,
    edges=None,
    ci=0.95,
    generative="normal",
    rng=None,
    n_band=N_BAND,
):
    r"""PIT uniformity per bin of uE or of a feature: moments, KS, CvM and the band verdict.

    The PIT values of the whole set (:func:`pit`) are cut into bins of the conditioning
    variable (the bins of :func:`uqviz.local_calibration`); in each bin, the PIT mean and
    variance with their intervals, the KS and Cramér–von Mises tests and ``valid``, the
    ECDF inside its simultaneous band (the rule of :func:`validate_pit`), and the fraction
    of valid bins ``fv``. A forecast whose PIT is uniform overall but not per bin of uE is
    not consistent (Pernot (2023)); per bin of a feature, not adaptive.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        As in :func:`pit`; a DataTree gives one result per dataset, on dim ``dataset``.
    conditioning : str or array_like, default "uE"
        Variable the bins are cut on: ``"uE"``, a feature name, or one value per point.
    n_bins : int, optional
        Number of bins (``None``: ``min(round(sqrt(M)), M // 100)``, at least 1).
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the bins are cut (:func:`uqviz.local_calibration`).
    min_count : int, optional
        Fewest points a bin may hold, smaller bins merged (``None``: 100 for
        ``"stratified"``, else no merging).
    edges : array_like, optional
        Bin edges for ``binning="edges"``.
    ci : float, default 0.95
        Level of the intervals and of each bin's simultaneous band.
    generative : str or Generative, default "normal"
        D of the forecast ``uE * D`` and of the tails of quantiles and intervals
        (:func:`pit`).
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Stream of the PIT randomisation, then of the bands' simulation.
    n_band : int, default 3000
        As in :func:`validate_pit` (one band per distinct bin size, cached).

    Returns
    -------
    xarray.Dataset
        On ``bin`` (coords ``bin_lower``, ``bin_upper``, ``bin_center``, ``count``):
        ``pit_mean``, ``pit_var`` with ``_lower``/``_upper``, ``ks_statistic``,
        ``ks_p_value``, ``cvm_statistic``, ``cvm_p_value``, ``valid``; ``fv`` (fraction of
        valid bins), ``n_valid``, ``n_bins``, ``n_points``.

    Raises
    ------
    ValueError
        As in :func:`validate_pit`; an unknown or constant conditioning variable.

    See Also
    --------
    uqviz.validate_pit : the whole set.
    uqviz.local_calibration : local calibration statistics per bin.

    Notes
    -----
    Each bin's tests are those of :func:`validate_pit` on the PIT values of the bin. Under
    calibration each bin is valid with probability ``ci``, so

    .. math::

       f_v = \frac{1}{K}\sum_{k=1}^K \mathbf{1}(\text{ECDF of bin } k \text{ inside its band})

    is about ``ci``; the bins are tested separately (no multiplicity adjustment).

    References
    ----------
    - Pernot (2023): consistency and adaptivity by bins of uE and of the features.
    - Säilynoja et al. (2022): the simultaneous ECDF band.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> res = uqviz.local_pit(uqviz.synthetic.default_example(), n_bins=5, rng=0)
    >>> res.sizes["bin"], int(res["count"].sum()), float(res["fv"]) >= 0.6
    (5, 5000, True)
    """
    n_bins = checks.optional_count("n_bins", n_bins, minimum=1)
    ci = checks.probability("ci", ci)
    n_band = checks.count("n_band", n_band, minimum=2)
    standard_distribution(generative)
    out = map_datasets(
        _local_one,
        data,
        rng=rng,
        generative=generative,
        conditioning=conditioning,
        n_bins=n_bins,
        binning=binning,
        min_count=min_count,
        edges=edges,
        ci=ci,
        n_band=n_band,
    )
    cond = conditioning if isinstance(conditioning, str) else "values"
    used = int(out["n_bins"].max()) if n_bins is None else n_bins
    out.attrs.update(
        _settings(
            generative,
            rng,
            conditioning=cond,
            n_bins=used,
            binning=binning,
            ci=ci,
            n_band=n_band,
            forecast=_forms(data),
        )
    )
    return out
