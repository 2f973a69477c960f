"""Option objects: every bootstrap and every binning option checked once, carried as one value.

scipy gathers the checks of its bootstrap in one ``_bootstrap_iv``; uqviz gathers them in two
frozen objects, built by the public functions from their keyword arguments (whose signatures do
not change, docs/conventions.md) and handed to the per-dataset workers instead of a dozen loose
parameters:

- :class:`BootstrapOptions`: ``n_boot``, ``ci``, ``method``, ``rng``, ``engine``, ``client``,
  ``progress`` and ``resample`` (how to resample: ``"points"``; room for whole groups);
- :class:`BinningSpec`: ``conditioning``, ``n_bins``, ``binning``, ``min_count``, ``edges``,
  ``log``, ``random_ties``.

Each has an ``attrs`` property: what a result records of it. :func:`streams` names the random
streams of one dataset instead of indexing the children of a spawn.

Examples
--------
>>> opts = BootstrapOptions.check(n_boot=1000.0, ci=0.9, rng=3)
>>> opts.n_boot, opts.ci, opts.method, opts.attrs["rng"]
(1000, 0.9, 'bca', 3)
>>> opts.replace(n_boot=200).n_boot
200
>>> spec = BinningSpec.check(n_bins=5, binning="stratified")
>>> spec.n_bins, spec.binning, spec.attrs["binning"]
(5, 'stratified', 'stratified')
>>> s = streams(0, "ties", "boot")
>>> int(s.boot.integers(1000)) == int(spawn(0, 2)[1].integers(1000))
True
"""

from __future__ import annotations

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np

from uqviz._array.lazy import lazy_module
from uqviz.engine import checks, seeds
from uqviz.engine.binning import SCHEMES
from uqviz.engine.seeds import spawn
from uqviz.engine.warning_classes import UnreliableWarning

clusters_kernels = lazy_module("uqviz._array.clusters")

__all__ = [
    "BootstrapOptions",
    "BinningSpec",
    "streams",
    "BOOTSTRAP_METHODS",
    "RESAMPLING",
    "GROUP_COORD",
    "BINNING_SCHEMES",
    "data_group_codes",
    "warn_points_independent",
]

BOOTSTRAP_METHODS = ("bca", "percentile", "basic")
#: how a bootstrap resamples: single points, or whole groups (the cluster bootstrap, when the
#: data carry a ``group`` coordinate: Davison & Hinkley (1997), section 3.8)
RESAMPLING = ("points", "groups")
#: the coordinate (on ``point``) that holds each point's group label
GROUP_COORD = "group"
#: the binning schemes of uqviz.engine.binning
BINNING_SCHEMES = SCHEMES


@dataclasses.dataclass(frozen=True)
class BootstrapOptions:
    """The checked options of one bootstrap.

    Parameters
    ----------
    n_boot : int >= 2
        Bootstrap replicates.
    ci : float in (0, 1)
        Confidence level of the intervals.
    method : str
        Interval method, one of ``methods`` (default ``BOOTSTRAP_METHODS``).
    rng : None, int, SeedSequence or Generator
        The caller's random stream, kept as given (``attrs["rng"]`` records it).
    engine : str
        The resampling engine that runs ("numba" or "numpy"; None resolved).
    client : dask.distributed.Client or None
        Where the replicates run (None: in this process).
    progress : bool or None
        Progress bars (None: the environment's default).
    resample : str
        What a replicate draws: ``"points"``, or ``"groups"`` (whole groups: set by
        :meth:`for_data` when the data carry a ``group`` coordinate).
    clusters : ndarray of int or None
        With ``resample="groups"``: the group code of each point of the data
        (:func:`uqviz._array.clusters.group_codes`), in the data's order.

    Examples
    --------
    >>> BootstrapOptions.check(n_boot=1, ci=0.95)
    Traceback (most recent call last):
    ...
    ValueError: n_boot must be >= 2, got 1
    """

    n_boot: int = 10_000
    ci: float = 0.95
    method: str = "bca"
    rng: object = None
    engine: str = "numpy"
    client: object = None
    progress: object = None
    resample: str = "points"
    clusters: object = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def check(
        cls,
        *,
        n_boot=10_000,
        ci=0.95,
        method="bca",
        rng=None,
        engine=None,
        client=None,
        progress=None,
        resample="points",
        methods=BOOTSTRAP_METHODS,
        zero=None,
    ):
        """Check every option once and return the frozen object (``engine`` resolved).

        ``zero``: what ``n_boot=0`` means where it is allowed (e.g. "no interval"); None: 0 is
        refused, ``n_boot`` must be >= 2.
        """
        checks.rng(rng)  # refused here, not in a worker
        if progress is not None:
            checks.boolean("progress", progress)
        return cls(
            n_boot=checks.count("n_boot", n_boot, minimum=2)
            if zero is None
            else checks.count_or_zero("n_boot", n_boot, zero=zero),
            ci=checks.probability("ci", ci),
            method=checks.choice("method", method, tuple(methods)),
            rng=rng,
            engine=checks.engine(engine),
            client=client,
            progress=progress,
            resample=checks.choice("resample", resample, RESAMPLING),
        )

    def replace(self, **changes) -> BootstrapOptions:
        """A copy with ``changes`` (not checked again: pass checked values)."""
        return dataclasses.replace(self, **changes)

    def for_data(self, ds) -> BootstrapOptions:
        """These options for the dataset ``ds``: the cluster bootstrap when it has groups.

        ``ds`` with a ``group`` coordinate (:data:`GROUP_COORD`) gives ``resample="groups"`` and
        the group codes of its points; otherwise the options are returned unchanged.

        Examples
        --------
        >>> import xarray as xr
        >>> ds = xr.Dataset(coords={"group": ("point", ["a", "a", "b"])})
        >>> opts = BootstrapOptions.check(n_boot=100).for_data(ds)
        >>> opts.resample, opts.clusters.tolist(), opts.attrs["n_groups"]
        ('groups', [0, 0, 1], 2)
        """
        codes = data_group_codes(ds)
        if codes is None:
            return self
        return self.replace(resample="groups", clusters=codes)

    @property
    def attrs(self) -> dict:
        """What a result records: n_boot, ci, method, rng, engine, resample (and n_groups)."""
        out = {
            "n_boot": self.n_boot,
            "ci": self.ci,
            "method": self.method,
            "rng": seeds.seed_attr(self.rng),
            "engine": self.engine,
            "resample": self.resample,
        }
        if self.clusters is not None:
            out["n_groups"] = int(np.max(np.asarray(self.clusters), initial=-1)) + 1
        return out


def warn_points_independent(ds, name: str) -> None:
    """Warn that ``name`` treats the points of ``ds`` as independent although they carry groups.

    For the analyses without a cluster version yet: their intervals and nulls then ignore the
    dependence inside the groups, and may be too narrow by the design effect (Cameron & Miller
    (2015)). An :class:`~uqviz.UnreliableWarning`; nothing without a ``group`` coordinate.

    Examples
    --------
    >>> import warnings, xarray as xr
    >>> ds = xr.Dataset(coords={"group": ("point", [1, 1, 2])})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_points_independent(ds, "decimation_curve")
    >>> "treats the 3 points as independent" in str(w[0].message)
    True
    """
    if ds is None or GROUP_COORD not in ds.variables:
        return
    n_groups = int(np.unique(np.asarray(ds[GROUP_COORD].values)).size)
    warnings.warn(
        f"{name}: the data carry groups ({n_groups} groups in the {GROUP_COORD!r} coordinate), "
        f"but {name} treats the {ds.sizes.get('point', 0)} points as independent: its intervals "
        "ignore the dependence inside the groups and may be too narrow (validate_average, "
        "local_calibration and recalibrate resample or fold whole groups)",
        UnreliableWarning,
        stacklevel=3,
    )


def data_group_codes(ds):
    """Group codes of the points of ``ds`` (its ``group`` coordinate), or None without one.

    Examples
    --------
    >>> import xarray as xr
    >>> data_group_codes(xr.Dataset(coords={"group": ("point", [5, 5, 2])})).tolist()
    [0, 0, 1]
    """
    if ds is None or GROUP_COORD not in ds.variables:
        return None
    return clusters_kernels.group_codes(np.asarray(ds[GROUP_COORD].values))[0]


@dataclasses.dataclass(frozen=True)
class BinningSpec:
    """The checked options of a binning.

    Parameters
    ----------
    conditioning : str or array-like
        What the bins are taken along ("uE", a feature name, or values).
    n_bins : int or None
        Number of bins (None: the scheme's default for the sample size).
    binning : str
        One of ``BINNING_SCHEMES``.
    min_count : int or None
        Smallest bin.
    edges : numpy.ndarray or None
        Bin edges, with ``binning="edges"`` only (refused otherwise: never ignored).
    log : bool
        Bin ``log(x)``.
    random_ties : bool
        Break ties of ``x`` at random.

    Examples
    --------
    >>> BinningSpec.check(edges=[0.0, 1.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: edges: bin edges are used only with binning='edges', got binning='equal_count'...
    """

    conditioning: object = "uE"
    n_bins: int | None = None
    binning: str = "equal_count"
    min_count: int | None = None
    edges: np.ndarray | None = None
    log: bool = False
    random_ties: bool = False

    @classmethod
    def check(
        cls,
        *,
        conditioning="uE",
        n_bins=None,
        binning="equal_count",
        min_count=None,
        edges=None,
        log=False,
        random_ties=False,
        schemes=BINNING_SCHEMES,
    ):
        """Check every option once and return the frozen object."""
        binning = checks.choice("binning", binning, tuple(schemes))
        if edges is not None:
            if binning != "edges":
                raise ValueError(
                    f"edges: bin edges are used only with binning='edges', got "
                    f"binning={binning!r}; pass binning='edges' or leave edges "
                    "out"
                )  # the message of compute_bins
            edges = checks.finite_array("edges", edges, ndim=1)
        return cls(
            conditioning=conditioning,
            n_bins=checks.optional_count("n_bins", n_bins),
            binning=binning,
            min_count=checks.optional_count("min_count", min_count),
            edges=edges,
            log=checks.boolean("log", log),
            random_ties=checks.boolean("random_ties", random_ties),
        )

    def replace(self, **changes) -> BinningSpec:
        """A copy with ``changes`` (not checked again: pass checked values)."""
        return dataclasses.replace(self, **changes)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments of :func:`uqviz.engine.binning.compute_bins` it sets."""
        return {
            "n_bins": self.n_bins,
            "binning": self.binning,
            "min_count": self.min_count,
            "edges": self.edges,
            "log": self.log,
        }

    @property
    def attrs(self) -> dict:
        """What a result records: binning, random_ties and n_bins when given."""
        out = {"binning": self.binning, "random_ties": int(self.random_ties)}
        if self.n_bins is not None:
            out["n_bins"] = self.n_bins
        return out


def streams(rng, *names: str) -> SimpleNamespace:
    """The random streams of one unit of work, by name: ``spawn(rng, len(names))`` in order.

    The same children as index arithmetic on one spawn (the same numbers), read by name:
    ``s = streams(rng, "ties", "boot", "null")`` then ``s.boot``. Names are unique
    identifiers.

    Examples
    --------
    >>> s = streams(1, "a", "b")
    >>> sorted(vars(s))
    ['a', 'b']
    >>> streams(1, "a", "a")
    Traceback (most recent call last):
    ...
    ValueError: stream names must be unique identifiers, got ('a', 'a')
    """
    if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        raise ValueError(f"stream names must be unique identifiers, got {names!r}")
    return SimpleNamespace(**dict(zip(names, spawn(rng, len(names)))))
