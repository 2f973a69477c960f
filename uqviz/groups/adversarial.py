"""Adversarial groups: calibration of random subsets of decreasing size (Chung et al. (2021);
Pernot (2023), section III.2.3).

:func:`adversarial_validation` bootstraps the statistic of many random groups per size (the
groups gathered into contiguous segments and resampled at once, as ``ordering_study``
does) and compares the share of groups whose interval holds the reference with the share
on simulated calibrated errors with the data's own uE, on the same groups.
:func:`adversarial_group_calibration` is uncertainty-toolbox 0.1.1's form: the worst MACE or
RMSCE over random groups per group fraction, averaged over trials.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array.bca import METHODS, verdict
from uqviz._array.binomial import wilson_interval
from uqviz._array.lazy import lazy_module
from uqviz.average.tails import tail_fit
from uqviz.average.validation import TAILEDNESS_SCREENS, tailedness
from uqviz.conditional.local import check_local_statistic
from uqviz.data.generative import get_generative, student_t
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds
from uqviz.engine import verdicts as verdict_words
from uqviz.engine.bootstrap import check_points, split_moments
from uqviz.engine.options import BootstrapOptions, streams
from uqviz.engine.parallel import progress_bar, resolve_client
from uqviz.engine.statistics import get_statistic
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning

groups_kernels = lazy_module("uqviz._array.groups")
sps = lazy_module("scipy.stats")

__all__ = [
    "adversarial_validation",
    "adversarial_group_calibration",
    "default_sizes",
    "tail_reference",
    "MIN_GROUP_SIZE",
    "GROUP_STATISTICS",
    "AGC_STATISTICS",
]

#: fewest points of a group (a BCa interval of fewer points is meaningless; the smallest
#: default size M/2^k is the last one at or above it)
MIN_GROUP_SIZE = 10
#: the statistics of adversarial_validation besides the moment statistics with a reference
GROUP_STATISTICS = ("PICP", "MACE")
#: the scores of adversarial_group_calibration (uncertainty-toolbox's cali_type)
AGC_STATISTICS = ("MACE", "RMSCE")
_PICP_LEVEL = 0.95
#: groups of more points are resampled block by block (binomial counts per block of 4096
#: points: about 1.5x faster from 1 000 points with 1 000 replicates; the same distribution)
BLOCKED_ABOVE = 1024
#: lightest-tailed bound of the Student-t D of the reference curve under a failed tail screen
#: (the range of the Student-t null table of uqviz._array.tails)
TAIL_DF_MIN = 2.1
_CITATION = (
    "Chung et al. (2021) (adversarial group calibration); Pernot (2023), section "
    "III.2.3 (adversarial group validation of the ZMS); Holm (1979)"
)


def default_sizes(m):
    """The default group sizes ``round(M / 2^k)``, k = 1, 2, ..., down to
    :data:`MIN_GROUP_SIZE` (as ErrViewLib's ``plotAGVZMS``, there from 100 points).

    Examples
    --------
    >>> default_sizes(13885)
    [6942, 3471, 1736, 868, 434, 217, 108, 54, 27, 14]
    """
    out, k = [], 1
    while round(m / 2**k) >= MIN_GROUP_SIZE:
        out.append(int(round(m / 2**k)))
        k += 1
    return out


def _check_sizes(sizes, m):
    if sizes is None:
        out = default_sizes(m)
        if not out:
            raise ValueError(
                f"data: too few points for adversarial groups: M = {m}; the "
                f"default sizes M/2^k need M >= {2 * MIN_GROUP_SIZE} (groups of "
                f"at least {MIN_GROUP_SIZE} points)"
            )
        return out
    values = checks.grid("sizes", sizes, lower=1)
    if np.any(values != np.round(values)):
        raise ValueError(f"sizes must be whole numbers of points, got {values.tolist()}")
    out = [int(v) for v in values]
    if len(set(out)) != len(out):
        raise ValueError(f"sizes must be distinct, got {out}")
    small = [s for s in out if s < MIN_GROUP_SIZE]
    large = [s for s in out if s > m]
    if small or large:
        raise ValueError(
            f"sizes must lie between {MIN_GROUP_SIZE} and M = {m} points: "
            + "; ".join(
                p
                for p in (
                    f"{small} below {MIN_GROUP_SIZE}" if small else "",
                    f"{large} above M = {m}" if large else "",
                )
                if p
            )
        )
    return out


def _check_statistic(statistic):
    if isinstance(statistic, str) and statistic in GROUP_STATISTICS:
        return statistic
    try:
        return check_local_statistic(statistic)
    except ValueError as exc:
        raise ValueError(f"{exc}; adversarial_validation also takes 'MACE'") from None


def _block_of_groups(n_groups, n_mc):
    """Simulated dataset of each group: ``n_mc`` near-equal consecutive blocks."""
    bounds = np.linspace(0, n_groups, n_mc + 1).round().astype(np.int64)
    return np.repeat(np.arange(n_mc), np.diff(bounds))


def _moment_groups(e, u, stat, seed, *, boot):
    """Estimate and interval of each row of (G, n) arrays: one grouped bootstrap with the
    BootstrapOptions ``boot``."""
    n_groups, n = e.shape
    starts = np.arange(n_groups, dtype=np.int64) * n
    res = split_moments(
        np.ascontiguousarray(e.ravel()),
        np.ascontiguousarray(u.ravel()),
        {stat.name: (stat.func, stat.columns)},
        n_boot=boot.n_boot,
        seed=seed,
        ci=boot.ci,
        method=boot.method,
        starts=starts,
        sizes=np.full(n_groups, n, dtype=np.int64),
        engine=boot.engine,
        client=boot.client,
        blocked_above=BLOCKED_ABOVE,
    )[stat.name]
    return res.estimate, res.lower, res.upper


def _share_test(valid, ref_valid, block, n_mc, ci):
    """Share of valid groups, its Wilson interval, the reference share, its band, p-value."""
    n_groups = valid.size
    k = int(valid.sum())
    share = k / n_groups
    lo, hi = wilson_interval(k, n_groups, ci=ci, continuity=True)
    per_block = np.bincount(block, weights=ref_valid.astype(float), minlength=n_mc)
    n_block = np.bincount(block, minlength=n_mc)
    shares = per_block / n_block
    pooled = float(ref_valid.mean())
    p_adj = (ref_valid.sum() + 0.5) / (n_groups + 1.0)
    var = max(float(np.var(shares, ddof=1)), p_adj * (1.0 - p_adj) * n_mc / n_groups)
    sd_pred = np.sqrt(var * (1.0 + 1.0 / n_mc))
    tq = float(sps.t.ppf(ci, n_mc - 1))
    p_value = float(sps.t.cdf((share - pooled) / sd_pred, n_mc - 1))
    return dict(
        share_valid=share,
        share_valid_lower=float(lo),
        share_valid_upper=float(hi),
        n_valid=k,
        reference_share=pooled,
        reference_share_lower=max(0.0, pooled - tq * sd_pred),
        reference_share_upper=min(1.0, pooled + tq * sd_pred),
        p_value=p_value,
        below_band=bool(share < pooled - tq * sd_pred),
    )


def _heavy_tails(ds, statistic):
    """The variables whose tailedness screen (Pernot (2024b), Table II) fails, of those that
    question ``statistic`` (Z^2 for PICP, MACE and unscreened statistics: the reference
    curve assumes the tails of D)."""
    screened = TAILEDNESS_SCREENS.get(statistic, ("Z2",))
    tail = tailedness(ds)
    return [v for v in screened if bool(tail["heavy_tail"].sel(variable=v))]


def tail_reference(gen, df_lower):
    """The D of the reference curve under a failed tail screen: calibrated unit-variance
    Student-t z-scores of ``df_lower`` degrees of freedom (the heaviest t consistent with the
    data's z-scores, 99.9 % set of :func:`uqviz.average.tails.tail_fit`; at least
    ``TAIL_DF_MIN``), or ``gen`` itself when it is already as heavy ("empirical": the data's
    own z-scores; a t of at most ``df_lower`` degrees of freedom). None when the z-scores
    are degenerate.

    Examples
    --------
    >>> tail_reference(get_generative("normal"), 3.4).name
    't3.4'
    >>> (tail_reference(get_generative("t3"), 5.0).name,
    ...  tail_reference(get_generative("t3"), 1.5).name)
    ('t3', 't2.1')
    >>> tail_reference(get_generative("normal"), float("inf")).name
    'normal'
    """
    if np.isnan(df_lower):
        return None
    if gen.kind == "empirical" or np.isinf(df_lower):
        return gen
    nu = max(float(df_lower), TAIL_DF_MIN)
    if gen.kind == "student_t" and gen.params["nu"] <= nu:
        return gen
    return student_t(float(f"{nu:.3g}"))


def _tail_reason(heavy, ref_gen, rejected):
    if not heavy:
        return ""
    what = (
        "; the tailedness screen of Pernot (2024b) fails for "
        + ", ".join(heavy)
        + " (heavy tails: random groups then miss the reference more often than groups "
        "of a light-tailed D, calibrated or not)"
    )
    if ref_gen is None:
        return what + ": unreliable (the z-scores are degenerate, no tail-allowing reference)"
    how = (
        "a departure larger than such tails explain"
        if rejected
        else "within what such tails produce on calibrated data: no conclusion (unreliable)"
    )
    return (
        what + f"; the reference curve is simulated with calibrated z-scores as "
        f"heavy-tailed as the data's (D = {ref_gen.name}): {how}"
    )


def _adversarial_one(
    ds, *, rng, statistic, sizes, n_groups, boot, generative, n_mc, level, n_levels
):
    """One dataset of :func:`adversarial_validation`, ``boot`` the BootstrapOptions."""
    check_dataset(ds)
    warn_points_independent(ds, "adversarial_validation")
    ci = boot.ci
    e, u = check_points(ds["E"].values, ds["uE"].values)
    m = e.size
    sizes = _check_sizes(sizes, m)
    try:
        gen = get_generative(generative, ds)
    except ValueError as exc:
        raise ValueError(f"generative={getattr(generative, 'name', generative)!r}: {exc}") from None
    n_sizes = len(sizes)
    rs = streams(rng, "groups", "sim", "boot", "ref_boot")
    group_seeds_ = [seeds.kernel_seed(r) for r in seeds.spawn(rs.groups, n_sizes)]
    boot_seeds = [seeds.kernel_seed(r) for r in seeds.spawn(rs.boot, n_sizes)]
    ref_seeds = [seeds.kernel_seed(r) for r in seeds.spawn(rs.ref_boot, n_sizes)]
    # under a failed tail screen the reference curve allows for the tails: its calibrated sets
    # have z-scores as heavy-tailed as the data's (issue 36)
    heavy = _heavy_tails(ds, statistic)
    df_est, region = tail_fit(e, u) if heavy else (np.nan, np.array([]))
    df_lower = float(region[0]) if region.size else np.nan
    df_upper = float(region[-1]) if region.size else np.nan
    ref_gen = tail_reference(gen, df_lower) if heavy else gen
    # n_mc calibrated datasets with the data's uE; group g of every size uses block[g]
    sim = u[None, :] * (ref_gen or gen).sample(rs.sim, (n_mc, m))
    block = _block_of_groups(n_groups, n_mc)
    z, zsim = e / u, sim / u[None, :]
    if statistic == "PICP":
        q = float(gen.ppf(0.5 + level / 2.0))
        inside, inside_sim = np.abs(z) <= q, (np.abs(zsim) <= q).ravel()
        reference = level
    elif statistic == "MACE":
        qs = gen.ppf(0.5 + np.linspace(0.0, 1.0, n_levels) / 2.0)
        t = groups_kernels.level_thresholds(z, -qs, qs)
        tsim = groups_kernels.level_thresholds(zsim.ravel(), -qs, qs)
        reference = np.empty(n_sizes)
    else:
        stat = get_statistic(statistic)
        reference = float(stat.reference)
    shape = (n_sizes, n_groups)
    est, ref_est = np.full(shape, np.nan), np.full(shape, np.nan)
    lower, upper = np.full(shape, np.nan), np.full(shape, np.nan)
    group_valid = np.zeros(shape, dtype=bool)
    rows, n_undefined = [], 0
    label = "adversarial groups" + (f" ({ds.attrs['name']})" if ds.attrs.get("name") else "")
    with progress_bar(n_sizes, desc=label, progress=boot.progress, unit="size") as bar:
        for i, s in enumerate(sizes):
            idx = groups_kernels.draw_groups(group_seeds_[i], m, s, n_groups)
            sim_idx = block[:, None] * m + idx  # rows of the simulated sets, flattened
            if statistic == "PICP":
                k = inside[idx].sum(axis=1)
                ks = inside_sim[sim_idx].sum(axis=1)
                est[i], ref_est[i] = k / s, ks / s
                lower[i], upper[i] = wilson_interval(k, s, ci=ci, continuity=True)
                rlo, rhi = wilson_interval(ks, s, ci=ci, continuity=True)
                ok = (lower[i] <= level) & (level <= upper[i])
                ref_ok = (rlo <= level) & (level <= rhi)
            elif statistic == "MACE":
                est[i] = groups_kernels.group_curve_errors(t, idx, n_levels)[0]
                ref_est[i] = groups_kernels.group_curve_errors(tsim, sim_idx, n_levels)[0]
                reference[i] = np.quantile(ref_est[i], ci)
                ok, ref_ok = est[i] <= reference[i], ref_est[i] <= reference[i]
            else:
                est[i], lower[i], upper[i] = _moment_groups(
                    e[idx], u[idx], stat, boot_seeds[i], boot=boot
                )
                rest, rlo, rhi = _moment_groups(
                    sim.ravel()[sim_idx], u[idx], stat, ref_seeds[i], boot=boot
                )
                ref_est[i] = rest
                ok = verdict(est[i], reference, lower[i], upper[i])[1]
                ref_ok = verdict(rest, reference, rlo, rhi)[1]
                n_undefined += int(
                    np.count_nonzero(~np.isfinite(lower[i]) | ~np.isfinite(upper[i]))
                )
            group_valid[i] = ok
            rows.append(_share_test(np.asarray(ok), np.asarray(ref_ok), block, n_mc, ci))
            bar.update(1)
    if n_undefined:
        where = f" in {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        warnings.warn(
            f"{n_undefined} of {n_sizes * n_groups} group intervals{where} could "
            "not be computed (degenerate bootstrap distribution): counted not valid",
            UnreliableWarning,
            stacklevel=4,
        )
    p = np.array([r["p_value"] for r in rows])
    rejected, adjusted = verdict_words.holm(p, alpha=1.0 - ci)
    word = verdict_words.decide(
        bool(rejected.any()), reliable=ref_gen is not None, heavy_tail=bool(heavy)
    )
    if n_undefined and n_undefined == n_sizes * n_groups:
        word = verdict_words.decide(False, tested=False)
        reason = (
            f"none of the {n_undefined} group intervals could be computed (degenerate "
            "bootstrap distributions): no test"
        )
    elif rejected.any():
        bad = [sizes[j] for j in np.flatnonzero(rejected)]
        reason = (
            f"the share of valid groups is below the band of calibrated data at sizes "
            f"{bad} (Holm over {n_sizes} sizes)"
        )
    else:
        reason = (
            f"at every size the share of valid groups is within the band of calibrated "
            f"data (Holm over {n_sizes} sizes)"
        )
    data_vars = {
        name: ("size", np.array([r[name] for r in rows]))
        for name in (
            "share_valid",
            "share_valid_lower",
            "share_valid_upper",
            "n_valid",
            "reference_share",
            "reference_share_lower",
            "reference_share_upper",
            "p_value",
            "below_band",
        )
    }
    data_vars.update(
        {
            "p_adjusted": ("size", adjusted),
            "estimate": (("size", "group"), est),
            "reference_estimate": (("size", "group"), ref_est),
            "valid": (
                ("size", "group"),
                group_valid,
                {
                    "long_name": "the group's interval holds the reference"
                    if statistic != "MACE"
                    else "the group's MACE is at most the reference"
                },
            ),
            "reference": (("size",), reference) if statistic == "MACE" else ((), reference),
            "verdict": ((), word),
            "reason": ((), reason + _tail_reason(heavy, ref_gen, bool(rejected.any()))),
            "reliable": ((), not heavy),
            "tail_df_lower": (
                (),
                df_lower,
                {
                    "long_name": "heaviest Student-t consistent with the "
                    "z-scores, the D of the reference curve "
                    "under a failed tail screen (NaN when "
                    "the screen passes)"
                },
            ),
            "tail_df": (
                (),
                df_est,
                {
                    "long_name": "degrees of freedom of the Student-t fitted to "
                    "the z-scores (NaN when the screen passes)"
                },
            ),
            "tail_df_upper": (
                (),
                df_upper,
                {
                    "long_name": "lightest Student-t consistent with "
                    "the z-scores (NaN when the screen "
                    "passes)"
                },
            ),
        }
    )
    if statistic != "MACE":
        data_vars["ci_lower"] = (("size", "group"), lower)
        data_vars["ci_upper"] = (("size", "group"), upper)
    return xr.Dataset(
        data_vars,
        coords={"size": np.array(sizes), "group": np.arange(n_groups)},
        attrs={"n_points": m, "generative": gen.name},
    )


def adversarial_validation(
    data,
    *,
    statistic="ZMS",
    sizes=None,
    n_groups=1000,
    n_boot=1000,
    ci=0.95,
    method="bca",
    generative="normal",
    n_mc=20,
    level=None,
    n_levels=100,
    engine=None,
    client=None,
    rng=None,
    progress=None,
):
    r"""Adversarial group validation: the share of random groups that pass, against calibrated
    data (Pernot (2023), section III.2.3; Chung et al. (2021)).

    For each group size, ``n_groups`` random groups of the points (drawn without replacement)
    get the statistic and its interval; the share of groups whose interval holds the
    reference is compared with the same share on simulated calibrated errors
    :math:`u_E D` with the data's own uE, on the same groups (the reference curve). A
    miscalibration that hides in the average (compensating subgroups) shows as a share below
    that of calibrated data.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str, default "ZMS"
        A registered moment statistic with a predefined reference (``"ZMS"``, ``"ZM"``,
        ``"RCE"``, ``"ZVar"``, ``"RCE2"``, ``"ZISD"`` or one registered by the user),
        bootstrapped in every group; ``"PICP"``: the coverage of the intervals
        :math:`\pm u_E q_D((1 + \ell)/2)` with its Wilson interval (continuity-corrected), valid
        when it holds ``level``; ``"MACE"``: the mean absolute calibration error of the
        group's calibration curve (``n_levels`` interval levels), which has no interval: a
        group is valid when its MACE does not exceed the ``ci`` quantile of the MACE of the
        reference groups of its size (pooled over the ``n_mc`` simulated sets).
    sizes : sequence of int, optional
        Group sizes, each between 10 points (``MIN_GROUP_SIZE``) and M; default
        ``round(M / 2^k)``, k = 1, 2, ..., down to 10 points (13 885 points: 6942, 3471, ...,
        14).
    n_groups : int, default 1000
        Random groups per size, an int >= ``n_mc``.
    n_boot : int, default 1000
        Bootstrap replicates of each group's interval (moment statistics), an int >= 2.
    ci : float, default 0.95
        Level of every interval, in (0, 1): the groups' intervals, the band of the reference
        share, and ``1 - ci`` is the family-wise level of the verdict.
    method : {"bca", "percentile", "basic"}, default "bca"
        Interval of the moment statistics.
    generative : str or Generative, default "normal"
        Distribution D of the simulated calibrated errors :math:`u_E D` (and of the intervals
        of PICP and MACE) (``uqviz.generative``).
    n_mc : int, default 20
        Simulated calibrated datasets of the reference curve, an int >= 2: the groups are split
        into ``n_mc`` blocks, block k evaluated on dataset k, so that the reference costs one
        pass over the groups and the spread of its share between datasets is measured.
    level : float, optional
        Nominal coverage of the PICP intervals, in (0, 1); default 0.95. Only with
        ``statistic="PICP"``.
    n_levels : int, default 100
        Expected proportions of the calibration curve of ``"MACE"`` (uncertainty-toolbox's
        ``num_bins``), an int >= 2.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba, numpy without it).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (the groups split over the workers, each with its own seed);
        the numbers do not depend on it (docs/conventions.md).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream of the groups, the simulated sets and the bootstraps; the same ``rng``
        gives the same numbers on any number of threads or workers (docs/conventions.md,
        "Randomness").
    progress : bool or None, default None
        tqdm progress bar over the sizes: None shows it in a terminal or Jupyter unless
        ``UQVIZ_PROGRESS=0``, True always, False never.

    Returns
    -------
    xarray.Dataset
        On ``size`` (coordinate: the sizes): ``share_valid`` with its Wilson interval
        (``_lower``, ``_upper``, continuity-corrected, as ErrViewLib), ``n_valid``;
        ``reference_share`` (the share on the simulated sets, pooled) with its band
        ``reference_share_lower``, ``reference_share_upper``; ``p_value``, ``p_adjusted``
        (Holm over the sizes), ``below_band`` (``share_valid < reference_share_lower``, the
        one-sided test of the size alone). On (``size``, ``group``): ``estimate``,
        ``ci_lower``, ``ci_upper`` (not for MACE), ``valid`` (the group's interval holds the
        reference, as everywhere in uqviz; MACE: at most ``reference``), ``reference_estimate``
        (the statistic of the same group on its simulated set). ``reference``: the value
        the groups are compared with (per size for MACE). Scalars ``verdict`` ("OK",
        "fails" or "unreliable"), ``reason``, ``reliable`` (no tailedness screen that
        questions the statistic fails: Z^2 for ZMS, PICP and MACE; Pernot (2024b)) and
        ``tail_df_lower`` (under a failed screen, the degrees of freedom of the Student-t D
        of the reference curve before rounding; NaN otherwise).

    Raises
    ------
    ValueError
        A size below 10 or above M, too few points for the default sizes (M < 20),
        ``n_groups`` < 1 or below ``n_mc``, ``level`` without PICP, a statistic without a
        predefined reference.

    See Also
    --------
    uqviz.adversarial_group_calibration : uncertainty-toolbox's worst-group MACE/RMSCE.
    uqviz.local_calibration : groups along one conditioning variable.
    uqviz.plots.groups.adversarial_curves : draws both curves with their bands.

    Notes
    -----
    For a size :math:`s`, let :math:`v_g` say that group :math:`g` (:math:`s` points drawn
    without replacement) is valid. The data's share :math:`\hat f_s = \frac1G\sum_g v_g`
    (``share_valid``) is, for calibrated data, an estimate of the probability that the
    interval of a calibrated group holds the reference, which is not ``ci`` (the BCa interval
    of the ZMS of 14 points covers less than 95 %): hence the reference curve. Block
    :math:`k` of the groups (:math:`G/K` groups) is evaluated on the simulated set
    :math:`E^{(k)} = u_E D^{(k)}`, giving shares :math:`r_k`; ``reference_share`` is their
    pooled mean :math:`\bar r`. The groups of one set overlap (a group of M/2 points shares
    half its points with every other), so the data's share varies from one calibrated set
    to another far more than a binomial count; the spread of the :math:`r_k` measures that
    (with the sampling of :math:`G/K` groups, larger than the data's :math:`G`:
    conservative). With :math:`s_r^2 = \max(\mathrm{var}(r_k), \tilde p(1 - \tilde p) K/G)`
    (a binomial floor, :math:`\tilde p = (\sum v^{\rm ref} + 1/2)/(G + 1)`), the band is the
    prediction interval :math:`\bar r \pm t_{\rm ci, K-1} s_r \sqrt{1 + 1/K}` and the
    one-sided p-value of size :math:`s` is

    .. math::

       p_s = F_{t, K-1}\left(\frac{\hat f_s - \bar r}{s_r\sqrt{1 + 1/K}}\right),

    so ``below_band`` (:math:`\hat f_s <` the band's lower limit) is
    :math:`p_s < 1 - \mathrm{ci}`.
    Only a share below calibrated data is a failure (a miscalibration makes more intervals
    miss the reference). The sizes are a family: the verdict "fails" when Holm's step-down
    adjustment (``p_adjusted``, Holm (1979), valid under any dependence between the sizes)
    rejects one of them at level :math:`1 - \mathrm{ci}`. Heavy-tailed groups miss the
    reference more often than those of a normal D (19 % false alarms on calibrated t4 errors
    against a normal reference curve). Heavy tails widen the zone of doubt; they do not erase
    the answer (issue 36): where the tailedness screen of :func:`uqviz.tailedness` fails for
    a variable that questions the statistic, the reference curve is simulated with
    calibrated z-scores as heavy-tailed as the data's, :math:`D = t_\nu` of unit variance with
    :math:`\nu` = ``tail_df_lower`` (the heaviest Student-t consistent with the data's
    z-scores, 99.9 % set of :func:`uqviz.average.tails.tail_fit`, at least 2.1; ``tail_reference``),
    and the verdict is "fails" when Holm rejects against that curve, "unreliable" otherwise,
    never "OK". The intervals of PICP and MACE keep the quantiles of ``generative``. The
    false-alarm rate and power of the verdict are measured in docs/guide/verdicts.md
    ("adversarial:ZMS").

    ``share_valid_lower``, ``share_valid_upper`` are the Wilson intervals of ErrViewLib's
    ``plotAGVZMS`` (a binomial count of independent groups): descriptive only, too narrow
    for overlapping groups.

    References
    ----------
    - Pernot (2023), section III.2.3: adversarial group validation of the ZMS.
    - Chung et al. (2021): adversarial group calibration.
    - Holm (1979): the step-down adjustment.
    - DiCiccio & Efron (1996): the BCa interval.
    - Newcombe (1998): the Wilson interval with continuity correction.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.adversarial_validation(ds, sizes=(500, 100), n_groups=100, n_boot=200,
    ...                                    n_mc=10, rng=0, progress=False)
    >>> res.sizes["size"], str(res["verdict"].values)
    (2, 'OK')

    Calibrated Student-t errors fail the tail screen: "unreliable" (never "OK"); uE twice
    too small: "fails".

    >>> import numpy as np
    >>> rng = np.random.default_rng(12)
    >>> u = np.sqrt(1.0 / rng.gamma(3.0, 1.0, 2000))
    >>> e = u * rng.standard_t(3, 2000) / np.sqrt(3.0)
    >>> kw = dict(sizes=(500, 100), n_groups=60, n_boot=200, n_mc=10, rng=3, progress=False)
    >>> [str(uqviz.adversarial_validation(uqviz.from_arrays(k * e, u), **kw)["verdict"].values)
    ...  for k in (1, 2)]
    ['unreliable', 'fails']
    """
    statistic = _check_statistic(statistic)
    n_groups = checks.count("n_groups", n_groups, minimum=1)
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        ci=ci,
        method=method,
        rng=rng,
        engine=engine,
        progress=progress,
        methods=METHODS,
    )
    n_mc = checks.count("n_mc", n_mc, minimum=2)
    if n_groups < n_mc:
        raise ValueError(
            f"n_groups = {n_groups} is below n_mc = {n_mc}: every simulated set "
            "of the reference needs at least one group; use n_groups >= n_mc"
        )
    if level is not None and statistic != "PICP":
        raise ValueError(
            f"level is the nominal coverage of statistic='PICP', got "
            f"level={level!r} with statistic={statistic!r}"
        )
    level = _PICP_LEVEL if level is None else checks.probability("level", level)
    n_levels = checks.count("n_levels", n_levels, minimum=2)
    gen_name = get_generative(generative).name if generative != "empirical" else "empirical"
    if sizes is not None:
        checks.grid("sizes", sizes, lower=1)  # the types here; the bounds per dataset (M)
    out = map_datasets(
        _adversarial_one,
        data,
        rng=checks.rng(rng),
        statistic=statistic,
        sizes=sizes,
        n_groups=n_groups,
        boot=boot.replace(client=resolve_client(client)),
        generative=generative,
        n_mc=n_mc,
        level=level,
        n_levels=n_levels,
    )
    b = boot.attrs
    out.attrs.update(
        {
            "statistic": statistic,
            "n_groups": n_groups,
            "n_boot": b["n_boot"],
            "ci": b["ci"],
            "method": b["method"],
            "generative": gen_name,
            "n_mc": n_mc,
            "engine": b["engine"],
            "rng": b["rng"],
            "citation": _CITATION,
        }
    )
    if sizes is not None:
        out.attrs["sizes"] = [int(s) for s in sizes]
    if statistic == "PICP":
        out.attrs["level"] = level
    if statistic == "MACE":
        out.attrs["n_levels"] = n_levels
    return out


# ------------------------------------------------------------------------------------------
# uncertainty-toolbox's form
# ------------------------------------------------------------------------------------------


def _agc_sizes(m, n_fractions):
    return [max(int(round(m * r)), 2) for r in np.linspace(0.0, 1.0, n_fractions)]


def _check_groups(groups, m, num_group_bins, num_group_draws, num_trials):
    """The given groups as int64 arrays (trials, draws, size), one per fraction."""
    if isinstance(groups, np.ndarray) and groups.ndim == 3:
        groups = [groups]
    try:
        arrays = [np.asarray(g) for g in groups]
    except TypeError:
        raise TypeError(
            f"groups must be a sequence (one per group fraction) of integer arrays "
            f"of shape (num_trials, num_group_draws, size), got "
            f"{type(groups).__name__}"
        ) from None
    if not arrays:
        raise ValueError("groups is empty: give one array per group fraction")
    for k, g in enumerate(arrays):
        if g.ndim != 3 or g.dtype.kind not in "iu":
            raise ValueError(
                f"groups[{k}] must be an integer array of shape (num_trials, "
                f"num_group_draws, size), got dtype {g.dtype} and shape {g.shape}"
            )
        bad = (
            int(np.count_nonzero((g < 0) | (g >= m)))
            if g.size and (g.min() < 0 or g.max() >= m)
            else 0
        )
        if bad:
            raise ValueError(f"groups[{k}]: {bad} row number(s) outside 0..{m - 1} (M = {m})")
    shapes = {g.shape[:2] for g in arrays}
    if len(shapes) != 1:
        raise ValueError(
            f"groups must all have the same (num_trials, num_group_draws), got {sorted(shapes)}"
        )
    trials, draws = shapes.pop()
    for name, given, have in (
        ("num_group_bins", num_group_bins, len(arrays)),
        ("num_trials", num_trials, trials),
        ("num_group_draws", num_group_draws, draws),
    ):
        if given is not None and given != have:
            raise ValueError(f"{name} = {given} disagrees with the groups given ({have})")
    if min(min(g.shape[2] for g in arrays), trials, draws) < 1:
        raise ValueError(
            "groups: every group needs at least one point, every fraction a trial and a draw"
        )
    return arrays


def _agc_one(
    ds,
    *,
    rng,
    statistic,
    num_group_bins,
    num_group_draws,
    num_trials,
    proportions,
    n_levels,
    replace,
    groups,
):
    check_dataset(ds)
    warn_points_independent(ds, "adversarial_group_calibration")
    e, u = check_points(ds["E"].values, ds["uE"].values, minimum=1)
    m = e.size
    # uncertainty-toolbox's normalised residuals (prediction - observation) / uE = -Z
    z = -e / u
    p = np.linspace(0.0, 1.0, n_levels)
    if proportions == "interval":
        t = groups_kernels.level_thresholds(
            z, sps.norm.ppf(0.5 - p / 2.0), sps.norm.ppf(0.5 + p / 2.0)
        )
    else:
        t = groups_kernels.level_thresholds(z, sps.norm.ppf(p))
    which = 0 if statistic == "MACE" else 1
    if groups is not None:
        arrays = _check_groups(groups, m, num_group_bins, num_group_draws, num_trials)
        trials, draws = arrays[0].shape[:2]
        sizes = [g.shape[2] for g in arrays]
        scores = np.stack(
            [
                groups_kernels.group_curve_errors(
                    t, g.reshape(trials * draws, g.shape[2]), n_levels
                )[which].reshape(trials, draws)
                for g in arrays
            ]
        )
    else:
        n_frac = 10 if num_group_bins is None else num_group_bins
        trials = 10 if num_trials is None else num_trials
        draws = 10 if num_group_draws is None else num_group_draws
        if m < 2:
            raise ValueError(f"data: groups of at least 2 points need M >= 2, got M = {m}")
        sizes = _agc_sizes(m, n_frac)
        # the groups of draw_groups(seed, ...), scored without being stored
        scores = np.stack(
            [
                groups_kernels.drawn_curve_errors(
                    seeds.kernel_seed(r), t, s, trials * draws, n_levels, replace
                )[which].reshape(trials, draws)
                for r, s in zip(seeds.spawn(rng, n_frac), sizes)
            ]
        )
    worst = scores.max(axis=2)
    fractions = np.linspace(0.0, 1.0, len(sizes))
    return xr.Dataset(
        {
            "group_score": (("fraction", "trial", "group"), scores),
            "worst_score": (("fraction", "trial"), worst),
            "worst_mean": ("fraction", worst.mean(axis=1)),
            "worst_sd": (
                "fraction",
                worst.std(axis=1, ddof=1) if trials > 1 else np.full(len(sizes), np.nan),
            ),
        },
        coords={"fraction": fractions, "group_size": ("fraction", np.array(sizes))},
        attrs={"n_points": m},
    )


def adversarial_group_calibration(
    data,
    *,
    statistic="MACE",
    num_group_bins=None,
    num_group_draws=None,
    num_trials=None,
    proportions="interval",
    n_levels=100,
    replace=False,
    groups=None,
    rng=None,
):
    r"""Worst calibration error over random groups per group fraction: uncertainty-toolbox's
    ``adversarial_group_calibration`` (Chung et al. (2021)).

    For each fraction :math:`r` of ``linspace(0, 1, num_group_bins)``, ``num_trials`` times:
    draw ``num_group_draws`` groups of :math:`\max(\mathrm{round}(M r), 2)` points, compute the
    MACE (or RMSCE) of each group's calibration curve, keep the worst; then the mean and the
    standard deviation of the worst over the trials. Equal to uncertainty-toolbox 0.1.1 on the
    same groups (``groups=``), which this function replays; with ``groups=None`` it draws its
    own from ``rng``.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : {"MACE", "RMSCE"}, default "MACE"
        The calibration error of a group (uncertainty-toolbox's ``cali_type``
        ``"mean_abs"``, ``"root_mean_sq"``).
    num_group_bins : int, optional
        Number of group fractions, >= 2 (0 and 1 included); default 10
        (uncertainty-toolbox's), or ``len(groups)``.
    num_group_draws : int, optional
        Groups drawn per trial (the worst is kept); default 10, or the groups' second axis.
    num_trials : int, optional
        Trials per fraction; default 10, or the groups' first axis.
    proportions : {"interval", "quantile"}, default "interval"
        uncertainty-toolbox's ``prop_type``: the share of points inside the central normal
        interval of each level, or below the quantile of each level of the normalised residual
        :math:`(\hat y - y)/u_E = -Z` (uncertainty-toolbox's sign, kept to equal it).
    n_levels : int, default 100
        Expected proportions ``linspace(0, 1, n_levels)`` (uncertainty-toolbox's
        ``num_bins``), an int >= 2.
    replace : bool, default False
        Draw the groups with replacement (uncertainty-toolbox's ``draw_with_replacement``).
    groups : sequence of array_like of int, optional
        One integer array of shape ``(num_trials, num_group_draws, size)`` per fraction: the
        row numbers of each group, replayed as given (for example the groups
        uncertainty-toolbox drew).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream of the groups when ``groups`` is None (one child stream per fraction).

    Returns
    -------
    xarray.Dataset
        On ``fraction`` (coordinate: the fractions; ``group_size``: the points of its
        groups): ``worst_mean`` (uncertainty-toolbox's ``score_mean``) and ``worst_sd``, the
        standard deviation (``ddof=1``) of the worst score over the trials, which
        uncertainty-toolbox returns as ``score_stderr`` although it is not divided by
        :math:`\sqrt{n_{\rm trials}}`; on (``fraction``, ``trial``): ``worst_score``; on
        (``fraction``, ``trial``, ``group``): ``group_score``, the score of every group drawn
        (``num_group_draws`` per trial).

    Raises
    ------
    ValueError
        Groups with row numbers outside the data, of inconsistent shapes, or disagreeing with
        ``num_group_bins``, ``num_trials``, ``num_group_draws``.

    See Also
    --------
    uqviz.adversarial_validation : the share of valid groups against calibrated data.
    uqviz.calibration_curve : the calibration curve of the whole set.

    Notes
    -----
    With the expected proportions :math:`p_j` and the normalised residuals
    :math:`z_i = -E_i/u_{E_i}` of a group of :math:`n` points, the observed proportions are
    :math:`o_j = \frac1n\#\{i: \Phi^{-1}(\tfrac12 - \tfrac{p_j}2) \le z_i \le
    \Phi^{-1}(\tfrac12 + \tfrac{p_j}2)\}` (interval) or :math:`\frac1n\#\{i: z_i \le
    \Phi^{-1}(p_j)\}` (quantile), and

    .. math::

       \mathrm{MACE} = \frac1L\sum_j |o_j - p_j|, \qquad
       \mathrm{RMSCE} = \sqrt{\frac1L\sum_j (o_j - p_j)^2}.

    The intervals of the levels are nested, so each point enters at one threshold level and a
    group's curve is the cumulative histogram of its points' thresholds: :math:`O(n + L)` per
    group instead of :math:`O(nL)`.

    References
    ----------
    - Chung et al. (2021): uncertainty-toolbox, adversarial group calibration.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.adversarial_group_calibration(ds, rng=0)
    >>> res.sizes["fraction"], bool(res["worst_mean"][0] > res["worst_mean"][-1])
    (10, True)
    """
    statistic = checks.choice("statistic", statistic, AGC_STATISTICS)
    for name, value in (
        ("num_group_bins", num_group_bins),
        ("num_group_draws", num_group_draws),
        ("num_trials", num_trials),
    ):
        if value is not None:
            checks.count(name, value, minimum=2 if name == "num_group_bins" else 1)
    num_group_bins = checks.optional_count("num_group_bins", num_group_bins, minimum=2)
    num_group_draws = checks.optional_count("num_group_draws", num_group_draws)
    num_trials = checks.optional_count("num_trials", num_trials)
    proportions = checks.choice("proportions", proportions, ("interval", "quantile"))
    n_levels = checks.count("n_levels", n_levels, minimum=2)
    replace = checks.boolean("replace", replace)
    out = map_datasets(
        _agc_one,
        data,
        rng=checks.rng(rng),
        statistic=statistic,
        num_group_bins=num_group_bins,
        num_group_draws=num_group_draws,
        num_trials=num_trials,
        proportions=proportions,
        n_levels=n_levels,
        replace=replace,
        groups=groups,
    )
    out.attrs.update(
        {
            "statistic": statistic,
            "proportions": proportions,
            "n_levels": n_levels,
            "replace": int(replace),
            "num_trials": int(out.sizes["trial"]),
            "num_group_draws": int(out.sizes["group"]),
            "num_group_bins": int(out.sizes["fraction"]),
            "groups": "given" if groups is not None else "drawn",
            "rng": seeds.seed_attr(rng),
            "citation": "Chung et al. (2021) (uncertainty-toolbox 0.1.1)",
        }
    )
    return out
