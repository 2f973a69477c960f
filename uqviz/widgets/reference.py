"""Interactive explorer of simulated reference values (Pernot (2024c): Sim and Sim2 schemes).

Controls -> :func:`uqviz.validate_simulated` (all schemes, with the simulated
values) -> :func:`uqviz.plots.reference.reference_distribution`. The student
sees how the reference of CC, ENCE, ZMSE or UCE moves with the generative
distribution D and the number of bins, while the ZMS reference stays at 1,
and how the Sim and Sim2 zeta-scores follow. The numbers are exposed as
``.result``, so the explorer is tested (and scripted) by setting the
``.value`` of its controls.
"""

from __future__ import annotations

import html
import time
import warnings

from uqviz.engine import checks
from uqviz.engine.statistics import DEFAULT_N_BINS, get_statistic
from uqviz.engine.verdicts import decide
from uqviz.engine.warning_classes import UqvizWarning
from uqviz.plots.reference import reference_distribution, reference_distribution_svg
from uqviz.reference.simulated import validate_simulated
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

__all__ = ["ReferenceExplorer"]

STATISTICS = ("CC", "ENCE", "ZMSE", "UCE", "ZMS")
#: range of the nu slider (t_s(nu) has a unit variance for nu > 2)
NU_RANGE = (2.5, 30.0)
#: label -> key of the generative dropdown ("t" uses the nu slider)
GENERATIVES = (
    ("normal", "normal"),
    ("Student t", "t"),
    ("uniform", "uniform"),
    ("Laplace", "laplace"),
    ("empirical (z-scores)", "empirical"),
)


def _nu(nu) -> float:
    """``nu`` within the slider's range, never clamped silently."""
    nu = checks.positive("nu", nu)
    if not NU_RANGE[0] <= nu <= NU_RANGE[1]:
        raise ValueError(
            f"nu must be in [{NU_RANGE[0]:g}, {NU_RANGE[1]:g}] (the range of the nu "
            f"slider), got {nu!r}"
        )
    return nu


class ReferenceExplorer(ExplorerDrawing):
    """Explore simulated reference values and the Sim/Sim2 zeta-scores of a dataset.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset, or several (children of a tree; a dropdown selects one).
    statistic : {"CC", "ENCE", "ZMSE", "UCE", "ZMS"}, default "ENCE"
    generative : {"normal", "t", "uniform", "laplace", "empirical"}, default "normal"
        D; "t" is the unit-variance Student t_s(nu) with ``nu`` from the slider.
    nu : float, default 6.0
        Degrees of freedom of t_s(nu) (Pernot (2024c) uses 6), in [2.5, 30] (the slider).
    n_bins : int, optional
        Equal-count bins of uE for ENCE, ZMSE, UCE; None: 20, the default of the binned
        statistics.
    n_mc : int, default 500
        Monte Carlo size of the reference; modest so that the explorer stays
        interactive (the paper uses 10^4: use :func:`uqviz.validate_simulated`).
    n_boot : int, default 1000
        Bootstrap replicates of the statistic (the explorers' default of
        docs/conventions.md: interactive).
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md).
    ci : float, default 0.95
        Level of the bootstrap and Monte Carlo intervals.
    rng : int, default 0
        Seed: the same settings always give the same numbers.
    figsize : (float, float), default (8.4, 4.4)
        Inches at 100 px per inch (840 x 440 px: beside the controls in a 1280 x 800 view);
        the margins are fixed, the legend right of the axes.
    renderer : {"svg", "matplotlib"}, default "svg"
        How a view is drawn (SVG from the result, or matplotlib rendered to PNG), as in
        :class:`uqviz.widgets.ConditionalExplorer`.

    Attributes
    ----------
    result : xarray.Dataset
        The :func:`uqviz.validate_simulated` result for the current settings,
        with ``scheme=("Sim", "Sim2")`` (and "BS" for a statistic with a
        predefined reference) and ``return_samples=True``; attrs add
        ``dataset``.
    widget : ipywidgets.VBox
        The app (also shown by displaying the explorer itself): a row of the control column
        (``controls``, fixed width, messages wrapped under the controls) and, right of it,
        the summary above the figure.
    figure, ax, svg, png, timings
        The current figure, its Axes, the SVG and PNG of the view, and the seconds of the
        last update
        (``"compute"``, ``"figure"``, ``"render"``, ``"show"``), as in
        :class:`uqviz.widgets.ConditionalExplorer`.
    dataset, statistic, generative, nu, n_bins : ipywidgets
        The controls; set their ``.value`` to drive the explorer from code.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.widgets.reference import ReferenceExplorer
    >>> ex = ReferenceExplorer(uqviz.synthetic.nig(1000, nu=6, rng=0), n_mc=100, n_boot=100)
    >>> ex.generative.value = "t"
    >>> ex.result.attrs["generative"]
    't6'
    """

    READOUTS = ("summary", "message")

    def __init__(
        self,
        data,
        *,
        statistic="ENCE",
        generative="normal",
        nu=6.0,
        n_bins=None,
        n_mc=500,
        n_boot=1000,
        ci=0.95,
        rng=0,
        figsize=FIGSIZE,
        engine=None,
        renderer="svg",
    ):
        import ipywidgets as w

        self._datasets = labelled_datasets(data)
        checks.choice("statistic", statistic, STATISTICS)
        checks.choice("generative", generative, [k for _, k in GENERATIVES])
        self.n_mc = checks.count("n_mc", n_mc, minimum=2)
        self.n_boot = checks.count("n_boot", n_boot, minimum=2)
        self.engine = checks.engine(engine)
        self.ci = checks.probability("ci", ci)
        checks.rng(rng)  # validated here; each update starts again from this seed
        self.rng = rng
        self.figsize = check_figsize(figsize)
        self.renderer = checks.choice("renderer", renderer, RENDERERS)
        self.result = None
        self.figure = None
        self.ax = None
        self.png = self.svg = None
        self.start_timings()
        self._busy = False

        names = list(self._datasets)
        self.dataset = dataset_dropdown(names)
        self.statistic = w.Dropdown(
            options=list(STATISTICS), value=statistic, description="statistic"
        )
        self.generative = w.Dropdown(options=list(GENERATIVES), value=generative, description="D")
        self.nu = w.FloatSlider(
            value=_nu(nu),
            min=NU_RANGE[0],
            max=NU_RANGE[1],
            step=0.5,
            description="nu",
            continuous_update=False,
        )
        n_bins = DEFAULT_N_BINS if n_bins is None else checks.count("n_bins", n_bins, minimum=2)
        self.n_bins = w.IntSlider(
            value=n_bins, min=2, max=self._max_bins(), description="bins", continuous_update=False
        )
        self.summary = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        self._canvas_box = w.Box()
        self._sync_enabled()
        for ctrl in (self.dataset, self.statistic, self.generative, self.nu, self.n_bins):
            ctrl.observe(self._on_change, names="value")
        style_controls((self.dataset, self.statistic, self.generative, self.nu, self.n_bins))
        self.widget, self.controls = explorer_layout(
            [self.dataset, self.statistic, self.generative, self.nu, self.n_bins],
            self.message,
            self.summary,
            self._canvas_box,
            self.output,
            self.figsize,
        )
        self.update()

    # ------------------------------------------------------------------ state
    def _max_bins(self):
        m = (
            self.data.sizes["point"]
            if hasattr(self, "dataset")
            else next(iter(self._datasets.values())).sizes["point"]
        )
        return int(max(2, min(200, m // 10)))

    def _sync_enabled(self):
        self.nu.disabled = self.generative.value != "t"
        self.n_bins.disabled = get_statistic(self.statistic.value).kind != "binned"

    def _on_change(self, change):
        if self._busy:
            return
        self._busy = True
        try:
            if change["owner"] is self.dataset:
                top = self._max_bins()
                self.n_bins.max = max(top, self.n_bins.min)
                self.n_bins.value = min(self.n_bins.value, top)
            self._sync_enabled()
        finally:
            self._busy = False
        if change["owner"] is self.nu and self.generative.value != "t":
            return  # nu does not matter for this D
        self.update()

    def _generative(self):
        key = self.generative.value
        return f"t{self.nu.value:g}" if key == "t" else key

    # -------------------------------------------------------------- compute
    def compute(self):
        """:func:`uqviz.validate_simulated` for the current settings, and its warnings.

        The numbers of the last ``CACHE_SIZE`` settings are kept (``cached``): the same
        settings give the same numbers (fixed seed), so a setting visited again is not
        recomputed.
        """
        result, notes = self.cached(self._settings(), self._compute_now)
        return result, list(notes)

    def _settings(self):
        return (
            self.dataset.value,
            self.statistic.value,
            self._generative(),
            int(self.n_bins.value),
        )

    def figure_key(self):
        """The settings: all the figure depends on (its PNG is kept with the numbers)."""
        return self._settings()

    def _compute_now(self):
        stat = get_statistic(self.statistic.value)
        schemes = ("Sim", "Sim2", "BS") if stat.has_reference else ("Sim", "Sim2")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = validate_simulated(
                self.data,
                statistic=stat.name,
                generative=self._generative(),
                scheme=schemes,
                n_mc=self.n_mc,
                n_boot=self.n_boot,
                n_bins=int(self.n_bins.value),
                ci=self.ci,
                rng=self.rng,
                return_samples=True,
                progress=False,
                engine=self.engine,
            )
        notes = list(
            dict.fromkeys(str(c.message) for c in caught if issubclass(c.category, UqvizWarning))
        )
        result.attrs["dataset"] = self.dataset.value
        return result, tuple(notes)

    def update(self):
        """Recompute and redraw (called on every change of a control)."""
        t0 = time.perf_counter()
        try:
            self.result, notes = self.compute()
        except ValueError as err:  # no stale numbers: .result is None until a valid setting
            self.start_timings(time.perf_counter() - t0)
            self.show_error(err)
            return
        self.start_timings(time.perf_counter() - t0)
        # the text first: the read-outs reach the browser before the figure
        self.message.value = wrap_html(
            "<br>".join(f"<small>&#9888; {html.escape(n)}</small>" for n in notes)
        )
        res = self.result
        rows = []
        for s in res["scheme"].values:
            z = float(res["zeta"].sel(scheme=s))
            if "verdict" in res:  # BS: validate_average's rule under heavy tails (issue 36)
                word = str(res["verdict"].sel(scheme=s).values)
            else:
                ok = bool(res["valid"].sel(scheme=s))
                reliable = bool(res["reliable"].sel(scheme=s)) if "reliable" in res else True
                word = decide(not ok, reliable=reliable)  # the contract's verdict words
            color = "#1f77b4" if word == "OK" else "#d62728" if word == "fails" else "#7f7f7f"
            rows.append(
                f"<span style='color:{color}'>&zeta;<sub>{s}</sub> = {z:+.2f} ({word})</span>"
            )
        attrs = res.attrs
        binned = get_statistic(attrs["statistic"]).kind == "binned"
        bins = f", {attrs['n_bins']} bins" if binned else ""
        self.summary.value = (
            f"<b>{attrs['statistic']}</b> = {float(res['estimate']):.4g} "
            f"&nbsp; {100 * attrs['ci']:g}% CI [{float(res['ci_lower']):.4g}, "
            f"{float(res['ci_upper']):.4g}]<br>"
            f"reference (D = {attrs['generative']}{bins})"
            f" = {float(res['reference']):.4g} &plusmn; {float(res['reference_se']):.1g}"
            f" (MC interval [{float(res['reference_lower']):.4g}, "
            f"{float(res['reference_upper']):.4g}])<br>" + " &nbsp; ".join(rows)
        )
        self.redraw()

    # ---------------------------------------------------------------- draw
    def _title(self):
        attrs = self.result.attrs
        return f"{attrs['dataset']}: {attrs['statistic']}, D = {attrs['generative']}"

    def _draw(self, ax):
        reference_distribution(self.result, ax=ax, legend="outside", title=self._title())

    def _draw_svg(self, layout):
        return reference_distribution_svg(self.result, layout=layout, title=self._title())
