"""Several targets and groups of points: the targets tree, ``groups=`` and :func:`pool_targets`.

Several targets (a multi-task model's properties, the energy and force components of an
interatomic potential) are a ``xarray.DataTree`` with one child per target, in the order given
(docs/conventions.md, "Several targets and groups"): each child is an ordinary uqviz dataset
holding only the rows where its target is observed, its coordinate ``point`` the original row
numbers (so the targets align on rows). A NaN in the observed value, the prediction or the
uncertainty of a target marks that target missing for that row: never an error, and never
silent (counted per target in the child attribute ``n_missing``, in the tree attributes
``n_missing`` and ``missing``).

Tree attributes: ``layout = "targets"``, ``targets`` (the names), ``n_rows``, ``n_missing``
(one count per target), ``missing`` (a one-line summary). Child attributes: ``target``,
``n_missing``, and those of the one-target constructor.

``groups=`` (a label per row: a structure, a molecule, a batch) is the coordinate ``group``
on ``point``, its dtype kept, with the attribute ``groups`` saying what a group is
(``"group"`` unless the labels come from a named column or Series).

Examples
--------
>>> import numpy as np, uqviz
>>> e = np.array([[0.1, 0.2], [np.nan, -0.1], [0.3, 0.0]])
>>> tree = uqviz.from_arrays(e, np.full((3, 2), 0.5), targets=["a", "b"])
>>> tree.attrs["targets"], tree.attrs["n_missing"], tree["a"]["point"].values.tolist()
(['a', 'b'], [1, 0], [0, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.data.model import n_rows_text, rows_text, to_float_column

__all__ = ["pool_targets"]

#: ``attrs["layout"]`` of a tree with one child per target
TARGETS_LAYOUT = "targets"
#: what a group is when the labels carry no name
DEFAULT_GROUPS = "group"


# --------------------------------------------------------------------------
# groups
# --------------------------------------------------------------------------
def groups_name(groups, default: str = DEFAULT_GROUPS) -> str:
    """What a group is: the name of a pandas Series (or DataArray), else ``default``.

    Examples
    --------
    >>> import pandas as pd
    >>> groups_name(pd.Series([1, 1], name="structure")), groups_name([1, 1])
    ('structure', 'group')
    """
    name = getattr(groups, "name", None)
    return name if isinstance(name, str) and name else default


def group_labels(groups, n: int) -> np.ndarray:
    """The labels of ``groups=`` as a 1-D numpy array of ``n`` rows (dtype kept), or a ValueError.

    Strings held in an object array become a numpy str array; a label that is NaN or None is
    refused with the count and the rows, as is a length other than ``n``.

    Examples
    --------
    >>> group_labels(["s1", "s1", "s2"], 3).tolist()
    ['s1', 's1', 's2']
    >>> group_labels([1.0, float("nan"), 2.0], 3)
    Traceback (most recent call last):
    ...
    ValueError: groups: 1 of 3 rows without a group label (NaN or None; row 1)
    """
    if isinstance(groups, (pd.Series, pd.Index)):
        labels = groups.to_numpy()
    elif isinstance(groups, xr.DataArray):
        labels = groups.values
    elif isinstance(groups, (str, bytes)) or np.ndim(groups) == 0:
        raise ValueError(
            f"groups: expected one label per row (an array of {n_rows_text(n)}), "
            f"got {type(groups).__name__} {groups!r:.40}"
        )
    else:
        try:
            labels = np.asarray(groups)
        except ValueError:
            raise ValueError("groups: expected one label per row, got a ragged sequence") from None
    if labels.ndim != 1:
        raise ValueError(f"groups: expected one label per row (1-D), got shape {labels.shape}")
    if labels.shape[0] != n:
        diff = labels.shape[0] - n
        raise ValueError(
            f"groups: {labels.shape[0]} labels for {n_rows_text(n)} "
            f"({abs(diff)} {'more' if diff > 0 else 'fewer'}); give one label per row"
        )
    if labels.dtype.kind == "O":
        missing = np.array([_is_missing(x) for x in labels], dtype=bool)
    elif labels.dtype.kind in "fc":
        missing = np.isnan(labels)
    else:
        missing = np.zeros(n, dtype=bool)
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"groups: {len(rows)} of {n_rows_text(n)} without a group label "
            f"(NaN or None; {rows_text(rows)})"
        )
    if labels.dtype.kind == "O" and all(isinstance(x, str) for x in labels):
        labels = labels.astype(str)
    return np.array(labels, copy=True)


def _is_missing(x) -> bool:
    if x is None or x is pd.NA or x is pd.NaT:
        return True
    return isinstance(x, (float, np.floating)) and x != x


def with_groups(ds: xr.Dataset, labels, what: str) -> xr.Dataset:
    """``ds`` with the coordinate ``group`` (the labels of its rows) and ``attrs["groups"]``.

    ``labels`` hold one label per original row; the rows of ``ds`` are its ``point`` values.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_arrays([0.1, 0.2], [0.1, 0.3])
    >>> with_groups(ds, np.array([7, 8]), "structure")["group"].values.tolist()
    [7, 8]
    """
    rows = np.asarray(ds["point"].values)
    out = ds.assign_coords(
        group=("point", labels[rows], {"long_name": f"{what} of the point", "role": "group"})
    )
    out.attrs["groups"] = what
    return out


# --------------------------------------------------------------------------
# target names and the inputs of several targets
# --------------------------------------------------------------------------
def is_several(*values) -> bool:
    """Whether one of the inputs holds several targets: a 2-D array or a DataFrame.

    Examples
    --------
    >>> is_several([1.0, 2.0], None), is_several([[1.0, 2.0]])
    (False, True)
    """
    for v in values:
        if v is None or isinstance(v, (pd.Series, pd.Index, str)):
            continue
        if isinstance(v, pd.DataFrame):
            return True
        if isinstance(v, (list, tuple)) and v and not isinstance(v[0], (list, tuple, np.ndarray)):
            continue
        try:
            if np.ndim(v) == 2:
                return True
        except ValueError:  # a ragged sequence: the one-target rules name it
            continue
    return False


def target_columns(label: str, values) -> np.ndarray:
    """A (row, target) input; a 1-D one is one target.

    Examples
    --------
    >>> target_columns("E", [1.0, 2.0]).shape
    (2, 1)
    """
    if isinstance(values, pd.Series) or (
        not isinstance(values, pd.DataFrame) and np.ndim(values) == 1
    ):
        return np.asarray(values).reshape(-1, 1)
    return as_2d(label, values)


def target_names(targets, t: int, default: Sequence | None = None) -> list[str]:
    """The names of ``t`` targets: ``targets``, else ``default``, else ``target0, target1, ...``.

    Examples
    --------
    >>> target_names(None, 2), target_names(["logS", "logP"], 2)
    (['target0', 'target1'], ['logS', 'logP'])
    """
    if targets is None:
        names = [str(d) for d in default] if default is not None else None
        names = names or [f"target{j}" for j in range(t)]
    else:
        if isinstance(targets, str):
            targets = [targets]
        if not isinstance(targets, (Sequence, pd.Index, np.ndarray)):
            raise TypeError(f"targets must be a list of names, got {type(targets).__name__}")
        names = list(targets)
    if len(names) != t:
        raise ValueError(
            f"targets: {len(names)} names for {t} targets ({', '.join(map(str, names))})"
        )
    for nm in names:
        if not isinstance(nm, str) or not nm or "/" in nm or nm in (".", ".."):
            raise ValueError(
                f"targets: invalid target name {nm!r}: use a non-empty str without '/'"
            )
    dups = sorted({nm for nm in names if names.count(nm) > 1})
    if dups:
        raise ValueError(f"targets: duplicate target names: {', '.join(map(repr, dups))}")
    return names


def as_2d(label: str, values) -> np.ndarray:
    """``values`` as a 2-D array (rows, targets): a DataFrame's values, or a ValueError.

    Examples
    --------
    >>> as_2d("y_true", [[1.0, 2.0], [3.0, 4.0]]).shape
    (2, 2)
    >>> as_2d("std", [1.0, 2.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: std: expected shape (row, target) ..., got shape (2,)
    """
    if isinstance(values, pd.DataFrame):
        return values.to_numpy()
    if isinstance(values, xr.DataArray):
        values = values.values
    if isinstance(values, np.ma.MaskedArray):
        values = np.ma.filled(values.astype(float), np.nan)  # masked = missing target
    try:
        arr = np.asarray(values)
    except ValueError:
        raise ValueError(
            f"{label}: expected shape (row, target), got a ragged sequence "
            "(rows of different lengths)"
        ) from None
    if arr.ndim != 2:
        raise ValueError(
            f"{label}: expected shape (row, target) like the other inputs of several "
            f"targets, got shape {arr.shape}"
        )
    return arr


def default_names(*values) -> list | None:
    """The column names of the first DataFrame among ``values`` (default target names)."""
    for v in values:
        if isinstance(v, pd.DataFrame):
            return [str(c) for c in v.columns]
    return None


def float_targets(arrays: Mapping[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    """``{key: float64 (row, target)}`` of the 2-D inputs; one ValueError naming every target
    column that is not numeric, or whose shape differs from the first input's."""
    shapes = {k: a.shape for k, a in arrays.items()}
    (first, ref), *_ = shapes.items()
    bad = [f"{k} has shape {s}" for k, s in shapes.items() if s != ref]
    if bad:
        raise ValueError(
            f"several targets: every input needs shape (row, target) = {ref} like {first}; "
            + ", ".join(bad)
        )
    if ref[1] != len(names):
        raise ValueError(f"targets: {len(names)} names for {ref[1]} targets")
    if ref[0] == 0:
        raise ValueError(f"empty input: {first} has 0 rows")
    row_ids = np.arange(ref[0], dtype=np.int64)
    out, errors = {}, []
    for key, arr in arrays.items():
        cols = []
        for j, nm in enumerate(names):
            col, msg = to_float_column(f"{key} [target {nm!r}]", arr[:, j], row_ids)
            if msg is not None:
                errors.append(msg)
            cols.append(col)
        out[key] = np.stack(cols, axis=1) if not errors else None
    if errors:
        raise ValueError("non-numeric input:\n  " + "\n  ".join(errors))
    return out


def take_rows(values, rows: np.ndarray):
    """The rows ``rows`` (positions) of a 1-D input: pandas objects by position, kept pandas."""
    if isinstance(values, (pd.Series, pd.Index)):
        return values.iloc[rows] if isinstance(values, pd.Series) else values[rows]
    if isinstance(values, pd.api.extensions.ExtensionArray):
        return values[rows]
    if isinstance(values, xr.DataArray):
        values = values.values
    return np.asarray(values)[rows]


def take_mapping(mapping, rows: np.ndarray):
    """A mapping (or DataFrame) of 1-D columns restricted to the rows ``rows``."""
    if mapping is None:
        return None
    if isinstance(mapping, pd.DataFrame):
        return mapping.iloc[rows]
    if isinstance(mapping, Mapping):
        return {k: take_rows(v, rows) for k, v in mapping.items()}
    return mapping  # a wrong type: the one-target constructor says so


def build_targets_tree(
    names: list[str],
    missing: np.ndarray,
    build_one: Callable[[int, np.ndarray], xr.Dataset],
    *,
    name: str | None,
    groups=None,
    groups_what: str = DEFAULT_GROUPS,
) -> xr.DataTree:
    """The targets tree: ``build_one(j, rows)`` the dataset of target ``j`` on its observed rows.

    ``missing`` (row, target) marks the missing targets; an error raised for one target names it.
    """
    n, t = missing.shape
    labels = None if groups is None else group_labels(groups, n)
    children, n_missing = {}, []
    for j, nm in enumerate(names):
        rows = np.flatnonzero(~missing[:, j]).astype(np.int64)
        k = int(n - rows.size)
        if rows.size == 0:
            raise ValueError(
                f"target {nm!r}: no observed row (all {n_rows_text(n)} are missing: NaN in the "
                "observed value, the prediction or the uncertainty)"
            )
        try:
            ds = build_one(j, rows)
        except (ValueError, TypeError) as err:
            if len(err.args) == 1 and isinstance(err.args[0], str):
                err.args = (f"target {nm!r}: {err.args[0]}",)
            raise
        if labels is not None:
            ds = with_groups(ds, labels, groups_what)
        ds.attrs.update(name=nm, target=nm, n_missing=k)
        children[nm] = ds
        n_missing.append(k)
    tree = xr.DataTree.from_dict(children)
    tree.attrs.update(
        name="targets" if name is None else name,
        layout=TARGETS_LAYOUT,
        targets=list(names),
        n_rows=int(n),
        n_missing=n_missing,
        missing=missing_summary(names, n_missing, n),
    )
    if labels is not None:
        tree.attrs["groups"] = groups_what
    return tree


def missing_summary(names, n_missing, n: int) -> str:
    """One line: the rows without each target.

    Examples
    --------
    >>> missing_summary(["logS", "logP"], [12, 0], 300)
    'missing targets (of 300 rows): logS 12, logP 0'
    """
    return f"missing targets (of {n_rows_text(n)}): " + ", ".join(
        f"{nm} {k}" for nm, k in zip(names, n_missing)
    )


# --------------------------------------------------------------------------
# pooling
# --------------------------------------------------------------------------
def pool_targets(tree, *, targets=None, name="pooled") -> xr.DataTree:
    r"""The targets tree with one more child: the points of several targets stacked.

    Pooled z-scores are meaningful for targets on one footing: the force components
    ``fx``, ``fy``, ``fz`` of a potential (their pooled ZMS); pooling an energy with forces is
    the user's choice. The pooled child keeps ``E``, ``uE``, the ``group`` coordinate and the
    other per-point variables that every pooled target has; the coordinate ``target`` (str) on
    ``point`` says which target each point came from, the coordinate ``row`` keeps its original
    row, and ``point`` is renumbered ``0 .. n - 1`` (docs/conventions.md, "Several targets and
    groups").

    Parameters
    ----------
    tree : xarray.DataTree
        A targets tree (``attrs["layout"] == "targets"``), e.g. of :func:`uqviz.from_predictions`
        with (row, target) arrays.
    targets : list of str, optional
        The targets pooled, in this order; default all of ``tree.attrs["targets"]``.
    name : str, default "pooled"
        The name of the new child (not a target's name).

    Returns
    -------
    xarray.DataTree
        A new tree: the children of `tree` then `name`; ``attrs["targets"]`` ends with `name`,
        ``attrs["pooled"]`` is `name`; the pooled child's attributes ``target = name``,
        ``pooled_targets`` (the targets pooled) and ``n_missing = 0``.

    Raises
    ------
    TypeError
        `tree` not a DataTree.
    ValueError
        Not a targets tree, an unknown or repeated target, or `name` already a child.

    See Also
    --------
    uqviz.from_predictions : the targets tree of (row, target) arrays.
    uqviz.validate_average : runs per target and on the pooled child (dim ``target``).

    Notes
    -----
    The pooled child of targets :math:`t_1, \dots, t_k` holds
    :math:`\{(E_{it}, u_{E,it}) : t \in \{t_1, \dots, t_k\},\ i \text{ observed for } t\}`,
    :math:`n = \sum_t (n_{\mathrm{rows}} - n_{\mathrm{missing},t})` points, target after target.
    The points of one group (the components of one structure's forces) share their errors: a
    point bootstrap narrows the intervals by the design effect :math:`1 + (m - 1)\rho`
    (Cameron & Miller (2015)), so the pooled child keeps ``group`` and its bootstrap
    resamples whole groups, the three components of an atom together.

    References
    ----------
    - Cameron & Miller (2015): correlated points in groups, the design effect.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> y = np.array([[1.0, 2.0], [np.nan, 1.0], [0.5, 0.0]])
    >>> tree = uqviz.from_predictions(y, np.zeros((3, 2)), std=np.ones((3, 2)),
    ...                               targets=["fx", "fy"])
    >>> pooled = uqviz.pool_targets(tree)["pooled"]
    >>> pooled["E"].values.tolist(), pooled["target"].values.tolist(), pooled["row"].values.tolist()
    ([1.0, 0.5, 2.0, 1.0, 0.0], ['fx', 'fx', 'fy', 'fy', 'fy'], [0, 2, 0, 1, 2])
    """
    if not isinstance(tree, xr.DataTree):
        raise TypeError(f"tree: expected an xarray.DataTree of targets, got {type(tree).__name__}")
    if tree.attrs.get("layout") != TARGETS_LAYOUT:
        raise ValueError(
            "tree: not a targets tree (attrs['layout'] != 'targets'); build one with "
            "uqviz.from_predictions, from_arrays, from_dataframe or read_csv with several targets"
        )
    known = [str(t) for t in tree.attrs.get("targets", list(tree.children))]
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"name: invalid child name {name!r}: use a non-empty str without '/'")
    if name in tree.children:
        raise ValueError(f"name: {name!r} is already a child of the tree; pass another name=")
    chosen = (
        known if targets is None else ([targets] if isinstance(targets, str) else list(targets))
    )
    unknown = [t for t in chosen if t not in tree.children]
    if unknown:
        raise ValueError(
            f"targets: {', '.join(map(repr, unknown))} not in the tree "
            f"(targets: {', '.join(known)})"
        )
    dups = sorted({t for t in chosen if chosen.count(t) > 1})
    if dups or not chosen:
        raise ValueError(f"targets: give distinct targets to pool, got {chosen!r}")
    parts = [tree[t].to_dataset() for t in chosen]
    keep = [
        v
        for v in parts[0].data_vars
        if parts[0][v].dims == ("point",)
        and all(v in p.data_vars and p[v].dims == ("point",) for p in parts)
    ]
    coords = ["group"] if all("group" in p.coords for p in parts) else []
    stacked = []
    for t, p in zip(chosen, parts):
        q = p[keep].reset_coords(drop=True)
        q = q.assign_coords(
            row=("point", np.asarray(p["point"].values), {"long_name": "original row"}),
            target=("point", np.full(p.sizes["point"], t), {"long_name": "pooled target"}),
            **{c: p[c].variable for c in coords},
        )
        stacked.append(q.drop_vars("point"))
    pooled = xr.concat(stacked, dim="point", combine_attrs="drop")
    pooled = pooled.assign_coords(point=("point", np.arange(pooled.sizes["point"], dtype=np.int64)))
    units = {p.attrs.get("units", "") for p in parts}
    pooled.attrs = {
        "name": name,
        "units": units.pop() if len(units) == 1 else "",
        "target": name,
        "pooled_targets": list(chosen),
        "n_missing": 0,
    }
    for attr in ("groups",):
        if attr in parts[0].attrs:
            pooled.attrs[attr] = parts[0].attrs[attr]
    out = tree.copy()
    out[name] = xr.DataTree(pooled)
    out.attrs = {**tree.attrs, "targets": known + [name], "pooled": name}
    if isinstance(tree.attrs.get("n_missing"), list):
        out.attrs["n_missing"] = list(tree.attrs["n_missing"]) + [0]
    return out
