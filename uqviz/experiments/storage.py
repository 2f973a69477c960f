"""Save and load Monte Carlo studies as netCDF files (written atomically)."""

from __future__ import annotations

import importlib.util
import os
import uuid
import warnings

import xarray as xr

from uqviz._version import __version__
from uqviz.engine import checks
from uqviz.engine.deprecation import REMOVED_IN

__all__ = ["save_study", "load_study", "stored_study", "check_destination", "BACKENDS"]

#: netCDF backends of :func:`save_study` / :func:`load_study`
BACKENDS = ("h5netcdf", "netcdf4")


#: attribute listing the attributes stored as comma-separated strings (lists on load)
SEQUENCE_ATTRS = "sequence_attrs"


def netcdf_attrs(attrs):
    """Attributes netCDF can store: booleans to 0/1, sequences to comma-separated strings
    (their names listed in ``attrs["sequence_attrs"]``), ``None`` dropped."""
    out, sequences = {}, []
    for key, val in attrs.items():
        if val is None or key == SEQUENCE_ATTRS:
            continue
        if isinstance(val, bool) or type(val).__name__ == "bool_":
            val = int(val)
        elif isinstance(val, (list, tuple)):
            val = ",".join(str(v) for v in val)
            sequences.append(key)
        out[key] = val
    if sequences:
        out[SEQUENCE_ATTRS] = ",".join(sequences)
    return out


def _restore_sequences(attrs):
    """Inverse of :func:`netcdf_attrs` for sequences: comma-separated strings to lists."""
    keys = attrs.pop(SEQUENCE_ATTRS, "")
    for key in str(keys).split(","):
        if key in attrs:
            text = str(attrs[key])
            attrs[key] = text.split(",") if text else []
    return attrs


def _storable(ds):
    """A copy of ``ds`` whose attributes (its own and its variables') netCDF can store."""
    out = ds.copy()
    out.attrs = netcdf_attrs(ds.attrs)
    for name in out.variables:
        out[name].attrs = netcdf_attrs(out[name].attrs)
    return out


#: result variables renamed in uqviz 0.2 that a study stored before may still hold (old: new);
#: :func:`load_study` and :func:`stored_study` rename them, with a FutureWarning, until 0.3.0
RENAMED_VARIABLES = {
    "p_val": "validation_probability",
    "p_val_lower": "validation_probability_lower",
    "p_val_upper": "validation_probability_upper",
}
#: the same, for the variables of one result only (the dim that identifies it)
RENAMED_VARIABLES_WITH_DIM = {"seed": ("tie_seed", "ordering")}  # ordering_study


def _renamed_variables(ds, name):
    """``ds`` with the variables of :data:`RENAMED_VARIABLES` under their new names."""
    old = {
        **RENAMED_VARIABLES,
        **{k: new for k, (new, dim) in RENAMED_VARIABLES_WITH_DIM.items() if dim in ds.dims},
    }
    old = {k: v for k, v in old.items() if k in ds.variables and v not in ds.variables}
    if old:
        warnings.warn(
            f"{name!r} holds variables under names deprecated in uqviz 0.2 "
            f"({', '.join(f'{k} -> {v}' for k, v in old.items())}): renamed on "
            f"reading until uqviz {REMOVED_IN}; save the study again to store the new "
            "names",
            FutureWarning,
            stacklevel=4,
        )
        ds = ds.rename(old)
    return ds


def _restored(ds, name="the study"):
    """``ds`` read back: the ``done`` mask as booleans, sequence attributes as lists, the
    variables renamed since it was stored under their new names."""
    ds = _renamed_variables(ds, name)
    if "done" in ds:
        ds["done"] = ds["done"].astype(bool)
    _restore_sequences(ds.attrs)
    for name in ds.variables:
        _restore_sequences(ds[name].attrs)
    return ds


def _backend(backend):
    """The backend option, or h5netcdf (needs h5py), else netCDF4."""
    if backend is not None:
        return checks.choice("backend", backend, BACKENDS)
    if importlib.util.find_spec("h5netcdf") and importlib.util.find_spec("h5py"):
        return "h5netcdf"
    if importlib.util.find_spec("netCDF4"):
        return "netcdf4"
    raise ImportError(
        "saving a study needs h5netcdf with h5py (pip install h5netcdf h5py) or netCDF4"
    )


def _file_name(path) -> str:
    """The file name of ``path`` for messages (never the machine's absolute path)."""
    return os.path.basename(os.path.normpath(path)) or str(path)


def check_destination(path, name="path") -> str:
    """``path`` as a str if its folder exists (checked before any computing or writing).

    Examples
    --------
    >>> check_destination("no-such-folder/study.nc")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    FileNotFoundError: path: the folder 'no-such-folder' of 'study.nc' does not exist;
    create it first
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or an os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{name}: {_file_name(path)!r} is a folder, not a file name")
    if folder and not os.path.isdir(folder):
        raise FileNotFoundError(
            f"{name}: the folder {folder!r} of {_file_name(path)!r} does not exist; create it first"
        )
    return path


def _write_atomic(path, write):
    """``write(tmp)`` into a temporary file beside ``path``, then moved onto ``path``.

    The temporary file never stays behind, and errors name ``path``, not it.
    """
    path = check_destination(path)
    tmp = os.path.join(os.path.dirname(path), f".{_file_name(path)}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as err:
        raise type(err)(
            f"path: could not write {_file_name(path)!r} ({err.strerror or type(err).__name__})"
        ) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _open_study(path, opener):
    """``opener(path)``; errors name the file (not the machine path) and what is wrong."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or an os.PathLike, got {type(path).__name__}")
    path, name = os.fspath(path), _file_name(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"path: {name!r} is a folder, not a study file")
    if not os.path.exists(path):
        raise FileNotFoundError(f"path: no such file {name!r}")
    try:
        return opener(path)
    except (OSError, ValueError):
        raise ValueError(
            f"path: {name!r} is not a netCDF study file (one written by "
            "uqviz.save_study); the netCDF backend cannot read it"
        ) from None


def save_study(ds, path, *, backend=None):
    """Write a study result (complete or partial) to a netCDF file.

    The file is written under a temporary name and then moved into place, so an
    interrupted write never leaves a truncated study. Attributes netCDF cannot
    store are converted (booleans to 0/1, sequences of names to comma-separated
    strings, turned back into lists by :func:`load_study`; ``None`` dropped).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`uqviz.validation_probability` or :func:`uqviz.statistic_bias`.
    path : str or os.PathLike
        Destination file.
    backend : {"h5netcdf", "netcdf4"}, optional
        netCDF library; default h5netcdf when h5py is installed, else netCDF4.

    Returns
    -------
    None

    Examples
    --------
    >>> import os, tempfile
    >>> from uqviz import save_study, load_study, statistic_bias
    >>> res = statistic_bias(nu_ig=[10], nu_d=[10], n_datasets=20, size=200, rng=0,
    ...                      progress=False)
    >>> path = os.path.join(tempfile.mkdtemp(), "bias.nc")
    >>> save_study(res, path)
    >>> loaded = load_study(path)
    >>> bool((loaded["estimate"] == res["estimate"]).all()), loaded.attrs["statistics"]
    (True, ['RCE', 'ZMS', 'RCE2'])
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be an xarray.Dataset, got {type(ds).__name__}")
    backend = _backend(backend)
    path = check_destination(path)
    out = _storable(ds)
    _write_atomic(path, lambda tmp: out.to_netcdf(tmp, engine=backend))


def load_study(path, *, backend=None) -> xr.Dataset:
    """Read a study written by :func:`save_study` (or by a run with ``path=``) into memory.

    The file is closed on return, so it may be overwritten afterwards.

    Parameters
    ----------
    path : str or os.PathLike
        A netCDF file written by :func:`save_study`.
    backend : {"h5netcdf", "netcdf4"}, optional

    Returns
    -------
    xarray.Dataset
        The study, with its ``done`` mask as booleans and its sequence
        attributes (``statistics``) as lists.

    Examples
    --------
    See :func:`save_study`.
    """
    engine = _backend(backend)

    def read(p):
        with xr.open_dataset(p, engine=engine) as ds:
            return ds.load()

    return _restored(_open_study(path, read), _file_name(path))


#: attribute holding the JSON-encoded settings a stored study was computed with
SETTINGS_ATTR = "study_settings"


def _settings_json(settings):
    """``settings`` as canonical JSON (sorted keys; tuples as lists)."""
    import json

    if settings is None:
        return "{}"
    if not isinstance(settings, dict):
        raise TypeError(f"settings must be a dict, got {type(settings).__name__}")
    return json.dumps(
        settings, sort_keys=True, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)
    )


def _save_stored(result, path, text):
    """Write one Dataset, or a dict of Datasets as groups of one file, with its settings."""
    from datetime import date

    stamp = {
        SETTINGS_ATTR: text,
        "uqviz_version": __version__,
        "computed_on": date.today().isoformat(),
    }
    if isinstance(result, xr.Dataset):
        save_study(result.assign_attrs(stamp), path)
        return
    if not isinstance(result, dict) or not all(isinstance(v, xr.Dataset) for v in result.values()):
        raise TypeError("compute() must return an xarray.Dataset or a dict of Datasets")
    bad = [
        name
        for name in result
        if not isinstance(name, str)
        or not name
        or "/" in name
        or "\\" in name
        or name in (".", "..")
    ]
    if bad:
        raise ValueError(
            f"compute(): the names of a dict of Datasets are the group names of one "
            f"file: non-empty str without '/' or '\\', not '.' or '..'; got "
            f"{', '.join(map(repr, bad))}"
        )
    groups = {f"/{name}": _storable(ds) for name, ds in result.items()}
    tree = xr.DataTree.from_dict({"/": xr.Dataset(attrs=stamp), **groups})
    _write_atomic(path, lambda tmp: tree.to_netcdf(tmp, engine=_backend(None)))


def _load_stored(path):
    """The stored study (Dataset or dict of Datasets) and its settings JSON."""

    def read(p):
        with xr.open_datatree(p, engine=_backend(None)) as opened:
            return opened.load()

    tree = _open_study(path, read)
    text = str(tree.attrs.get(SETTINGS_ATTR, "{}"))
    if not tree.children:  # one Dataset, written by save_study
        return _restored(tree.to_dataset(), _file_name(path)), text
    return {
        name: _restored(node.to_dataset(), f"{_file_name(path)}/{name}")
        for name, node in tree.children.items()
    }, text


def stored_study(path, compute, *, settings=None, refresh=False):
    """A long Monte Carlo study stored once and read back in seconds.

    If ``path`` exists (and ``refresh`` is false) the study is read from it, after
    checking that it was computed with the same ``settings``; otherwise
    ``compute()`` runs and its result is written to ``path`` (atomically) with the
    settings, the uqviz version and the date. The course notebooks use it to show
    full-size studies (minutes to hours on 2 cores) in seconds; a script recomputes
    them (``refresh=True``).

    Parameters
    ----------
    path : str or os.PathLike
        The netCDF file of the study.
    compute : callable
        ``compute()`` returns an ``xarray.Dataset`` or a ``dict`` of Datasets (stored
        as groups of one file; names are group names).
    settings : dict, optional
        What the study depends on (sizes, seeds, grids); JSON-serialisable values.
        A stored study computed with other settings is an error, never silently used.
    refresh : bool, default False
        Compute again and overwrite the stored file.

    Returns
    -------
    xarray.Dataset or dict of xarray.Dataset
        The study; a stored Dataset has the attributes ``study_settings``,
        ``uqviz_version`` and ``computed_on``.

    Raises
    ------
    ValueError
        The stored study was computed with other settings.

    Examples
    --------
    >>> import os, tempfile
    >>> from uqviz import stored_study, statistic_bias
    >>> path = os.path.join(tempfile.mkdtemp(), "bias.nc")
    >>> run = lambda: statistic_bias(nu_ig=[10], nu_d=[10], n_datasets=20, size=200, rng=0,
    ...                              progress=False)
    >>> first = stored_study(path, run, settings={"size": 200})    # computed and stored
    >>> again = stored_study(path, run, settings={"size": 200})    # read back
    >>> bool((first["estimate"] == again["estimate"]).all())
    True
    """
    if not callable(compute):
        raise TypeError(f"compute must be callable, got {type(compute).__name__}")
    refresh = checks.boolean("refresh", refresh)
    text = _settings_json(settings)
    path = check_destination(path)  # before computing
    if refresh or not os.path.exists(path):
        _save_stored(compute(), path, text)
        return _load_stored(path)[0]  # what a later call reads, attributes restored
    result, stored = _load_stored(path)
    if stored != text:
        raise ValueError(
            f"the study stored in {os.path.basename(path)} was computed with "
            f"settings {stored}, not {text}; compute it again with refresh=True"
        )
    return result
