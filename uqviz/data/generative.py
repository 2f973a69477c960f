"""Unit-variance generative distributions D of E = uE * D(0, 1), for simulated references.

A ``generative`` option takes one D or a sequence (:func:`as_generatives`),
which gives a ``generative`` dimension.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from uqviz.engine import checks

__all__ = [
    "Generative",
    "normal",
    "student_t",
    "uniform",
    "laplace",
    "empirical",
    "get_generative",
    "as_generatives",
]


@dataclass(frozen=True)
class Generative:
    """A zero-mean, unit-variance generative distribution D.

    Built by the constructors of ``uqviz.generative`` (:func:`~uqviz.generative.normal`,
    :func:`~uqviz.generative.student_t`, ...) or by name with
    :func:`~uqviz.generative.get_generative`; pass it (or its name) as ``generative=``.

    Parameters
    ----------
    name : str
        Label used in results, e.g. ``"t6"``.
    kind : str
        ``"normal"``, ``"student_t"``, ``"uniform"``, ``"laplace"`` or ``"empirical"``.
    params : dict
        Shape parameters, e.g. ``{"nu": 6.0}``.

    Examples
    --------
    >>> from uqviz.generative import get_generative
    >>> g = get_generative("t6")
    >>> g.name, g.kind, g.params
    ('t6', 'student_t', {'nu': 6.0})
    """

    name: str
    kind: str
    params: dict = field(default_factory=dict)
    _values: np.ndarray | None = field(default=None, repr=False, compare=False)

    def sample(self, rng, size):
        """Draw ``size`` values (int or shape) with ``rng`` (a Generator)."""
        if self.kind == "empirical" and self._values is None:
            raise ValueError(
                "generative='empirical' needs the dataset: use "
                "get_generative('empirical', data) or .for_data(data)"
            )
        if self.kind == "normal":
            return rng.standard_normal(size)
        if self.kind == "student_t":
            nu = self.params["nu"]
            return rng.standard_t(nu, size) * np.sqrt((nu - 2.0) / nu)
        if self.kind == "uniform":
            return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size)
        if self.kind == "laplace":
            return rng.laplace(0.0, 1.0 / np.sqrt(2.0), size)
        if self.kind == "empirical":
            return rng.choice(self._values, size=size, replace=True)
        raise ValueError(f"unknown generative kind {self.kind!r}")  # pragma: no cover

    def ppf(self, p):
        """Quantile function q_D(p) of this unit-variance D (inverse CDF), elementwise.

        ``p`` in [0, 1]; the bounds give the support's ends (``+-inf`` for the normal,
        Student-t and Laplace D). "empirical" uses linear interpolation of its sorted values.

        Examples
        --------
        >>> from uqviz.generative import get_generative
        >>> round(float(get_generative("normal").ppf(0.975)), 6)
        1.959964
        >>> round(float(get_generative("t6").ppf(0.975)), 6)
        1.997895
        """
        from scipy import special

        p = np.asarray(p, dtype=float)
        if np.any(~((p >= 0.0) & (p <= 1.0))):
            raise ValueError("ppf: probabilities must be in [0, 1]")
        if self.kind == "normal":
            return special.ndtri(p)
        if self.kind == "student_t":
            nu = self.params["nu"]
            # scipy's stdtrit(nu, 0) is +inf (scipy 1.17): the lower end is -inf
            return np.where(p > 0.0, special.stdtrit(nu, p), -np.inf) * np.sqrt((nu - 2.0) / nu)
        if self.kind == "uniform":
            return np.sqrt(3.0) * (2.0 * p - 1.0)
        if self.kind == "laplace":
            d = p - 0.5
            with np.errstate(divide="ignore"):
                return -np.sign(d) * np.log1p(-2.0 * np.abs(d)) / np.sqrt(2.0)
        if self.kind == "empirical":
            if self._values is None:
                raise ValueError(
                    "generative='empirical' needs the dataset: use "
                    "get_generative('empirical', data) or .for_data(data)"
                )
            return np.quantile(self._values, p)
        raise ValueError(f"unknown generative kind {self.kind!r}")  # pragma: no cover

    def for_data(self, data) -> Generative:
        """The D for a dataset: "empirical" takes the dataset's z-scores, others are unchanged."""
        if self.kind == "empirical" and self._values is None:
            return empirical(data)
        return self

    @property
    def attrs(self) -> dict:
        """Description for result attrs."""
        return {"generative": self.name, **{f"generative_{k}": v for k, v in self.params.items()}}


def normal() -> Generative:
    """Standard normal N(0, 1).

    Returns
    -------
    Generative

    Examples
    --------
    >>> from uqviz.generative import normal
    >>> normal().name
    'normal'
    """
    return Generative("normal", "normal")


def student_t(nu: float) -> Generative:
    """Unit-variance Student t_s(nu) = t(nu) sqrt((nu-2)/nu) (Pernot (2024b), eq. 20).

    Parameters
    ----------
    nu : float
        Degrees of freedom, > 2.

    Returns
    -------
    Generative

    Examples
    --------
    >>> from uqviz.generative import student_t
    >>> student_t(6).name
    't6'
    """
    nu = checks.positive("nu", nu)
    if not nu > 2.0:
        raise ValueError(f"student_t needs nu > 2 for a finite unit variance, got {nu}")
    label = f"t{nu:g}"
    return Generative(label, "student_t", {"nu": nu})


def uniform() -> Generative:
    """Uniform on [-sqrt(3), sqrt(3)].

    Returns
    -------
    Generative

    Examples
    --------
    >>> from uqviz.generative import uniform
    >>> uniform().kind
    'uniform'
    """
    return Generative("uniform", "uniform")


def laplace() -> Generative:
    """Laplace with scale 1/sqrt(2).

    Returns
    -------
    Generative

    Examples
    --------
    >>> from uqviz.generative import laplace
    >>> laplace().kind
    'laplace'
    """
    return Generative("laplace", "laplace")


def empirical(data) -> Generative:
    """The dataset's own z-scores, standardised (ddof=0), drawn with replacement.

    Parameters
    ----------
    data : xarray.Dataset or array_like
        A dataset with ``E`` and ``uE``, or z-scores.

    Returns
    -------
    Generative

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.generative import empirical
    >>> round(float(empirical(np.array([-2.0, 0.0, 1.0, 3.0]))._values.std()), 12)
    1.0
    """
    z = (
        np.asarray(data["E"].values / data["uE"].values, dtype=float)
        if hasattr(data, "data_vars")
        else np.asarray(data, dtype=float).ravel()
    )
    if z.size < 2 or not np.all(np.isfinite(z)):
        raise ValueError("empirical: need at least 2 finite z-scores")
    sd = z.std()
    if sd == 0:
        cause = (
            "every error E is 0"
            if hasattr(data, "data_vars") and not np.any(np.asarray(data["E"].values))
            else f"every one is {z[0]:g}"
        )
        raise ValueError(
            f"E, uE: the z-scores E/uE of the {z.size} points are constant "
            f"({cause}): they have no shape for the empirical D "
            "(generative='empirical', the default of a calibrated null) to take; "
            "pass generative='normal' (or another D)"
        )
    return Generative("empirical", "empirical", {}, (z - z.mean()) / sd)


_T_PATTERN = re.compile(r"^t(\d+(\.\d+)?)$")


def get_generative(spec, data=None) -> Generative:
    """A :class:`Generative` from itself or a string.

    Parameters
    ----------
    spec : str or Generative
        "normal", "uniform", "laplace", "empirical" or "t<nu>", e.g. "t6".
    data : xarray.Dataset, optional
        The dataset of "empirical" (else bound later by :meth:`Generative.for_data`).

    Returns
    -------
    Generative

    Examples
    --------
    >>> from uqviz.generative import get_generative
    >>> get_generative("t6").params
    {'nu': 6.0}
    """
    if isinstance(spec, Generative):
        return spec if data is None else spec.for_data(data)
    if not isinstance(spec, str):
        raise TypeError(f"generative must be a Generative or a string, got {type(spec).__name__}")
    key = spec.strip().lower()
    if key in ("normal", "uniform", "laplace"):
        return {"normal": normal, "uniform": uniform, "laplace": laplace}[key]()
    if key == "empirical":
        return Generative("empirical", "empirical") if data is None else empirical(data)
    match = _T_PATTERN.match(key)
    if match:
        return student_t(float(match.group(1)))
    raise ValueError(
        f"unknown generative distribution {spec!r}: use 'normal', 't<nu>' "
        "(e.g. 't6'), 'uniform', 'laplace' or 'empirical'"
    )


def as_generatives(spec, *, data=None) -> tuple[Generative, ...]:
    """One D or a sequence of them as a tuple of :class:`Generative` with distinct names.

    Parameters
    ----------
    spec : str, Generative or sequence of them
    data : xarray.Dataset, optional
        Needed by ``"empirical"`` (the z-scores of the data).

    Returns
    -------
    tuple of Generative

    Examples
    --------
    >>> from uqviz.generative import as_generatives
    >>> [g.name for g in as_generatives(["normal", "t6"])]
    ['normal', 't6']
    """
    if isinstance(spec, (str, Generative)):
        specs = (spec,)
    else:
        try:
            specs = tuple(spec)
        except TypeError:
            raise TypeError(
                f"generative must be a name, a Generative or a sequence of them, "
                f"got {type(spec).__name__}"
            ) from None
    if not specs:
        raise ValueError("generative must name at least one distribution, got an empty sequence")
    gens = tuple(get_generative(s, data) for s in specs)
    names = [g.name for g in gens]
    if len(set(names)) != len(names):
        raise ValueError(f"generative must be distinct, got {names}")
    return gens
