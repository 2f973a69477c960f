"""Registry of calibration statistics: name -> kernel, reference value, kind.

Kinds: ``"moments"`` ``f(means, n)`` of column means (:mod:`uqviz._array.stats`),
``"binned"`` ``f(bin_means)`` on equal-count bins of uE (default 20, Pernot
(2024c)), ``"generic"`` ``f(e, u)``. The reference is a number, a statistic of
the same data (NLL -> NLL_ref) or None (simulated reference needed).

Not every analysis takes every kind; which analysis takes a registered statistic of
which kind is the table "A statistic" of docs/architecture.md: for example
``validate_average`` takes moment and generic statistics, ``local_calibration`` moment
statistics with a numeric reference, ``binned_errors`` binned ones.

Examples
--------
>>> from uqviz import get_statistic
>>> get_statistic("ZMS").reference
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from uqviz._array import stats as stats_kernels
from uqviz._array.lazy import lazy_module
from uqviz.engine import checks

binned_kernels = lazy_module("uqviz._array.binned")
rank_kernels = lazy_module("uqviz._array.rank")
special = lazy_module("scipy.special")

__all__ = [
    "Statistic",
    "get_statistic",
    "list_statistics",
    "register_statistic",
    "unregister_statistic",
    "reference_value",
    "point_estimate",
    "excess_over_reference",
    "DEFAULT_N_BINS",
]


@dataclass(frozen=True)
class Statistic:
    """A calibration statistic known to uqviz.

    Register a new one with :func:`~uqviz.statistics.register_statistic`; then the
    analyses that take statistics of its kind accept its name (docs/architecture.md,
    "A statistic"), until :func:`~uqviz.statistics.unregister_statistic` removes it.

    Parameters
    ----------
    name, description : str
    func : callable
        ``f(means, n)``, ``f(bin_means)`` or ``f(e, u)`` according to ``kind``.
    kind : {"moments", "binned", "generic"}
    columns : tuple of str
        Column means used by a moment statistic.
    reference : float, Statistic or None
    counts, given_u : optional
        Generic only: evaluation on draw counts, and ``given_u(u) -> f(e, scale=None)``
        (the statistic of ``e * scale`` and u).

    Examples
    --------
    >>> from uqviz.statistics import get_statistic
    >>> zms = get_statistic("ZMS")
    >>> zms.kind, zms.columns, zms.reference
    ('moments', ('Z2',), 1.0)
    """

    name: str
    func: Callable
    kind: str
    columns: tuple = ()
    reference: float | Statistic | None = None
    description: str = ""
    counts: tuple | None = None  # generic: (prepare(e, u), func(counts, prepared))
    given_u: Callable | None = None  # generic: given_u(u) -> f(e, scale), for fixed uE

    @property
    def has_reference(self) -> bool:
        """True when the statistic has a predefined (non-simulated) reference."""
        return self.reference is not None

    @property
    def data_reference(self) -> bool:
        """True when the reference is a statistic of the same data (NLL -> NLL_ref)."""
        return isinstance(self.reference, Statistic)


_REGISTRY: dict[str, Statistic] = {}
KINDS = ("moments", "binned", "generic")
DEFAULT_N_BINS = 20  # binned statistics: equal-count bins of uE, Pernot (2024c)


def register_statistic(statistic: Statistic, *, overwrite: bool = False) -> Statistic:
    """Add a statistic to the registry.

    Parameters
    ----------
    statistic : Statistic
    overwrite : bool, default False
        Replace a statistic of the same name.

    Returns
    -------
    Statistic

    Examples
    --------
    >>> from uqviz.statistics import Statistic, register_statistic, point_estimate
    >>> mae_z = Statistic("MAZ", lambda e, u: np.mean(np.abs(e / u), axis=-1), "generic")
    >>> _ = register_statistic(mae_z, overwrite=True)
    >>> float(point_estimate("MAZ", np.array([1.0, -3.0]), np.array([1.0, 1.0])))
    2.0
    >>> _ = unregister_statistic("MAZ")
    """
    if not isinstance(statistic, Statistic):
        raise TypeError(
            f"statistic must be a uqviz.statistics.Statistic (name, kernel, kind), "
            f"got {statistic!r} ({type(statistic).__name__})"
        )
    if statistic.kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {statistic.kind!r}")
    if statistic.name in _REGISTRY and not overwrite:
        raise ValueError(f"statistic {statistic.name!r} is already registered")
    _REGISTRY[statistic.name] = statistic
    return statistic


def unregister_statistic(name: str) -> Statistic:
    """Remove a statistic registered by :func:`~uqviz.statistics.register_statistic`.

    The statistics uqviz defines (``BUILTIN_STATISTICS``) stay: the analyses rely on them.

    Parameters
    ----------
    name : str

    Returns
    -------
    Statistic
        The statistic removed (give it to :func:`~uqviz.statistics.register_statistic` to
        put it back).

    Examples
    --------
    >>> from uqviz.statistics import (Statistic, list_statistics, register_statistic,
    ...                               unregister_statistic)
    >>> _ = register_statistic(Statistic("MAZ2", lambda e, u: np.mean(np.abs(e / u), axis=-1),
    ...                                  "generic"))
    >>> unregister_statistic("MAZ2").name, "MAZ2" in list_statistics()
    ('MAZ2', False)
    """
    if not isinstance(name, str):
        raise TypeError(
            f"name must be the name of a registered statistic, got {name!r} ({type(name).__name__})"
        )
    if name in BUILTIN_STATISTICS:
        raise ValueError(
            f"statistic {name!r} is built into uqviz and cannot be unregistered "
            "(register_statistic(..., overwrite=True) replaces it)"
        )
    if name not in _REGISTRY:
        users = [s for s in _REGISTRY if s not in BUILTIN_STATISTICS]
        raise ValueError(
            f"statistic {name!r} is not registered; registered by the user: "
            f"{', '.join(users) or 'none'}"
        )
    return _REGISTRY.pop(name)


def get_statistic(name: str | Statistic) -> Statistic:
    """Look a statistic up by name (a Statistic is returned as is).

    Parameters
    ----------
    name : str or Statistic

    Returns
    -------
    Statistic

    Examples
    --------
    >>> get_statistic("RCE").reference
    0.0
    """
    if isinstance(name, Statistic):
        return name
    if not isinstance(name, str):
        raise TypeError(
            f"statistic must be the name of a registered statistic (a str) or a "
            f"Statistic, got {name!r} ({type(name).__name__})"
        )
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown statistic {name!r}; known: {', '.join(list_statistics())}"
        ) from None


def list_statistics() -> list[str]:
    """Names of the registered statistics.

    Returns
    -------
    list of str

    Examples
    --------
    >>> "ZMS" in list_statistics()
    True
    """
    return list(_REGISTRY)


def statistics_option(argument: str, value) -> list[Statistic]:
    """The Statistic objects named by option ``argument``; errors name that option."""
    out = []
    for v in checks.names(argument, value):
        if not isinstance(v, (str, Statistic)):
            raise TypeError(f"{argument}: {v!r} is not a statistic name ({type(v).__name__})")
        try:
            out.append(get_statistic(v))
        except ValueError as exc:
            raise ValueError(f"{argument}: {exc}") from None
    return out


for _name, _func, _cols, _ref, _desc in [
    ("ZM", stats_kernels.zm, ("Z",), 0.0, "mean of z-scores <Z>"),
    ("ZMS", stats_kernels.zms, ("Z2",), 1.0, "mean of squared z-scores <Z^2>"),
    ("ZVar", stats_kernels.zvar, ("Z", "Z2"), 1.0, "variance of z-scores (ddof=1)"),
    ("MSE", stats_kernels.mse, ("E2",), None, "mean squared error <E^2>"),
    ("MV", stats_kernels.mv, ("V",), None, "mean variance <uE^2>"),
    ("RMSE", stats_kernels.rmse, ("E2",), None, "root mean squared error"),
    ("RMV", stats_kernels.rmv, ("V",), None, "root mean variance"),
    ("RCE", stats_kernels.rce, ("E2", "V"), 0.0, "relative calibration error (RMV-RMSE)/RMV"),
    ("RCE2", stats_kernels.rce2, ("E2", "V"), 0.0, "relative calibration error (MV-MSE)/MV"),
    (
        "ZISD",
        stats_kernels.zisd,
        ("Z", "Z2"),
        1.0,
        "inverse standard deviation of z-scores 1/SD(Z) (ddof=1)",
    ),
    ("NLL_ref", stats_kernels.nll_ref, ("lnV",), None, "NLL of a calibrated set with these uE"),
]:
    register_statistic(Statistic(_name, _func, "moments", _cols, _ref, _desc))
# NLL's reference is a statistic of the same data (Pernot (2024c), eq. 16)
register_statistic(
    Statistic(
        "NLL",
        stats_kernels.nll,
        "moments",
        ("Z2", "lnV"),
        _REGISTRY["NLL_ref"],
        "Gaussian negative log-likelihood",
    )
)


# The rank and binned kernels are numba-compiled: the registry holds these forwarders, so that the
# kernel modules (and numba) load at the first evaluation, not with `import uqviz` (issue 25).
def _cc_prepare(e, u):
    return rank_kernels.cc_prepare(e, u)


def _cc_from_counts(counts, prepared):
    return rank_kernels.cc_from_counts(counts, prepared)


def _cc_given_u(u):
    return rank_kernels.cc_given_u(u)


def _ence_from_means(m):
    return binned_kernels.ence_from_means(m)


def _uce_from_means(m):
    return binned_kernels.uce_from_means(m)


def _zmse_from_means(m):
    return binned_kernels.zmse_from_means(m)


#: The binned calibration errors, the keys of :data:`uqviz._array.binned.BINNED` (and of its
#: ``FROM_MEANS``), in that order
BINNED_STATISTICS = ("ENCE", "UCE", "ZMSE")

register_statistic(
    Statistic(
        "CC",
        stats_kernels.spearman_cc,
        "generic",
        (),
        None,
        "Spearman rank correlation of |E| and uE",
        counts=(_cc_prepare, _cc_from_counts),
        given_u=_cc_given_u,
    )
)
_BINNED: list[tuple[str, Callable, tuple[str, ...], str]] = [
    ("ENCE", _ence_from_means, ("E2", "V"), "mean over bins of |RMV_b - RMSE_b|/RMV_b"),
    ("UCE", _uce_from_means, ("E2", "V"), "mean over bins of |MV_b - MSE_b|"),
    ("ZMSE", _zmse_from_means, ("Z2",), "mean over bins of |ln ZMS_b|"),
]
for _name, _func, _cols, _desc in _BINNED:
    register_statistic(
        Statistic(_name, _func, "binned", _cols, None, _desc + " (equal-count bins of uE)")
    )


#: RR: central interval of the range ratio and its normal quantile (ErrViewLib plotLRR: 95 %)
RR_LEVEL = 0.95
#: Phi^-1((1 + 0.95)/2), the value of ``float(np.sqrt(2.0) * scipy.special.erfinv(RR_LEVEL))``
#: written out so that importing this module does not import scipy.special
#: (tests/engine/test_statistics_registry.py checks it against scipy)
RR_QUANTILE = 1.9599639845400538


def range_ratio(e, u):
    """RR: 2 q RMV over the Harrell-Davis 95 % range of E (:data:`RR_LEVEL`, normal D)."""
    return stats_kernels.range_ratio(e, u, RR_LEVEL, RR_QUANTILE)


# RR's reference 1 is exact for a constant uE and a normal D; otherwise fraction_valid's
# simulated null coverage (calibrated copies with the data's uE and D) absorbs the bias
register_statistic(
    Statistic(
        "RR",
        range_ratio,
        "generic",
        (),
        1.0,
        "range ratio 2 q95 RMV / (Q_HD(E, 0.975) - Q_HD(E, 0.025))",
    )
)

#: the statistics defined by uqviz (not removable by :func:`unregister_statistic`)
BUILTIN_STATISTICS = tuple(_REGISTRY)


def sort_by_uncertainty(e, u):
    """Errors and uncertainties sorted (stably) by uE along the last axis."""
    order = np.argsort(u, axis=-1, kind="stable")
    return np.take_along_axis(e, order, axis=-1), np.take_along_axis(u, order, axis=-1)


def binned_estimate(stat, e, u, n_bins=DEFAULT_N_BINS):
    """Binned statistic on equal-count bins of uE (last axis = points)."""
    e, u = sort_by_uncertainty(np.asarray(e, float), np.asarray(u, float))
    bounds = binned_kernels.equal_count_bounds(e.shape[-1], n_bins)
    means = binned_kernels.binned_column_means(e, u, bounds[:-1], np.diff(bounds), stat.columns)
    return stats_kernels.evaluate(stat.name, stat.func, means)


def point_estimate(statistic, e, u, *, n_bins=None) -> np.ndarray:
    r"""Value of a statistic on errors ``e`` and uncertainties ``u`` (last axis = points).

    Parameters
    ----------
    statistic : str or Statistic
        A registered statistic (``uqviz.list_statistics()``), by name or as the object.
    e : array_like, shape (..., M)
        Errors E; the leading axes are computed independently.
    u : array_like, shape (..., M)
        Standard uncertainties uE, paired with ``e``.
    n_bins : int or None, default None
        Number of equal-count bins of uE of the binned statistics (ENCE, UCE, ZMSE); None: 20,
        the default of the binned statistics (docs/conventions.md, "Defaults"); ignored by the
        others.

    Returns
    -------
    ndarray, shape (...)

    See Also
    --------
    uqviz.statistics.reference_value : the reference each statistic is validated against.
    uqviz.validate_average : bootstrap validation of the moment statistics.
    uqviz.binned_errors : ENCE, UCE and ZMSE on bins of any conditioning variable.

    Notes
    -----
    With :math:`Z_i = E_i / u_{E_i}` and :math:`\langle \cdot \rangle` the mean over the
    :math:`M` points, the registered statistics are

    .. math::

       \mathrm{ZM} = \langle Z \rangle, \quad \mathrm{ZMS} = \langle Z^2 \rangle, \quad
       \mathrm{ZVar} = \frac{M}{M - 1}\left(\langle Z^2 \rangle - \langle Z \rangle^2\right),
       \quad \mathrm{ZISD} = \mathrm{ZVar}^{-1/2},

       \mathrm{RR} = \frac{2\, q_{0.975} \sqrt{\langle u_E^2 \rangle}}
       {Q^{HD}(E, 0.975) - Q^{HD}(E, 0.025)},

       \mathrm{MSE} = \langle E^2 \rangle, \quad \mathrm{MV} = \langle u_E^2 \rangle, \quad
       \mathrm{RMSE} = \sqrt{\mathrm{MSE}}, \quad \mathrm{RMV} = \sqrt{\mathrm{MV}},

       \mathrm{RCE} = \frac{\mathrm{RMV} - \mathrm{RMSE}}{\mathrm{RMV}}, \quad
       \mathrm{RCE2} = \frac{\mathrm{MV} - \mathrm{MSE}}{\mathrm{MV}}, \quad
       \mathrm{NLL} = \frac{1}{2}\left(\langle Z^2 \rangle + \langle \ln u_E^2 \rangle
       + \ln 2\pi\right),

       \mathrm{CC} = \rho_S(|E|, u_E), \quad
       \mathrm{ENCE} = \frac{1}{N}\sum_{b=1}^N \frac{|\mathrm{RMV}_b - \mathrm{RMSE}_b|}
       {\mathrm{RMV}_b}, \quad
       \mathrm{UCE} = \frac{1}{N}\sum_{b=1}^N |\mathrm{MV}_b - \mathrm{MSE}_b|, \quad
       \mathrm{ZMSE} = \frac{1}{N}\sum_{b=1}^N |\ln \mathrm{ZMS}_b|,

    with :math:`\rho_S` the Spearman rank correlation and :math:`b` the :math:`N` equal-count
    bins of :math:`u_E`, :math:`q_{0.975} = \Phi^{-1}(0.975)` and :math:`Q^{HD}` the
    Harrell-Davis quantiles (ZISD, RR: ErrViewLib's LZISD and LRR, Pernot (2022, JCP);
    RCE: Pernot (2024b), eq. 7; ZMS: eq. 11; NLL: eq. 12; CC: Pernot
    (2024c), eq. 18; ENCE: Levi et al. (2022), Pernot (2023), eq. 8; ZMSE: Pernot (2024c),
    eq. 17). ``NLL_ref`` is :math:`\frac12 (1 + \langle \ln u_E^2 \rangle + \ln 2\pi)`
    (Pernot (2024c), eq. 16).

    References
    ----------
    - Pernot (2024b), eqs. 7, 11 and 12: RCE, ZMS and NLL.
    - Pernot (2024c), eqs. 16-18: the NLL reference, ZMSE and CC.
    - Pernot (2023), eq. 8: ENCE.
    - Levi et al. (2022): ENCE.
    - Pernot (2022, JCP): ZVar and its local form; ErrViewLib: ZISD and RR.
    - Harrell & Davis (1982): the quantiles of RR.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> float(point_estimate("ZMS", np.array([1.0, -2.0]), np.array([1.0, 2.0])))
    1.0
    """
    stat = get_statistic(statistic)
    if stat.kind == "generic":
        return np.asarray(stat.func(np.asarray(e, float), np.asarray(u, float)))
    if stat.kind == "binned":
        n_bins = DEFAULT_N_BINS if n_bins is None else checks.count("n_bins", n_bins)
        return np.asarray(binned_estimate(stat, e, u, n_bins))
    n = np.shape(e)[-1]
    means = stats_kernels.column_means(e, u, stat.columns)
    return stats_kernels.evaluate(stat.name, stat.func, means, n)


def reference_value(statistic, e, u):
    r"""Reference value of a statistic for data (e, u); NaN when it has none.

    Parameters
    ----------
    statistic : str or Statistic
        A registered statistic (``uqviz.list_statistics()``), by name or as the object.
    e : array_like
        Errors E (last axis = points); used by data-dependent references (NLL) only.
    u : array_like
        Standard uncertainties uE, paired with ``e``; used by data-dependent references only.

    Returns
    -------
    float or numpy.ndarray

    See Also
    --------
    uqviz.statistics.point_estimate : the value of the statistic.
    uqviz.statistics.excess_over_reference : the statistic bootstrapped against a data-dependent
        reference.
    uqviz.simulated_reference : a simulated reference, for statistics without one here.

    Notes
    -----
    The value of a calibrated set: ZM and RCE, RCE2 0; ZMS, ZVar, ZISD and RR 1 (RR: exact for a
    normal D and constant uE) (:math:`Z \sim D(0, 1)`,
    Pernot (2024b), eqs. 10-11); for NLL, the data-dependent

    .. math::

       \mathrm{NLL}_{ref} = \frac{1}{2}\left(1 + \langle \ln u_E^2 \rangle + \ln 2\pi\right)

    (Pernot (2024c), eq. 16). CC, ENCE, UCE and ZMSE have no predefined reference (NaN): it
    depends on the data (Pernot (2024c)).

    References
    ----------
    - Pernot (2024b), eqs. 7 and 10-11: the references of RCE and ZMS.
    - Pernot (2024c), eq. 16: the NLL reference; section II.D: statistics without a reference.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> round(reference_value("NLL", np.ones(3), np.ones(3)), 6)
    1.418939
    """
    stat = get_statistic(statistic)
    if stat.reference is None:
        return np.nan
    if stat.data_reference:
        ref = np.asarray(point_estimate(stat.reference, e, u), dtype=float)
        return float(ref) if ref.ndim == 0 else ref
    return float(stat.reference)


def excess_over_reference(statistic) -> Statistic:
    r"""The statistic to bootstrap to validate ``statistic`` against its reference.

    Itself, or, for a data-dependent reference (NLL), the paired excess
    ``"<name>-reference"`` (reference 0; for NLL, ``(ZMS - 1)/2``).

    Parameters
    ----------
    statistic : str or Statistic
        A registered statistic (``uqviz.list_statistics()``), by name or as the object.

    Returns
    -------
    Statistic

    See Also
    --------
    uqviz.statistics.reference_value : the reference of a statistic.
    uqviz.validate_average : bootstraps this statistic.

    Notes
    -----
    For NLL, the excess over its reference is, point by point paired,

    .. math::

       \mathrm{NLL} - \mathrm{NLL}_{ref} = \frac{\langle Z^2 \rangle - 1}{2}
       = \frac{\mathrm{ZMS} - 1}{2},

    with reference 0 (Pernot (2024c), eqs. 15-16): validating NLL is validating ZMS.

    References
    ----------
    - Pernot (2024c), eqs. 15-16: NLL and its reference.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> excess_over_reference("NLL").name
    'NLL-reference'
    """
    stat = get_statistic(statistic)
    if not stat.data_reference:
        return stat
    ref = stat.reference
    if not isinstance(ref, Statistic) or stat.kind != "moments" or ref.kind != "moments":
        raise ValueError(
            f"statistic {stat.name!r}: a data-dependent reference is supported for "
            "moment statistics only"
        )

    def func(m, n, _s=stat, _r=ref):
        return _s.func(m, n) - _r.func(m, n)

    cols = tuple(dict.fromkeys(stat.columns + ref.columns))
    return Statistic(
        f"{stat.name}-reference",
        func,
        "moments",
        cols,
        0.0,
        f"{stat.name} minus its reference {ref.name}",
    )
