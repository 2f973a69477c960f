"""Helpers shared by the explorers: dataset selection, control layout and drawing."""

from __future__ import annotations

import base64
import io
import time

from matplotlib.figure import Figure

from uqviz.engine.tree import datasets_of

#: pixels per inch of the explorers' figures: a figure of 8.4 x 4.4 in is 840 x 440 px,
#: shown at that size (one pixel of the PNG per CSS pixel)
FIGURE_DPI = 100
#: the largest figure (width, height in px) that fits beside the control column in a
#: 1280 x 800 view, under the tab bar and the read-outs (nothing below the fold)
FIGURE_BUDGET_PX = (860, 500)
#: fixed margins of the explorers' figures, in inches: no layout solver and no tight
#: bounding box at each redraw; the right margin holds the legend (outside the data)
MARGINS_INCHES = {"left": 0.8, "bottom": 0.55, "right": 2.2, "top": 0.32}
#: width of the control column: the controls (300 px each) and the messages below them,
#: which wrap inside it (a long message never widens or squeezes the column)
CONTROL_COLUMN_WIDTH = "316px"
#: ipywidgets' margin around a widget (px), here the Output widget showing the figure
WIDGET_MARGIN_PX = 2
#: the explorers' default figure size (inches): 840 x 440 px at :data:`FIGURE_DPI`
FIGSIZE = (8.4, 4.4)


def set_margins(fig):
    """Place the one Axes of ``fig`` at the fixed margins :data:`MARGINS_INCHES`."""
    w, h = fig.get_size_inches()
    m = MARGINS_INCHES
    fig.subplots_adjust(
        left=m["left"] / w,
        right=1.0 - m["right"] / w,
        bottom=m["bottom"] / h,
        top=1.0 - m["top"] / h,
    )


#: where the axis labels sit, in inches: the x label's top below the axes (under the tick
#: labels), the y label's left edge from the figure's left edge (left of the tick labels)
LABEL_OFFSETS_INCHES = {"x": 0.27, "y": 0.06}


def pin_axis_labels(ax):
    """Put the axis labels of ``ax`` at fixed offsets (:data:`LABEL_OFFSETS_INCHES`).

    matplotlib otherwise measures every tick label at each draw to place the axis labels
    (about a tenth of the drawing time of an explorer's figure); with fixed margins the
    places are known.
    """
    from matplotlib.transforms import ScaledTranslation

    fig = ax.figure
    off = LABEL_OFFSETS_INCHES
    ax.xaxis.set_label_coords(
        0.5, 0.0, transform=ax.transAxes + ScaledTranslation(0.0, -off["x"], fig.dpi_scale_trans)
    )
    left = MARGINS_INCHES["left"] - off["y"]
    ax.yaxis.set_label_coords(
        0.0, 0.5, transform=ax.transAxes + ScaledTranslation(-left, 0.0, fig.dpi_scale_trans)
    )
    ax.yaxis.label.set_verticalalignment("top")  # rotated: the text extends to the right


def check_figsize(figsize):
    """``figsize`` as two floats (inches), with room for at least 1 x 1 in of axes inside the
    fixed margins (:data:`MARGINS_INCHES`); a TypeError or ValueError naming ``figsize``."""
    m = MARGINS_INCHES
    least = (m["left"] + m["right"] + 1.0, m["bottom"] + m["top"] + 1.0)
    try:
        w, h = (float(v) for v in figsize)
    except (TypeError, ValueError):
        raise TypeError(f"figsize must be two numbers (inches), got {figsize!r}") from None
    if not (w >= least[0] and h >= least[1]):
        raise ValueError(
            f"figsize {w:g} x {h:g} in leaves no room for the axes inside the fixed "
            f"margins: at least {least[0]:g} x {least[1]:g} in"
        )
    return w, h


def explorer_figure(figsize):
    """A figure outside pyplot, with fixed margins and no layout engine.

    Parameters
    ----------
    figsize : tuple of float
        Width and height in inches (pixels / :data:`FIGURE_DPI`).

    Returns
    -------
    matplotlib.figure.Figure
        With an Agg canvas, ``get_layout_engine()`` None (no constrained-layout solver at
        each draw) and the subplot parameters of :data:`MARGINS_INCHES`.

    Examples
    --------
    >>> fig = explorer_figure((8.4, 4.4))
    >>> fig.get_layout_engine() is None, [int(v) for v in fig.bbox.size]
    (True, [840, 440])
    >>> explorer_figure((3.0, 2.0))  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: figsize 3 x 2 in leaves no room for the axes inside the fixed margins: at least
    4 x 1.87 in
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=check_figsize(figsize), dpi=FIGURE_DPI)
    FigureCanvasAgg(fig)
    set_margins(fig)
    return fig


def render_png(fig):
    """The figure as PNG bytes, drawn once at its size (no tight bounding box).

    Agg draws the figure once; Pillow encodes its RGB pixels at compression level 1 (about
    twice as fast as matplotlib's default level for a PNG some 10 % larger).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        With an Agg canvas (:func:`explorer_figure`).

    Returns
    -------
    bytes
        The PNG file, ``fig.bbox`` pixels wide and high.

    Examples
    --------
    >>> png = render_png(explorer_figure((5.0, 3.0)))
    >>> png[1:4], len(png) > 100
    (b'PNG', True)
    """
    from PIL import Image

    fig.canvas.draw()
    rgba = fig.canvas.buffer_rgba()
    w, h = (int(v) for v in fig.canvas.get_width_height(physical=True))
    image = Image.frombuffer("RGBA", (w, h), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", compress_level=1)
    return buf.getvalue()


def _show_image(output, mime, data, size, metadata=None):
    """Replace what ``output`` (an ``ipywidgets.Output``) shows by one image: one update of
    the widget's ``outputs`` (one message to the browser, no ``clear_output``/``display``
    pair and no re-rendering by the inline backend)."""
    w, h = (int(v) for v in size)
    output.outputs = (
        {
            "output_type": "display_data",
            "data": {mime: data, "text/plain": f"<Figure size {w}x{h}>"},
            "metadata": {mime: metadata} if metadata else {},
        },
    )


def show_png(output, png, size):
    """Show ``png`` in ``output``, replacing what it shows, at its pixel ``size``
    (width, height)."""
    w, h = (int(v) for v in size)
    _show_image(
        output, "image/png", base64.b64encode(png).decode("ascii"), size, {"width": w, "height": h}
    )


def show_svg(output, svg, size):
    """Show the SVG markup ``svg`` in ``output``, replacing what it shows; the browser
    draws it at its pixel ``size``."""
    _show_image(output, "image/svg+xml", svg, size)


#: how the explorers draw a view: "svg", their own SVG drawing of the result
#: (``uqviz.plots._svg``, about 2 ms; the browser rasterises it), or "matplotlib", a
#: matplotlib figure rendered to PNG by Agg (about 100 ms)
RENDERERS = ("svg", "matplotlib")


def svg_layout(figsize):
    """The layout of the explorers' SVG views (``layout`` of
    :func:`uqviz.plots.conditional.local_svg`): ``figsize`` with the fixed margins."""
    return {
        "figsize": tuple(figsize),
        "margins": MARGINS_INCHES,
        "label_offsets": LABEL_OFFSETS_INCHES,
        "dpi": FIGURE_DPI,
    }


def build_inline(figsize, draw, figure=None):
    """``(figure, ax)``: ``draw(ax)`` in a fixed-margin figure (``figure`` cleared and drawn
    again when it is an Agg figure of that size, else a new one), not rendered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    reuse = (
        figure is not None
        and type(figure.canvas) is FigureCanvasAgg  # not ipympl's
        and figure.get_layout_engine() is None
        and tuple(figure.get_size_inches()) == tuple(figsize)
    )
    if reuse:
        figure.clear()
        set_margins(figure)
    fig = figure if reuse else explorer_figure(figsize)
    ax = fig.add_subplot()
    draw(ax)
    pin_axis_labels(ax)
    return fig, ax


def draw_inline(output, figsize, draw, figure=None):
    """Draw into a fresh fixed-margin figure, render it once to PNG and show it in ``output``.

    Parameters
    ----------
    output : ipywidgets.Output
        Where the PNG is shown.
    figsize : tuple of float
    draw : callable
        ``draw(ax)`` does the plotting.
    figure : matplotlib.figure.Figure, optional
        The explorer's figure of the previous update (:func:`explorer_figure`, same size):
        cleared and drawn again (same pixels as a fresh figure); its Agg renderer and the text
        metrics matplotlib caches per renderer are reused. The time saved is within the noise
        of a 2-core machine (``benchmarks/bench_explorer_update.py --parts``: ratios 0.76-1.31).

    Returns
    -------
    (matplotlib.figure.Figure, matplotlib.axes.Axes, bytes, dict)
        The figure, its Axes, the PNG and the time in seconds of ``"figure"`` (building it),
        ``"render"`` (Agg and PNG encoding) and ``"show"`` (handing the PNG to ``output``).
    """
    t0 = time.perf_counter()
    fig, ax = build_inline(figsize, draw, figure)
    t1 = time.perf_counter()
    png = render_png(fig)
    t2 = time.perf_counter()
    show_png(output, png, fig.bbox.size)
    return fig, ax, png, {"figure": t1 - t0, "render": t2 - t1, "show": time.perf_counter() - t2}


def labelled_datasets(data) -> dict:
    """``{label: Dataset}`` for a Dataset or DataTree (label: child name or ``name`` attr)."""
    out = {}
    for i, (name, ds) in enumerate(datasets_of(data)):
        label = name if name is not None else (ds.attrs.get("name") or f"dataset {i}")
        out[str(label)] = ds
    return out


def dataset_dropdown(names):
    """The dataset dropdown, hidden and disabled when there is a single dataset."""
    import ipywidgets as w

    single = len(names) == 1
    return w.Dropdown(
        options=names,
        value=names[0],
        description="dataset",
        disabled=single,
        layout=w.Layout(display="none" if single else None),
    )


#: room for the longest description ("condition on") so that none is cut
DESCRIPTION_WIDTH = "96px"


#: width of every control: ipywidgets' inline width, fixed (flex "0 0 auto": never squeezed)
CONTROL_WIDTH = "300px"


def style_controls(controls):
    """Give every control the same description width (ipywidgets cuts long labels) and a
    fixed width (a neighbour's long text never squeezes it)."""
    for ctrl in controls:
        if hasattr(ctrl.style, "description_width"):
            ctrl.style.description_width = DESCRIPTION_WIDTH
        ctrl.layout.width = CONTROL_WIDTH
        ctrl.layout.flex = "0 0 auto"


def wrap_html(text):
    """``text`` in a block that wraps at the width of its widget (long words too)."""
    style = "white-space:normal;overflow-wrap:anywhere;line-height:1.35"
    return f"<div style='{style}'>{text}</div>" if text else ""


def explorer_layout(controls, message, readout, canvas_box, output, figsize):
    """The explorers' app: the control column left, the read-out and the figure right.

    The control column has a fixed width (:data:`CONTROL_COLUMN_WIDTH`): the controls
    on top, the messages under them, wrapped inside it. The right column is as wide as the
    figure; its read-out (fixed width, wrapped) sits above the figure, so that the figure
    starts at the top of the view (a 840 x 440 px figure fits a 1280 x 800 view). On a narrow
    page the figure goes below the controls (the row wraps) instead of being clipped.

    Returns
    -------
    (ipywidgets.VBox, ipywidgets.VBox)
        The app (a VBox holding the row of the two columns, so that a page finds the whole
        explorer as one ``.widget-vbox``) and its control column.
    """
    import ipywidgets as w

    fixed = dict(
        width=CONTROL_COLUMN_WIDTH,
        min_width=CONTROL_COLUMN_WIDTH,
        max_width=CONTROL_COLUMN_WIDTH,
        flex="0 0 auto",
    )
    # the texts take their column's width less their margins (width auto: stretched by the
    # column), wrapping inside it; a fixed width equal to the column's overflowed it by the
    # widget margin (2 px)
    message.layout = w.Layout(width="auto")
    column = w.VBox(list(controls) + [message], layout=w.Layout(**fixed))
    # the figure's width and the Output widget's margins (ipywidgets': 2 px each side): the
    # image is shown at its pixel size, not scaled down to fit (a blurred PNG, an SVG
    # overflowing its output area)
    width = f"{int(round(figsize[0] * FIGURE_DPI)) + 2 * WIDGET_MARGIN_PX}px"
    readout.layout = w.Layout(width="auto")
    view = w.VBox(
        [readout, canvas_box, output],
        layout=w.Layout(width=width, min_width=width, flex="0 0 auto"),
    )
    row = w.HBox(
        [column, view],
        layout=w.Layout(flex_flow="row wrap", align_items="flex-start", grid_gap="8px 16px"),
    )
    return w.VBox([row]), column


def is_widget_backend():
    """True under ``%matplotlib widget`` / ipympl (figures are widgets, redrawn in place)."""
    import matplotlib

    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend.endswith("widget")


def _built_on_demand(name, doc):
    """A property of :class:`ExplorerDrawing` kept in ``name``, built when first asked for
    after a view was shown as SVG or from its kept image; setting it marks the view built."""

    def get(self):
        self._build_if_unbuilt()
        return self.__dict__.get(name)

    def set(self, value):
        self.__dict__.update({name: value, "_unbuilt": False})

    return property(get, set, doc=doc)


class ExplorerDrawing:
    """Drawing shared by the explorers.

    A subclass sets ``result``, ``figure``, ``ax``, ``png``, ``svg``, ``figsize``,
    ``renderer`` (:data:`RENDERERS`), ``output`` (an ``ipywidgets.Output``), ``_canvas_box``
    (an ``ipywidgets.Box``), ``widget``, ``dataset`` (the dropdown) and ``_datasets``, and
    implements ``_draw(ax)`` (on a matplotlib Axes) and ``_draw_svg(layout)`` (the SVG
    view of :func:`svg_layout`, returned); its
    ``update`` computes, passes the seconds it took to :meth:`start_timings`, sets the
    read-outs, then calls :meth:`redraw` (the text reaches the page before the figure).
    ``timings`` then holds ``"compute"``, ``"figure"``, ``"render"`` and ``"show"`` of the
    last update (their sum: from the change to the figure handed to the page) and
    ``"after"``: work done once the figure is shown (the conditional explorer's calibrated
    null behind the f_v verdict).
    """

    @property
    def data(self):
        """The currently selected dataset."""
        return self._datasets[self.dataset.value]

    # the figure and Axes of the view shown; a view shown as SVG or from its kept image
    # builds them at first access (so that .figure and .ax are always those of the view shown)
    figure = _built_on_demand("_figure", "The figure of the view shown (None after an error).")
    ax = _built_on_demand("_ax", "The Axes of the view shown (None after an error).")

    def _build_if_unbuilt(self):
        if self.__dict__.get("_unbuilt"):
            self.__dict__["_unbuilt"] = False
            self.figure, self.ax = build_inline(
                self.figsize, self._draw, self.__dict__.get("_figure")
            )

    #: settings whose numbers an explorer keeps (:meth:`cached`)
    CACHE_SIZE = 64

    def cached(self, key, compute, store="_computed"):
        """``compute()`` for the settings ``key``, computed once: the last :attr:`CACHE_SIZE`
        settings are kept (a fixed seed gives the same numbers for the same settings, so a
        setting visited again is shown without recomputing). An error is not kept.
        ``store`` names the store (the numbers; ``"_views"``: the images shown)."""
        from collections import OrderedDict

        kept = self.__dict__.setdefault(store, OrderedDict())
        if key not in kept:
            kept[key] = compute()
            while len(kept) > self.CACHE_SIZE:
                kept.popitem(last=False)
        kept.move_to_end(key)
        return kept[key]

    def is_cached(self, key, store="_computed"):
        """True when the numbers (or, ``store="_views"``, the image) of ``key`` are kept."""
        return key in self.__dict__.get(store, ())

    def discard(self, key, store="_computed"):
        """Forget what is kept for ``key`` (numbers superseded by others kept)."""
        self.__dict__.get(store, {}).pop(key, None)

    def figure_key(self):
        """Everything the figure depends on, hashable, or None (subclasses): the PNG of a
        key drawn before is shown again without rendering it (:meth:`redraw`)."""
        return None

    def start_timings(self, compute=0.0):
        """Reset :attr:`timings` for a new update whose computation took ``compute`` s."""
        self.timings = {
            "compute": float(compute),
            "figure": 0.0,
            "render": 0.0,
            "show": 0.0,
            "after": 0.0,
        }

    def redraw(self):
        """Draw the current result (widget backend: in place; inline: as :attr:`renderer`).

        Inline, ``renderer="svg"`` draws the view as SVG (``_draw_svg``; the matplotlib
        figure is built only if ``.figure``, ``.ax`` or ``.png`` is asked for) and
        ``"matplotlib"`` renders the figure once to PNG. A view drawn before shows the
        image kept for it (:meth:`figure_key`). Sets ``timings["figure"]`` (building the
        SVG or the figure), ``timings["render"]`` (Agg and PNG encoding; 0 for SVG, which
        the browser rasterises, and on the widget backend, whose canvas draws) and
        ``timings["show"]`` (handing the image to the widget).
        """
        if self.result is None:
            return
        if not hasattr(self, "timings"):
            self.start_timings()
        if is_widget_backend():
            t0 = time.perf_counter()
            if self._draw_in_canvas():
                self.png = self.svg = None
                self.timings.update(figure=time.perf_counter() - t0, render=0.0, show=0.0)
                return
        key = self.figure_key()
        if key is not None and self.is_cached(key, "_views"):
            t0 = time.perf_counter()
            self._show_view(self.cached(key, None, store="_views"))
            self.__dict__["_unbuilt"] = True
            self.timings.update(figure=0.0, render=0.0, show=time.perf_counter() - t0)
            return
        if self.renderer == "svg":
            t0 = time.perf_counter()
            view = self._draw_svg(svg_layout(self.figsize)).svg()
            t1 = time.perf_counter()
            self._show_view(view)
            self.__dict__["_unbuilt"] = True
            self.timings.update(figure=t1 - t0, render=0.0, show=time.perf_counter() - t1)
        else:
            self.figure, self.ax, view, times = draw_inline(
                self.output, self.figsize, self._draw, figure=self.__dict__.get("_figure")
            )
            self.png, self.svg = view, None
            self.timings.update(times)
        if key is not None:
            self.cached(key, lambda: view, store="_views")

    def _show_view(self, view):
        """Show a view's image: SVG markup (str) or PNG bytes."""
        size = [round(v * FIGURE_DPI) for v in self.figsize]
        if isinstance(view, str):
            self.svg, self.png = view, None
            show_svg(self.output, view, size)
        else:
            self.svg, self.png = None, view
            show_png(self.output, view, size)

    @property
    def png(self):
        """The view shown as PNG bytes (None after an error and on the widget backend): the
        image shown (``renderer="matplotlib"``), else its matplotlib figure rendered at first
        access (``renderer="svg"``)."""
        if self.__dict__.get("_png") is None and self.__dict__.get("svg") is not None:
            self.__dict__["_png"] = render_png(self.figure)
        return self.__dict__.get("_png")

    @png.setter
    def png(self, value):
        self.__dict__["_png"] = value

    def _draw_in_canvas(self):
        """%matplotlib widget (ipympl): one figure whose canvas is a widget, redrawn in place."""
        import ipywidgets
        import matplotlib.pyplot as plt

        if self.figure is None or self._canvas_box.children != (self.figure.canvas,):
            with plt.ioff():
                fig = plt.figure(figsize=self.figsize, dpi=FIGURE_DPI)
            if not isinstance(fig.canvas, ipywidgets.DOMWidget):  # not ipympl after all
                plt.close(fig)
                return False
            self.figure = fig
            self._canvas_box.children = (fig.canvas,)
        self.figure.clear()
        set_margins(self.figure)
        self.ax = self.figure.add_subplot()
        self._draw(self.ax)
        pin_axis_labels(self.ax)
        self.figure.canvas.draw_idle()
        return True

    #: names of the HTML read-outs shown above the figure (subclasses override)
    READOUTS = ("message",)

    def show_error(self, err):
        """Show ``err`` and clear what it replaces: the result, the other read-outs and the
        figure (no stale numbers or drawing of the previous setting stay on screen)."""
        import html

        self.result = None
        for name in self.READOUTS:
            if name != "message" and getattr(self, name, None) is not None:
                getattr(self, name).value = ""
        self.message.value = wrap_html(
            f"<span style='color:#d62728'>{html.escape(str(err))}</span>"
        )
        fig = self.__dict__.get("_figure")  # (no figure built for a view not shown)
        if fig is not None:
            fig.clear()
            if is_widget_backend() and self._canvas_box.children == (fig.canvas,):
                fig.canvas.draw_idle()
        self.figure = self.ax = None
        self.png = self.svg = None
        self.output.outputs = ()

    def static_html(self):
        """The current view as static HTML: the read-outs and the figure as a PNG.

        A page without a kernel (the documentation site, nbviewer) shows this
        instead of the live widget; JupyterLab and Voila show the widget.
        """
        parts = [
            getattr(self, name).value
            for name in self.READOUTS
            if getattr(self, name, None) is not None and getattr(self, name).value
        ]
        svg = self.__dict__.get("svg")
        png = None if svg is not None else self.png
        if png is None and svg is None and self.figure is not None:  # ipympl: no PNG yet
            buf = io.BytesIO()
            self.figure.savefig(buf, format="png", dpi=FIGURE_DPI)
            png = buf.getvalue()
        if svg is not None:
            parts.append(
                '<img alt="the explorer\'s figure" src="data:image/svg+xml;base64,'
                f'{base64.b64encode(svg.encode()).decode()}"/>'
            )
        elif png is not None:
            parts.append(
                '<img alt="the explorer\'s figure" src="data:image/png;base64,'
                f'{base64.b64encode(png).decode()}"/>'
            )
        parts.append(
            "<p><small>A static copy of the explorer's first view: run the notebook "
            "for live controls.</small></p>"
        )
        return (
            "<div class='uqviz-explorer-static'>"
            + "".join(f"<div>{p}</div>" for p in parts)
            + "</div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        # the live widget for a kernel-backed frontend, static HTML for a page without one
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        return bundle
