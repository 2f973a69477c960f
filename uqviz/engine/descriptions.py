"""What the result variables are: their ``long_name`` and ``units`` attrs, filled in one place.

Every data variable of every public result Dataset has a ``long_name`` (shown by xarray's
repr and used as an axis label by xarray's plots), and ``units`` where the data have units:
when ``E`` (and ``uE``) of the input carry a ``units`` attr, a quantity in the units of E
(RMSE, RMV, MAE, a prediction interval's width, the bins of uE, ...) or of their square (MSE,
MV, UCE, uE^2) gets them; dimensionless quantities (ZMS, RCE, ENCE, z-scores, coverages,
p-values, counts) get none.

:func:`describe` fills what a result lacks from :data:`LONG_NAMES` (a long_name set where a
variable is built wins: it may say more, such as the level of a quantile);
:func:`uqviz.engine.tree.map_datasets` applies it to each dataset's result, and the functions
that build their results otherwise call it before they return. The mapping is keyed by the
result variable names of docs/conventions.md, "Result names": a renamed variable is renamed
here.

Examples
--------
>>> import uqviz
>>> ds = uqviz.from_arrays([0.1, -0.3, 0.2, 0.5], [0.2, 0.3, 0.2, 0.4], units="eV")
>>> res = describe(xr.Dataset({"estimate": ((), 0.3), "valid": ((), True)}), ds,
...                statistics=("RMSE",))
>>> res["estimate"].attrs, res["valid"].attrs["long_name"]  # doctest: +NORMALIZE_WHITESPACE
({'long_name': 'value of the statistic on the data', 'units': 'eV'},
 'verdict: the reference lies inside the interval')
"""

from __future__ import annotations

from collections.abc import Iterable

import xarray as xr

__all__ = [
    "LONG_NAMES",
    "STATISTIC_UNITS",
    "UNITS",
    "STATISTIC_VALUED",
    "describe",
    "data_units",
    "statistics_in",
    "units_power",
]

#: long_name of every result variable of the public functions, keyed by its name
LONG_NAMES: dict[str, str] = {
    # the contract's variables (docs/conventions.md, "Result names")
    "estimate": "value of the statistic on the data",
    "ci_lower": "lower limit of the confidence interval of the estimate",
    "ci_upper": "upper limit of the confidence interval of the estimate",
    "se": "standard error of the estimate",
    "bias": "bias of the estimate",
    "reference": "value of the statistic for a calibrated model (reference)",
    "reference_se": "Monte Carlo standard error of the reference",
    "reference_lower": "lower limit of the interval of the reference",
    "reference_upper": "upper limit of the interval of the reference",
    "zeta": "zeta-score of the estimate against the reference (Pernot (2024b), eq. 14)",
    "valid": "verdict: the reference lies inside the interval",
    "p_value": "p-value of the test",
    "p_adjusted": "p-value adjusted for the family of tests (Holm 1979)",
    "null_p_value": "p-value of the estimate under calibrated Student-t z-scores as "
    "heavy-tailed as the data's (the tail-allowing test)",
    "verdict_p_value": "the p-value the verdict rests on",
    "tail_df": "degrees of freedom of the Student-t fitted to the z-scores",
    "tail_df_lower": "heaviest Student-t consistent with the z-scores",
    "tail_df_upper": "lightest Student-t consistent with the z-scores (inf: normal)",
    "reliable": "no screen questions the test (else the verdict is unreliable)",
    "n_points": "number of points",
    "n_bins": "number of bins",
    "verdict": "verdict (OK, fails, unreliable, not tested)",
    "reason": "the reason for the verdict",
    "z0": "bias correction z0 of the BCa interval",
    # average calibration: tailedness screen, decimation, distribution fits
    "beta_gm": "robust skewness beta_GM",
    "kappa_cs": "robust excess kurtosis kappa_CS",
    "threshold": "limit of beta_GM (Pernot (2024b), Table II)",
    "full_estimate": "statistic on the full set",
    "delta": "change of the statistic from the full set",
    "ci_lower_halfwidth": "ci_lower - estimate of the full set",
    "ci_upper_halfwidth": "ci_upper - estimate of the full set",
    "outside_ci": "the change lies outside the interval of the full set",
    "n_removed": "points removed",
    "nu": "shape parameter nu of the fitted distribution",
    "loc": "location of the fitted distribution",
    "scale": "scale of the fitted distribution",
    "ks_distance": "Kolmogorov-Smirnov distance of the fitted distribution",
    "loglik": "maximised log-likelihood",
    "mean": "sample mean",
    "sd": "sample standard deviation (ddof=1)",
    # adversarial groups (uqviz.groups)
    "share_valid": "share of the random groups whose interval holds the reference",
    "share_valid_lower": "lower limit of the Wilson interval of the share of valid groups",
    "share_valid_upper": "upper limit of the Wilson interval of the share of valid groups",
    "reference_share": "share of valid groups on simulated calibrated sets (same groups)",
    "reference_share_lower": "lower limit of the band of the share of calibrated data",
    "reference_share_upper": "upper limit of the band of the share of calibrated data",
    "below_band": "the share of valid groups lies below the band of calibrated data",
    "reference_estimate": "the statistic of the group on its simulated calibrated set",
    "group_score": "calibration error (MACE or RMSCE) of each random group",
    "worst_score": "worst calibration error over the groups of a trial",
    "worst_mean": "mean over the trials of the worst calibration error (score_mean)",
    "worst_sd": "standard deviation (ddof=1) over the trials of the worst calibration error "
    "(uncertainty-toolbox's score_stderr)",
    # conditional calibration
    "beta_gm_z2": "robust skewness beta_GM of Z^2 in the bin",
    "heavy_tail": "flagged heavy-tailed: beta_GM above its limit (Pernot (2024b), Table II)",
    "null_coverage": "probability that the bin counts as valid for calibrated data",
    "null_coverage_se": "Monte Carlo standard error of null_coverage",
    "n_valid": "number of valid bins",
    "n_unreliable": "number of unreliable bins (heavy-tailed or without interval)",
    "acf": "autocorrelation of the per-bin values",
    "band": "half-width of the white-noise band of the autocorrelation (1.96/sqrt(n))",
    "rmse": "root mean squared error (RMSE) in the bin",
    "rmse_lower": "lower limit of the confidence interval of the RMSE",
    "rmse_upper": "upper limit of the confidence interval of the RMSE",
    "rmv": "root mean variance (RMV) in the bin",
    "z": "z-score E/uE",
    "running_mean": "running mean of the z-scores",
    "running_ms": "running mean of the squared z-scores",
    "fv": "fraction of valid bins f_v, mean over the orderings",
    "fv_lower": "lower limit of the interval of f_v over the orderings",
    "fv_upper": "upper limit of the interval of f_v over the orderings",
    "fv_binomial": "binomial f_v (n_bins draws at each ordering's f_v), mean over the orderings",
    "fv_binomial_lower": "lower limit of the interval of the binomial f_v",
    "fv_binomial_upper": "upper limit of the interval of the binomial f_v",
    "fv_data": "f_v of the data's own ordering",
    "fv_data_lower": "lower limit of the Wilson interval of f_v of the data's ordering",
    "fv_data_upper": "upper limit of the Wilson interval of f_v of the data's ordering",
    "fv_ordering": "f_v of each ordering",
    "fv_binomial_ordering": "binomial f_v of each ordering",
    "estimate_data": "value of the statistic in each bin of the data's ordering",
    "valid_data": "the bin of the data's ordering is valid",
    "heavy_tail_data": "the bin of the data's ordering is flagged heavy-tailed",
    # simulated references, the workflow, size dependence, confidence curves
    "sample_sd": "standard deviation of the simulated values",
    "se_negligible": "twice the reference's Monte Carlo se is below the interval's half-width",
    "mc_p_value": "one-sided Monte Carlo p-value under each D",
    "tail_p_value": "Monte Carlo p-value of tail_ratio under each D",
    "tail_ratio": "tail ratio of the z-scores",
    "tail_limit": "largest tail ratio accepted",
    "reference_spread": "spread of the references over the generative distributions D",
    "sensitivity_threshold": "largest spread of the references that leaves the verdict to D "
    "(k combined standard errors)",
    "sensitive_to_D": "the references differ by more than sensitivity_threshold",
    "scheme": "the validation scheme behind the verdict",
    "x": "sqrt(N/M)",
    "smallest_bin": "points in the smallest bin",
    "in_fit": "the number of bins is in the fit",
    "n_fit": "numbers of bins in the fit",
    "slope": "slope of the fit",
    "slope_se": "standard error of the slope",
    "intercept": "intercept of the fit (the statistic at infinite bin size)",
    "intercept_se": "standard error of the intercept",
    "intercept_lower": "lower limit of the confidence interval of the intercept",
    "intercept_upper": "upper limit of the confidence interval of the intercept",
    "intercept_boot_se": "bootstrap standard error of the intercept",
    "intercept_boot_bias": "bootstrap bias of the intercept",
    "reference_intercept": "intercept of the fit for calibrated data",
    "reference_slope": "slope of the fit for calibrated data",
    "sigma": "residual standard deviation of the fit",
    "paper_intercept": "intercept published in Pernot (2024c)",
    "paper_slope": "slope published in Pernot (2024c)",
    "oracle": "oracle curve (largest |E| removed first)",
    "n_kept": "points kept",
    "uE_threshold": "largest uE kept",
    "auco": "area between the data and oracle curves",
    "dfpr": "distance from the probabilistic reference (DFPR)",
    "dfpr_limit": "largest DFPR of calibrated sets accepted",
    # quantile calibration
    "nees": "normalised estimation error squared (NEES)",
    "nees_sum": "sum of the NEES",
    "dof": "degrees of freedom of the chi-square test",
    "qce": "quantile calibration error (QCE)",
    "m_qce": "marginal quantile calibration error (M-QCE)",
    "m_qce_lower": "lower limit of the confidence interval of the M-QCE",
    "m_qce_upper": "upper limit of the confidence interval of the M-QCE",
    "c_qce": "conditional quantile calibration error (C-QCE)",
    "coverage": "share of points inside the central region",
    "coverage_lower": "lower limit of the confidence interval of the coverage",
    "coverage_upper": "upper limit of the confidence interval of the coverage",
    "bin_count": "points in the bin",
    "bin_coverage": "share of the bin's points inside the central region",
    "qce_map": "quantile calibration error of the bin",
    "n_inside": "points inside the interval",
    # coverage across groups (group_coverage)
    "coverage_reference": "coverage of a calibrated group (the level)",
    "coverage_reference_lower": "lower limit of the binomial band of a calibrated group's coverage",
    "coverage_reference_upper": "upper limit of the binomial band of a calibrated group's coverage",
    # intervals and scores
    "picp": "prediction interval coverage probability (PICP)",
    "picp_lower": "lower limit of the confidence interval of the PICP",
    "picp_upper": "upper limit of the confidence interval of the PICP",
    "mpiw": "mean prediction interval width (MPIW)",
    "multiplier": "quantile q_D((1 + p)/2) multiplying uE",
    "observed": "observed proportion inside the interval",
    "observed_lower": "lower limit of the confidence interval of the observed proportion",
    "observed_upper": "upper limit of the confidence interval of the observed proportion",
    "miscalibration_area": "miscalibration area of the calibration curve",
    "mace": "mean absolute calibration error (MACE)",
    "rmsce": "root mean squared calibration error (RMSCE)",
    "sharpness": "sharpness sqrt(<uE^2>)",
    "sharpness_lower": "lower limit of the confidence interval of the sharpness",
    "sharpness_upper": "upper limit of the confidence interval of the sharpness",
    "dispersion": "dispersion sd(uE)/<uE>",
    "dispersion_lower": "lower limit of the confidence interval of the dispersion",
    "dispersion_upper": "upper limit of the confidence interval of the dispersion",
    "forecast": "form of the forecast scored (samples, quantiles, interval, std, variance)",
    "check": "quantile (pinball) score at the level",
    "check_lower": "lower limit of the confidence interval of the quantile score",
    "check_upper": "upper limit of the confidence interval of the quantile score",
    "score_a": "mean score of forecast a",
    "score_b": "mean score of forecast b",
    "comparison": "which forecast (model) scores better: the interval of the difference decides",
    # comparison of models (uqviz.compare_models)
    "distance": "distance of the estimate from its reference (the score itself): smaller is better",
    "difference": "distance of model minus distance of versus (paired bootstrap)",
    "difference_lower": "lower limit of the confidence interval of the difference",
    "difference_upper": "upper limit of the confidence interval of the difference",
    "rank_probability": "share of the bootstrap replicates in which the model has the rank",
    "sip": "systematic improvement probability of model over versus (Pernot & Savin (2020a))",
    "mean_gain": "mean improvement of model over versus where it improves",
    "mean_loss": "mean deterioration (negative) of model over versus where it worsens",
    "forecast_a": "form of forecast a",
    "forecast_b": "form of forecast b",
    # probability integral transform (uqviz.predictive)
    "PIT": "probability integral transform F(y) of the forecast (randomised within atoms)",
    "pit_count": "PIT values in the bin",
    "pit_count_lower": "lower limit of the central interval of the count of a uniform PIT",
    "pit_count_upper": "upper limit of the central interval of the count of a uniform PIT",
    "ks_statistic": "Kolmogorov-Smirnov statistic of the PIT against U(0, 1)",
    "ks_p_value": "p-value of the Kolmogorov-Smirnov test of the PIT",
    "cvm_statistic": "Cramer-von Mises statistic of the PIT against U(0, 1)",
    "cvm_p_value": "p-value of the Cramer-von Mises test of the PIT",
    "pit_mean": "mean of the PIT (1/2 when uniform)",
    "pit_mean_lower": "lower limit of the confidence interval of the PIT mean",
    "pit_mean_upper": "upper limit of the confidence interval of the PIT mean",
    "pit_var": "variance of the PIT (1/12 when uniform)",
    "pit_var_lower": "lower limit of the confidence interval of the PIT variance",
    "pit_var_upper": "upper limit of the confidence interval of the PIT variance",
    "ecdf_difference": "ECDF of the PIT minus the identity",
    "ecdf_difference_lower": "lower limit of the simultaneous band of the ECDF difference",
    "ecdf_difference_upper": "upper limit of the simultaneous band of the ECDF difference",
    "band_p_value": "Monte Carlo p-value of the simultaneous band test of the PIT ECDF",
    # recalibration parameters
    "factor": "scaling factor of uE",
    "a": "slope a of uE' = a max(uE, u_min) + b",
    "b": "intercept b of uE' = a max(uE, u_min) + b",
    "u_min": "smallest uE of the calibration set",
    "nll": "Gaussian negative log-likelihood at the optimum",
    "uE2": "uE^2 at the knots",
    "uE2_recalibrated": "recalibrated uE^2 at the knots",
    "floor": "smallest recalibrated uE^2",
    "n_floored": "calibration points raised to the floor",
    "score_quantile": "k-th smallest conformity score of the bin (conformal scale or CQR margin)",
    "score_rank": "rank k = ceil((n + 1) level) of the score quantile",
    "nominal": "nominal probability at the knots of the quantile recalibration map",
    # Monte Carlo studies
    "n_datasets": "datasets done",
    "n_undefined": "datasets whose interval could not be computed (counted not valid)",
    "done": "the dataset is done",
    "estimate_per_dataset": "value of the statistic on each dataset",
    "excess_per_dataset": "statistic - reference on each dataset",
    "beta_gm_per_dataset": "robust skewness beta_GM of each dataset",
    "validation_probability": "validation probability: share of datasets with |zeta| <= 1",
    "validation_probability_lower": (
        "lower limit of the Wilson interval of the validation probability"
    ),
    "validation_probability_upper": (
        "upper limit of the Wilson interval of the validation probability"
    ),
    "fails": "rate of the verdict fails",
    "fails_se": "Monte Carlo standard error of the rate of fails",
    "fails_lower": "lower limit of the Wilson interval of the rate of fails",
    "fails_upper": "upper limit of the Wilson interval of the rate of fails",
    "n_fails": "datasets with the verdict fails",
    "unreliable": "rate of the verdict unreliable",
    "unreliable_se": "Monte Carlo standard error of the rate of unreliable",
    "unreliable_lower": "lower limit of the Wilson interval of the rate of unreliable",
    "unreliable_upper": "upper limit of the Wilson interval of the rate of unreliable",
    "not_tested": "rate of the verdict not tested",
    "miscalibrated": "the scenario is miscalibrated for the verdict (the rate of fails is a "
    "power, else a false-alarm rate)",
    "cost": "mean seconds per call of the verdict's family",
}

#: variables in the units of the statistic they hold (that of ``statistic``/``statistics``)
STATISTIC_VALUED = frozenset(
    {
        "estimate",
        "ci_lower",
        "ci_upper",
        "se",
        "bias",
        "reference",
        "reference_se",
        "reference_lower",
        "reference_upper",
        "sample_sd",
        "full_estimate",
        "delta",
        "ci_lower_halfwidth",
        "ci_upper_halfwidth",
        "estimate_data",
        "reference_spread",
        "sensitivity_threshold",
        "oracle",
        "auco",
        "dfpr",
        "dfpr_limit",
        "slope",
        "slope_se",
        "intercept",
        "intercept_se",
        "intercept_lower",
        "intercept_upper",
        "intercept_boot_se",
        "intercept_boot_bias",
        "reference_intercept",
        "reference_slope",
        "sigma",
        "reference_estimate",
    }
)

#: power of E's units of the variables whose units do not depend on a statistic
UNITS: dict[str, int] = {
    "rmse": 1,
    "rmse_lower": 1,
    "rmse_upper": 1,
    "rmv": 1,
    "mpiw": 1,
    "sharpness": 1,
    "sharpness_lower": 1,
    "sharpness_upper": 1,
    "uE_threshold": 1,
    "b": 1,
    "u_min": 1,
    "uE2": 2,
    "uE2_recalibrated": 2,
    "floor": 2,
    "check": 1,
    "check_lower": 1,
    "check_upper": 1,
}

#: power of E's units of a statistic (absent: dimensionless; None: no unit, as a logarithm)
STATISTIC_UNITS: dict[str, int | None] = {
    "MSE": 2,
    "MV": 2,
    "RMSE": 1,
    "RMV": 1,
    "MAE": 1,
    "UCE": 2,
    "NLL": None,
    "NLL_ref": None,
}

#: the statistics uqviz defines (not in STATISTIC_UNITS: dimensionless); a statistic
#: registered by a user has no known unit
_DIMENSIONLESS = frozenset(
    {
        "ZM",
        "ZMS",
        "ZVar",
        "RCE",
        "RCE2",
        "CC",
        "ENCE",
        "ZMSE",
        "PICP",
        "LZM",
        "LZMS",
        "ZISD",
        "RR",
        "LZV",
        "LZISD",
        "LRR",
        "MACE",
        "RMSCE",
    }
)


def data_units(data) -> str | None:
    """The units of E in ``data`` (its ``units`` attr, else the dataset's), or None.

    Examples
    --------
    >>> import uqviz
    >>> data_units(uqviz.from_arrays([0.1], [0.2], units="eV")), data_units(None)
    ('eV', None)
    """
    if not isinstance(data, xr.Dataset):
        return None
    units = data["E"].attrs.get("units") if "E" in data.variables else None
    units = units or data.attrs.get("units")
    return units if isinstance(units, str) and units.strip() else None


def statistics_in(options: dict) -> tuple | None:
    """The statistic names of an analysis' keyword options (``statistic``, ``statistics``,
    ``stat``, the ``error``/``error_statistic`` of a confidence curve); ``()`` when they are
    normalised.

    Examples
    --------
    >>> statistics_in({"statistics": ("ZMS", "RCE")}), statistics_in({"n_bins": 4})
    (('ZMS', 'RCE'), None)
    """
    if options.get("normalize"):
        return ()
    for key in ("statistic", "statistics", "stat", "error", "error_statistic"):
        if options.get(key) is not None:
            value = options[key]
            values = (
                [value]
                if isinstance(value, str) or not isinstance(value, Iterable)
                else list(value)
            )
            return tuple(getattr(v, "name", v) for v in values)
    return None


def units_power(statistics) -> int | None:
    """The common power of E's units of ``statistics`` (0: dimensionless), or None when
    they differ or one is unknown.

    Examples
    --------
    >>> units_power(("RMSE", "RMV")), units_power(("ZMS", "RCE")), units_power(("RMSE", "ZMS"))
    (1, 0, None)
    """
    powers = set()
    for name in statistics:
        if name in STATISTIC_UNITS:
            powers.add(STATISTIC_UNITS[name])
        elif name in _DIMENSIONLESS:
            powers.add(0)
        else:
            return None
    return powers.pop() if len(powers) == 1 else None


def _units(base: str, power: int) -> str:
    if power == 1:
        return base
    return f"({base})^{power}" if any(c in base for c in " /*^") else f"{base}^{power}"


def describe(result: xr.Dataset, data=None, *, statistics=None) -> xr.Dataset:
    """``result`` with a ``long_name`` on every data variable and ``units`` where known.

    Parameters
    ----------
    result : xarray.Dataset
        A result; its variables keep the attrs they have.
    data : xarray.Dataset, optional
        The dataset analysed: the units of its ``E`` give the units of the result.
    statistics : sequence of str, optional
        The statistics of the result (else its ``statistic`` coordinate or its
        ``statistic``/``statistics`` attrs); their units give those of the estimate.

    Returns
    -------
    xarray.Dataset
        A shallow copy (the data are shared, the attrs are not).

    Examples
    --------
    >>> res = describe(xr.Dataset({"zeta": ((), 0.5)}))
    >>> res["zeta"].attrs["long_name"]
    'zeta-score of the estimate against the reference (Pernot (2024b), eq. 14)'
    """
    out = result.copy(deep=False)
    for name, var in out.data_vars.items():
        if not var.attrs.get("long_name") and name in LONG_NAMES:
            var.attrs["long_name"] = LONG_NAMES[name]
        if var.dtype == bool:  # a flag has no units, whatever it was computed from
            var.attrs.pop("units", None)
    base = data_units(data)
    if base is None:
        return out
    if statistics is None:
        if "statistic" in out.coords and out["statistic"].ndim <= 1:
            statistics = [str(s) for s in out["statistic"].values.ravel()]
        else:
            found = out.attrs.get("statistic", out.attrs.get("statistics"))
            statistics = None if found is None else statistics_in({"statistic": found})
    stat_power = None if statistics is None else units_power(statistics)
    for name, var in out.data_vars.items():
        power = UNITS.get(str(name), stat_power if name in STATISTIC_VALUED else None)
        if power and not var.attrs.get("units"):
            var.attrs["units"] = _units(base, power)
    conditioning = out.attrs.get("conditioning")
    if conditioning == "uE":
        for name in ("bin_lower", "bin_upper", "bin_center"):
            if name in out.coords and not out[name].attrs.get("units"):
                out[name].attrs["units"] = base
    return out
