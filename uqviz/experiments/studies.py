"""Monte Carlo studies of calibration statistics on synthetic calibrated data.

- :func:`validation_probability`: the share of calibrated datasets that a
  bootstrap validation accepts, with a Wilson interval, for the NIG or TIG
  scenario over a grid of ``nu`` (Pernot (2024b), Fig. 5, eq. 21; Pernot (2024a)).
- :func:`statistic_bias`: the mean and dispersion over datasets of RCE, ZMS,
  RCE2 on a TIG grid ``nu_ig x nu_d`` (Pernot (2024b), Figs. 4 and 11).

Execution: the work is cut into chunks of Monte Carlo datasets (dim
``dataset``) of one grid point. Dataset ``i`` of the generative model
``(a, b, nu_D)`` has its own streams, nodes of the spawn tree of the study's root
seed ``entropy`` (one :func:`uqviz.engine.seeds.kernel_seed` of ``rng``, saved):
``seeds.child(entropy, bits(a), bits(b), bits(nu_D), i, s)`` (``s = 0`` data,
``s = 1`` bootstrap, whose kernel seed is one draw of that stream;
``bits`` = :func:`uqviz.engine.seeds.value_index`): results do not depend on the
chunk size, the grid order, or serial versus dask execution (``client``: see
docs/conventions.md, :func:`uqviz.engine.parallel.resolve_client`). With ``path=``,
results are saved to netCDF as chunks complete
(:func:`uqviz.save_study`) and a rerun with the same settings computes only the
missing datasets.

Examples
--------
>>> from uqviz import validation_probability
>>> res = validation_probability(scenario="NIG", nu=[4.0], n_datasets=8, size=200,
...                              n_boot=200, rng=1, progress=False)
>>> res["validation_probability"].dims
('nu', 'statistic')
"""

from __future__ import annotations

import os
import threading
import time
import warnings

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz._array.bca import METHODS, verdict
from uqviz._array.binomial import wilson_interval
from uqviz._array.lazy import lazy_module
from uqviz.data.synthetic import draw_calibrated
from uqviz.engine import checks
from uqviz.engine import seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.parallel import check_client, progress_bar, resolve_client
from uqviz.engine.statistics import (
    excess_over_reference,
    get_statistic,
    point_estimate,
    reference_value,
    statistics_option,
)
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz.experiments.storage import check_destination, load_study, netcdf_attrs, save_study

bootstrap_kernels = lazy_module("uqviz._array.bootstrap")

__all__ = [
    "validation_probability",
    "statistic_bias",
    "save_study",
    "load_study",
    "TAILEDNESS_VARIABLES",
]

#: variables whose robust skewness beta_GM is reported (Pernot (2024b), Table II)
TAILEDNESS_VARIABLES = ("uE2", "E2", "Z2")

#: default grids (Pernot (2024b), sect. IV B-C)
_DEFAULT_NU = {"NIG": (2.0, 3.0, 4.0, 6.0, 8.0, 10.0), "TIG": (2.1, 3.0, 4.0, 6.0, 8.0, 10.0, 20.0)}
_DEFAULT_NU_IG = (2.0, 3.0, 4.0, 6.0, 10.0, 20.0)
_DEFAULT_NU_D = (3.0, 4.0, 6.0, 10.0, 20.0, 100.0)

_DEFAULT_CHUNK = {"validation_probability": 50, "statistic_bias": 200}
_MIN_SIZE = 3  # points per dataset: the fewest a bootstrap interval (and ZVar) is defined on
_SAVE_INTERVAL = 2.0  # seconds between two saves of a running study (and always at the end)
_NUMBA_LOCK = threading.Lock()  # one numba kernel at a time per process


# --------------------------------------------------------------------------
# seeds and data
# --------------------------------------------------------------------------
def _model_key(a, b, nu_d) -> tuple:
    return tuple(seeds.value_index(x) for x in (a, b, np.inf if nu_d is None else nu_d))


#: how the datasets of a study are seeded (recorded in ``attrs["seeding"]``)
SEEDING = (
    "dataset i of model (a, b, nu_D): seeds.child(entropy, bits(a), bits(b), "
    "bits(nu_D), i, 0 data | 1 bootstrap (its kernel_seed))"
)


def _draw(model, idx, entropy, size):
    """Data (e, u), shape (len(idx), size), and one bootstrap seed per dataset."""
    a, b, nu_d = model
    key = _model_key(a, b, nu_d)
    e = np.empty((len(idx), size))
    u = np.empty((len(idx), size))
    boot = np.empty(len(idx), dtype=np.uint64)
    for r, i in enumerate(idx):
        e[r], u[r] = draw_calibrated(
            size, a=a, b=b, nu_d=nu_d, rng=seeds.child(entropy, *key, int(i), 0)
        )
        boot[r] = seeds.kernel_seed(seeds.child(entropy, *key, int(i), 1))
    return e, u, boot


def _beta_gm_per_dataset(e, u):
    """(n, 3) beta_GM of uE^2, E^2, Z^2 (TAILEDNESS_VARIABLES order) of each dataset (row).

    :func:`uqviz._array.stats.beta_gm` is called on one variable of one dataset
    at a time, so that every value is computed the same way (bit for bit)
    whatever the other rows of the chunk: results do not depend on the chunking.
    """
    v = u * u
    e2 = e * e
    x = np.stack([v, e2, e2 / v], axis=1)
    out = np.empty(x.shape[:2])
    with np.errstate(invalid="ignore", divide="ignore"):
        for i, j in np.ndindex(*x.shape[:2]):
            out[i, j] = stats_kernels.beta_gm(x[i, j])
    return out


# --------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------
def _moment_statistics(statistics):
    """Validated ``statistics`` option: registered moment statistics."""
    stats = statistics_option("statistics", statistics)
    for stat in stats:
        if stat.kind != "moments":
            raise ValueError(
                f"statistics: {stat.name!r} is not a moment statistic (function "
                "of column means); Monte Carlo studies support moment statistics "
                "only"
            )
    return stats


def _validation_stats(names):
    """name -> (func, columns) to bootstrap, and the reference each is compared with.

    The bootstrapped statistic is :func:`uqviz.statistics.excess_over_reference`
    (NLL - NLL_ref, reference 0, for a data-dependent reference), as in
    ``validate_average``.
    """
    out, refs = {}, []
    for stat in _moment_statistics(names):
        if not stat.has_reference:
            raise ValueError(
                f"statistics: {stat.name!r} has no predefined reference value, "
                "so it cannot be validated by a zeta-score"
            )
        todo = excess_over_reference(stat)
        out[stat.name] = (todo.func, tuple(todo.columns))
        refs.append(float(todo.reference))
    return out, np.array(refs)


# --------------------------------------------------------------------------
# chunk kernels (top level: picklable for dask)
# --------------------------------------------------------------------------
def _chunk_validation(model, idx, entropy, size, opts):
    """Validate each dataset of one chunk: estimates, zeta-scores, beta_GM."""
    idx = np.asarray(idx, dtype=np.int64)
    e, u, boot_seeds = _draw(model, idx, entropy, size)
    stats, refs = _validation_stats(opts["statistics"])
    n = len(idx)
    starts = np.arange(n, dtype=np.int64) * size
    sizes = np.full(n, size, dtype=np.int64)
    with _NUMBA_LOCK:
        res = bootstrap_kernels.bootstrap_moments(
            e.ravel(),
            u.ravel(),
            stats,
            n_boot=opts["n_boot"],
            seed=boot_seeds,
            ci=opts["ci"],
            method=opts["method"],
            starts=starts,
            sizes=sizes,
            engine=opts["engine"],
        )
    names = list(stats)
    est = np.stack([res[s].estimate for s in names], axis=-1)
    lower = np.stack([res[s].lower for s in names], axis=-1)
    upper = np.stack([res[s].upper for s in names], axis=-1)
    zeta, _ = verdict(est, refs, lower, upper)
    # report the statistic itself (excess + data-dependent reference for NLL)
    for j, name in enumerate(names):
        if get_statistic(name).data_reference:
            est[:, j] = point_estimate(name, e, u)
    return {"estimate": est, "zeta": zeta, "beta_gm_per_dataset": _beta_gm_per_dataset(e, u)}


def _chunk_bias(model, idx, entropy, size, opts):
    """Statistic values and beta_GM of each dataset of one chunk (no bootstrap)."""
    idx = np.asarray(idx, dtype=np.int64)
    e, u, _ = _draw(model, idx, entropy, size)
    names = opts["statistics"]
    values = np.stack([np.asarray(point_estimate(s, e, u), dtype=float) for s in names], axis=-1)
    refs = np.stack([np.broadcast_to(reference_value(s, e, u), len(idx)) for s in names], axis=-1)
    return {
        "estimate_per_dataset": values,
        "excess_per_dataset": values - refs,
        "beta_gm_per_dataset": _beta_gm_per_dataset(e, u),
    }


_CHUNK_FUNCS = {"validation_probability": _chunk_validation, "statistic_bias": _chunk_bias}


# --------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------
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
        self.arrays = {
            name: np.full((n_points, n_datasets, len(labels)), np.nan)
            for name, (_, labels) in per_dataset.items()
        }

    # -- layout ------------------------------------------------------------
    @property
    def shape(self):
        return tuple(len(v) for v in self.grid.values())

    def to_dataset(self):
        dims = tuple(self.grid)
        coords = {d: (d, np.asarray(v, dtype=float)) for d, v in self.grid.items()}
        coords["dataset"] = ("dataset", np.arange(self.n_datasets, dtype=np.int64))
        data_vars = {
            "done": (dims + ("dataset",), self.done.reshape(self.shape + (self.n_datasets,)))
        }
        for name, (extra, labels) in self.per_dataset.items():
            coords[extra] = (extra, list(labels))
            arr = self.arrays[name].reshape(self.shape + (self.n_datasets, len(labels)))
            data_vars[name] = (dims + ("dataset", extra), arr)
        return xr.Dataset(data_vars, coords=coords, attrs=dict(self.settings))

    # -- restore -----------------------------------------------------------
    def restore(self, old):
        """Copy the datasets done in ``old`` (a loaded study) into this study."""
        saved = netcdf_attrs(old.attrs)  # a loaded study holds its sequences as lists
        mismatch = {
            k: (saved.get(k), v)
            for k, v in netcdf_attrs(self.settings).items()
            if k not in ("rng", "sequence_attrs") and saved.get(k) != v
        }
        if mismatch:
            detail = "; ".join(f"{k}: file {a!r} vs now {b!r}" for k, (a, b) in mismatch.items())
            raise ValueError(
                f"path: the saved study was run with other settings ({detail}); "
                "use another path or delete the file"
            )
        if "done" not in old:
            return 0
        n_old = min(old.sizes.get("dataset", 0), self.n_datasets)
        if n_old == 0:
            return 0
        missing = [name for name in self.per_dataset if name not in old]
        if missing:
            raise ValueError(
                f"path: the saved study lacks the variables {missing} (written by "
                "another version of uqviz); use another path or delete the file"
            )
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
    bar = progress_bar(len(tasks), desc=study.kind, progress=progress, unit="chunk")
    try:
        if client is None:
            for p, idx in tasks:
                study.store(p, idx, func(study.models[p], idx, entropy, size, opts))
                bar.update()
                save()
        else:
            from dask.distributed import as_completed

            client = resolve_client(client)  # "local": the one in-process cluster
            futures = {}
            for p, idx in tasks:
                fut = client.submit(func, study.models[p], idx, entropy, size, opts, pure=False)
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


def _prepare(kind, grid, models, per_dataset, settings, *, n_datasets, rng, path):
    old = load_study(path) if path is not None and os.path.exists(path) else None
    if rng is None and old is not None and "entropy" in old.attrs:
        entropy = int(old.attrs["entropy"])  # rng=None continues the saved study
    else:
        entropy = seeds.kernel_seed(rng)  # the study's root seed, drawn once from rng
    settings = {
        "study": kind,
        **settings,
        "entropy": entropy,
        "seeding": SEEDING,
        "rng": seeds.seed_attr(rng),
    }
    study = _Study(kind, grid, models, n_datasets, per_dataset, settings)
    if old is not None:
        study.restore(old)
    return study, entropy


def _settings_common(n_datasets, size, chunk_size, kind, client, path, *, min_datasets=1):
    n_datasets = checks.count("n_datasets", n_datasets, minimum=min_datasets)
    size = checks.count("size", size, minimum=_MIN_SIZE)
    chunk_size = checks.optional_count("chunk_size", chunk_size, minimum=1)
    if chunk_size is None:
        chunk_size = _DEFAULT_CHUNK[kind]
    check_client(client)
    if path is not None:
        check_destination(path)  # before computing
    return n_datasets, size, chunk_size


def _finish_attrs(ds, study, chunk_size, client):
    ds.attrs.update(study.settings)
    ds.attrs["n_datasets"] = study.n_datasets
    ds.attrs["chunk_size"] = chunk_size  # informational: results do not depend on it
    ds.attrs["execution"] = (
        "serial"
        if client is None
        else "dask LocalCluster"
        if isinstance(client, str)
        else "dask client"
    )
    return describe(ds)


# --------------------------------------------------------------------------
# public studies
# --------------------------------------------------------------------------
def validation_probability(
    *,
    scenario="NIG",
    nu=None,
    n_datasets=1000,
    size=5000,
    n_boot=5000,
    statistics=("ZMS", "RCE"),
    ci=0.95,
    method="bca",
    rng=None,
    client=None,
    chunk_size=None,
    progress=None,
    path=None,
    engine=None,
):
    r"""Probability that a bootstrap test validates a calibrated dataset (Pernot (2024b), Fig. 5).

    For each ``nu``, ``n_datasets`` calibrated datasets of ``size`` points are
    drawn from the scenario and each is validated by a bootstrap interval
    (paired over the statistics) and its zeta-score (Pernot (2024b), eq. 14).
    ``validation_probability`` (p_val of the paper) is the share of datasets validated
    (eq. 21), with a Wilson
    interval at the same level ``ci``. Scenarios: ``"NIG"``, ``uE^2 ~ IG(nu/2,
    nu/2)``, ``D = N(0, 1)``;
    ``"TIG"``, ``uE^2 ~ IG(3, 3)``, ``D = t_s(nu)`` (unit-variance Student).

    Parameters
    ----------
    scenario : {"NIG", "TIG"}, default "NIG"
        Generative model of the calibrated sets: "NIG" (inverse-gamma variances, normal errors)
        or "TIG" (inverse-gamma variances, Student-t errors).
    nu : sequence of float, optional
        ``nu_IG`` (NIG, > 0) or ``nu_D`` (TIG, > 2). Default: NIG
        (2, 3, 4, 6, 8, 10), TIG (2.1, 3, 4, 6, 8, 10, 20).
    n_datasets : int, default 1000
        Monte Carlo datasets per ``nu``.
    size : int, default 5000
        Points per dataset (>= 3).
    n_boot : int, default 5000
        Bootstrap replicates per dataset.
    statistics : sequence of str, default ("ZMS", "RCE")
        Moment statistics with a reference (ZMS, RCE, RCE2, ZM, ZVar, NLL).
    ci : float, default 0.95
        Level of the bootstrap intervals and of the Wilson interval of
        ``validation_probability``.
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed: "bca" (bias-corrected and accelerated, DiCiccio
        & Efron (1996)), "percentile" or "basic".
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of the study's entropy (None: fresh, or the one saved in ``path``).
    client : None, "local" or dask.distributed.Client
        Where the chunks run (see the module docstring).
    chunk_size : int, optional
        Datasets per chunk (default 50); results do not depend on it.
    progress : bool, optional
        Progress bar over chunks; default (None): shown in a terminal or Jupyter.
    path : str or os.PathLike, optional
        netCDF file where the study is saved as it runs and restored from.
    engine : {"numba", "numpy"}, optional
        Resampling engine (default numba).

    Returns
    -------
    xarray.Dataset
        On (``nu``, ``statistic``): ``validation_probability``,
        ``validation_probability_lower``, ``validation_probability_upper`` (Wilson),
        ``n_valid``, ``n_undefined`` (intervals that could not be computed, counted as
        not valid), ``reference``; ``n_datasets`` on
        ``nu``; ``beta_gm`` (mean over datasets) on (``nu``, ``variable``).
        Per dataset (dim ``dataset``): ``estimate``, ``zeta``,
        ``beta_gm_per_dataset``, ``done``. Settings in attrs.

    See Also
    --------
    uqviz.validate_average : the test whose success rate is measured.
    uqviz.statistic_bias : the bias of the statistics on the same models.
    uqviz.plots.experiments.validation_probability : draws it against ``nu``.

    Notes
    -----
    Of :math:`N` calibrated datasets with zeta-scores :math:`\zeta_i` (Pernot (2024b), eq. 14),

    .. math::

       p_{val} = \frac{1}{N}\sum_{i=1}^N \mathbf{1}(|\zeta_i| \le 1)

    (Pernot (2024b), eq. 21), with the Wilson interval of a proportion (Wilson (1927)); a
    calibrated test has :math:`p_{val} \approx` ``ci``.

    References
    ----------
    - Pernot (2024b), eq. 21 and Fig. 5: the validation probability.
    - Pernot (2024a), Fig. 3: the validation probability of NIG sets.
    - Wilson (1927): the interval of ``p_val``.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> res = validation_probability(scenario="TIG", nu=[4.0, 10.0], n_datasets=10, size=300,
    ...                              n_boot=300, rng=2, progress=False)
    >>> res["validation_probability"].sel(statistic="ZMS").shape
    (2,)
    """
    kind = "validation_probability"
    checks.choice("scenario", scenario, ("NIG", "TIG"))
    nu = checks.grid(
        "nu", _DEFAULT_NU[scenario] if nu is None else nu, lower=0.0 if scenario == "NIG" else 2.0
    )
    n_datasets, size, chunk_size = _settings_common(
        n_datasets, size, chunk_size, kind, client, path
    )
    n_boot = checks.count("n_boot", n_boot, minimum=2)
    ci = checks.probability("ci", ci)
    method = checks.choice("method", method, METHODS)
    _, refs = _validation_stats(statistics)
    names = [s.name for s in _moment_statistics(statistics)]
    engine = checks.engine(engine)
    checks.rng(rng)
    if scenario == "NIG":
        models = [(v / 2.0, v / 2.0, None) for v in nu]
    else:
        models = [(3.0, 3.0, float(v)) for v in nu]
    settings = {
        "scenario": scenario,
        "size": size,
        "n_boot": n_boot,
        "statistics": list(names),
        "ci": float(ci),
        "method": method,
        "engine": engine,
        "model": (
            "uE^2 ~ IG(nu/2, nu/2), D = N(0,1)"
            if scenario == "NIG"
            else "uE^2 ~ IG(3, 3), D = t_s(nu)"
        ),
    }
    per_dataset = {
        "estimate": ("statistic", names),
        "zeta": ("statistic", names),
        "beta_gm_per_dataset": ("variable", TAILEDNESS_VARIABLES),
    }
    study, entropy = _prepare(
        kind, {"nu": nu}, models, per_dataset, settings, n_datasets=n_datasets, rng=rng, path=path
    )
    opts = {
        "statistics": tuple(names),
        "n_boot": n_boot,
        "ci": float(ci),
        "method": method,
        "engine": engine,
    }

    def summarise(raw):
        return _finish_attrs(_summarise_validation(raw, refs, ci), study, chunk_size, client)

    _run(
        study,
        chunk_size=chunk_size,
        entropy=entropy,
        size=size,
        opts=opts,
        client=client,
        progress=progress,
        path=path,
        summarise=summarise,
    )
    out = summarise(study.to_dataset())
    n_undefined = int(out["n_undefined"].sum())
    if n_undefined:
        warnings.warn(
            f"validation_probability: {n_undefined} of {int(out['n_datasets'].sum())} "
            "x statistic bootstrap intervals could not be computed (degenerate "
            "bootstrap distribution, or n_boot too small); they count as not valid",
            UnreliableWarning,
            stacklevel=2,
        )
    return out


def _summarise_validation(ds, refs, ci):
    done = ds["done"]
    n = done.sum("dataset")
    zeta = ds["zeta"].where(done)
    n_valid = (np.abs(zeta) <= 1.0).sum("dataset")
    n_undefined = (zeta.isnull() & done).sum("dataset")
    lo, hi = wilson_interval(
        n_valid.values, np.broadcast_to(n.values[..., None], n_valid.shape), ci=ci
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        probability = n_valid / n.where(n > 0)
    ds["validation_probability"] = probability.assign_attrs(
        long_name="validation probability, share of |zeta| <= 1 (p_val of Pernot (2024b), eq. 21)"
    )
    ds["validation_probability_lower"] = (
        n_valid.dims,
        lo,
        {"long_name": f"Wilson {ci:g} lower bound"},
    )
    ds["validation_probability_upper"] = (
        n_valid.dims,
        hi,
        {"long_name": f"Wilson {ci:g} upper bound"},
    )
    ds["n_valid"] = n_valid.assign_attrs(long_name="datasets with |zeta| <= 1")
    ds["n_undefined"] = n_undefined.assign_attrs(
        long_name="datasets with undefined zeta (degenerate bootstrap), not valid"
    )
    ds["n_datasets"] = n.assign_attrs(long_name="datasets done")
    ds["beta_gm"] = (
        ds["beta_gm_per_dataset"]
        .where(done)
        .mean("dataset")
        .assign_attrs(long_name="mean robust skewness beta_GM over datasets")
    )
    ds["reference"] = (
        "statistic",
        refs,
        {"long_name": "reference value (0 for the excess over a data-dependent reference)"},
    )
    ds.attrs["binomial_interval"] = "Wilson score (Newcombe 1998 method 3)"
    ds.attrs["citation"] = "Pernot (2024b), eq. 14 (zeta), eq. 21 (validation probability)"
    return ds


def statistic_bias(
    *,
    nu_ig=None,
    nu_d=None,
    n_datasets=1000,
    size=5000,
    statistics=("RCE", "ZMS", "RCE2"),
    rng=None,
    client=None,
    chunk_size=None,
    progress=None,
    path=None,
):
    r"""Mean and dispersion of calibration statistics on a TIG grid (Pernot (2024b), Figs. 4, 11).

    For each ``(nu_ig, nu_d)``, ``n_datasets`` calibrated datasets of ``size``
    points are drawn (``uE^2 ~ IG(nu_ig/2, nu_ig/2)``, ``D = t_s(nu_d)``,
    ``nu_d = inf``: normal) and the statistics computed on each (no bootstrap).
    ``estimate`` is the mean of the statistic over the datasets; ``bias`` the
    mean of ``statistic - reference`` (so ``1 - ZMS = -bias``); ``se = sd /
    sqrt(n)`` its Monte Carlo standard error, read as the "2 sigma" bars of the
    paper's figures (``2 * se``).

    Parameters
    ----------
    nu_ig : sequence of float, optional
        Shape of the uncertainty distribution (> 0); default (2, 3, 4, 6, 10, 20).
    nu_d : sequence of float, optional
        Degrees of freedom of ``D`` (> 2, inf for N(0, 1)); default
        (3, 4, 6, 10, 20, 100).
    n_datasets : int, default 1000
        Monte Carlo datasets per grid point (>= 2: ``sd`` and ``se`` need two).
    size : int, default 5000
        Points per dataset (>= 3).
    statistics : sequence of str, default ("RCE", "ZMS", "RCE2")
        Moment statistics. Without a reference ``bias`` is NaN; with a
        data-dependent one (NLL) ``reference`` is NaN and ``bias``,
        ``sd``, ``se`` are those of ``NLL - NLL_ref``.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    client : None, "local" or dask.distributed.Client, default None
        Where the work runs: None (this process, local threads), "local" (a dask LocalCluster)
        or a dask.distributed.Client; the numbers do not depend on it.
    chunk_size : int, optional
        Datasets per scheduled task (default 200); the numbers do not depend on it.
    progress : bool or None, default None
        tqdm progress bar: None shows it in a terminal or Jupyter unless the environment
        variable ``UQVIZ_PROGRESS=0`` is set, True always shows it, False never.
    path : str or os.PathLike, optional
        netCDF file where the study is saved as it runs and from which an interrupted study
        resumes; default: not saved.

    Returns
    -------
    xarray.Dataset
        On (``nu_ig``, ``nu_d``, ``statistic``): ``estimate`` (mean over
        datasets), ``sd`` (ddof=1), ``se`` (Monte Carlo), ``bias``;
        ``reference`` on ``statistic``; ``n_datasets`` on (``nu_ig``,
        ``nu_d``); ``beta_gm`` (mean over datasets) on (``nu_ig``, ``nu_d``,
        ``variable``). Per dataset (dim ``dataset``): ``estimate_per_dataset``,
        ``excess_per_dataset`` (statistic - reference), ``beta_gm_per_dataset``,
        ``done``. Settings in attrs.

    See Also
    --------
    uqviz.validation_probability : the validation rate on the same models.
    uqviz.plots.experiments.bias_vs_skewness : draws the bias against beta_GM.

    Notes
    -----
    For each grid point, over :math:`n` calibrated datasets
    (:math:`u_E^2 \sim \Gamma^{-1}(\nu_{IG}/2, \nu_{IG}/2)`, :math:`E = u_E \varepsilon`,
    :math:`\varepsilon \sim t_s(\nu_D)`, Pernot (2024b), eq. 20),

    .. math::

       \mathrm{bias} = \frac{1}{n}\sum_{k=1}^n (\vartheta_k - \vartheta_{ref}), \qquad
       \mathrm{se} = \frac{\mathrm{sd}(\vartheta_k)}{\sqrt{n}}.

    References
    ----------
    - Pernot (2024b), eq. 20 and Figs. 4, 11: the bias of RCE, ZMS and RCE2 on TIG models.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> res = statistic_bias(nu_ig=[4.0], nu_d=[6.0], n_datasets=20, size=500, rng=0,
    ...                      progress=False)
    >>> res["estimate"].dims
    ('nu_ig', 'nu_d', 'statistic')
    """
    kind = "statistic_bias"
    nu_ig = checks.grid("nu_ig", _DEFAULT_NU_IG if nu_ig is None else nu_ig, lower=0.0)
    nu_d = checks.grid("nu_d", _DEFAULT_NU_D if nu_d is None else nu_d, lower=2.0, allow_inf=True)
    n_datasets, size, chunk_size = _settings_common(
        n_datasets, size, chunk_size, kind, client, path, min_datasets=2
    )
    checks.rng(rng)
    stats = _moment_statistics(statistics)
    names = [s.name for s in stats]
    # one reference per statistic; NaN when none, or when it depends on the data (NLL)
    refs = np.array(
        [float(s.reference) if s.has_reference and not s.data_reference else np.nan for s in stats]
    )
    models = [(g / 2.0, g / 2.0, None if np.isinf(d) else float(d)) for g in nu_ig for d in nu_d]
    settings = {
        "scenario": "TIG",
        "size": size,
        "statistics": list(names),
        "model": "uE^2 ~ IG(nu_ig/2, nu_ig/2), D = t_s(nu_d) (nu_d = inf: N(0,1))",
    }
    per_dataset = {
        "estimate_per_dataset": ("statistic", names),
        "excess_per_dataset": ("statistic", names),
        "beta_gm_per_dataset": ("variable", TAILEDNESS_VARIABLES),
    }
    study, entropy = _prepare(
        kind,
        {"nu_ig": nu_ig, "nu_d": nu_d},
        models,
        per_dataset,
        settings,
        n_datasets=n_datasets,
        rng=rng,
        path=path,
    )
    opts = {"statistics": tuple(names)}

    def summarise(raw):
        return _finish_attrs(_summarise_bias(raw, refs), study, chunk_size, client)

    _run(
        study,
        chunk_size=chunk_size,
        entropy=entropy,
        size=size,
        opts=opts,
        client=client,
        progress=progress,
        path=path,
        summarise=summarise,
    )
    return summarise(study.to_dataset())


def _summarise_bias(ds, refs):
    done = ds["done"]
    n = done.sum("dataset")
    value = ds["estimate_per_dataset"].where(done)
    excess = ds["excess_per_dataset"].where(done)
    data_ref = xr.DataArray(
        [get_statistic(s).data_reference for s in ds["statistic"].values], dims="statistic"
    )
    ds["estimate"] = value.mean("dataset").assign_attrs(
        long_name="mean of the statistic over datasets"
    )
    # the dispersion of the excess over a data-dependent reference (NLL - NLL_ref)
    ds["sd"] = xr.where(
        data_ref, excess.std("dataset", ddof=1), value.std("dataset", ddof=1)
    ).assign_attrs(
        long_name="sd over datasets of the statistic (of statistic - reference when the "
        "reference depends on the data)"
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        ds["se"] = (ds["sd"] / np.sqrt(n.where(n > 0))).assign_attrs(
            long_name="Monte Carlo standard error of estimate (and of bias)"
        )
    ds["reference"] = (
        "statistic",
        refs,
        {"long_name": "reference value (NaN: none, or data-dependent)"},
    )
    ds["bias"] = xr.where(
        data_ref, excess.mean("dataset"), ds["estimate"] - ds["reference"]
    ).assign_attrs(long_name="mean of statistic - reference (1 - ZMS = -bias)")
    ds["n_datasets"] = n.assign_attrs(long_name="datasets done")
    ds["beta_gm"] = (
        ds["beta_gm_per_dataset"]
        .where(done)
        .mean("dataset")
        .assign_attrs(long_name="mean robust skewness beta_GM over datasets")
    )
    return ds
