"""Drawing helpers shared by the explorers."""

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
