"""Input handling shared by :func:`~uqviz.quantile.nees` and :func:`~uqviz.quantile.qce`.

Turns arrays, a Dataset (``y``, ``mean``, ``scale``, optional ``samples``; or a
uqviz dataset ``E``, ``uE``) into checked numpy arrays in the layout of
:mod:`uqviz._array.nees`, and applies a function to each child of a DataTree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from uqviz._array import nees as nees_kernels
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.tree import datasets_of, map_datasets

#: How predictive draws are turned into intervals.
SAMPLE_MODELS = ("normal", "mvnormal", "hpdi")


@dataclass
class Prepared:
    """Predictions checked and put in one form: residuals with standard deviations or
    Cholesky factors of covariances (or sorted samples), per point and variable."""

    kind: str  # "std" (per variable) or "cov"
    source: str  # "std", "cov", "samples:normal", "samples:mvnormal", "samples:hpdi"
    squeeze: bool  # 1-D input: no `variable` dimension in the output
    residual: np.ndarray  # (n, d)
    std: np.ndarray | None  # (n, d) for kind "std"
    chol: np.ndarray | None  # (n, d, d) for kind "cov"
    sorted_samples: np.ndarray | None  # (n, d, r) for hpdi
    y: np.ndarray  # (n, d)
    point: np.ndarray
    variable_labels: np.ndarray

    @property
    def n(self):
        """Number of points."""
        return self.residual.shape[0]

    @property
    def d(self):
        """Number of variables."""
        return self.residual.shape[1]


def is_tree(data) -> bool:
    """Whether ``data`` is an ``xarray.DataTree`` (several datasets)."""
    return isinstance(data, xr.DataTree)


def indices_text(mask, point):
    """The count of the points where ``mask`` holds and the first ten labels, for errors."""
    idx = np.flatnonzero(mask)
    head = ", ".join(str(p) for p in np.asarray(point)[idx[:10]])
    return f"{idx.size} point(s), first at [{head}{', ...' if idx.size > 10 else ''}]"


def float_array(name, x):
    """``x`` as float64; a TypeError naming ``name`` for non-numeric or boolean input."""
    if isinstance(x, xr.DataTree):
        raise TypeError(f"{name}: a DataTree is accepted as the first argument only")
    try:
        raw = np.asarray(x)
        out = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected numbers, got {type(x).__name__} ({err})") from None
    _refuse_booleans(name, raw)
    return out


def _refuse_booleans(name, raw):
    """True/False are not numbers (as in :func:`uqviz.from_arrays`): count the rows."""
    if raw.dtype.kind == "b":
        is_bool = np.ones(raw.shape, dtype=bool)
    elif raw.dtype == object:
        is_bool = np.vectorize(lambda v: isinstance(v, (bool, np.bool_)), otypes=[bool])(raw)
    else:
        return
    if is_bool.any():
        rows = int(is_bool.reshape(raw.shape[0], -1).any(axis=1).sum()) if raw.ndim else 1
        raise TypeError(
            f"{name}: boolean values (True/False) are not numbers; {rows} row(s) "
            f"hold them (cast with .astype(float) if 0/1 is meant)"
        )


def _check_finite(name, arr, point):
    bad = ~np.isfinite(arr)
    if bad.any():
        per_point = bad.reshape(arr.shape[0], -1).any(axis=1)
        raise ValueError(f"{name}: NaN or infinite values in {indices_text(per_point, point)}")


def _check_pandas_alignment(**arrays):
    """Refuse pandas inputs whose indexes differ (they would be paired by position)."""
    indexed = {
        k: v.index
        for k, v in arrays.items()
        if hasattr(v, "index")
        and hasattr(v, "to_numpy")
        and not isinstance(v, (xr.DataArray, xr.Dataset))
    }
    if len(indexed) > 1:
        names = list(indexed)
        first = indexed[names[0]]
        for k in names[1:]:
            if not first.equals(indexed[k]):
                raise ValueError(
                    f"{names[0]} and {k}: pandas objects with different indexes "
                    f"would be paired by position; align them or pass arrays"
                )


def _from_dataset(ds: xr.Dataset):
    """(y, mean, scale, samples, point labels, variable labels) of a Dataset."""
    if "y" not in ds:
        if "E" in ds and "uE" in ds:
            check_dataset(ds)
            return ds["E"].values, 0.0, ds["uE"].values, None, ds["point"].values, None
        raise ValueError(
            f"y: the Dataset needs variables 'y', 'mean', 'scale' (or 'samples'), "
            f"or 'E', 'uE'; it has {sorted(map(str, ds.data_vars))}"
        )
    y = ds["y"]
    extra = [d for d in y.dims if d not in ("point", "variable")]
    if "point" not in y.dims or extra:
        raise ValueError(f"y: expected dims ('point',) or ('point', 'variable'), got {y.dims}")
    y = y.transpose("point", ...)
    point = ds["point"].values if "point" in ds.coords else np.arange(y.sizes["point"])
    labels = ds["variable"].values if "variable" in ds.coords else None
    mean = scale = samples = None
    if "mean" in ds:
        m = ds["mean"]
        if not set(m.dims) <= set(y.dims):
            raise ValueError(f"mean: expected dims within {y.dims}, got {m.dims}")
        mean = m.broadcast_like(y).transpose(*y.dims).values
    if "scale" in ds:
        s = ds["scale"]
        if set(s.dims) <= set(y.dims):
            scale = s.broadcast_like(y).transpose(*y.dims).values
        elif "variable" in y.dims and len(s.dims) == 3 and {"point", "variable"} < set(s.dims):
            other = next(d for d in s.dims if d not in ("point", "variable"))
            scale = s.transpose("point", "variable", other).values
        else:
            raise ValueError(
                f"scale: expected dims {y.dims} (standard deviations) or "
                f"('point', 'variable', <second variable dim>) (covariances), "
                f"got {s.dims}"
            )
    if "samples" in ds:
        r = ds["samples"]
        if "sample" not in r.dims or set(r.dims) != {"sample", *y.dims}:
            raise ValueError(f"samples: expected dims ('sample',) + {y.dims}, got {r.dims}")
        samples = r.transpose("sample", *y.dims).values
    return y.values, mean, scale, samples, point, labels


def _named_arrays(y, mean, scale, samples):
    """DataArrays matched by their dims: the Dataset ``y``, ``mean``, ``scale``, ``samples``
    (the target dim ``variable``, or ``target`` as the joint scores name it, renamed to
    ``variable``; a covariance ``scale`` with a second target dim of any other name), or
    None when the inputs are not all DataArrays (then they are read by position)."""
    given = {"y": y, "mean": mean, "scale": scale, "samples": samples}
    given = {k: v for k, v in given.items() if v is not None}
    if not all(isinstance(v, xr.DataArray) for v in given.values()):
        return None
    out = {}
    for k, v in given.items():
        if "target" in v.dims:
            if "variable" in v.dims:
                raise ValueError(f"{k}: both a 'target' and a 'variable' dim ({v.dims})")
            v = v.rename({"target": "variable"})
        out[k] = v.variable if v.name == k else v  # drop the name, keep the dims
    return xr.Dataset(out)


def prepare(y, mean, scale, samples, sample_model, variable_names) -> Prepared:
    """Check the inputs and bring them to the kernel layout."""
    point = labels = None
    if isinstance(y, xr.DataArray):
        named = _named_arrays(y, mean, scale, samples)
        if named is not None:
            y, mean, scale, samples = named, None, None, None
    if isinstance(y, xr.Dataset):
        if mean is not None or scale is not None or samples is not None:
            raise ValueError(
                "mean, scale, samples: leave them unset with a Dataset (its variables are used)"
            )
        y, mean, scale, samples, point, labels = _from_dataset(y)
    else:
        _check_pandas_alignment(y=y, mean=mean, scale=scale)
    y = float_array("y", y)
    if y.ndim not in (1, 2) or y.shape[0] == 0 or (y.ndim == 2 and y.shape[1] == 0):
        raise ValueError(f"y: expected shape (n,) or (n, d) with n, d >= 1, got {y.shape}")
    n = y.shape[0]
    if point is None:
        point = np.arange(n)
    squeeze = y.ndim == 1
    y2 = y[:, None] if squeeze else y
    d = y2.shape[1]
    _check_finite("y", y2, point)
    sorted_samples = std = chol = None

    if samples is not None:
        if mean is not None or scale is not None:
            raise ValueError(
                "samples: give either mean and scale, or samples (with mean=None, "
                "scale=None), not both"
            )
        s = float_array("samples", samples)
        if s.ndim != y.ndim + 1 or s.shape[1:] != y.shape:
            want = ", ".join(map(str, y.shape))
            raise ValueError(f"samples: expected shape (r,) + y.shape = (r, {want}), got {s.shape}")
        if s.shape[0] < 2:
            raise ValueError(f"samples: need at least 2 draws per point, got {s.shape[0]}")
        s2 = np.moveaxis(s[..., None] if squeeze else s, 0, -1)  # (n, d, r): draws last
        _check_finite("samples", s2, point)
        if sample_model == "mvnormal" and d > 1:
            mu, cov = nees_kernels.sample_moments(s2, covariance=True)
            chol = nees_kernels.cholesky(cov, name="samples (sample covariance)")
            kind = "cov"
        else:
            mu, var = nees_kernels.sample_moments(s2)
            std = np.sqrt(var)
            bad = ~(std > 0)
            if bad.any():
                raise ValueError(
                    f"samples: zero spread (all draws equal) in "
                    f"{indices_text(bad.any(axis=1), point)}"
                )
            kind = "std"
            if sample_model == "hpdi":
                sorted_samples = np.sort(s2, axis=-1)
        source = f"samples:{sample_model}"
    else:
        if mean is None or scale is None:
            missing = " and ".join(k for k, v in (("mean", mean), ("scale", scale)) if v is None)
            raise ValueError(f"{missing}: required unless samples= is given")
        mu = float_array("mean", mean)
        if mu.shape not in ((), y.shape, y.shape[1:]):
            raise ValueError(f"mean: expected shape {y.shape} (or a scalar), got {mu.shape}")
        mu = np.broadcast_to(mu, y.shape)
        mu = mu[:, None] if squeeze else mu
        _check_finite("mean", mu, point)
        sc = float_array("scale", scale)
        if sc.shape == y.shape:
            std = sc[:, None] if squeeze else sc
            _check_finite("scale", std, point)
            bad = ~(std > 0)
            if bad.any():
                raise ValueError(
                    f"scale: standard deviations must be > 0; "
                    f"{indices_text(bad.any(axis=1), point)}"
                )
            kind, source = "std", "std"
        elif sc.shape == (n, d, d) and not squeeze:
            chol = nees_kernels.cholesky(sc, name="scale")
            kind, source = "cov", "cov"
        else:
            want = f"({n},)" if squeeze else f"({n}, {d}) (std) or ({n}, {d}, {d}) (covariance)"
            raise ValueError(f"scale: expected shape {want}, got {sc.shape}")
    residual = y2 - mu
    if variable_names is not None:
        labels = np.asarray(variable_names)
        if labels.shape != (d,):
            raise ValueError(f"variable_names: expected {d} labels, got shape {labels.shape}")
    elif labels is None:
        labels = np.arange(d)
    return Prepared(kind, source, squeeze, residual, std, chol, sorted_samples, y2, point, labels)


def apply(func, data, mean, scale, samples, *, rng=None):
    """``func(data, mean, scale, samples, rng)`` for arrays or a Dataset; per child of a
    DataTree (each with its own stream spawned from ``rng``), results stacked on ``dataset``."""
    if not is_tree(data):  # the first child stream, as map_datasets gives a single Dataset
        return describe(func(data, mean, scale, samples, seeds.spawn(rng, 1)[0]))
    if mean is not None or scale is not None or samples is not None:
        raise ValueError(
            "mean, scale, samples: leave them unset with a DataTree "
            "(the variables of each dataset are used)"
        )
    return map_datasets(
        lambda ds, rng: func(ds, None, None, None, rng), data, rng=rng, variables=None
    )


def point_union(tree) -> np.ndarray:
    """Point labels of all datasets of a DataTree, in order of first appearance."""
    import pandas as pd

    index = pd.Index([])
    for _, ds in datasets_of(tree, variables=None):
        labels = ds["point"].values if "point" in ds.coords else np.arange(ds.sizes["point"])
        index = index.append(pd.Index(labels)).unique()
    return index.to_numpy()


def check_sample_model(sample_model):
    """``sample_model`` checked against ``SAMPLE_MODELS``."""
    return checks.choice("sample_model", sample_model, SAMPLE_MODELS)
