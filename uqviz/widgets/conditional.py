"""Interactive explorer of conditional calibration (LZM / LZMS / LRCE per bin).

Controls -> (:func:`uqviz.recalibrate`) -> :func:`uqviz.local_calibration` +
:func:`uqviz.fraction_valid` -> :func:`uqviz.plots.conditional.local` (or
:func:`uqviz.plots.recalibration.before_after` when recalibrated). The current numbers
are exposed as ``.result`` and ``.fv`` (and ``.result_before``, ``.fv_before``), so the
explorer is tested (and scripted) by setting the ``.value`` of its controls.
"""

from __future__ import annotations

import html
import time
import warnings

import numpy as np

from uqviz.conditional.local import fraction_valid, local_calibration, local_interval_coverage
from uqviz.conditional.null import NULL_N_MC
from uqviz.recalibration.fitting import recalibrate
from uqviz.engine.binning import default_n_bins
from uqviz.engine import checks
from uqviz.engine.warning_classes import UqvizWarning
from uqviz.plots.conditional import local, local_svg
from uqviz.plots.recalibration import before_after, before_after_svg
from uqviz.widgets._display import (
    FIGSIZE,
    RENDERERS,
    ExplorerDrawing,
    check_figsize,
    dataset_dropdown,
    explorer_layout,
    labelled_datasets,
    style_controls,
    wrap_html,
)

__all__ = ["ConditionalExplorer"]

STATISTICS = ("ZMS", "ZM", "RCE", "PICP")
BINNINGS = ("equal_count", "equal_width", "stratified")
#: the recalibration control: "none" or a method of :func:`uqviz.recalibrate`
RECALIBRATIONS = ("none", "scaling", "linear", "isotonic", "bvs")


def conditioning_options(ds):
    """``uE`` and the numeric per-point features of a dataset, in order."""
    out = ["uE"]
    for name, var in ds.data_vars.items():
        if name in ("E", "uE") or var.dims != ("point",):
            continue
        if var.attrs.get("role") == "metadata" or not np.issubdtype(var.dtype, np.number):
            continue
        out.append(str(name))
    return out


class ConditionalExplorer(ExplorerDrawing):
    """Explore consistency and adaptivity: local statistic per bin, f_v, controls.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset, or several (children of a tree; a dropdown selects one).
    statistic : {"ZMS", "ZM", "RCE", "PICP"}, default "ZMS"
        ``"PICP"``: local coverage of the 95 % intervals ``E in +-1.96 uE``.
    conditioning : str, default "uE"
    n_bins : int, optional
        Default ``min(round(sqrt(M)), M // 100)``, at least 1 (bins of at least
        100 points; ``uqviz.engine.binning.default_n_bins``).
    binning : {"equal_count", "equal_width", "stratified"}, default "equal_count"
    min_count : int, default 100
        Minimum stratum size of the stratified binning (100 as Pernot (2023)).
    n_boot : int, default 1000
        Bootstrap replicates per bin: modest so that the explorer stays
        interactive (use :func:`uqviz.local_calibration` with 5000 for final numbers).
    n_mc : int, default 2000
        Simulated calibrated bins of the null behind f_v's reference (the ``n_mc`` of
        :func:`uqviz.local_calibration`, and its default: the explorer's f_v verdict is the
        one whose false-alarm rate and power the verdict table gives). The null is computed
        after the figure is shown (the read-out says "calibrated reference: computing" until
        its verdict is there), so it does not delay the figure.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md).
    recalibration : {"none", "scaling", "linear", "isotonic", "bvs"}, default "none"
        Recalibrate the uncertainties before the local analysis with
        :func:`uqviz.recalibrate` (cross-fitted on 5 folds, so that the analysis of the
        result on the same data is honest); ``"bvs"`` bins on the "condition on" variable.
        The figure then shows the statistic per bin before and after, and the label both
        f_v. The isotonic output is a step function of uE: analyse it vs uE with
        ``binning="stratified"``.
    rng : int, default 0
        Seed (of the bootstrap and of the folds): the same settings always give the same
        numbers.
    figsize : (float, float), default (8.4, 4.4)
        Inches at 100 px per inch (840 x 440 px: beside the controls in a 1280 x 800 view);
        the margins are fixed (``uqviz.widgets._display.MARGINS_INCHES``), the legend right
        of the axes.
    renderer : {"svg", "matplotlib"}, default "svg"
        How a view is drawn: ``"svg"``, as SVG markup from the result (about 2 ms; the
        browser rasterises it; the same data, ticks and labels as the matplotlib figure,
        which stays available as ``.figure``), or ``"matplotlib"``, the figure rendered to
        PNG by Agg (about 100 ms). Issue 25's budget of 100 ms per change needs SVG.

    Attributes
    ----------
    result : xarray.Dataset
        The current :func:`uqviz.local_calibration` result (of the recalibrated data when
        a recalibration is selected).
    fv : xarray.Dataset
        The current :func:`uqviz.fraction_valid` result.
    result_before, fv_before : xarray.Dataset or None
        The same on the data before recalibration (None without recalibration).
    widget : ipywidgets.VBox
        The app (also shown by displaying the explorer itself): a row of the control column
        (``controls``, fixed width, messages wrapped under the controls) and, right of it,
        the f_v read-out above the figure.
    figure, ax : matplotlib Figure and Axes
        The matplotlib figure of the view shown (None after an error), to save or change;
        with ``renderer="svg"`` it is built when first asked for.
    svg, png : str, bytes or None
        The view shown as SVG markup (``renderer="svg"``; else None) and as PNG: the image
        shown (``renderer="matplotlib"``), else the figure rendered at first access; None on
        the ``%matplotlib widget`` backend, whose canvas draws in the browser.
    timings : dict
        Seconds of the last update: ``"compute"`` (the numbers without the null), ``"figure"``
        (building the SVG or the figure), ``"render"`` (Agg and PNG encoding; 0 for SVG),
        ``"show"`` (handing the image to the widget), ``"after"`` (the null and the verdict,
        after the figure); a view shown before shows its kept image (``"figure"`` and
        ``"render"`` 0).
        ``benchmarks/bench_explorer_update.py`` prints them.
    dataset, conditioning, n_bins, binning, min_count, statistic, recalibration, log_x : ipywidgets
        The controls; set their ``.value`` to drive the explorer from code.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.widgets.conditional import ConditionalExplorer
    >>> ex = ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=200)
    >>> ex.conditioning.value = "X"
    >>> ex.result.attrs["conditioning"]
    'X'
    >>> ex.recalibration.value = "bvs"  # BVS on X, cross-fitted
    >>> bool(ex.fv.valid), bool(ex.fv_before.valid)
    (True, False)
    """

    READOUTS = ("fv_label", "message")

    def __init__(
        self,
        data,
        *,
        statistic="ZMS",
        conditioning="uE",
        n_bins=None,
        binning="equal_count",
        min_count=100,
        n_boot=1000,
        n_mc=NULL_N_MC,
        recalibration="none",
        rng=0,
        figsize=FIGSIZE,
        engine=None,
        renderer="svg",
    ):
        import ipywidgets as w

        self._datasets = labelled_datasets(data)
        self.n_boot = checks.count("n_boot", n_boot, minimum=2)
        self.n_mc = checks.count("n_mc", n_mc, minimum=1)
        self.engine = checks.engine(engine)
        checks.rng(rng)
        self.rng = rng
        self.figsize = check_figsize(figsize)
        self.renderer = checks.choice("renderer", renderer, RENDERERS)
        self.result = None
        self.fv = None
        self.result_before = None
        self.fv_before = None
        self._recalibrated = {}  # (dataset, method, conditioning) -> recalibrated data
        self.figure = None
        self.ax = None
        self.png = self.svg = None
        self.start_timings()
        self._busy = False

        names = list(self._datasets)
        self.dataset = dataset_dropdown(names)
        ds = self._datasets[names[0]]
        options = conditioning_options(ds)
        if conditioning not in options:
            raise ValueError(
                f"conditioning {conditioning!r} is not a numeric variable of the "
                f"dataset; available: {', '.join(options)}"
            )
        self.conditioning = w.Dropdown(
            options=options, value=conditioning, description="condition on"
        )
        m = ds.sizes["point"]
        n0 = default_n_bins(m) if n_bins is None else checks.count("n_bins", n_bins, maximum=m)
        self.n_bins = w.IntSlider(
            value=n0, min=1, max=self._max_bins(m, n0), description="bins", continuous_update=False
        )
        checks.choice("binning", binning, BINNINGS)
        self.binning = w.Dropdown(options=list(BINNINGS), value=binning, description="binning")
        self.min_count = w.IntSlider(
            value=checks.count("min_count", min_count),
            min=10,
            max=max(20, m // 4),
            step=10,
            description="min count",
            continuous_update=False,
        )
        checks.choice("statistic", statistic, STATISTICS)
        self.statistic = w.Dropdown(
            options=list(STATISTICS), value=statistic, description="statistic"
        )
        checks.choice("recalibration", recalibration, RECALIBRATIONS)
        self.recalibration = w.Dropdown(
            options=list(RECALIBRATIONS), value=recalibration, description="recalibrate"
        )
        self.log_x = w.Checkbox(value=conditioning == "uE", description="log x", indent=False)
        self.fv_label = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        self._canvas_box = w.Box()
        self._sync_enabled()

        for ctrl in (
            self.dataset,
            self.conditioning,
            self.n_bins,
            self.binning,
            self.min_count,
            self.statistic,
            self.recalibration,
            self.log_x,
        ):
            ctrl.observe(self._on_change, names="value")
        style_controls(
            (
                self.dataset,
                self.conditioning,
                self.n_bins,
                self.binning,
                self.min_count,
                self.statistic,
                self.recalibration,
            )
        )
        style_controls((self.log_x,))
        self.widget, self.controls = explorer_layout(
            [
                self.dataset,
                self.conditioning,
                self.statistic,
                self.binning,
                self.n_bins,
                self.min_count,
                self.recalibration,
                self.log_x,
            ],
            self.message,
            self.fv_label,
            self._canvas_box,
            self.output,
            self.figsize,
        )
        self.update()

    # ------------------------------------------------------------------ state
    @staticmethod
    def _max_bins(m, n0):
        return int(max(n0, min(m // 30, 300), 2))

    def _sync_enabled(self):
        self.n_bins.disabled = self.binning.value == "stratified"
        self.min_count.disabled = self.binning.value != "stratified"

    def _on_change(self, change):
        if self._busy:
            return
        owner = change["owner"]
        self._busy = True
        try:
            if owner is self.dataset:
                ds = self.data
                options = conditioning_options(ds)
                keep = self.conditioning.value if self.conditioning.value in options else "uE"
                self.conditioning.options = options
                self.conditioning.value = keep
                m = ds.sizes["point"]
                n0 = min(self.n_bins.value, self._max_bins(m, default_n_bins(m)))
                self.n_bins.max = self._max_bins(m, default_n_bins(m))
                self.n_bins.value = n0
                self.min_count.max = max(20, m // 4)
            if owner is self.conditioning:
                self.log_x.value = self.conditioning.value == "uE"
            self._sync_enabled()
        finally:
            self._busy = False
        if owner is self.log_x:
            self.start_timings()
            self.redraw()
        else:
            self.update()

    # -------------------------------------------------------------- compute
    def recalibrated(self):
        """The selected dataset recalibrated by the selected method (:func:`uqviz.recalibrate`,
        cross-fitted, seed ``rng``), or None for ``"none"``; cached per setting."""
        method = self.recalibration.value
        if method == "none":
            return None
        cond = self.conditioning.value if method == "bvs" else "uE"
        key = (self.dataset.value, method, cond)
        if key not in self._recalibrated:
            self._recalibrated[key] = recalibrate(
                self.data, method=method, conditioning=cond, rng=self.rng
            )
        return self._recalibrated[key]

    def _local(self, ds, n_mc):
        stratified = self.binning.value == "stratified"
        bins = dict(
            conditioning=self.conditioning.value,
            n_bins=None if stratified else self.n_bins.value,
            binning=self.binning.value,
            min_count=self.min_count.value if stratified else None,
            n_mc=n_mc,
            rng=self.rng,
        )
        result = (
            local_interval_coverage(ds, **bins)
            if self.statistic.value == "PICP"
            else local_calibration(
                ds, statistic=self.statistic.value, n_boot=self.n_boot, engine=self.engine, **bins
            )
        )
        return result, fraction_valid(result)  # "calibrated" with the null, else "wilson"

    def _settings(self):
        stratified = self.binning.value == "stratified"
        return (
            self.dataset.value,
            self.statistic.value,
            self.conditioning.value,
            self.binning.value,
            None if stratified else self.n_bins.value,
            self.min_count.value if stratified else None,
            self.recalibration.value,
        )

    def compute(self):
        """Run :func:`uqviz.local_calibration` and :func:`uqviz.fraction_valid` for the controls.

        Returns ``(result, fv, notes)``; with a recalibration selected, ``result`` and ``fv``
        are those of the recalibrated data and ``.result_before``/``.fv_before`` are set.
        The numbers of the last ``CACHE_SIZE`` settings are kept (``cached``): the same settings
        give the same numbers (fixed seed), so a setting visited again is not recomputed.
        """
        result, fv, self.result_before, self.fv_before, notes = self.cached(
            self._settings(), lambda: self._compute_now(self.n_mc)
        )
        return result, fv, list(notes)

    def compute_bins(self):
        """The numbers of :meth:`compute` without the calibrated null (``n_mc=0``): the same
        bins, estimates, intervals and f_v with its interval (the figure), no f_v verdict.
        ``(result, fv, result_before, fv_before, notes)``; :meth:`compute`'s numbers when
        they are kept."""
        key = self._settings()
        if self.is_cached(key):
            return self.cached(key, None)
        return self.cached(("no null",) + key, lambda: self._compute_now(0))

    def _kept_before(self, n_mc):
        """The numbers of the same settings without recalibration, when kept: the view a
        user usually comes from when choosing a method (the same seed: the same numbers as
        recomputing them). With ``n_mc`` 0, those without the null do too."""
        key = self._settings()[:-1] + ("none",)
        for k in (key,) if n_mc else (key, ("no null",) + key):
            if self.is_cached(k):
                return self.cached(k, None)
        return None

    def _compute_now(self, n_mc):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            after = self.recalibrated()
            kept = self._kept_before(n_mc) if after is not None else None
            before = kept[:2] if kept else self._local(self.data, n_mc)
            result, fv = before if after is None else self._local(after, n_mc)
        notes = list(
            dict.fromkeys(
                (kept[4] if kept else ())
                + tuple(str(c.message) for c in caught if issubclass(c.category, UqvizWarning))
            )
        )
        if (
            self.recalibration.value == "isotonic"
            and self.conditioning.value == "uE"
            and self.binning.value != "stratified"
        ):
            notes.append(
                "the isotonic output is a step function of uE: analyse it vs uE "
                "with binning = stratified"
            )
        if after is None:
            return result, fv, None, None, tuple(notes)
        return result, fv, before[0], before[1], tuple(notes)

    def update(self):
        """Recompute and redraw (called on every change of a control).

        The figure first, the f_v verdict after: the bins, their intervals and f_v are
        computed without the calibrated null (:meth:`compute_bins`), shown (read-outs, then
        the figure), and the null behind f_v's verdict follows (:meth:`compute`; the
        read-out says "calibrated reference: computing" until then). The numbers left in
        ``.result`` and ``.fv`` are those of :meth:`compute`.
        """
        t0 = time.perf_counter()
        try:
            numbers = self.compute_bins()
        except ValueError as err:  # no stale numbers: .result is None until a valid setting
            self.start_timings(time.perf_counter() - t0)
            self.fv = self.result_before = self.fv_before = None
            self.show_error(err)
            return
        self.start_timings(time.perf_counter() - t0)
        # the text first: the read-outs reach the browser before the figure
        self._show_numbers(numbers)
        self.redraw()
        if "reference" not in self.fv:
            t1 = time.perf_counter()
            try:
                numbers = self.cached(self._settings(), lambda: self._compute_now(self.n_mc))
            except ValueError as err:
                self.fv = self.result_before = self.fv_before = None
                self.show_error(err)
                return
            self.discard(("no null",) + self._settings())  # superseded: compute_bins
            self._show_numbers(numbers)  # now returns these numbers
            self.timings["after"] = time.perf_counter() - t1

    def figure_key(self):
        """The settings (the dataset among them) and log x: all the figure depends on."""
        return self._settings() + (self._log_x(),)

    def _log_x(self):
        return bool(self.log_x.value and float(self.result["bin_center"].min()) > 0)

    def _show_numbers(self, numbers):
        """Set ``.result``, ``.fv`` (and before), the messages and the f_v read-out; without
        the calibrated null (``fv`` of method "wilson") the read-out states no verdict."""
        self.result, self.fv, self.result_before, self.fv_before, notes = numbers
        self.message.value = wrap_html(
            "<br>".join(f"<small>&#9888; {html.escape(n)}</small>" for n in notes)
        )
        est, lo, hi = (float(self.fv[k]) for k in ("estimate", "ci_lower", "ci_upper"))
        ok = bool(self.fv["valid"])
        if "reference" in self.fv:
            # the verdict word of fraction_valid when it gives one (its tail rule, issue
            # 36), else the word of valid
            word = (
                str(self.fv["verdict"].values)
                if "verdict" in self.fv
                else ("OK" if ok else "fails")
            )
            target = (
                f"calibrated data give {float(self.fv['reference']):.2f}, at least "
                f"{float(self.fv['reference_lower']):.2f} accepted: " + word
            )
        else:
            target = "calibrated reference: computing&hellip;"
        label = (
            f"<b>f<sub>v</sub> = {est:.2f}</b> &nbsp; 95% CI [{lo:.2f}, {hi:.2f}]<br>"
            f"{int(self.fv['n_valid'])} of {int(self.fv['n_bins'])} bins valid; {target}"
        )
        if self.fv_before is not None:
            b = self.fv_before
            label += (
                f"<br><small>after {html.escape(self._method_words())}; before: "
                f"f<sub>v</sub> = {float(b['estimate']):.2f} [{float(b['ci_lower']):.2f}, "
                f"{float(b['ci_upper']):.2f}], {int(b['n_valid'])} of {int(b['n_bins'])} "
                "valid</small>"
            )
        self.fv_label.value = label

    def _method_words(self):
        method = self.recalibration.value
        return f"BVS on {self.conditioning.value}" if method == "bvs" else method

    # ---------------------------------------------------------------- draw
    def _labels(self):
        """The x label and log x of the view (both renderers)."""
        ds = self.data
        name = self.conditioning.value
        units = ds[name].attrs.get("units", "") if name in ds else ""
        label = "Uncertainty $u_E$" if name == "uE" else name.replace("_", " ")
        return (f"{label} [{units}]" if units else label), self._log_x()

    def _title_before_after(self):
        return (
            f"$f_v$ = {float(self.fv['estimate']):.2f} after {self._method_words()}, "
            f"{float(self.fv_before['estimate']):.2f} before"
        )

    def _draw(self, ax):
        xlabel, log_x = self._labels()
        if self.result_before is None:
            local(self.result, fv=self.fv, ax=ax, log_x=log_x, xlabel=xlabel, legend="outside")
            return
        # the method in the title, short labels in the legend (its width is the margin's)
        before_after(
            self.result_before,
            self.result,
            labels=("before", "after"),
            ax=ax,
            log_x=log_x,
            legend="outside",
            title=self._title_before_after(),
        )
        ax.set_xlabel(xlabel)

    def _draw_svg(self, layout):
        xlabel, log_x = self._labels()
        if self.result_before is None:
            return local_svg(self.result, self.fv, layout=layout, log_x=log_x, xlabel=xlabel)
        return before_after_svg(
            self.result_before,
            self.result,
            layout=layout,
            log_x=log_x,
            xlabel=xlabel,
            title=self._title_before_after(),
        )
