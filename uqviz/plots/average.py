"""Average-calibration figures: intervals, tailedness, zeta-scores, decimation, fits.

A statistic and the variable it depends on share a colour (ZMS and Z^2 blue, RCE
and E^2 red); the unsafe zones of Pernot (2024b), Table II are shaded orange.
"""

from __future__ import annotations

import numpy as np
from matplotlib import ticker
from matplotlib.patches import Patch
from matplotlib.transforms import Bbox
from scipy import stats as sps

from uqviz.average.validation import TAILEDNESS_THRESHOLDS
from uqviz.engine import checks
from uqviz.engine.tree import datasets_of
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import (
    COLORS,
    STATISTIC_COLORS,
    UNSAFE_ALPHA,
    VAR_TEX,
    ZONE_E,
    ZONE_U,
    apply_style,
    get_ax,
    statistic_color,
)
from uqviz.plots._style import one_dataset as _one_dataset
from uqviz.plots._checks import drawable, names as _names

__all__ = [
    "intervals",
    "fit_histogram",
    "skewness_map",
    "zeta_comparison",
    "decimation_curves",
    "STATISTIC_COLORS",
]

_VAR_COLORS = {"E2": "#d62728", "Z2": "#1f77b4", "uE2": "#2ca02c"}
_NIG_COLOR = "#000000"


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _with_dataset_dim(result):
    return result if "dataset" in result.dims else result.expand_dims(dataset=[""])


def _point_labels(names, labels, what):
    """Texts of the point labels: set numbers (1, 2, ...), names, or given."""
    n = len(names)
    if labels is None or (isinstance(labels, str) and labels == "number"):
        return [str(i + 1) for i in range(n)]
    if isinstance(labels, str):
        if labels == "name":
            return [str(s) for s in names]
        raise ValueError(
            f"{what}: labels must be 'number', 'name' or a sequence of {n} texts, got {labels!r}"
        )
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise ValueError(f"{what}: labels has {len(labels)} texts for {n} datasets")
    return labels


def _renderer(fig):
    get = getattr(fig.canvas, "get_renderer", None)
    return get() if get is not None else fig._get_renderer()


def _add_obstacles(ax, x, y, size_pt=6.0):
    """Remember the markers at (x, y) as boxes that labels must not cover."""
    half = 0.5 * size_pt * ax.figure.dpi / 72.0
    boxes = getattr(ax, "_uqviz_label_boxes", [])
    pts = ax.transData.transform(np.column_stack([x, y]))
    for px, py in pts:
        if np.isfinite(px) and np.isfinite(py):
            boxes.append(Bbox.from_extents(px - half, py - half, px + half, py + half))
    ax._uqviz_label_boxes = boxes


def _label_points(ax, x, y, texts, *, side="left", color="k", fontsize=8):
    """Write ``texts`` next to the points, moving labels that would overlap up or down."""
    dx = -4 if side == "left" else 4
    ha = "right" if side == "left" else "left"
    fig = ax.figure
    renderer = _renderer(fig)
    placed = getattr(ax, "_uqviz_label_boxes", [])
    out = []
    for xi, yi, t in zip(x, y, texts):
        if not (np.isfinite(xi) and np.isfinite(yi)):
            continue
        ann = ax.annotate(
            t,
            (xi, yi),
            xytext=(dx, 0),
            textcoords="offset points",
            ha=ha,
            va="center",
            fontsize=fontsize,
            color=color,
            zorder=6,
            annotation_clip=True,
        )
        bbox = ann.get_window_extent(renderer).shrunk(0.9, 0.8)
        step = bbox.height * 1.05
        for k in (0, 1, -1, 2, -2, 3, -3):
            b = bbox.translated(0, k * step)
            if not any(b.overlaps(p) for p in placed):
                if k:
                    ann.xyann = (dx, k * step * 72.0 / fig.dpi)
                bbox = b
                break
        placed.append(bbox)
        out.append(ann)
    ax._uqviz_label_boxes = placed
    return out


@accepts_targets
def intervals(result, *, ax=None, statistics=None):
    """Estimate and interval of each statistic minus its reference, coloured by validity.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.validate_average` (one row per dataset and statistic).
    ax : matplotlib.axes.Axes, optional
    statistics : sequence of str, optional
        Default all with a finite reference.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.average import intervals
    >>> res = uqviz.validate_average(uqviz.synthetic.default_example(), n_boot=500, rng=0)
    >>> len(intervals(res).get_yticklabels())
    2
    """
    checks.result(
        "result",
        result,
        "uqviz.validate_average",
        dims=("statistic",),
        variables=("estimate", "ci_lower", "ci_upper", "reference", "valid"),
    )
    res = result if "dataset" in result.dims else result.expand_dims(dataset=[""])
    stats_ = _names("intervals", "statistics", statistics, res.statistic.values)
    drawable("intervals", res.sel(statistic=stats_), ("estimate",))
    stats_ = [s for s in stats_ if np.isfinite(res.reference.sel(statistic=s)).all()]
    rows = [(d, s) for d in res.dataset.values for s in stats_]
    ax = get_ax(ax, figsize=(4.5, 0.45 * len(rows) + 1.2))
    for y, (d, s) in enumerate(rows):
        r = res.sel(dataset=d, statistic=s)
        ref = float(r.reference)
        est, lo, hi = float(r.estimate) - ref, float(r.ci_lower) - ref, float(r.ci_upper) - ref
        color = COLORS["valid"] if bool(r.valid) else COLORS["invalid"]
        ax.errorbar(est, y, xerr=[[est - lo], [hi - est]], fmt="o", color=color, ms=5)
    ax.axvline(0.0, color=COLORS["reference"], lw=1, ls="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{d} {s}".strip() for d, s in rows])
    ax.invert_yaxis()
    ax.set_xlabel("statistic - reference (95% CI)")
    return ax


# --------------------------------------------------------------------------
# Pernot (2024b), Figs. 1-2: histograms with the fitted densities
# --------------------------------------------------------------------------
_FIT_NAMES = {"invgamma": r"$\Gamma^{-1}(\nu,\nu)$ fit", "f1": r"$F(1,\nu)$ fit"}


def _model_pdf(model, x, nu, scale):
    if model == "invgamma":
        return sps.invgamma.pdf(x, nu, scale=nu * scale)
    return sps.f.pdf(x, 1.0, nu, scale=scale)


def _select_fit(shapes, variable, dataset, what):
    res = shapes
    if "dataset" in shapes.dims:
        res, _ = _one_dataset(shapes, dataset, what)
    if "variable" in res.dims:
        if variable not in res["variable"].values:
            raise ValueError(
                f"{what}: no fit of {variable!r} in shapes_result "
                f"(variables {res['variable'].values.tolist()})"
            )
        fit = res.sel(variable=variable)
        model = (
            str(fit["model"].values)
            if "model" in fit.coords
            else ("invgamma" if variable == "uE2" else "f1")
        )
    else:
        fitted = res.attrs.get("variable")
        if fitted is not None and fitted != variable:
            raise ValueError(f"{what}: shapes_result is a fit of {fitted!r}, not {variable!r}")
        fit = res
        model = res.attrs.get("scipy_model", "invgamma" if variable == "uE2" else "f1")
    return res, fit, model


def _select_data(data, dataset, what):
    """(name, Dataset) of one dataset of a Dataset or DataTree (``dataset``: name or index)."""
    pairs = datasets_of(data)
    for _, ds in pairs:
        checks.result("data", ds, "uqviz.from_arrays (the data)", variables=("E", "uE"))
    names = [n for n, _ in pairs]
    if dataset is None:
        if len(pairs) > 1:
            raise ValueError(
                f"{what}: the data hold {len(names)} datasets; choose one with "
                f"dataset= (one of {names})"
            )
        name, ds = pairs[0]
        return (name if name is not None else ds.attrs.get("name")), ds
    if isinstance(dataset, (int, np.integer)):
        if not -len(pairs) <= dataset < len(pairs):
            raise ValueError(
                f"{what}: dataset index {dataset} out of range for {len(pairs)} datasets"
            )
        name, ds = pairs[dataset]
        return (name if name is not None else ds.attrs.get("name")), ds
    if dataset not in names:
        raise ValueError(f"{what}: unknown dataset {dataset!r}; one of {names}")
    return dataset, dict(pairs)[dataset]


def _squared(ds, variable, what):
    """(values of uE^2, E^2 or Z^2, positive values) of one dataset."""
    e, u = np.asarray(ds["E"].values, dtype=float), np.asarray(ds["uE"].values, dtype=float)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        x = {"uE2": u * u, "E2": e * e, "Z2": (e / u) ** 2}[variable]
    pos = x[(x > 0) & np.isfinite(x)]
    if pos.size < 2:
        raise ValueError(f"{what}: {variable} has {pos.size} positive finite values, need >= 2")
    return x, pos


def _implied_for(implied, name, variable, what):
    if implied is None:
        return None
    if variable != "E2":
        raise ValueError(f"{what}: the NIG-implied density is defined for E2, not {variable}")
    if "dataset" in implied.dims:
        implied, _ = _one_dataset(implied, name, what)
    return implied


def _log_axis(ax, lo_x, hi_x):
    ax.set_xscale("log")
    ax.set_xlim(lo_x, hi_x)
    if np.log10(hi_x / lo_x) < 2.0:  # less than two decades: label 1-2-5 ticks plainly
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _axis_labels(ax, ds, variable):
    units = ds.attrs.get("units", "")
    unit_txt = f" [{units}$^2$]" if units and variable != "Z2" else ""
    ax.set_xlabel(f"${VAR_TEX[variable]}${unit_txt}")
    ax.set_ylabel(f"density of $\\ln {VAR_TEX[variable]}$")


@accepts_targets
def fit_histogram(
    data,
    shapes_result,
    *,
    variable="uE2",
    implied=None,
    ax=None,
    dataset=None,
    n_bins=None,
    legend=True,
    title=None,
):
    """Log-scale histogram of uE^2, E^2 or Z^2 with the fitted density (Pernot (2024b), Figs. 1-2).

    The histogram of ``ln X`` is drawn against ``X`` on a log axis, with the fitted
    density as ``x f(x)``; ``implied`` adds the NIG-model density of E^2 in red.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    shapes_result : xarray.Dataset
        Output of :func:`uqviz.distribution_shapes` (or :func:`uqviz.fit_inverse_gamma`,
        :func:`uqviz.fit_f`).
    variable : {"uE2", "E2", "Z2"}, default "uE2"
    implied : xarray.Dataset, optional
        Output of :func:`uqviz.nig_implied_shape` (``variable="E2"`` only).
    ax : matplotlib.axes.Axes, optional
    dataset : str or int, optional
        Which dataset of a DataTree; default all, on the same axes.
    n_bins : int, optional
        Bins of ``ln X`` (default 33 for uE2, 25 otherwise).
    legend, title
        Legend switch; title (default the dataset name).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz import distribution_shapes, nig_implied_shape
    >>> from uqviz.plots.average import fit_histogram
    >>> ds = uqviz.synthetic.nig(2000, nu=6, rng=0)
    >>> shapes = distribution_shapes(ds)
    >>> ax = fit_histogram(ds, shapes, variable="E2", implied=nig_implied_shape(shapes))
    >>> [t.get_text().split(" (")[0] for t in ax.get_legend().get_texts()]
    ['data', '$F(1,\\\\nu)$ fit', 'NIG model']
    """
    what = "fit_histogram"
    checks.result(
        "shapes_result", shapes_result, "uqviz.distribution_shapes", variables=("nu", "scale")
    )
    if variable not in VAR_TEX:
        raise ValueError(f"{what}: variable must be one of {list(VAR_TEX)}, got {variable!r}")
    n_bins = checks.optional_count("n_bins", n_bins, minimum=1)
    if n_bins is None:
        n_bins = 33 if variable == "uE2" else 25
    if dataset is None and len(datasets_of(data)) > 1:
        return _fit_histogram_overlay(
            data, shapes_result, variable, implied, ax, n_bins, legend, title
        )
    name, ds = _select_data(data, dataset, what)
    _, fit, model = _select_fit(
        shapes_result, variable, name if "dataset" in shapes_result.dims else None, what
    )
    implied = _implied_for(implied, name, variable, what)
    x, pos = _squared(ds, variable, what)
    n_zero = x.size - pos.size
    edges_ln = np.histogram_bin_edges(np.log(pos), bins=n_bins)
    counts, _ = np.histogram(np.log(pos), bins=edges_ln)
    dens = counts / (x.size * np.diff(edges_ln))
    edges = np.exp(edges_ln)

    ax = get_ax(ax)
    apply_style(ax)
    lab = f"data ({x.size} points" + (f", {n_zero} zeros not shown)" if n_zero else ")")
    ax.stairs(dens, edges, fill=True, color=COLORS["band"], alpha=0.6, label=lab, zorder=1)
    ax.stairs(dens, edges, fill=False, color="#4a7fb0", lw=0.6, zorder=2)
    grid = np.geomspace(edges[0] / 3.0, edges[-1] * 3.0, 600)
    nu, scale = float(fit["nu"]), float(fit["scale"])
    ax.plot(
        grid,
        grid * _model_pdf(model, grid, nu, scale),
        color="#08306b",
        lw=1.8,
        label=f"{_FIT_NAMES.get(model, model)} ($\\nu$ = {nu:.3g})",
        zorder=3,
    )
    if implied is not None:
        nu_n, sc_n = float(implied["nu"]), float(implied["scale"])
        ax.plot(
            grid,
            grid * _model_pdf("f1", grid, nu_n, sc_n),
            color=COLORS["invalid"],
            lw=1.4,
            label=f"NIG model ($\\nu$ = 2$\\times${nu_n / 2:.3g})",
            zorder=4,
        )
    _log_axis(ax, edges[0] / 1.5, edges[-1] * 1.5)
    n_entries = 2 + (implied is not None)
    ax.set_ylim(0, (1.2 + (0.13 * n_entries if legend else 0.0)) * float(dens.max()))
    _axis_labels(ax, ds, variable)
    ax.set_title(title if title is not None else (name or ""))
    if legend:
        ax.legend(loc="upper left", fontsize=7)
    return ax


def _fit_histogram_overlay(data, shapes_result, variable, implied, ax, n_bins, legend, title):
    """Every dataset of a tree on one Axes: outlined histograms, fits in the same colours."""
    what = "fit_histogram"
    pairs = datasets_of(data)
    samples = [(name, ds, *_squared(ds, variable, what)) for name, ds in pairs]
    all_ln = np.log(np.concatenate([pos for *_, pos in samples]))
    edges_ln = np.histogram_bin_edges(all_ln, bins=n_bins)
    edges = np.exp(edges_ln)
    grid = np.geomspace(edges[0] / 3.0, edges[-1] * 3.0, 600)
    ax = get_ax(ax)
    apply_style(ax)
    top = 0.0
    for i, (name, ds, x, pos) in enumerate(samples):
        color = COLORS["series"][i % len(COLORS["series"])]
        counts, _ = np.histogram(np.log(pos), bins=edges_ln)
        dens = counts / (x.size * np.diff(edges_ln))
        top = max(top, float(dens.max()))
        ax.stairs(
            dens,
            edges,
            fill=False,
            color=color,
            lw=1.0,
            zorder=2,
            label=f"{name} ({x.size} points)",
        )
        _, fit, model = _select_fit(
            shapes_result, variable, name if "dataset" in shapes_result.dims else None, what
        )
        nu, scale = float(fit["nu"]), float(fit["scale"])
        ax.plot(
            grid,
            grid * _model_pdf(model, grid, nu, scale),
            color=color,
            lw=1.6,
            label=f"{_FIT_NAMES.get(model, model)} ($\\nu$ = {nu:.3g})",
            zorder=3,
        )
        imp = _implied_for(implied, name, variable, what)
        if imp is not None:
            nu_n, sc_n = float(imp["nu"]), float(imp["scale"])
            ax.plot(
                grid,
                grid * _model_pdf("f1", grid, nu_n, sc_n),
                color=color,
                lw=1.2,
                ls=":",
                label=f"NIG model ($\\nu$ = 2$\\times${nu_n / 2:.3g})",
                zorder=4,
            )
    _log_axis(ax, edges[0] / 1.5, edges[-1] * 1.5)
    ax.set_ylim(0, 1.25 * top)
    _axis_labels(ax, pairs[0][1], variable)
    if title is not None:
        ax.set_title(title)
    if legend:
        ax.legend(loc="upper left", fontsize=6, ncols=2)
    return ax


# --------------------------------------------------------------------------
# Pernot (2024b), Figs. 6 and 9: skewness map
# --------------------------------------------------------------------------
def _threshold(tail_result, variable):
    if "threshold" in tail_result and "variable" in tail_result["threshold"].dims:
        thr = tail_result["threshold"].sel(variable=variable)
        return float(thr.values.flat[0])
    return TAILEDNESS_THRESHOLDS[variable]


@accepts_targets
def skewness_map(
    tail_result, nig_curve=None, *, ax=None, labels="number", z2=True, legend=True, title=None
):
    """beta_GM of E^2 and Z^2 against beta_GM of uE^2, per dataset (Pernot (2024b), Fig. 6).

    Shaded: the unsafe zones of Table II; black dots: the NIG model over ``nu``.

    Parameters
    ----------
    tail_result : xarray.Dataset
        Output of :func:`uqviz.tailedness`.
    nig_curve : xarray.Dataset, optional
        Output of :func:`uqviz.nig_skewness_curve`.
    ax : matplotlib.axes.Axes, optional
    labels : "number", "name" or sequence of str, default "number"
        Point labels: set numbers, dataset names, or given texts.
    z2 : bool, default True
        Also draw beta_GM(Z^2).
    legend, title
        Legend switch; title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.average import skewness_map
    >>> tree = uqviz.from_datasets({f"nu={nu}": uqviz.synthetic.nig(2000, nu=nu, rng=1)
    ...                             for nu in (3, 20)})
    >>> skewness_map(uqviz.tailedness(tree)).get_xlabel()
    '$\\\\beta_{GM}(u_E^2)$'
    """
    checks.result(
        "tail_result", tail_result, "uqviz.tailedness", variables=("beta_gm",), dims=("variable",)
    )
    res = _with_dataset_dim(tail_result)
    missing = [v for v in VAR_TEX if v not in res["variable"].values]
    if missing:
        raise ValueError(
            f"skewness_map: tail_result lacks variable(s) {missing} (it holds "
            f"{[str(v) for v in res['variable'].values]})"
        )
    drawable("skewness_map", res, ("beta_gm",), name="tail_result")
    if nig_curve is not None:
        checks.result(
            "nig_curve",
            nig_curve,
            "uqviz.average.nig.nig_skewness_curve",
            variables=("beta_gm",),
            dims=("variable",),
        )
    names = [str(n) for n in res["dataset"].values]
    texts = _point_labels(names, labels, "skewness_map")
    b = res["beta_gm"]
    x = b.sel(variable="uE2").values
    y_e = b.sel(variable="E2").values
    y_z = b.sel(variable="Z2").values
    thr_u, thr_e = _threshold(res, "uE2"), _threshold(res, "E2")
    thr_z = _threshold(res, "Z2")

    ax = get_ax(ax, figsize=(4.8, 5.6))
    apply_style(ax)
    ys = [y_e] + ([y_z] if z2 else [])
    if nig_curve is not None:
        ys += [nig_curve["beta_gm"].sel(variable="E2").values]
    y_all = np.concatenate([np.ravel(v) for v in ys])
    y_all = y_all[np.isfinite(y_all)]
    y_lo = min(0.6, np.floor((y_all.min() - 0.04) * 20) / 20) if y_all.size else 0.6
    x_fin = x[np.isfinite(x)]
    x_lo = min(0.0, np.floor((x_fin.min() - 0.05) * 10) / 10) if x_fin.size else 0.0
    ax.set_xlim(x_lo, 1.0)
    ax.set_ylim(y_lo, 1.0)

    # unsafe zones (Pernot (2024b), Table II)
    ax.axvspan(thr_u, 1.0, color=ZONE_U, alpha=UNSAFE_ALPHA, lw=0, zorder=0)
    ax.axhspan(thr_e, 1.0, color=ZONE_E, alpha=UNSAFE_ALPHA, lw=0, zorder=0)
    if nig_curve is not None:
        nb = nig_curve["beta_gm"]
        nus = nig_curve["nu"].values
        ax.plot(
            nb.sel(variable="uE2").values,
            nb.sel(variable="E2").values,
            "-o",
            color=_NIG_COLOR,
            ms=3,
            lw=0.8,
            zorder=3,
            label=f"NIG model (${nus.min():g} \\leq \\nu \\leq {nus.max():g}$)",
        )
        for k in (int(np.argmin(nus)), int(np.argmax(nus))):
            ax.annotate(
                f"$\\nu$={nus[k]:g}",
                (nb.sel(variable="uE2").values[k], nb.sel(variable="E2").values[k]),
                xytext=(0, -5),
                textcoords="offset points",
                fontsize=7,
                ha="center",
                va="top",
                color=_NIG_COLOR,
                annotation_clip=True,
            )
        z_nig = float(np.nanmean(nb.sel(variable="Z2").values))
        ax.axhline(
            z_nig,
            color=_NIG_COLOR,
            ls=":",
            lw=0.9,
            zorder=2,
            label=f"NIG model, $\\beta_{{GM}}(Z^2)$ = {z_nig:.2f}",
        )
    ax.plot(
        x, y_e, "^", color=_VAR_COLORS["E2"], ms=6, zorder=5, ls="none", label=r"$\beta_{GM}(E^2)$"
    )
    if z2:
        ax.plot(
            x,
            y_z,
            "s",
            color=_VAR_COLORS["Z2"],
            ms=5,
            zorder=5,
            ls="none",
            label=r"$\beta_{GM}(Z^2)$",
        )
    _add_obstacles(ax, x, y_e)
    if z2:
        _add_obstacles(ax, x, y_z)
    _label_points(ax, x, y_e, texts, side="left", color=_VAR_COLORS["E2"])
    if z2:
        _label_points(ax, x, y_z, texts, side="right", color=_VAR_COLORS["Z2"])
    handles = ax.get_legend_handles_labels()
    zone_u = Patch(
        color=ZONE_U, alpha=UNSAFE_ALPHA, label=f"unsafe: $\\beta_{{GM}}(u_E^2) > {thr_u:g}$ (RCE)"
    )
    zone_e = Patch(
        color=ZONE_E,
        alpha=UNSAFE_ALPHA,
        label=(
            f"unsafe: $\\beta_{{GM}}(E^2)$, $\\beta_{{GM}}(Z^2) > {thr_e:g}$"
            if thr_z == thr_e
            else f"unsafe: $\\beta_{{GM}}(E^2) > {thr_e:g}$"
        )
        + " (RCE, ZMS)",
    )
    ax.set_xlabel(r"$\beta_{GM}(u_E^2)$")
    ax.set_ylabel(r"$\beta_{GM}(E^2)$, $\beta_{GM}(Z^2)$" if z2 else r"$\beta_{GM}(E^2)$")
    if title is not None:
        ax.set_title(title)
    if legend:
        ax.legend(
            handles[0] + [zone_u, zone_e],
            handles[1] + [zone_u.get_label(), zone_e.get_label()],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.13),
            ncols=2,
            fontsize=7,
            frameon=False,
        )
    return ax


# --------------------------------------------------------------------------
# Pernot (2024b), Fig. 7: |zeta_ZMS| against |zeta_RCE|
# --------------------------------------------------------------------------
@accepts_targets
def zeta_comparison(
    validation_result,
    *,
    ax=None,
    statistics=("ZMS", "RCE"),
    labels="number",
    limit=None,
    legend=True,
    title=None,
):
    """Absolute zeta-scores of two statistics against each other (Pernot (2024b), Fig. 7).

    Shaded: the zones where one statistic validates and the other rejects.

    Parameters
    ----------
    validation_result : xarray.Dataset
        Output of :func:`uqviz.validate_average` with both statistics.
    ax : matplotlib.axes.Axes, optional
    statistics : pair of str, default ("ZMS", "RCE")
    labels : "number", "name" or sequence of str, default "number"
    limit : float, optional
        Upper limit of both axes; default ``max(4, 1.08 max |zeta|)``.
    legend, title
        Legend switch; title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.average import zeta_comparison
    >>> tree = uqviz.from_datasets({f"nu={nu}": uqviz.synthetic.nig(1000, nu=nu, rng=2)
    ...                             for nu in (3, 20)})
    >>> ax = zeta_comparison(uqviz.validate_average(tree, n_boot=500, rng=0))
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('$|\\\\zeta_{ZMS}|$', '$|\\\\zeta_{RCE}|$')
    """
    checks.result(
        "validation_result",
        validation_result,
        "uqviz.validate_average",
        variables=("zeta",),
        dims=("statistic",),
    )
    res = _with_dataset_dim(validation_result)
    have = [str(s) for s in res["statistic"].values]
    if isinstance(statistics, str) or len(statistics) != 2:
        raise ValueError(
            f"zeta_comparison: statistics must be two statistic names (x, y), got {statistics!r}"
        )
    sx, sy = statistics
    for s in (sx, sy):
        if s not in have:
            raise ValueError(f"zeta_comparison: statistic {s!r} not in the result ({have})")
    drawable("zeta_comparison", res.sel(statistic=[sx, sy]), ("zeta",), name="validation_result")
    if limit is not None:
        limit = checks.positive("limit", limit)
    names = [str(n) for n in res["dataset"].values]
    texts = _point_labels(names, labels, "zeta_comparison")
    x = np.abs(res["zeta"].sel(statistic=sx).values)
    y = np.abs(res["zeta"].sel(statistic=sy).values)
    fin = np.isfinite(x) & np.isfinite(y)
    if limit is None:
        top = float(np.max(np.r_[x[fin], y[fin]])) if fin.any() else 0.0
        limit = max(4.0, 1.08 * top)

    ax = get_ax(ax, figsize=(4.0, 4.0))
    apply_style(ax)
    low = -0.025 * limit
    ax.set_xlim(low, limit)
    ax.set_ylim(low, limit)
    ax.fill_between(
        [low, 1.0],
        1.0,
        limit,
        color=ZONE_E,
        alpha=UNSAFE_ALPHA,
        lw=0,
        zorder=0,
        label="disagreement: one $|\\zeta| \\leq 1$, the other $> 1$",
    )
    ax.fill_between([1.0, limit], low, 1.0, color=ZONE_E, alpha=UNSAFE_ALPHA, lw=0, zorder=0)
    ax.plot(
        [low, limit],
        [low, limit],
        ls="--",
        color=COLORS["reference"],
        lw=1.0,
        zorder=1,
        label="identity",
    )
    ax.plot(x[fin], y[fin], "o", color="k", ms=4.5, zorder=4, ls="none", label="datasets")
    ax.set_aspect("equal", adjustable="box")
    if legend:  # say what each zone means, inside it
        kw = dict(fontsize=7, color="#7f3b08", zorder=2)
        ax.text(
            0.5,
            limit * 0.98,
            f"{sx} validates, {sy} rejects",
            rotation=90,
            ha="center",
            va="top",
            **kw,
        )
        ax.text(limit * 0.98, 0.5, f"{sx} rejects, {sy} validates", ha="right", va="center", **kw)
    _add_obstacles(ax, x[fin], y[fin], size_pt=5.0)
    _label_points(ax, x[fin], y[fin], [t for t, f in zip(texts, fin) if f], side="right", color="k")
    n_bad = int((~fin).sum())
    if n_bad:
        ax.text(
            0.98,
            0.02,
            f"{n_bad} undefined zeta not shown",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
        )
    ax.set_xlabel(f"$|\\zeta_{{{sx}}}|$")
    ax.set_ylabel(f"$|\\zeta_{{{sy}}}|$")
    if title is not None:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------
# Pernot (2024b), Fig. 8: decimation curves
# --------------------------------------------------------------------------
@accepts_targets
def decimation_curves(
    decimation_result, *, dataset=None, ax=None, statistics=None, legend=True, title=None
):
    """``stat_k - stat_0`` against the percentage k of largest uE removed (Pernot (2024b), Fig. 8).

    The bars left of k = 0 are the zero-centred intervals of the full set.

    Parameters
    ----------
    decimation_result : xarray.Dataset
        Output of :func:`uqviz.decimation_curve`.
    dataset : str or int, optional
        Which dataset (required when the result has several).
    ax : matplotlib.axes.Axes, optional
    statistics : sequence of str, optional
    legend, title
        Legend switch; title (default the dataset name).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.average import decimation_curves
    >>> res = uqviz.decimation_curve(uqviz.synthetic.nig(2000, nu=20, rng=0), n_boot=500, rng=1)
    >>> decimation_curves(res).get_xlabel()
    'largest $u_E$ removed, $k$ (%)'
    """
    checks.result(
        "decimation_result",
        decimation_result,
        "uqviz.decimation_curve",
        variables=("delta", "ci_lower_halfwidth", "ci_upper_halfwidth"),
        dims=("fraction", "statistic"),
    )
    res, name = _one_dataset(decimation_result, dataset, "decimation_curves")
    stats_ = _names("decimation_curves", "statistics", statistics, res["statistic"].values)
    drawable("decimation_curves", res.sel(statistic=stats_), ("delta",), name="decimation_result")
    k = 100.0 * res["fraction"].values
    span = float(k.max() - k.min()) or 1.0
    width = 0.05 * span
    level = decimation_result.attrs.get("ci", 0.95)

    ax = get_ax(ax)
    apply_style(ax)
    ax.axhline(0.0, color=COLORS["reference"], lw=0.8, zorder=1)
    for i, s in enumerate(stats_):
        r = res.sel(statistic=s)
        c = statistic_color(s, i)
        ax.plot(
            k, r["delta"].values, "-o", ms=2.5, lw=1.3, color=c, label=f"$\\Delta$ {s}", zorder=4
        )
        lo, hi = float(r["ci_lower_halfwidth"]), float(r["ci_upper_halfwidth"])
        xb = k.min() - (len(stats_) - i) * 1.2 * width
        ax.bar(
            xb,
            hi - lo,
            bottom=lo,
            width=width,
            color=c,
            alpha=0.35,
            lw=0,
            zorder=2,
            label=f"{level:.0%} CI of {s} (full set)",
        )
        for v in (lo, hi):
            ax.axhline(v, color=c, ls=":", lw=0.8, alpha=0.8, zorder=1)
    ax.set_xlim(k.min() - (len(stats_) + 1.0) * 1.2 * width, k.max() + 0.03 * span)
    ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=6, integer=True, steps=[1, 2, 5, 10]))
    ax.set_xlabel("largest $u_E$ removed, $k$ (%)")
    ax.set_ylabel(r"$\Delta = $ stat$_k$ $-$ stat$_0$")
    ax.set_title(title if title is not None else (name or ""))
    if legend:
        ax.legend(loc="best", fontsize=7, frameon=True, framealpha=0.9, edgecolor="none")
    return ax
