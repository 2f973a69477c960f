"""Helpers shared by the explorers: dataset selection and inline drawing."""

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
    from .._tree import datasets_of

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
