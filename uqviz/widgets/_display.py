"""Helpers shared by the explorers: dataset selection, control layout and drawing."""

from __future__ import annotations

from matplotlib.figure import Figure


def draw_inline(output, figsize, draw):
    """Draw into a fresh figure outside pyplot and show it in ``output``.

    Parameters
    ----------
    output : ipywidgets.Output
        Where the figure is displayed (only inside IPython).
    figsize : tuple of float
    draw : callable
        ``draw(ax)`` does the plotting.

    Returns
    -------
    (matplotlib.figure.Figure, matplotlib.axes.Axes)
    """
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    draw(ax)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return fig, ax
    if get_ipython() is not None:  # plain Python (tests): nothing to show
        output.clear_output(wait=True)
        with output:
            display(fig)
    return fig, ax


def labelled_datasets(data) -> dict:
    """``{label: Dataset}`` for a Dataset or DataTree (label: child name or ``name`` attr)."""
    from uqviz.engine.tree import datasets_of

    out = {}
    for i, (name, ds) in enumerate(datasets_of(data)):
        label = name if name is not None else (ds.attrs.get("name") or f"dataset {i}")
        out[str(label)] = ds
    return out


def dataset_dropdown(names):
    """The dataset dropdown, hidden and disabled when there is a single dataset."""
    import ipywidgets as w

    single = len(names) == 1
    return w.Dropdown(options=names, value=names[0], description="dataset", disabled=single,
                      layout=w.Layout(display="none" if single else None))


#: room for the longest description ("condition on") so that none is cut
DESCRIPTION_WIDTH = "96px"


def style_controls(controls):
    """Give every control the same description width (ipywidgets cuts long labels)."""
    for ctrl in controls:
        if hasattr(ctrl.style, "description_width"):
            ctrl.style.description_width = DESCRIPTION_WIDTH


def is_widget_backend():
    """True under ``%matplotlib widget`` / ipympl (figures are widgets, redrawn in place)."""
    import matplotlib

    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend.endswith("widget")


class ExplorerDrawing:
    """Drawing shared by the explorers.

    A subclass sets ``result``, ``figure``, ``ax``, ``figsize``, ``output`` (an
    ``ipywidgets.Output``), ``_canvas_box`` (an ``ipywidgets.Box``), ``widget``,
    ``dataset`` (the dropdown) and ``_datasets``, and implements ``_draw(ax)``.
    """

    @property
    def data(self):
        """The currently selected dataset."""
        return self._datasets[self.dataset.value]

    def redraw(self):
        """Draw the current result (widget backend: in place; inline: a fresh figure)."""
        if self.result is None:
            return
        if is_widget_backend() and self._draw_in_canvas():
            return
        # inline: a fresh figure outside pyplot (nothing left for the backend to show twice)
        self.figure, self.ax = draw_inline(self.output, self.figsize, self._draw)

    def _draw_in_canvas(self):
        """%matplotlib widget (ipympl): one figure whose canvas is a widget, redrawn in place."""
        import ipywidgets
        import matplotlib.pyplot as plt

        if self.figure is None or self._canvas_box.children != (self.figure.canvas,):
            with plt.ioff():
                fig = plt.figure(figsize=self.figsize, layout="constrained")
            if not isinstance(fig.canvas, ipywidgets.DOMWidget):  # not ipympl after all
                plt.close(fig)
                return False
            self.figure = fig
            self._canvas_box.children = (fig.canvas,)
        self.figure.clear()
        self.ax = self.figure.add_subplot()
        self._draw(self.ax)
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
        self.message.value = f"<span style='color:#d62728'>{html.escape(str(err))}</span>"
        if self.figure is not None:
            self.figure.clear()
            if is_widget_backend() and self._canvas_box.children == (self.figure.canvas,):
                self.figure.canvas.draw_idle()
            self.figure = self.ax = None
        self.output.clear_output()

    def static_html(self):
        """The current view as static HTML: the read-outs and the figure as a PNG.

        A page without a kernel (the documentation site, nbviewer) shows this
        instead of the live widget; JupyterLab and Voila show the widget.
        """
        import base64
        import io

        parts = [getattr(self, name).value for name in self.READOUTS
                 if getattr(self, name, None) is not None and getattr(self, name).value]
        if self.figure is not None:
            buf = io.BytesIO()
            self.figure.savefig(buf, format="png", dpi=90)
            parts.append('<img alt="the explorer\'s figure" src="data:image/png;base64,'
                         f'{base64.b64encode(buf.getvalue()).decode()}"/>')
        parts.append("<p><small>A static copy of the explorer's first view: run the notebook "
                     "for live controls.</small></p>")
        return "<div class='uqviz-explorer-static'>" + "".join(
            f"<div>{p}</div>" for p in parts) + "</div>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        # the live widget for a kernel-backed frontend, static HTML for a page without one
        bundle = dict(self.widget._repr_mimebundle_())
        bundle["text/html"] = self.static_html()
        return bundle
