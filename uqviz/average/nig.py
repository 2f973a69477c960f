"""NIG-model references of the tailedness figures (Pernot (2024b), Figs. 2, 3 and 6)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz.data.synthetic import draw_calibrated
from uqviz.engine import checks, seeds

__all__ = ["nig_skewness_curve", "nig_implied_shape", "DEFAULT_NU"]

#: default grid of the NIG curve, 2 <= nu <= 20 (Pernot (2024b), Fig. 6)
DEFAULT_NU = (2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0)

_VARIABLES = ("uE2", "E2", "Z2")


def nig_skewness_curve(*, nu=None, size=1_000_000, rng=None):
    r"""beta_GM and kappa_CS of uE^2, E^2, Z^2 of NIG samples over ``nu`` (Pernot (2024b), Fig. 6).

    Parameters
    ----------
    nu : sequence of float, optional
        Degrees of freedom (> 0, distinct); default 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 15, 20
        (``uqviz.average.nig.DEFAULT_NU``).
    size : int, default 1_000_000
        Points drawn per value of ``nu``, an int >= 10.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").

    Returns
    -------
    xarray.Dataset
        ``beta_gm``, ``kappa_cs`` on (``nu``, ``variable``).

    See Also
    --------
    uqviz.tailedness : the same measures on data.
    uqviz.plots.average.skewness_map : draws the curve with the data's points.

    Notes
    -----
    For each :math:`\nu`, ``size`` calibrated NIG points are drawn,

    .. math::

       u_E^2 \sim \Gamma^{-1}(\nu/2, \nu/2), \qquad E \mid u_E \sim N(0, u_E^2),

    and :math:`\beta_{GM}`, :math:`\kappa_{CS}` of :math:`u_E^2`, :math:`E^2`, :math:`Z^2` computed
    as in :func:`uqviz.tailedness` (Pernot (2024b), Fig. 6).

    References
    ----------
    - Pernot (2024b), Fig. 6: the NIG curve of the skewness map.
    - Groeneveld & Meeden (1984): beta_GM.
    - Crow & Siddiqui (1967): kappa_CS.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> curve = nig_skewness_curve(nu=[3.0, 20.0], size=20_000, rng=0)
    >>> b = curve["beta_gm"].sel(variable="E2").values
    >>> bool(b[0] > b[1] > 0.6)
    True
    """
    nu = checks.grid("nu", DEFAULT_NU if nu is None else nu, lower=0.0)
    size = checks.count("size", size, minimum=10)
    entropy = seeds.kernel_seed(rng)
    beta = np.empty((nu.size, len(_VARIABLES)))
    kappa = np.empty_like(beta)
    for i, v in enumerate(nu):
        e, u = draw_calibrated(
            size, a=v / 2.0, b=v / 2.0, rng=seeds.child(entropy, seeds.value_index(v))
        )
        v2 = u * u
        e2 = e * e
        x = np.stack([v2, e2, e2 / v2])
        beta[i], kappa[i] = stats_kernels.beta_gm(x), stats_kernels.kappa_cs(x)
    out = xr.Dataset(
        {
            "beta_gm": (
                ("nu", "variable"),
                beta,
                {"long_name": "robust skewness beta_GM (Harrell-Davis median)"},
            ),
            "kappa_cs": (
                ("nu", "variable"),
                kappa,
                {"long_name": "robust excess kurtosis kappa_CS (Harrell-Davis)"},
            ),
        },
        coords={
            "nu": ("nu", nu, {"long_name": "NIG degrees of freedom nu"}),
            "variable": list(_VARIABLES),
        },
    )
    out.attrs.update(
        {
            "model": "NIG: uE^2 ~ IG(nu/2, nu/2), E = uE * N(0, 1); E^2 ~ F(1, nu), Z^2 ~ chi2_1",
            "size": size,
            "rng": seeds.seed_attr(rng),
            "entropy": entropy,
            "seeding": "sample of nu: seeds.child(entropy, bits(nu))",
            "citation": "Pernot (2024b), Figs. 3 and 6",
        }
    )
    return out


def nig_implied_shape(shapes):
    r"""The F(1, 2 nu) law of E^2 implied by an IG(nu, nu) fit of uE^2 (Pernot (2024b), eqs. 17-19).

    Parameters
    ----------
    shapes : xarray.Dataset
        Output of :func:`uqviz.distribution_shapes` or :func:`uqviz.fit_inverse_gamma`.

    Returns
    -------
    xarray.Dataset
        ``nu`` and ``scale`` of ``E^2/scale ~ F(1, nu)``.

    See Also
    --------
    uqviz.fit_inverse_gamma : the IG fit this function reads.
    uqviz.fit_f : the F fit of E^2 to compare with.
    uqviz.plots.average.fit_histogram : draws the implied law with ``implied=``.

    Notes
    -----
    If :math:`u_E^2/\sigma^2 \sim \Gamma^{-1}(\nu, \nu)` and :math:`E \mid u_E \sim N(0, u_E^2)`,
    then :math:`E/\sigma \sim t(2\nu)` and

    .. math::

       E^2/\sigma^2 \sim F(1, 2\nu)

    (Pernot (2024b), eqs. 17-19): ``nu`` is :math:`2\nu`, ``scale`` :math:`\sigma^2`.

    References
    ----------
    - Pernot (2024b), eqs. 16-19: the NIG model and its F law.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import xarray as xr
    >>> implied = nig_implied_shape(xr.Dataset({"nu": 1.5, "scale": 0.04}))
    >>> float(implied["nu"]), float(implied["scale"])
    (3.0, 0.04)
    """
    checks.result("shapes", shapes, "uqviz.distribution_shapes or uqviz.fit_inverse_gamma")
    if "variable" in shapes.dims:
        if "uE2" not in shapes["variable"].values:
            raise ValueError(
                "shapes: no 'uE2' on dim 'variable'; use the output of "
                "distribution_shapes or fit_inverse_gamma"
            )
        fit = shapes.sel(variable="uE2")
    elif shapes.attrs.get("variable", "uE2") == "uE2":
        fit = shapes
    else:
        raise ValueError(
            f"shapes: a fit of {shapes.attrs.get('variable')!r}, not of uE2; use "
            "the output of distribution_shapes or fit_inverse_gamma"
        )
    for name in ("nu", "scale"):
        if name not in fit:
            raise ValueError(f"shapes: variable {name!r} is missing")
    fit = fit[["nu", "scale"]].reset_coords(drop=True)
    out = xr.Dataset(
        {
            "nu": (2.0 * fit["nu"]).assign_attrs(
                long_name="NIG-implied shape of E^2 (2 x nu of uE^2)"
            ),
            "scale": fit["scale"].copy().assign_attrs(long_name="scale of E^2 (= scale of uE^2)"),
        }
    )
    out.attrs.update(
        {
            "variable": "E2",
            "model": "E^2/scale ~ F(1, nu)",
            "derivation": "NIG: uE^2/s ~ IG(n, n), E = uE N(0,1) => E^2/s ~ F(1, 2n)",
        }
    )
    return out
