"""Monte Carlo studies of calibration statistics on synthetic calibrated data.

Two studies of Pernot 2024 (004, sect. IV B-C; 000, sect. III.3.2):

- :func:`validation_probability` (004 Fig. 5, 000 Fig. 3): the share of
  calibrated datasets that a bootstrap validation test accepts,
  ``p_val = (1/N) sum_i 1(|zeta_i| <= 1)`` (004 eq. 21, 000 eq. 16), with a
  Wilson 95% interval, for the NIG or TIG scenario over a grid of ``nu``.
- :func:`statistic_bias` (004 Fig. 4 and Fig. 11): the mean and the
  dispersion over datasets of RCE, ZMS and RCE2 on a TIG grid
  ``nu_ig x nu_d``, with the mean robust skewness of ``E^2`` and ``Z^2``.

Execution
---------
The work is cut into *chunks* of datasets of one grid point. Dataset ``i`` of
the generative model ``(a, b, nu_D)`` gets its own streams,
``SeedSequence(entropy, spawn_key=(bits(a), bits(b), bits(nu_D), i, s))``
with ``s = 0`` for its data and ``s = 1`` for its bootstrap seed, where
``entropy`` is drawn once from ``numpy.random.default_rng(rng)`` and
``bits(x)`` is the IEEE-754 bit pattern of ``x``. Each dataset is resampled
on its own (one bootstrap group per dataset), so every number depends only on
``(entropy, model, i)`` and the settings: results are identical whatever the
chunk size, the order of the grid, serial or dask execution, and a grid point
gives the same datasets in every study that contains it.

- ``client=None``: chunks run in this process one after the other, with a
  progress bar (the numba bootstrap kernel already uses all cores).
- ``client=`` a :class:`dask.distributed.Client`: chunks are submitted there.
  Numba kernels run under a process-wide lock, so several worker threads of
  one process do not run them concurrently; each kernel still uses all
  numba threads, so several worker processes on one machine oversubscribe
  its cores (prefer ``client="local"`` on one machine).
- ``client="local"``: a :class:`dask.distributed.LocalCluster` of 2 worker
  processes with 1 thread each, numba limited to 1 thread per task, is
  started for the call and closed after it.

Save and restore: with ``path=``, the per-dataset results are written to a
netCDF file (h5netcdf; netCDF4 when h5py is missing) as chunks complete (and when the run stops on an
error or an interrupt). A rerun with the same settings loads the datasets
already done and computes only the rest; grid points or datasets may be
added (their seeds do not depend on the grid). With ``rng=None`` a rerun
reuses the entropy stored in the file. Settings that change the numbers
(size, n_boot, statistics, ...) must match, or a ``ValueError`` says which.

Examples
--------
>>> from uqviz import validation_probability
>>> res = validation_probability("NIG", [4.0], n_datasets=8, size=200, n_boot=200,
...                              rng=1, progress=False)
>>> res["p_val"].dims
('nu', 'statistic')
"""

from __future__ import annotations

import functools
import numbers
import os
import threading
import time

import numpy as np
import xarray as xr

from uqviz._array import stats as ks
from uqviz._array.bca import zeta_score
from uqviz._array.binomial import wilson_interval
from uqviz._array.bootstrap import bootstrap_moments
from uqviz._array.resample import default_engine
from uqviz.engine.statistics import Statistic, get_statistic
from uqviz.data.synthetic import draw_calibrated

__all__ = ["validation_probability", "statistic_bias", "save_study", "load_study",
           "TAILEDNESS_VARIABLES"]

#: variables whose robust skewness beta_GM is reported (004 Table II)
TAILEDNESS_VARIABLES = ("uE2", "E2", "Z2")

#: default grids (004 sect. IV B-C)
_DEFAULT_NU = {"NIG": (2.0, 3.0, 4.0, 6.0, 8.0, 10.0),
               "TIG": (2.1, 3.0, 4.0, 6.0, 8.0, 10.0, 20.0)}
_DEFAULT_NU_IG = (2.0, 3.0, 4.0, 6.0, 10.0, 20.0)
_DEFAULT_NU_D = (3.0, 4.0, 6.0, 10.0, 20.0, 100.0)

_DEFAULT_CHUNK = {"validation_probability": 50, "statistic_bias": 200}
_SAVE_INTERVAL = 2.0  # seconds between two saves of a running study (and always at the end)
_NUMBA_LOCK = threading.Lock()  # one numba kernel at a time per process


# --------------------------------------------------------------------------
# seeds and data
# --------------------------------------------------------------------------
def _bits(x) -> int:
    return int(np.array(float(x), dtype=np.float64).view(np.uint64))


def _model_key(a, b, nu_d) -> tuple:
    return (_bits(a), _bits(b), _bits(np.inf if nu_d is None else nu_d))


def _draw(model, idx, entropy, size):
    """Data (e, u), shape (len(idx), size), and one bootstrap seed per dataset."""
    a, b, nu_d = model
    key = _model_key(a, b, nu_d)
    e = np.empty((len(idx), size))
    u = np.empty((len(idx), size))
    seeds = np.empty(len(idx), dtype=np.uint64)
    for r, i in enumerate(idx):
        ss = np.random.SeedSequence(entropy, spawn_key=key + (int(i), 0))
        gen = np.random.Generator(np.random.PCG64(ss))
        e[r], u[r] = draw_calibrated(size, None, a, b, nu_d, gen)
        seeds[r] = np.random.SeedSequence(entropy, spawn_key=key + (int(i), 1)).generate_state(
            1, np.uint64)[0]
    return e, u, seeds


@functools.lru_cache(maxsize=8)
def _hd_median_weights(size):
    return ks.harrell_davis_weights(size, [0.5])[0]


def _beta_gm_rows(x):
    """beta_GM along the last axis, computed row by row (no BLAS).

    Same estimator as :func:`uqviz._array.stats.beta_gm`; the row-wise sums
    make each value independent of the other rows of the call (bit for bit),
    which keeps results independent of the chunking.
    """
    xs = np.sort(x, axis=-1)
    med = (xs * _hd_median_weights(x.shape[-1])).sum(axis=-1)
    mad = np.abs(x - med[..., None]).mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x.mean(axis=-1) - med) / mad


def _tail_columns(e, u):
    """(n, 3, M) stack of uE^2, E^2, Z^2 (TAILEDNESS_VARIABLES order)."""
    v = u * u
    e2 = e * e
    return np.stack([v, e2, e2 / v], axis=1)


def _set_numba_threads(n):
    if n is None:
        return
    try:
        import numba
    except ImportError:  # pragma: no cover
        return
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


# --------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------
_ALL_COLUMNS = ("Z", "Z2", "E2", "V", "lnV")


def _moment_statistic(name) -> Statistic:
    stat = get_statistic(name)
    if stat.kind != "moments":
        raise ValueError(f"statistics: {stat.name!r} is not a moment statistic (function of "
                         "column means); Monte Carlo studies support moment statistics only")
    return stat


def _validation_stats(names):
    """name -> (func, columns) to bootstrap, and the reference each is compared with.

    A data-dependent reference (NLL) is handled as in ``validate_average``:
    the excess over the reference is bootstrapped and compared with 0
    (zeta-scores are invariant to a common shift).
    """
    out, refs = {}, []
    for name in names:
        stat = _moment_statistic(name)
        if stat.reference is None:
            raise ValueError(f"statistics: {stat.name!r} has no predefined reference value, "
                             "so it cannot be validated by a zeta-score")
        if callable(stat.reference):
            def func(m, n, _s=stat):
                return _s.func(m, n) - _s.reference(m, n)
            out[stat.name] = (func, _ALL_COLUMNS)
            refs.append(0.0)
        else:
            out[stat.name] = (stat.func, tuple(stat.columns))
            refs.append(float(stat.reference))
    return out, np.array(refs)


# --------------------------------------------------------------------------
# chunk kernels (top level: picklable for dask)
# --------------------------------------------------------------------------
def _chunk_validation(model, idx, entropy, size, opts, numba_threads=None):
    """Validate each dataset of one chunk: estimates, zeta-scores, beta_GM."""
    _set_numba_threads(numba_threads)
    idx = np.asarray(idx, dtype=np.int64)
    e, u, seeds = _draw(model, idx, entropy, size)
    stats, refs = _validation_stats(opts["statistics"])
    n = len(idx)
    starts = np.arange(n, dtype=np.int64) * size
    sizes = np.full(n, size, dtype=np.int64)
    with _NUMBA_LOCK:
        res = bootstrap_moments(e.ravel(), u.ravel(), stats, n_boot=opts["n_boot"], seed=seeds,
                                ci=opts["ci"], method=opts["method"], starts=starts,
                                sizes=sizes, engine=opts["engine"])
    names = list(stats)
    est = np.stack([res[s].estimate for s in names], axis=-1)
    lower = np.stack([res[s].lower for s in names], axis=-1)
    upper = np.stack([res[s].upper for s in names], axis=-1)
    zeta = zeta_score(est, refs, lower, upper)
    # report the statistic itself (excess + data-dependent reference for NLL)
    for j, name in enumerate(names):
        stat = get_statistic(name)
        if callable(stat.reference):
            cm = {c: np.mean(ks.COLUMN_FUNCS[c](e, u), axis=-1) for c in _ALL_COLUMNS}
            est[:, j] = stat.func(cm, size)
    return {"estimate": est, "zeta": zeta,
            "beta_gm_per_dataset": _beta_gm_rows(_tail_columns(e, u))}


def _chunk_bias(model, idx, entropy, size, opts, numba_threads=None):
    """Statistic values and beta_GM of each dataset of one chunk (no bootstrap)."""
    idx = np.asarray(idx, dtype=np.int64)
    e, u, _ = _draw(model, idx, entropy, size)
    stats = [_moment_statistic(s) for s in opts["statistics"]]
    cols = sorted({c for s in stats for c in s.columns})
    means = {c: np.mean(ks.COLUMN_FUNCS[c](e, u), axis=-1) for c in cols}
    values = np.stack([np.asarray(s.func(means, float(size)), dtype=float) for s in stats], axis=-1)
    return {"value": values, "beta_gm_per_dataset": _beta_gm_rows(_tail_columns(e, u))}


_CHUNK_FUNCS = {"validation_probability": _chunk_validation, "statistic_bias": _chunk_bias}


# --------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------
def _count(value, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _grid(values, what, *, lower, allow_inf=False):
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-d sequence of numbers, got {values!r}")
    ok = np.isfinite(arr) | (allow_inf & np.isposinf(arr))
    bad = ~ok | ~(arr > lower)
    if bad.any():
        raise ValueError(f"{what}: values must be > {lower:g}"
                         f"{' (inf allowed)' if allow_inf else ''}; {int(bad.sum())} "
                         f"value(s) are not: {arr[bad].tolist()}")
    if len(np.unique(arr)) != arr.size:
        raise ValueError(f"{what}: values must be distinct, got {arr.tolist()}")
    return arr


def _entropy_from(rng):
    """(entropy, seed attribute) from the ``rng`` argument; None when rng is None."""
    if rng is None:
        return None, None
    seed = int(rng) if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) else None
    return int(np.random.default_rng(rng).integers(2**63)), seed


# --------------------------------------------------------------------------
# save / load
# --------------------------------------------------------------------------
def _netcdf_attrs(attrs):
    out = {}
    for key, val in attrs.items():
        if val is None:
            continue
        if isinstance(val, (bool, np.bool_)):
            val = int(val)
        elif isinstance(val, (list, tuple)):
            val = ",".join(str(v) for v in val)
        out[key] = val
    return out


def _netcdf_engine():
    """h5netcdf (needs h5py); netCDF4 when h5py is missing."""
    import importlib.util

    if importlib.util.find_spec("h5netcdf") and importlib.util.find_spec("h5py"):
        return "h5netcdf"
    if importlib.util.find_spec("netCDF4"):
        return "netcdf4"
    raise ImportError("saving a study needs h5netcdf with h5py (pip install h5netcdf h5py) "
                      "or netCDF4")


def save_study(ds, path, *, engine=None):
    """Write a study result (complete or partial) to a netCDF file.

    The file is written to a temporary name and then moved into place, so an
    interrupted write never leaves a truncated study behind. Attribute values
    that netCDF cannot store are converted (booleans to 0/1, sequences to
    comma-separated strings, ``None`` dropped).

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`validation_probability` or :func:`statistic_bias`.
    path : str or os.PathLike
        Destination file.
    engine : {"h5netcdf", "netcdf4"}, optional
        Default: h5netcdf when h5py is installed, else netCDF4.

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
    >>> bool((load_study(path)["mean"] == res["mean"]).all())
    True
    """
    path = os.fspath(path)
    out = ds.copy()
    out.attrs = _netcdf_attrs(ds.attrs)
    for name in out.variables:
        out[name].attrs = _netcdf_attrs(out[name].attrs)
    tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    try:
        out.to_netcdf(tmp, engine=engine or _netcdf_engine())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_study(path, *, engine=None) -> xr.Dataset:
    """Read a study written by :func:`save_study` (or by a run with ``path=``) into memory.

    The file is closed on return, so it may be overwritten afterwards.

    Parameters
    ----------
    path : str or os.PathLike
        A netCDF file written by :func:`save_study`.
    engine : {"h5netcdf", "netcdf4"}, optional

    Returns
    -------
    xarray.Dataset
        The study, with its ``done`` mask as booleans.

    Examples
    --------
    See :func:`save_study`.
    """
    with xr.open_dataset(os.fspath(path), engine=engine or _netcdf_engine()) as ds:
        out = ds.load()
    if "done" in out:
        out["done"] = out["done"].astype(bool)
    return out


# --------------------------------------------------------------------------
# the study engine
# --------------------------------------------------------------------------
class _Study:
    """Per-dataset result arrays of a grid study, with chunk scheduling and restore.

    ``grid`` maps each grid dim to its coordinate values (row-major order of
    the points); ``models[p]`` is the generative model (a, b, nu_d) of flat
    point ``p``; ``per_dataset`` maps a variable name to (extra dim, labels).
    """

    def __init__(self, kind, grid, models, n_datasets, per_dataset, settings):
        self.kind = kind
        self.grid = grid
        self.models = models
        self.n_datasets = n_datasets
        self.per_dataset = per_dataset
        self.settings = settings
        n_points = len(models)
        self.done = np.zeros((n_points, n_datasets), dtype=bool)
        self.arrays = {name: np.full((n_points, n_datasets, len(labels)), np.nan)
                       for name, (_, labels) in per_dataset.items()}

    # -- layout ------------------------------------------------------------
    @property
    def shape(self):
        return tuple(len(v) for v in self.grid.values())

    def to_dataset(self):
        dims = tuple(self.grid)
        coords = {d: (d, np.asarray(v, dtype=float)) for d, v in self.grid.items()}
        coords["dataset"] = ("dataset", np.arange(self.n_datasets, dtype=np.int64))
        data_vars = {"done": (dims + ("dataset",),
                              self.done.reshape(self.shape + (self.n_datasets,)))}
        for name, (extra, labels) in self.per_dataset.items():
            coords[extra] = (extra, list(labels))
            arr = self.arrays[name].reshape(self.shape + (self.n_datasets, len(labels)))
            data_vars[name] = (dims + ("dataset", extra), arr)
        return xr.Dataset(data_vars, coords=coords, attrs=dict(self.settings))

    # -- restore -----------------------------------------------------------
    def restore(self, old):
        """Copy the datasets done in ``old`` (a loaded study) into this study."""
        mismatch = {k: (old.attrs.get(k), v) for k, v in _netcdf_attrs(self.settings).items()
                    if k != "rng" and old.attrs.get(k) != v}
        if mismatch:
            detail = "; ".join(f"{k}: file {a!r} vs now {b!r}" for k, (a, b) in mismatch.items())
            raise ValueError(f"path: the saved study was run with other settings ({detail}); "
                             "use another path or delete the file")
        if "done" not in old:
            return 0
        n_old = min(old.sizes.get("dataset", 0), self.n_datasets)
        if n_old == 0:
            return 0
        old_grids = {d: np.asarray(old[d].values, dtype=float) for d in self.grid}
        restored = 0
        for p, pos in enumerate(np.ndindex(self.shape)):
            sel = {}
            for d, k in zip(self.grid, pos):
                hits = np.flatnonzero(old_grids[d] == self.grid[d][k])
                if hits.size != 1:
                    break
                sel[d] = int(hits[0])
            else:
                done = old["done"].isel(sel).values[:n_old].astype(bool)
                for name, (extra, labels) in self.per_dataset.items():
                    block = old[name].isel(sel).sel({extra: list(labels)})
                    block = block.transpose("dataset", extra).values[:n_old]
                    self.arrays[name][p, :n_old][done] = block[done]
                self.done[p, :n_old] |= done
                restored += int(done.sum())
        return restored

    # -- scheduling --------------------------------------------------------
    def tasks(self, chunk_size):
        """(flat point, dataset indices) for every missing dataset, chunk by chunk."""
        out = []
        for p in range(len(self.models)):
            for c0 in range(0, self.n_datasets, chunk_size):
                idx = np.arange(c0, min(self.n_datasets, c0 + chunk_size))
                idx = idx[~self.done[p, idx]]
                if idx.size:
                    out.append((p, idx))
        return out

    def store(self, p, idx, result):
        for name, arr in result.items():
            self.arrays[name][p, idx] = arr
        self.done[p, idx] = True


def _local_client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def _progress_bar(total, desc, enabled):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", disable=not enabled)


def _run(study, *, chunk_size, entropy, size, opts, client, progress, path, summarise):
    """Compute the missing datasets of ``study``; save ``summarise(raw)`` to ``path`` as it goes."""
    func = _CHUNK_FUNCS[study.kind]
    tasks = study.tasks(chunk_size)
    last_save = [time.monotonic()]

    def save(force=False):
        if path is not None and (force or time.monotonic() - last_save[0] >= _SAVE_INTERVAL):
            save_study(summarise(study.to_dataset()), path)
            last_save[0] = time.monotonic()

    if not tasks:
        return
    bar = _progress_bar(len(tasks), study.kind, progress)
    own = None
    try:
        if client is None:
            for p, idx in tasks:
                study.store(p, idx, func(study.models[p], idx, entropy, size, opts))
                bar.update()
                save()
        else:
            from dask.distributed import as_completed

            numba_threads = None
            if isinstance(client, str):
                if client != "local":
                    raise ValueError(f"client must be None, 'local' or a dask.distributed.Client, "
                                     f"got {client!r}")
                client, cluster = _local_client()
                own = (client, cluster)
                numba_threads = 1
            futures = {}
            for p, idx in tasks:
                fut = client.submit(func, study.models[p], idx, entropy, size, opts,
                                    numba_threads, pure=False)
                futures[fut] = (p, idx)
            try:
                for fut in as_completed(list(futures)):
                    p, idx = futures[fut]
                    study.store(p, idx, fut.result())
                    bar.update()
                    save()
            finally:
                pending = [f for f in futures if not f.done()]
                if pending:
                    client.cancel(pending)
    finally:
        bar.close()
        save(force=True)
        if own is not None:
            own[0].close()
            own[1].close()


def _prepare(kind, grid, models, per_dataset, settings, *, n_datasets, rng, path):
    entropy, seed = _entropy_from(rng)
    old = load_study(path) if path is not None and os.path.exists(path) else None
    if entropy is None:
        if old is not None and "entropy" in old.attrs:
            entropy = int(old.attrs["entropy"])
        else:
            entropy = int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))
    settings = {"study": kind, **settings, "entropy": entropy}
    if seed is not None:
        settings["rng"] = seed
    study = _Study(kind, grid, models, n_datasets, per_dataset, settings)
    if old is not None:
        study.restore(old)
    return study, entropy


def _settings_common(n_datasets, size, chunk_size, kind):
    n_datasets = _count(n_datasets, "n_datasets")
    size = _count(size, "size")
    chunk_size = _DEFAULT_CHUNK[kind] if chunk_size is None else _count(chunk_size, "chunk_size")
    return n_datasets, size, chunk_size


def _finish_attrs(ds, study, chunk_size, client):
    ds.attrs.update(study.settings)
    ds.attrs["seeding"] = ("dataset i of model (a, b, nu_D): SeedSequence(entropy, spawn_key="
                           "(bits(a), bits(b), bits(nu_D), i, 0 data | 1 bootstrap))")
    ds.attrs["chunk_size"] = chunk_size  # informational: results do not depend on it
    ds.attrs["execution"] = ("serial" if client is None else
                             "dask LocalCluster" if isinstance(client, str) else "dask client")
    return ds


# --------------------------------------------------------------------------
# public studies
# --------------------------------------------------------------------------
def validation_probability(scenario="NIG", nu=None, *, n_datasets=1000, size=5000,
                           n_boot=5000, statistics=("ZMS", "RCE"), ci=0.95, method="bca",
                           binomial_ci=0.95, rng=None, client=None, chunk_size=None,
                           progress=True, path=None, engine=None):
    """Probability that a bootstrap test validates a calibrated dataset (004 Fig. 5).

    For each ``nu``, ``n_datasets`` calibrated datasets of ``size`` points are
    drawn from the scenario; each is validated by a BCa bootstrap interval of
    each statistic (``n_boot`` replicates, paired) and its zeta-score against
    the reference (004 eq. 14). The validation probability is the share of
    datasets with ``|zeta| <= 1`` (004 eq. 21, 000 eq. 16), with a Wilson
    score interval (binomial model).

    Scenarios (004 sect. IV C):

    - ``"NIG"``: ``uE^2 ~ IG(nu/2, nu/2)``, ``D = N(0, 1)`` (``E ~ t(nu)``);
    - ``"TIG"``: ``uE^2 ~ IG(3, 3)``, ``D = t_s(nu)`` (unit-variance Student).

    Parameters
    ----------
    scenario : {"NIG", "TIG"}, default "NIG"
    nu : sequence of float, optional
        ``nu_IG`` (NIG, > 0) or ``nu_D`` (TIG, > 2). Default: NIG
        (2, 3, 4, 6, 8, 10), TIG (2.1, 3, 4, 6, 8, 10, 20).
    n_datasets : int, default 1000
        Monte Carlo datasets per ``nu`` (N).
    size : int, default 5000
        Points per dataset (M).
    n_boot : int, default 5000
        Bootstrap replicates per dataset (B).
    statistics : sequence of str, default ("ZMS", "RCE")
        Moment statistics with a reference value (ZMS, RCE, RCE2, ZM, ZVar, NLL).
    ci : float, default 0.95
        Level of the bootstrap intervals.
    method : {"bca", "percentile", "basic"}, default "bca"
        Bootstrap interval.
    binomial_ci : float, default 0.95
        Level of the Wilson interval of ``p_val``.
    rng : None, int or numpy.random.Generator
        Source of the study's entropy; the same seed gives the same numbers.
    client : None, "local" or dask.distributed.Client
        Where the chunks run (see the module docstring).
    chunk_size : int, optional
        Datasets per chunk (default 50: about 6 MB of bootstrap sums at
        B = 5000). Results do not depend on it.
    progress : bool, default True
        Show a progress bar (tqdm) over chunks.
    path : str or os.PathLike, optional
        netCDF file where the study is saved as it runs and restored from.
    engine : {"numba", "numpy"}, optional
        Resampling engine (default numba).

    Returns
    -------
    xarray.Dataset
        On dims (``nu``, ``statistic``): ``p_val``, ``ci_lower``, ``ci_upper``
        (Wilson), ``n_valid`` (datasets with ``|zeta| <= 1``; an undefined
        zeta, from a degenerate bootstrap, counts as not validated),
        ``n_undefined``, ``reference``; on ``nu``: ``n_datasets`` (done);
        on (``nu``, ``variable``) with variable = ["uE2", "E2", "Z2"]:
        ``beta_gm``, the mean over datasets of beta_GM. Per dataset (dims
        ``nu``, ``dataset``, ...): ``estimate``, ``zeta``,
        ``beta_gm_per_dataset`` and the ``done`` mask. All settings in attrs.

    Examples
    --------
    >>> res = validation_probability("TIG", [4.0, 10.0], n_datasets=10, size=300,
    ...                              n_boot=300, rng=2, progress=False)
    >>> res["p_val"].sel(statistic="ZMS").shape
    (2,)
    """
    kind = "validation_probability"
    if scenario not in ("NIG", "TIG"):
        raise ValueError(f"scenario must be 'NIG' or 'TIG', got {scenario!r}")
    nu = _grid(_DEFAULT_NU[scenario] if nu is None else nu, "nu",
               lower=0.0 if scenario == "NIG" else 2.0)
    n_datasets, size, chunk_size = _settings_common(n_datasets, size, chunk_size, kind)
    n_boot = _count(n_boot, "n_boot")
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if method not in ("bca", "percentile", "basic"):
        raise ValueError(f"method must be 'bca', 'percentile' or 'basic', got {method!r}")
    if isinstance(statistics, str):
        statistics = (statistics,)
    _, refs = _validation_stats(statistics)
    names = [get_statistic(s).name for s in statistics]
    engine = engine or default_engine()
    if scenario == "NIG":
        models = [(v / 2.0, v / 2.0, None) for v in nu]
    else:
        models = [(3.0, 3.0, float(v)) for v in nu]
    settings = {"scenario": scenario, "size": size,
                "n_boot": n_boot, "statistics": ",".join(names), "ci": float(ci),
                "method": method, "engine": engine,
                "model": ("uE^2 ~ IG(nu/2, nu/2), D = N(0,1)" if scenario == "NIG"
                          else "uE^2 ~ IG(3, 3), D = t_s(nu)")}
    per_dataset = {"estimate": ("statistic", names), "zeta": ("statistic", names),
                   "beta_gm_per_dataset": ("variable", TAILEDNESS_VARIABLES)}
    study, entropy = _prepare(kind, {"nu": nu}, models, per_dataset, settings,
                              n_datasets=n_datasets, rng=rng, path=path)
    opts = {"statistics": tuple(names), "n_boot": n_boot, "ci": float(ci), "method": method,
            "engine": engine}

    def summarise(raw):
        return _finish_attrs(_summarise_validation(raw, refs, binomial_ci), study, chunk_size,
                             client)

    _run(study, chunk_size=chunk_size, entropy=entropy, size=size, opts=opts, client=client,
         progress=progress, path=path, summarise=summarise)
    return summarise(study.to_dataset())


def _summarise_validation(ds, refs, binomial_ci):
    done = ds["done"]
    n = done.sum("dataset")
    zeta = ds["zeta"].where(done)
    n_valid = (np.abs(zeta) <= 1.0).sum("dataset")
    n_undefined = (zeta.isnull() & done).sum("dataset")
    lo, hi = wilson_interval(n_valid.values, np.broadcast_to(n.values[..., None], n_valid.shape),
                             ci=binomial_ci)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_val = n_valid / n.where(n > 0)
    ds["p_val"] = p_val.assign_attrs(long_name="validation probability, share of |zeta| <= 1",
                                     formula="004 eq. 21")
    ds["ci_lower"] = (n_valid.dims, lo, {"long_name": f"Wilson {binomial_ci:g} lower bound"})
    ds["ci_upper"] = (n_valid.dims, hi, {"long_name": f"Wilson {binomial_ci:g} upper bound"})
    ds["n_valid"] = n_valid.assign_attrs(long_name="datasets with |zeta| <= 1")
    ds["n_undefined"] = n_undefined.assign_attrs(long_name="datasets with undefined zeta "
                                                           "(degenerate bootstrap), not valid")
    ds["n_datasets"] = n.assign_attrs(long_name="datasets done")
    ds["beta_gm"] = ds["beta_gm_per_dataset"].where(done).mean("dataset").assign_attrs(
        long_name="mean robust skewness beta_GM over datasets")
    ds["reference"] = ("statistic", refs, {"long_name": "reference value (0 for the excess "
                                                        "over a data-dependent reference)"})
    ds.attrs["binomial_ci"] = float(binomial_ci)
    ds.attrs["binomial_interval"] = "Wilson score (Newcombe 1998 method 3)"
    ds.attrs["zeta"] = ("004 eq. 14: (est-ref)/(ci_upper-est) if est<=ref "
                        "else (est-ref)/(est-ci_lower)")
    return ds


def statistic_bias(nu_ig=None, nu_d=None, *, n_datasets=1000, size=5000,
                   statistics=("RCE", "ZMS", "RCE2"), rng=None, client=None, chunk_size=None,
                   progress=True, path=None):
    """Mean and dispersion of calibration statistics on a TIG grid (004 Figs. 4 and 11).

    For each ``(nu_ig, nu_d)``, ``n_datasets`` calibrated datasets of
    ``size`` points are drawn from the TIG model (``uE^2 ~ IG(nu_ig/2,
    nu_ig/2)``, ``D = t_s(nu_d)``, ``nu_d = inf`` for a normal D) and the
    statistics are computed on each (no bootstrap). Their mean, standard
    deviation and deviation from the reference summarise the N runs.

    What is reported, explicitly: ``mean`` is the mean of the statistic
    itself (ZMS, not 1 - ZMS); ``deviation = mean - reference``, so the
    quantity plotted in 004 Fig. 4 (right) is ``1 - ZMS = -deviation`` and
    RCE, RCE2 (reference 0) are ``mean = deviation``. ``sd`` is the
    dispersion of one dataset's value and ``mc_se = sd / sqrt(n)`` the Monte
    Carlo standard error of the mean. The "2 sigma" bars of 004 Figs. 4 and 11
    are read as ``2 * mc_se``: the paper calls the RCE biased because its bars
    miss 0, which ``2 * sd`` bars never do on this grid (they are 10-30 times
    wider than the bias). Note that RCE2 and ZMS are exactly unbiased for
    calibrated data (``E[sum E^2 | uE] = sum uE^2``); RCE is not (Jensen).

    Parameters
    ----------
    nu_ig : sequence of float, optional
        Shape of the uncertainty distribution (> 0); default (2, 3, 4, 6, 10, 20).
    nu_d : sequence of float, optional
        Degrees of freedom of ``D = t_s(nu_d)`` (> 2, inf for N(0, 1));
        default (3, 4, 6, 10, 20, 100).
    n_datasets : int, default 1000
    size : int, default 5000
    statistics : sequence of str, default ("RCE", "ZMS", "RCE2")
        Moment statistics with a numeric (or no) reference; without a
        reference, ``deviation`` is NaN.
    rng, client, chunk_size, progress, path
        As in :func:`validation_probability` (default chunk 200 datasets).

    Returns
    -------
    xarray.Dataset
        On (``nu_ig``, ``nu_d``, ``statistic``): ``mean``, ``sd`` (ddof=1),
        ``mc_se``, ``deviation``; ``reference`` on ``statistic``;
        ``n_datasets`` on (``nu_ig``, ``nu_d``); ``beta_gm`` (mean over
        datasets) on (``nu_ig``, ``nu_d``, ``variable``) with variable =
        ["uE2", "E2", "Z2"]. Per dataset: ``value``, ``beta_gm_per_dataset``,
        ``done``.

    Examples
    --------
    >>> res = statistic_bias([4.0], [6.0], n_datasets=20, size=500, rng=0, progress=False)
    >>> res["mean"].dims
    ('nu_ig', 'nu_d', 'statistic')
    """
    kind = "statistic_bias"
    nu_ig = _grid(_DEFAULT_NU_IG if nu_ig is None else nu_ig, "nu_ig", lower=0.0)
    nu_d = _grid(_DEFAULT_NU_D if nu_d is None else nu_d, "nu_d", lower=2.0, allow_inf=True)
    n_datasets, size, chunk_size = _settings_common(n_datasets, size, chunk_size, kind)
    if isinstance(statistics, str):
        statistics = (statistics,)
    stats = [_moment_statistic(s) for s in statistics]
    for s in stats:
        if callable(s.reference):
            raise ValueError(f"statistics: {s.name!r} has a data-dependent reference; "
                             "statistic_bias supports numeric references only")
    names = [s.name for s in stats]
    refs = np.array([np.nan if s.reference is None else float(s.reference) for s in stats])
    models = [(g / 2.0, g / 2.0, None if np.isinf(d) else float(d)) for g in nu_ig for d in nu_d]
    settings = {"scenario": "TIG", "size": size,
                "statistics": ",".join(names),
                "model": "uE^2 ~ IG(nu_ig/2, nu_ig/2), D = t_s(nu_d) (nu_d = inf: N(0,1))"}
    per_dataset = {"value": ("statistic", names),
                   "beta_gm_per_dataset": ("variable", TAILEDNESS_VARIABLES)}
    study, entropy = _prepare(kind, {"nu_ig": nu_ig, "nu_d": nu_d}, models, per_dataset,
                              settings, n_datasets=n_datasets, rng=rng, path=path)
    opts = {"statistics": tuple(names)}

    def summarise(raw):
        return _finish_attrs(_summarise_bias(raw, refs), study, chunk_size, client)

    _run(study, chunk_size=chunk_size, entropy=entropy, size=size, opts=opts, client=client,
         progress=progress, path=path, summarise=summarise)
    return summarise(study.to_dataset())


def _summarise_bias(ds, refs):
    done = ds["done"]
    n = done.sum("dataset")
    value = ds["value"].where(done)
    ds["mean"] = value.mean("dataset").assign_attrs(long_name="mean of the statistic over datasets")
    ds["sd"] = value.std("dataset", ddof=1).assign_attrs(
        long_name="sd over datasets (dispersion of one dataset's value)")
    with np.errstate(invalid="ignore", divide="ignore"):
        ds["mc_se"] = (ds["sd"] / np.sqrt(n.where(n > 0))).assign_attrs(
            long_name="Monte Carlo standard error of the mean")
    ds["reference"] = ("statistic", refs, {"long_name": "reference value"})
    ds["deviation"] = (ds["mean"] - ds["reference"]).assign_attrs(
        long_name="mean - reference (1 - ZMS = -deviation)")
    ds["n_datasets"] = n.assign_attrs(long_name="datasets done")
    ds["beta_gm"] = ds["beta_gm_per_dataset"].where(done).mean("dataset").assign_attrs(
        long_name="mean robust skewness beta_GM over datasets")
    return ds
