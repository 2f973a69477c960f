"""Figures of simulated references, validation schemes, extrapolation and confidence curves."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from matplotlib import ticker

from uqviz.engine import checks
from uqviz.engine.deprecation import renamed_options
from uqviz.plots._checks import choice, drawable
from uqviz.plots._svg import new_axes
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import COLORS, apply_style, get_ax, legend_options, set_title
from uqviz.plots._style import one_dataset as _one_dataset

__all__ = [
    "zeta_scores",
    "reference_sensitivity",
    "reference_distribution",
    "size_dependence",
    "extrapolation",
    "confidence_curve",
    "SCHEME_STYLES",
]

_BLUE, _RED = COLORS["series"][0], COLORS["series"][3]
#: scheme -> (colour, marker, filled): colour = D, marker = Sim (circle) / Sim2 (triangle)
SCHEME_STYLES = {
    "BS": ("#000000", "s", True),
    "SimN": (_BLUE, "o", True),
    "SimT": (_RED, "o", True),
    "Sim2N": (_BLUE, "^", False),
    "Sim2T": (_RED, "^", False),
}
_REF_LINESTYLES = {"normal": "--", "t6": ":"}
_MODEL_LABELS = {"normal": "NIG", "t6": "T6IG"}


# --------------------------------------------------------------------------
# Pernot (2024c), Figs. 6-7
# --------------------------------------------------------------------------
def _generative_as_scheme(results):
    """zeta of :func:`uqviz.validate_with_references` (dim ``generative``) on a ``scheme`` dim:
    SimN, SimT..."""
    z = results["zeta"]
    names = (
        np.unique(np.asarray(results["scheme"].values).ravel())
        if "scheme" in results
        else np.array(["Sim"])
    )
    scheme = str(names[0]) if names.size == 1 else "Sim"
    labels = [
        scheme + ("N" if g == "normal" else "T" if str(g).startswith("t") else f" {g}")
        for g in z["generative"].values
    ]
    return z.rename(generative="scheme").assign_coords(scheme=labels)


def _stack_schemes(results):
    made_by = "uqviz.validate_simulated or uqviz.validate_with_references"
    if isinstance(results, xr.Dataset):  # a Dataset is a Mapping too: test it first
        checks.result("results", results, made_by, variables=("zeta",))
        if "scheme" not in results["zeta"].dims and "generative" in results["zeta"].dims:
            return _generative_as_scheme(results)
        results = results["zeta"]
    elif isinstance(results, Mapping):
        parts = []
        for name, res in results.items():
            z = checks.result(f"results[{name!r}]", res, made_by, variables=("zeta",))["zeta"]
            if "statistic" in z.dims:  # validate_average output
                if z.sizes["statistic"] != 1:
                    raise ValueError(f"scheme {name!r}: select one statistic")
                z = z.isel(statistic=0, drop=True)
            parts.append(z.drop_vars([c for c in z.coords if c != "dataset"]))
        return xr.concat(parts, dim=xr.DataArray(list(results), dims="scheme", name="scheme"))
    if not isinstance(results, xr.DataArray):
        raise TypeError(
            f"results must be a result of {made_by} (an xarray.Dataset), its "
            f"'zeta' DataArray or a mapping {{scheme: result}}, got "
            f"{type(results).__name__}"
        )
    if "scheme" not in results.dims:
        raise ValueError("zeta_scores: need a 'scheme' dimension or a mapping {scheme: result}")
    return results


@accepts_targets
def zeta_scores(results, *, labels=None, ax=None, band=True, offset=0.12, legend=True, title=None):
    """Zeta-scores per dataset and validation scheme (Pernot (2024c), Figs. 6-7).

    Colours code D (black: bootstrap only, blue: normal, red: t_s(6)); circles Sim,
    open triangles Sim2.

    Parameters
    ----------
    results : xarray.Dataset, DataArray or mapping
        ``zeta`` on ``dataset`` and ``scheme`` (:func:`uqviz.validate_simulated` with
        several schemes), a :func:`uqviz.validate_with_references` result (its ``generative``
        become the schemes SimN, SimT), or ``{scheme: result}`` of
        :func:`uqviz.validate_simulated` / :func:`uqviz.validate_average`.
    labels : sequence of str, optional
        Tick labels of the datasets (default their names).
    ax : matplotlib.axes.Axes, optional
    band : bool, default True
        Shade ``|zeta| <= 1``.
    offset : float, default 0.12
        Horizontal shift between schemes.
    legend, title
        Legend switch; title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from uqviz.plots.reference import zeta_scores
    >>> z = xr.DataArray(np.array([[0.5, -2.0], [1.5, 0.2]]), dims=("dataset", "scheme"),
    ...                  coords={"dataset": ["a", "b"], "scheme": ["SimN", "Sim2N"]})
    >>> [t.get_text() for t in zeta_scores(z).get_xticklabels()]
    ['a', 'b']
    """
    z = _stack_schemes(results)
    if "dataset" not in z.dims:
        z = z.expand_dims(dataset=[z.attrs.get("name", "data")])
    z = z.transpose("dataset", "scheme")
    names = [str(n) for n in z["dataset"].values]
    drawable("zeta_scores", z.to_dataset(name="zeta"), ("zeta",), name="results")
    labels = names if labels is None else [labels] if isinstance(labels, str) else list(labels)
    if len(labels) != len(names):
        raise ValueError(f"labels: expected {len(names)} labels, got {len(labels)}")
    schemes = [str(s) for s in z["scheme"].values]
    ax = get_ax(ax, figsize=(6.0, 3.2))
    apply_style(ax)
    x = np.arange(len(names), dtype=float)
    if band:
        ax.axhspan(-1, 1, color=COLORS["band"], alpha=0.35, lw=0, label=r"$|\zeta| \leq 1$")
    ax.axhline(0.0, color=COLORS["reference"], lw=0.6)
    shifts = (np.arange(len(schemes)) - (len(schemes) - 1) / 2) * offset
    for k, scheme in enumerate(schemes):
        color, marker, filled = SCHEME_STYLES.get(
            scheme, (COLORS["series"][k % len(COLORS["series"])], "D", True)
        )
        ax.plot(
            x + shifts[k],
            z.sel(scheme=scheme).values,
            ls="none",
            marker=marker,
            ms=5,
            color=color,
            mfc=color if filled else "white",
            mew=1.1,
            label=scheme,
        )
    for xi in x[:-1]:
        ax.axvline(xi + 0.5, color="#bbbbbb", lw=0.5)
    ax.grid(False, axis="x")
    ax.set_xticks(x)
    ax.set_xticklabels(
        labels,
        rotation=0 if max(len(s) for s in labels) < 7 else 45,
        ha="center" if max(len(s) for s in labels) < 7 else "right",
    )
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_ylabel(r"$\zeta$-score")
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(loc="best", ncol=min(len(schemes) + band, 3), fontsize=7)
    return ax


# --------------------------------------------------------------------------
# Pernot (2024c), Fig. 5
# --------------------------------------------------------------------------
def _observed_values(observed, dataset):
    """(estimate, lower, upper) from a float, a tuple or a result Dataset."""
    if observed is None:
        return None
    if isinstance(observed, xr.Dataset):
        obs = checks.result(
            "observed", observed, "uqviz.validate_simulated", variables=("estimate",)
        )
        if "dataset" in obs.dims:
            obs = obs.sel(dataset=dataset)
        if "statistic" in obs.dims:
            obs = obs.isel(statistic=0)
        est = float(obs["estimate"])
        lo = float(obs["ci_lower"]) if "ci_lower" in obs else np.nan
        hi = float(obs["ci_upper"]) if "ci_upper" in obs else np.nan
        return est, lo, hi
    if isinstance(observed, Mapping):
        return _observed_values(observed[dataset], None)
    try:
        if np.ndim(observed) == 1 and len(observed) == 3:
            return tuple(float(v) for v in observed)
        return float(observed), np.nan, np.nan
    except (TypeError, ValueError):
        raise TypeError(
            "observed must be a number, an (estimate, lower, upper) triple, a "
            "mapping {dataset: observed} or a result of uqviz.validate_simulated, "
            f"got {type(observed).__name__} ({observed!r:.40})"
        ) from None


@renamed_options(coverage="coverage_factor")
def reference_sensitivity(
    result, *, observed=None, ax=None, coverage_factor=2.0, labels=None, title=None, legend=True
):
    """Simulated reference against the degrees of freedom of D = t_s(nu) (Pernot (2024c), Fig. 5).

    Parameters
    ----------
    result : xarray.Dataset
        ``reference``, ``reference_se`` of :func:`uqviz.simulated_reference` stacked
        on dim ``nu`` (and optionally ``dataset``).
    observed : float, (est, lower, upper), Dataset or mapping, optional
        The statistic of the data (e.g. a :func:`uqviz.validate_simulated` result).
    ax : matplotlib.axes.Axes, optional
    coverage_factor : float, default 2.0
        Error bars ``coverage_factor * reference_se`` (``coverage`` until uqviz 0.2,
        still accepted with a FutureWarning until 0.3.0).
    labels : sequence of str, optional
    title : str, optional
    legend : bool or str, default True
        Draw the legend: True right of the axes (``"outside"``: the curves, the observed lines
        and their bands may fill the whole axes, no corner is free), a location string inside
        the axes, or False (e.g. for one figure legend of several panels).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz.plots.reference import reference_sensitivity
    >>> res = xr.Dataset({"reference": ("nu", [0.05, 0.04, 0.035]),
    ...                   "reference_se": ("nu", [0.002, 0.001, 0.001])},
    ...                  coords={"nu": [3, 6, 12]}, attrs={"statistic": "ENCE"})
    >>> reference_sensitivity(res, observed=0.06).get_xlabel()
    '$\\\\nu$ of $D = t_s(\\\\nu)$'
    """
    checks.result(
        "result",
        result,
        "uqviz.simulated_reference stacked on dim 'nu'",
        variables=("reference", "reference_se"),
        dims=("nu",),
    )
    drawable("reference_sensitivity", result, ("reference",))
    names = [str(n) for n in result["dataset"].values] if "dataset" in result.dims else [None]
    labels = names if labels is None else [labels] if isinstance(labels, str) else list(labels)
    if len(labels) != len(names):
        raise ValueError(
            f"reference_sensitivity: labels: expected {len(names)} labels (one "
            f"per dataset), got {len(labels)}"
        )
    for name in names:
        _observed_values(observed, name)  # a wrong observed fails before anything is drawn
    ax = get_ax(ax)
    apply_style(ax)
    nu = result["nu"].values.astype(float)
    for i, (name, lab) in enumerate(zip(names, labels)):
        sel = result if name is None else result.sel(dataset=name)
        color = COLORS["series"][i % len(COLORS["series"])]
        ax.errorbar(
            nu,
            sel["reference"].values,
            yerr=coverage_factor * sel["reference_se"].values,
            fmt="o-",
            ms=4,
            color=color,
            label=lab if lab is not None else "simulated reference",
        )
        obs = _observed_values(observed, name)
        if obs is not None:
            est, lo, hi = obs
            ax.axhline(
                est,
                color=color,
                ls="--",
                lw=1.0,
                label=f"observed{'' if name is None else ' ' + str(lab)}",
            )
            if np.isfinite(lo) and np.isfinite(hi):
                ax.axhspan(lo, hi, color=color, alpha=0.12, lw=0)
    ax.set_xlabel(r"$\nu$ of $D = t_s(\nu)$")
    ax.set_ylabel(f"simulated {result.attrs.get('statistic', 'reference')}")
    ax.set_title(title if title is not None else result.attrs.get("statistic", ""))
    where = legend_options(legend, "outside")
    if where:
        ax.legend(**where)
    return ax


def _histogram(samples, n_bins=None):
    """The density histogram of the simulated values: ``n_bins`` bins, by default n/15
    between 10 and 50 (both drawings of :func:`reference_distribution`)."""
    if n_bins is None:
        n_bins = int(np.clip(samples.size // 15, 10, 50))
    return np.histogram(samples, bins=n_bins, density=True)


@accepts_targets
def reference_distribution(result, *, observed=None, ax=None, n_bins=None, title=None, legend=True):
    """Histogram of the simulated statistic with the reference and the observed value.

    Parameters
    ----------
    result : xarray.Dataset
        A :func:`uqviz.simulated_reference` or :func:`uqviz.validate_simulated`
        result with ``samples``.
    observed : float or (est, lower, upper), optional
        When ``result`` has no ``estimate``.
    ax : matplotlib.axes.Axes, optional
    n_bins : int, optional
        Default n/15, between 10 and 50.
    title : str, optional
        In the figures' one title style (``uqviz.plots._style.TITLE_STYLE``).
    legend : bool or str, default True
        Draw the legend: True at the best place inside the axes, a location string, or
        ``"outside"``: right of the axes, over no bar (the explorers' figures).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from uqviz.plots.reference import reference_distribution
    >>> s = np.random.default_rng(0).normal(0.03, 0.003, 500)
    >>> res = xr.Dataset({"samples": ("sample", s), "reference": s.mean(),
    ...                   "reference_lower": np.quantile(s, 0.025),
    ...                   "reference_upper": np.quantile(s, 0.975)})
    >>> reference_distribution(res, observed=(0.04, 0.035, 0.045)).get_ylabel()
    'density'
    """
    checks.result(
        "result",
        result,
        "uqviz.simulated_reference or uqviz.validate_simulated with return_samples=True",
        variables=("samples", "reference", "reference_lower", "reference_upper"),
    )
    if "dataset" in result.dims:
        raise ValueError(
            "result: the result holds several datasets; select one with .sel(dataset=...)"
        )
    n_bins = checks.optional_count("n_bins", n_bins)
    drawable("reference_distribution", result, ("samples",))
    ref = float(result["reference"])
    mc_lo, mc_hi = float(result["reference_lower"]), float(result["reference_upper"])
    obs = (
        (float(result["estimate"]), float(result["ci_lower"]), float(result["ci_upper"]))
        if "estimate" in result
        else _observed_values(observed, None)
    )
    ax = get_ax(ax)
    apply_style(ax)
    samples = result["samples"].values
    # one filled step outline (``stairs``), not a bar per bin: the same histogram, drawn
    # ten times faster (the explorers redraw it at each change)
    density, edges = _histogram(samples, n_bins)
    ax.stairs(density, edges, fill=True, color=COLORS["band"], lw=0, label="simulated (calibrated)")
    ax.set_ylim(0.0, 1.05 * float(density.max()))
    ax.axvline(ref, color=COLORS["reference"], lw=1.5, label="reference (mean)")
    ax.axvspan(
        mc_lo,
        mc_hi,
        color=COLORS["reference"],
        alpha=0.08,
        lw=0,
        label="Monte Carlo interval (Sim2)",
    )
    if obs is not None:
        est, lo, hi = obs
        color = COLORS["invalid"]
        ax.axvline(est, color=color, lw=1.5, label="observed")
        if np.isfinite(lo) and np.isfinite(hi):
            # a segment, not error bars: a strongly biased (binned) bootstrap can give
            # a BCa interval that excludes the estimate
            y = 0.9 * ax.get_ylim()[1]
            ax.plot(
                [lo, hi], [y, y], "-|", color=color, lw=1.5, ms=8, label="bootstrap interval (Sim)"
            )
            ax.plot([est], [y], "o", color=color, ms=4)
    stat = result.attrs.get("statistic", "statistic")
    ax.set_xlabel(stat)
    ax.set_ylabel("density")
    if title is not None:
        set_title(ax, title)
    where = legend_options(legend, "best")
    if where:
        ax.legend(**where, fontsize=7)
    return ax


@accepts_targets
def reference_distribution_svg(result, *, layout, title=None):
    """:func:`reference_distribution` drawn as SVG (the explorers' view).

    The same histogram (``stairs``), reference, Monte Carlo interval, observed value and
    bootstrap interval, legend (right of the axes) and title as :func:`reference_distribution`
    with ``legend="outside"``, on an SVG Axes of ``layout`` (as
    :func:`uqviz.plots.conditional.local_svg`); ``result`` has an ``estimate``.

    Returns
    -------
    uqviz.plots._svg.SvgAxes
    """
    checks.result(
        "result",
        result,
        "uqviz.validate_simulated with return_samples=True",
        variables=(
            "samples",
            "reference",
            "reference_lower",
            "reference_upper",
            "estimate",
            "ci_lower",
            "ci_upper",
        ),
    )
    drawable("reference_distribution_svg", result, ("samples",))
    ax = new_axes(layout)
    density, edges = _histogram(result["samples"].values)
    ax.stairs(density, edges, color=COLORS["band"], label="simulated (calibrated)")
    ymax = 1.05 * float(density.max())
    ax.ylim = (0.0, ymax)
    ax.vline(
        float(result["reference"]), color=COLORS["reference"], lw=1.5, label="reference (mean)"
    )
    ax.vspan(
        float(result["reference_lower"]),
        float(result["reference_upper"]),
        color=COLORS["reference"],
        alpha=0.08,
        label="Monte Carlo interval (Sim2)",
    )
    est, lo, hi = (float(result[v]) for v in ("estimate", "ci_lower", "ci_upper"))
    ax.vline(est, color=COLORS["invalid"], lw=1.5, label="observed")
    if np.isfinite(lo) and np.isfinite(hi):
        ax.interval(lo, hi, 0.9 * ymax, color=COLORS["invalid"], label="bootstrap interval (Sim)")
        ax.markers([est], [0.9 * ymax], color=COLORS["invalid"], ms=4.0)
    ax.xlabel = result.attrs.get("statistic", "statistic")
    ax.ylabel = "density"
    if title is not None:
        ax.title = title
    ax.legend(size=7.0)
    return ax


# --------------------------------------------------------------------------
# Pernot (2024c), Appendix B
# --------------------------------------------------------------------------
@accepts_targets
def size_dependence(
    result,
    *,
    statistic="ENCE",
    generative="normal",
    kind="linear",
    ax=None,
    fit="linear",
    title=None,
):
    """Simulated ENCE/ZMSE against sqrt(N/M) or M (Pernot (2024c), Figs. A1-A2).

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.size_dependence`.
    statistic : str, default "ENCE"
    generative : str, default "normal"
    kind : {"linear", "loglog"}, default "linear"
        Against sqrt(N/M) with the fitted line, or against M, one line per N.
    ax : matplotlib.axes.Axes, optional
    fit : {"linear", "proportional"}, default "linear"
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from uqviz.reference.extrapolation import size_dependence as simulate
    >>> from uqviz.plots.reference import size_dependence
    >>> res = simulate(sizes=(1000, 2000), n_bins=(10, 20), nu=(6,), n_mc=20, rng=0)
    >>> size_dependence(res).get_xlabel()
    '$\\\\sqrt{N/M}$'
    """
    if kind not in ("linear", "loglog"):
        raise ValueError(f"kind must be 'linear' or 'loglog', got {kind!r}")
    checks.result(
        "result",
        result,
        "uqviz.size_dependence",
        variables=("reference", "x", "slope", "intercept"),
        dims=("statistic", "generative", "nu", "size", "n_bins", "fit"),
    )
    for name, value in (("statistic", statistic), ("generative", generative)):
        have = [str(g) for g in result[name].values]
        if value not in have:
            raise ValueError(f"{name}: {value!r} is not in the result; choose among {have}")
    res = result.sel(statistic=statistic, generative=generative)
    if kind == "linear":
        choice("size_dependence", "fit", fit, result["fit"].values)
    drawable("size_dependence", res, ("reference",))
    ax = get_ax(ax)
    apply_style(ax)
    nus = res["nu"].values
    model = _MODEL_LABELS.get(generative, generative)
    if kind == "linear":
        x = res["x"].values
        for i, nu in enumerate(nus):
            ax.plot(
                x.ravel(),
                res["reference"].sel(nu=nu).values.ravel(),
                "o",
                ms=3.5,
                color=COLORS["series"][i % len(COLORS["series"])],
                label=rf"$\nu$ = {nu:g}",
            )
        f = res.sel(fit=fit)
        xs = np.linspace(0.0, float(x.max()) * 1.05, 50)
        a, b = float(f["intercept"]), float(f["slope"])
        text = f"{b:.3f} x" if fit == "proportional" else f"{a:.4f} + {b:.3f} x"
        ax.plot(xs, a + b * xs, color=COLORS["reference"], lw=1.0, label=f"fit: {text}")
        ax.set_xlabel(r"$\sqrt{N/M}$")
        ax.set_xlim(0, None)
        ax.set_ylim(0, None)
    else:
        sizes = res["size"].values
        for i, n in enumerate(res["n_bins"].values):
            color = COLORS["series"][i % len(COLORS["series"])]
            vals = res["reference"].sel(n_bins=n)  # (nu, size)
            for nu in nus:
                ax.plot(sizes, vals.sel(nu=nu).values, "o", ms=2.5, color=color, alpha=0.6)
            ax.plot(sizes, vals.mean("nu").values, "-", color=color, label=f"N = {n}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%d"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(ticker.FormatStrFormatter("%g"))
        ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_xlabel("dataset size M")
    ax.set_ylabel(f"simulated {statistic}")
    ax.set_title(title if title is not None else f"{statistic}, {model} model")
    ax.legend(loc="best", fontsize=7)
    return ax


# --------------------------------------------------------------------------
# Pernot (2024c), Appendix C
# --------------------------------------------------------------------------
@accepts_targets
def extrapolation(result, *, dataset=None, ax=None, references=True, title=None, legend=True):
    """Statistic against sqrt(N/M) with the fit and the intercept interval
    (Pernot (2024c), Fig. A3).

    Open dots are not in the fit; the interval at x = 0 is blue when it contains 0 (its legend
    label says which).

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.extrapolate`.
    dataset : str or int, optional
        Required when the result has several.
    ax : matplotlib.axes.Axes, optional
    references : bool, default True
        Draw the reference lines (NIG dashed, T6IG dotted).
    title : str, optional
    legend : bool or str, default True
        Draw the legend: True right of the axes (``"outside"``: the points, the fit and the
        reference lines cross the axes from the intercept to the largest x, no corner is
        reliably free), a location string inside the axes, or False (e.g. for one figure
        legend of several panels: the labels are the same for every dataset of one result).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.reference import extrapolation
    >>> res = uqviz.extrapolate(uqviz.synthetic.nig(3000, nu=6, rng=1))
    >>> extrapolation(res).get_xlabel()
    '$\\\\sqrt{N/M}$'
    """
    checks.result(
        "result",
        result,
        "uqviz.extrapolate",
        dims=("n_bins",),
        variables=("x", "estimate", "in_fit", "intercept", "slope", "valid"),
    )
    res, name = _one_dataset(result, dataset, "extrapolation")
    drawable("extrapolation", res, ("x", "estimate"))
    ax = get_ax(ax)
    apply_style(ax)
    stat = result.attrs.get("statistic", "statistic")
    x, y = res["x"].values, res["estimate"].values
    fit = res["in_fit"].values.astype(bool)
    ax.plot(x[fit], y[fit], "o", ms=3, color=COLORS["valid"], label=f"{stat} (fitted)")
    rest = ~fit & np.isfinite(y)
    if rest.any():
        ax.plot(
            x[rest],
            y[rest],
            "o",
            ms=3,
            color=COLORS["valid"],
            mfc="white",
            label=f"{stat} (not fitted)",
        )
    xmax = float(np.nanmax(np.where(np.isfinite(y), x, np.nan))) * 1.05
    xs = np.linspace(0.0, xmax, 50)
    a, b = float(res["intercept"]), float(res["slope"])
    valid = bool(res["valid"])
    color = COLORS["valid"] if valid else COLORS["invalid"]
    ax.plot(xs, a + b * xs, color=COLORS["invalid"], lw=1.2, label="linear fit")
    lo, hi = float(res["intercept_lower"]), float(res["intercept_upper"])
    which = (
        "contains 0"
        if valid
        else "excludes 0"
        if np.isfinite(lo) and np.isfinite(hi)
        else "not computed"
    )
    ax.errorbar(
        [0.0],
        [a],
        yerr=[[a - lo], [hi - a]],
        fmt="s",
        ms=4,
        color=color,
        capsize=3,
        lw=2,
        label=f"intercept {result.attrs.get('ci', 0.95):.0%} CI ({which})",
        clip_on=False,
        zorder=5,
    )
    if references and "generative" in res.dims:
        for ref in res["generative"].values:
            r = res.sel(generative=ref)
            ls = _REF_LINESTYLES.get(str(ref), "-.")
            ax.plot(
                xs,
                float(r["reference_intercept"]) + float(r["reference_slope"]) * xs,
                color=COLORS["reference"],
                ls=ls,
                lw=1.0,
                label=_MODEL_LABELS.get(str(ref), str(ref)),
            )
    ax.axhline(0.0, color=COLORS["reference"], lw=0.5)
    ax.set_xlim(-0.01 * xmax, xmax)
    ymax = np.nanmax(np.r_[y, hi]) * 1.08
    ax.set_ylim(min(0.0, lo) - 0.04 * ymax, ymax)
    ax.set_xlabel(r"$\sqrt{N/M}$")
    ax.set_ylabel(stat)
    ax.set_title(title if title is not None else (name or ""))
    where = legend_options(legend, "outside")
    if where:
        ax.legend(**where, fontsize=7)
    return ax


# --------------------------------------------------------------------------
# confidence curves
# --------------------------------------------------------------------------
@accepts_targets
def confidence_curve(
    result,
    *,
    dataset=None,
    ax=None,
    oracle=True,
    reference=True,
    percent=True,
    title=None,
    label="data",
):
    """Confidence curve with its bootstrap band, the oracle and the probabilistic reference.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.confidence_curve`.
    dataset : str or int, optional
        Required when the result has several.
    ax : matplotlib.axes.Axes, optional
    oracle, reference : bool, default True
    percent : bool, default True
        x axis in percent.
    title : str, optional
    label : str, default "data"

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.reference.confidence import confidence_curve as compute
    >>> from uqviz.plots.reference import confidence_curve
    >>> cc = compute(uqviz.synthetic.nig(1000, nu=6, rng=0), n_mc=50, n_boot=50, rng=0)
    >>> confidence_curve(cc).get_xlabel()
    'k % discarded'
    """
    checks.result(
        "result",
        result,
        "uqviz.confidence_curve",
        dims=("fraction",),
        variables=("estimate", "oracle", "reference", "reference_lower", "reference_upper"),
    )
    res, name = _one_dataset(result, dataset, "confidence_curve")
    drawable("confidence_curve", res, ("estimate",))
    ax = get_ax(ax)
    apply_style(ax)
    k = res["fraction"].values * (100.0 if percent else 1.0)
    error = result.attrs.get("error_statistic", result.attrs.get("error", "RMSE"))
    color = COLORS["series"][4]
    if reference:
        ax.fill_between(
            k,
            res["reference_lower"].values,
            res["reference_upper"].values,
            color=COLORS["band"],
            alpha=0.5,
            lw=0,
            label=f"reference {result.attrs.get('ci', 0.95):.0%} band",
        )
        ax.plot(
            k,
            res["reference"].values,
            ls=":",
            lw=1.8,
            color=COLORS["series"][0],
            label=f"prob. reference ({result.attrs.get('generative', 'D')})",
        )
    if oracle:
        ax.plot(k, res["oracle"].values, ls="--", color=COLORS["reference"], lw=1.0, label="oracle")
    if "ci_lower" in res:
        ax.fill_between(
            k,
            res["ci_lower"].values,
            res["ci_upper"].values,
            color=color,
            alpha=0.2,
            lw=0,
            label="bootstrap band",
        )
    ax.plot(k, res["estimate"].values, color=color, lw=1.6, label=label)
    ax.set_xlim(k[0], k[-1])
    ax.set_ylim(0, None)
    ax.set_xlabel("k % discarded" if percent else "fraction discarded")
    norm = bool(result.attrs.get("normalize", 0))
    ax.set_ylabel(f"{error} / {error}$_0$" if norm else error)
    ax.set_title(title if title is not None else (name or ""))
    ax.legend(loc="best", fontsize=7)
    return ax
