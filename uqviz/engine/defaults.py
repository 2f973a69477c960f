"""The documented defaults: one mapping, read by the contract test and written into the docs.

:data:`DEFAULTS` holds every row of the "Defaults" table of docs/conventions.md, in order:
the parameter, the default in words, why, and the signature default of each public function
that the row documents (``"*"``: every other public function with that parameter).
``tests/engine/test_defaults.py`` compares every public signature with it, and the table of
docs/conventions.md with :func:`markdown_table` (run
``python -m uqviz.engine.defaults`` to print the table after changing a row).

Examples
--------
>>> signature_default("report", "n_mc"), signature_default("validate_average", "ci")
(2000, 0.95)
>>> signature_default("binned_errors", "n_bins") is None
True
>>> markdown_table().splitlines()[0]
'| parameter | default | why |'
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Default", "DEFAULTS", "EVERY", "signature_default", "documented", "markdown_table"]

#: key of :attr:`Default.values` standing for every public function not named in a row
EVERY = "*"

#: what :func:`signature_default` returns for a (function, parameter) no row documents
UNDOCUMENTED = object()


@dataclass(frozen=True)
class Default:
    """One row of the "Defaults" table.

    Attributes
    ----------
    parameter : str or None
        The Python parameter name (None: a rule that is no parameter's default).
    default, why : str
        The table's "default" and "why" cells (markdown).
    values : dict
        Function short name (``"report"``, ``"ConditionalExplorer"``) -> its signature
        default of ``parameter``; the key ``"*"`` for every other public function.
    label : str, optional
        The table's first cell when it is not ```parameter```.
    """

    parameter: str | None
    default: str
    why: str
    values: dict = field(default_factory=dict)
    label: str | None = None

    @property
    def first_cell(self) -> str:
        """The first cell of the defaults table: the label, else the parameter's name."""
        return self.label if self.label is not None else f"`{self.parameter}`"


def _all(value, *names):
    return dict.fromkeys(names, value)


_LOCAL_RULE = "`min(round(sqrt(M)), M // 100)`, at least 1"

#: every row of the "Defaults" table of docs/conventions.md, in order
DEFAULTS: tuple[Default, ...] = (
    Default("ci", "0.95", "the level of all papers", {EVERY: 0.95}),
    Default(
        "method",
        '`"bca"` (local LZM: `"student-t"`; local PICP, the interval of f_v, and the '
        'coverages of `interval_coverage` and `calibration_curve`: `"wilson"` with '
        'continuity correction; `extrapolate`: `"bootstrap"`, a normal interval from the '
        'bootstrap se of the intercept; `fraction_valid`: `"calibrated"` when the local '
        'result holds its calibrated null, else `"wilson"`; `None` in `local_calibration`, '
        "`ordering_study` and `fraction_valid` means this choice by statistic or result)",
        "BCa is second-order accurate (DiCiccio & Efron 1996); LZM is a mean; a coverage "
        "is a binomial proportion (Newcombe 1998)",
        {
            **_all(None, "local_calibration", "ordering_study", "fraction_valid"),
            "extrapolate": "bootstrap",
            EVERY: "bca",
        },
    ),
    Default(
        "n_boot",
        "10 000 for one interval per statistic and dataset (`validate_average`, "
        "`decimation_curve`, `validate_simulated`, `validate_with_references`, `report`, "
        "`proper_scores`, `predictive_scores`, `compare_forecasts`, `compare_models`)",
        "Pernot (2024a)",
        _all(
            10_000,
            "validate_average",
            "decimation_curve",
            "validate_simulated",
            "validate_with_references",
            "report",
            "proper_scores",
            "predictive_scores",
            "compare_forecasts",
            "compare_models",
        ),
    ),
    Default(
        "n_boot",
        "5 000 per bin or per simulated set (`local_calibration`, `reliability`, "
        "`ordering_study`, `validation_probability`); 5 000 for `qce` (0: no interval)",
        "many intervals per call; Monte Carlo error of an endpoint is below 0.05 se; "
        "`qce`: one M-QCE interval per call, bootstrapped by patterns",
        _all(
            5_000,
            "local_calibration",
            "reliability",
            "ordering_study",
            "validation_probability",
            "qce",
        ),
    ),
    Default(
        "n_boot",
        "500 for `extrapolate`; 1 000 for `confidence_curve` (0: no band), "
        "`operating_characteristics` and the explorers; 1 000 per group in "
        "`adversarial_validation`",
        "each replicate re-bins 140 times; a curve of 100 points; thousands of calls; "
        "interactivity; 10 sizes x 1 000 groups x 2 (data, reference) intervals per call "
        "(ErrViewLib's `plotAGVZMS` uses 1 500)",
        {
            "extrapolate": 500,
            **_all(
                1_000,
                "confidence_curve",
                "operating_characteristics",
                "ConditionalExplorer",
                "ReferenceExplorer",
                "adversarial_validation",
            ),
        },
    ),
    Default(
        None,
        "`min(n_boot, 1 000)` for each re-validation of the report's remedy (one per "
        "method: ZMS, LZMS per variable, NLL and CRPS)",
        "enough for the verdicts; 4 + n_features re-validations stay within seconds on QM9",
        label="`n_boot` of the remedy",
    ),
    Default(
        "remedy",
        "`True` (`report`)",
        "a failing test is followed by what repairs it; `False` for the verdicts alone",
        {"report": True},
    ),
    Default(
        "compare",
        "`None` (`report`): compare the children of a DataTree when there are "
        "at least two, of the same number of points, all giving the same observed values "
        "`y`",
        "`y` shows that the children are models of the same points; without it a tree of "
        "independent sets of equal size (synthetic draws) would be compared: `True` asks",
        {"report": None},
    ),
    Default(
        "recalibration",
        '`"none"` (`ConditionalExplorer`)',
        "the data as given",
        {"ConditionalExplorer": "none"},
    ),
    Default(
        "n_bins",
        "`None`: local statistics and the bins they share (`local_calibration`, "
        "`local_interval_coverage`, `reliability`, `ordering_study`, `report`, "
        "`ConditionalExplorer`, `local_pit`; "
        "`fit_recalibration` "
        f'and `recalibrate` with `"bvs"`): {_LOCAL_RULE} of the data (in `recalibrate`, '
        "of the smallest fold's calibration set, one count for every fold; a BVS bin needs "
        '10 points); with `"conformal"` and `"cqr"`: one bin (no Mondrian bins)',
        "bins of at least 100 points, below which intervals are flagged unreliable "
        "(Pernot 2023); Pernot (2023) uses 100 bins for QM9; BVS repairs what LZMS shows; "
        "a conformal interval is marginal unless asked",
        _all(
            None,
            "local_calibration",
            "local_interval_coverage",
            "reliability",
            "ordering_study",
            "report",
            "ConditionalExplorer",
            "fit_recalibration",
            "recalibrate",
            "local_pit",
        ),
    ),
    Default(
        "n_bins",
        "`None`: binned statistics ENCE, UCE, ZMSE (`binned_errors`, `simulated_reference`, "
        "`validate_simulated`, `validate_with_references`, `statistics.point_estimate`, "
        "`ReferenceExplorer`): 20",
        "Pernot (2024c)",
        _all(
            None,
            "binned_errors",
            "simulated_reference",
            "validate_simulated",
            "validate_with_references",
            "point_estimate",
            "ReferenceExplorer",
        ),
    ),
    Default(
        "n_bins",
        "`qce`: 10 equal-width bins of the dispersion (C-QCE)",
        "netcal's default",
        {"qce": 10},
    ),
    Default(
        "n_bins",
        "grids of bin numbers: `size_dependence` (10, 20, 30, 40, 50); `extrapolate` "
        "`range(10, 151)`",
        "Pernot (2024c), Fig. 4 and App. C",
        {"size_dependence": (10, 20, 30, 40, 50), "extrapolate": range(10, 151)},
    ),
    Default(
        "n_bins",
        "`None`: histogram bins of a plot: `plots.average.fit_histogram` 33 for uE2, 25 "
        "otherwise; `plots.reference.reference_distribution` n/15 of the n simulated "
        "values, between 10 and 50",
        "the figures of Pernot (2024b), Figs. 1-2; a histogram follows its sample size",
        _all(None, "fit_histogram", "reference_distribution"),
    ),
    Default(
        "n_bins",
        "`None`: the PIT histogram of `validate_pit`: 20, fewer so that each bin expects at "
        "least 10 points (`min(20, M // 10)`, at least 1)",
        "a bin's binomial band needs a few expected points; 20 bins resolve the usual "
        "U, hump and slope shapes of a PIT histogram",
        {"validate_pit": None},
    ),
    Default(
        "n_bins",
        "`None`: the bins of each feature in `group_coverage`: `min(10, M // min_count)`, "
        "at least 1 (equal-count)",
        "ten groups of at least `min_count` points: the coverage gap compares groups, each "
        "with a binomial spread of a few percent",
        {"group_coverage": None},
    ),
    Default(
        None,
        '`attrs["n_bins"]` of a result is the number of bins used (`None` resolved); '
        "a grid records its values",
        "the settings say what was computed",
        label="`n_bins` recorded",
    ),
    Default(
        "folds", "5", "the usual cross-fitting; each fit sees 80 % of the data", {"recalibrate": 5}
    ),
    Default(
        "conditioning",
        '`"uE"`',
        "consistency first; BVS on uE repairs consistency, a feature adaptivity",
        {EVERY: "uE"},
    ),
    Default(
        "binning",
        '`"equal_count"`; `"stratified"` for a feature with few distinct values in the report',
        "equal-count bins of a few-valued variable would split tied values",
        {EVERY: "equal_count"},
    ),
    Default(
        "min_count",
        "`None`: 100 for `stratified` (values with fewer points merged with a neighbour); "
        "for `equal_width` and `edges` only empty bins are merged; 100 in "
        "`ConditionalExplorer`; 20 points per bin in `extrapolate` (larger N give NaN)",
        "as `n_bins`; equal-width bins are chosen by the user, who sets their minimum; "
        "Pernot (2024c), App. C",
        {
            **_all(
                None, "local_calibration", "local_interval_coverage", "reliability", "local_pit"
            ),
            "ConditionalExplorer": 100,
            "extrapolate": 20,
        },
    ),
    Default(
        "min_count",
        "`None`: 20 points per group in `group_coverage` (a smaller group is an error)",
        "at level 0.9 a group of 20 points expects 2 outside: fewer make the coverage of a "
        "group a coin toss",
        {"group_coverage": None},
    ),
    Default(
        "n_mc",
        "10 000 (`simulated_reference`, `validate_simulated`, `validate_with_references`); "
        "1 000 "
        "(`confidence_curve`); 5 000 (`size_dependence`); 2 000 (`report`); 500 "
        "(`ReferenceExplorer`); 200 (`operating_characteristics`); 20 simulated sets "
        "sharing the groups (`adversarial_validation`)",
        "Pernot (2024c); curves are averaged; one reference per grid point; a report's "
        "references decide verdicts, not digits; interactivity; thousands of calls; the "
        "spread of the reference share over 20 sets gives its band (Student-t with 19 "
        "degrees of freedom) at the cost of one pass over the groups",
        {
            **_all(10_000, "simulated_reference", "validate_simulated", "validate_with_references"),
            "confidence_curve": 1_000,
            "size_dependence": 5_000,
            "report": 2_000,
            "ReferenceExplorer": 500,
            "operating_characteristics": 200,
            "adversarial_validation": 20,
        },
    ),
    Default(
        "n_mc",
        "200 calibrated sets in `group_coverage`",
        "one-sided Monte Carlo p-values to 1/201; the slab reference costs `n_mc` times the "
        "slab (about 1.2 s per 100 sets for 10^5 points and 100 directions on two cores)",
        {"group_coverage": 200},
    ),
    Default(
        "n_mc",
        "`local_calibration`: 2 000 simulated bins of the calibrated null (each with "
        "`min(n_boot, 1 000)` replicates and the bin's size, at most 2 000 points, "
        "`NULL_MAX_SIZE`); 1 000 in each re-validation of the report's "
        "remedy; 2 000 in `ConditionalExplorer` (computed after its figure is shown); "
        "`local_interval_coverage`: 2 000, any count >= 2 giving its exact (binomial) "
        "null, 0 none",
        "Monte Carlo se of a bin's null probability about 0.005 (0.01); the coverage of a "
        "bin's interval with 1 000 replicates is that with 10 000 less 0.004 (half a bin "
        "in 118); above 2 000 points it no longer changes within the Monte Carlo error "
        "(normal and t6 z-scores; QM9's own gain about 0.01 up to 8 000 points, so the cap "
        "errs towards fewer false alarms), and the null costs at most about "
        "max(n_mc, n_bins) x 2 000 simulated points whatever M; the explorer's f_v "
        "verdict is the verdict table's "
        "(measured at 2 000), its null no longer delays the figure",
        {
            "local_calibration": 2_000,
            "ConditionalExplorer": 2_000,
            "local_interval_coverage": 2_000,
        },
    ),
    Default(
        "n_mc",
        "1 000 normal draws per point in `energy_score_normal`",
        "the Monte Carlo se of a point's score is then about 1 % of the score (two terms "
        "sharing the draws), and that of the mean over n points 1/sqrt(n) of it; 10^5 "
        "points of 3 targets take about 1 s",
        {"energy_score_normal": 1_000},
    ),
    Default(
        "n_datasets",
        "1 000 (`validation_probability`, `statistic_bias`); 100 "
        "(`operating_characteristics`); `None` in the synthetic draws (one dataset)",
        "Pernot (2024b); rates to 0.05; a draw is one set unless asked",
        {
            **_all(1_000, "validation_probability", "statistic_bias"),
            "operating_characteristics": 100,
            **_all(None, "calibrated", "draw_calibrated", "nig", "tig"),
        },
    ),
    Default(
        "generative",
        '`"normal"`; `("normal", "t6")` in `validate_with_references`; '
        "`local_calibration`: `None`, that "
        'is `"normal"` for the PICP intervals and `"empirical"` for the calibrated null of '
        'the other statistics; `fit_recalibration`, `recalibrate` (`"quantile"`): `None`, '
        'the data\'s `attrs["generative"]`, else `"normal"`; `proper_scores`: `None`, that '
        'is `"normal"`, and a forecast given as quantiles, an interval or samples is '
        "refused (its scores as given are `predictive_scores`'s) unless `generative` is "
        "passed",
        "Pernot (2024c) workflow; the null of f_v has the shape of the data's z-scores; "
        "the D `from_predictions` recorded for the forecast; never a silent normal for a "
        "forecast given as more than uE",
        {
            "validate_with_references": ("normal", "t6"),
            "local_calibration": None,
            "fit_recalibration": None,
            "recalibrate": None,
            "proper_scores": None,
            EVERY: "normal",
        },
    ),
    Default("progress", "`None`", "a bar when someone is watching", {EVERY: None}),
    Default(
        None,
        "their standard deviation with `ddof=1`; the prediction is their mean",
        "the unbiased variance of a sample of the predictive distribution (`ddof=0` "
        "shrinks uE by sqrt((M-1)/M), 5 % for 10 members)",
        label="uE of samples or ensemble members (`from_predictions`, `from_estimator`)",
    ),
    Default(
        "quantile_rule",
        '`"nearest"`',
        "the 16 % and 84 % quantiles of a normal distribution lie one standard deviation "
        "from its centre",
        {"from_predictions": "nearest"},
    ),
    Default(
        "crossing",
        '`"sort"` (`from_predictions`)',
        "sorting a row keeps the values given and makes them a distribution; the rows "
        'are counted in a warning and in `attrs["n_crossing"]`',
        {"from_predictions": "sort"},
    ),
    Default(
        "n_band",
        "3 000 (`validate_pit`, `local_pit`)",
        "simulated uniform ECDFs that calibrate the simultaneous band (Säilynoja et al. "
        "2022; ArviZ uses 500): the false-alarm rate of the band then varies by about "
        "0.004 from one seed to another (0.007 with 1 000), at 0.12 s per band for "
        "10^6 points",
        _all(3_000, "validate_pit", "local_pit"),
    ),
    Default(
        "client",
        "`None` (this process, numba kernels on the local threads; numpy without numba)",
        "no scheduler to start for data that fit one machine; a cluster is an explicit choice",
        {EVERY: None},
    ),
    Default(
        "engine",
        '`None`: `"numba"`, or `"numpy"` where numba is not installed ("Without numba")',
        "the fast kernels where they run",
        {EVERY: None},
    ),
    Default(
        "chunk_size",
        "`None`: the function's own (no effect on the numbers)",
        "results do not depend on it",
        {EVERY: None},
    ),
    Default(
        "rng",
        "`None` (fresh entropy); `report` and the explorers use 0; "
        "`synthetic.default_example` uses its own fixed seed",
        "reports and redrawn figures are reproducible; the teaching example is one fixed dataset",
        {
            **_all(0, "report", "ConditionalExplorer", "ReferenceExplorer"),
            "default_example": 20231122,
            EVERY: None,
        },
    ),
    Default(
        "levels",
        "`interval_coverage`: (0.5, 0.68, 0.9, 0.95, 0.99); `proper_scores` (check and "
        "interval scores): `None`, the 99 levels 0.01, ..., 0.99; `qce`: `None`, the 19 "
        'levels 0.05, ..., 0.95; `fit_recalibration`, `recalibrate` (`"quantile"`): '
        "`None`, the 99 levels 0.01, ..., 0.99; `predictive_scores`, `compare_forecasts`: "
        "`None`, every level of a quantile forecast (the 99 levels of `proper_scores` for a "
        "std forecast); `compare_models`: `None`, as `predictive_scores`",
        "the usual reporting levels; uncertainty-toolbox 0.1.1's defaults; netcal's; the "
        "forecast as given",
        {
            "interval_coverage": (0.5, 0.68, 0.9, 0.95, 0.99),
            **_all(
                None,
                "proper_scores",
                "qce",
                "fit_recalibration",
                "recalibrate",
                "predictive_scores",
                "compare_forecasts",
                "compare_models",
            ),
        },
    ),
    Default(
        "level",
        '`local_interval_coverage`: 0.95; `adversarial_validation(statistic="PICP")` and '
        '`local_calibration(statistic="PICP")` (deprecated): `None`, 0.95; '
        "`from_predictions`: `None` "
        "(no interval given), and `read_csv`; `fit_recalibration`, `recalibrate` "
        '(`"conformal"`, `"cqr"`, `"quantile"`): `None`, 0.9',
        "the level of the papers' intervals; 0.9, the level of the conformal experiments "
        "of Romano et al. (2019), leaves 10 % of the points outside to check locally",
        {
            **_all(
                None,
                "local_calibration",
                "from_predictions",
                "read_csv",
                "fit_recalibration",
                "recalibrate",
                "adversarial_validation",
            ),
            "local_interval_coverage": 0.95,
        },
    ),
    Default(
        "level",
        "0.9 (`group_coverage`)",
        "the level of MAPIE's and covmetrics' conditional-coverage examples; 10 % of the "
        "points outside leaves room to see a group miss",
        {"group_coverage": 0.9},
    ),
    Default(
        "proportions",
        '`"quantile"` (`fit_recalibration`, `recalibrate`); `"interval"` '
        "(`adversarial_group_calibration`)",
        "the PIT map of Kuleshov et al. (2018), uncertainty-toolbox's quantile "
        "recalibrator; uncertainty-toolbox's `prop_type` default",
        {
            **_all("quantile", "fit_recalibration", "recalibrate"),
            "adversarial_group_calibration": "interval",
        },
    ),
    Default(
        "intervals",
        '`"uE"` (`interval_coverage`, `group_coverage`)',
        "the intervals of the uncertainties, as before; the given ones on request",
        {"interval_coverage": "uE", "group_coverage": "uE"},
    ),
    Default(
        "delta",
        "0.1 (`group_coverage`)",
        "MAPIE 1.6.0's and covmetrics' default: slabs of at least 10 % of the points "
        "(Cauchois et al. 2021)",
        {"group_coverage": 0.1},
    ),
    Default(
        "n_directions",
        "100 (`group_coverage`)",
        "10^5 points and 10 features in about 0.3 s on two cores (MAPIE's default, 1 000, "
        "costs ten times that)",
        {"group_coverage": 100},
    ),
    Default(
        "kernel_sizes",
        "(1.0, 1.0) (`group_coverage`)",
        "MAPIE 1.6.0's default",
        {"group_coverage": (1.0, 1.0)},
    ),
    Default(
        "n_perm",
        "1 000 (`group_coverage`)",
        "a permutation p-value to 0.001; HSIC on at most 2 000 points keeps it near 1 s",
        {"group_coverage": 1000},
    ),
    Default(
        "n_levels",
        "100 (`calibration_curve`, `adversarial_group_calibration`, the MACE "
        "of `adversarial_validation`)",
        "uncertainty-toolbox 0.1.1's `num_bins`: the scalars equal its miscalibration area, "
        "MACE and RMSCE",
        _all(100, "calibration_curve", "adversarial_group_calibration", "adversarial_validation"),
    ),
    Default(
        "sizes",
        "`None` (`adversarial_validation`): `round(M / 2^k)`, k = 1, 2, ..., "
        "down to 10 points (10 sizes for QM9's 13 885 points); `size_dependence`: "
        "(2000, 4000, 8000, 12000, 16000)",
        "ErrViewLib's `plotAGVZMS` sizes M/2^k (there between 100 points and M/10); the "
        "reference curve measures how the intervals of small groups cover, so groups down "
        "to 10 points are compared fairly; Pernot (2024c), Fig. 4",
        {"adversarial_validation": None, "size_dependence": (2000, 4000, 8000, 12000, 16000)},
    ),
    Default(
        "n_groups",
        "1 000 (`adversarial_validation`)",
        "ErrViewLib's `nMC`; a share's binomial se below 0.007",
        {"adversarial_validation": 1_000},
    ),
    Default(
        "num_group_bins",
        "`None` (`adversarial_group_calibration`): 10 fractions, 10 trials, 10 draws, or "
        "the shape of the `groups` given",
        "uncertainty-toolbox 0.1.1's defaults; replayed groups say their own",
        {"adversarial_group_calibration": None},
    ),
    Default(
        "num_group_draws",
        "`None`: 10, or the groups' draws (as `num_group_bins`)",
        "uncertainty-toolbox 0.1.1",
        {"adversarial_group_calibration": None},
    ),
    Default(
        "num_trials",
        "`None`: 10, or the groups' trials (as `num_group_bins`)",
        "uncertainty-toolbox 0.1.1",
        {"adversarial_group_calibration": None},
    ),
    Default(
        "scores",
        '`("nll", "crps", "check", "interval")`; `predictive_scores`: `None`, '
        "every score of the form of the forecast; `compare_forecasts`: `None`, every score "
        'of both forms; `compare_models`: `("nll", "crps")`',
        "the four scoring rules of uncertainty-toolbox; a forecast is scored as given; "
        "the two closed-form scores of Pernot (2024b) and Gneiting & Raftery (2007) that "
        "every std forecast has",
        {
            "proper_scores": ("nll", "crps", "check", "interval"),
            **_all(None, "predictive_scores", "compare_forecasts"),
            "compare_models": ("nll", "crps"),
        },
    ),
)


def documented() -> set[str]:
    """The parameter names the table documents (every public default of them is checked)."""
    return {row.parameter for row in DEFAULTS if row.parameter is not None}


def signature_default(function: str, parameter: str):
    """The documented signature default of ``parameter`` in ``function`` (a short name).

    A row naming the function wins over a ``"*"`` row; :data:`UNDOCUMENTED` when no row
    covers it.
    """
    every = UNDOCUMENTED
    for row in DEFAULTS:
        if row.parameter != parameter:
            continue
        if function in row.values:
            return row.values[function]
        every = row.values.get(EVERY, every)
    return every


def markdown_table() -> str:
    """The "Defaults" table of docs/conventions.md, from :data:`DEFAULTS`."""
    lines = ["| parameter | default | why |", "|---|---|---|"]
    lines += [f"| {row.first_cell} | {row.default} | {row.why} |" for row in DEFAULTS]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_table())
