"""uqviz: whether the uncertainties of a regression model can be trusted.

Validation of prediction uncertainties (average calibration, consistency,
adaptivity) on labelled xarray data, after P. Pernot's method papers.

Examples
--------
>>> import uqviz
>>> ds = uqviz.synthetic.default_example()
>>> res = uqviz.validate_average(ds, n_boot=2000, rng=0)
>>> res["statistic"].values.tolist()
['ZMS', 'RCE']
"""

from uqviz import (
    average,
    comparison,
    conditional,
    data,
    engine,
    experiments,
    groups,
    predictive,
    quantile,
    recalibration,
    reference,
    scores,
)

# public namespaces: modules of this folder that re-export their implementation,
# datasets/ (of data/datasets/), synthetic.py and generative.py (of data/), statistics.py (of
# engine/statistics.py)
from uqviz import datasets, generative, statistics, synthetic
from uqviz.average import (
    decimated,
    decimation_curve,
    distribution_shapes,
    fit_f,
    fit_inverse_gamma,
    fit_student_t,
    nig_implied_shape,
    nig_skewness_curve,
    tailedness,
    validate_average,
)
from uqviz.conditional import (
    acf,
    binned_errors,
    fraction_valid,
    local_calibration,
    ordering_study,
    reliability,
    running_statistics,
)
from uqviz.conditional import local_interval_coverage
from uqviz.comparison import compare_models
from uqviz.data import (
    check_dataset,
    from_arrays,
    from_dataframe,
    from_datasets,
    from_estimator,
    from_predictions,
    pool_targets,
    read_csv,
    z_scores,
)
from uqviz.engine.statistics import get_statistic, list_statistics
from uqviz.groups import adversarial_group_calibration, adversarial_validation
from uqviz.engine.warning_classes import (
    BinningWarning,
    DataWarning,
    NumbaMissingWarning,
    NumericalWarning,
    UnreliableWarning,
    UqvizWarning,
)
from uqviz.experiments import (
    load_study,
    operating_characteristics,
    save_study,
    statistic_bias,
    stored_study,
    validation_probability,
)
from uqviz.groups import group_coverage
from uqviz.predictive import local_pit, pit, validate_pit
from uqviz.quantile import nees, nees_test, qce, qce_to_numpy
from uqviz.recalibration import Recalibration, fit_recalibration, recalibrate
from uqviz.reference import (
    confidence_curve,
    extrapolate,
    simulated_reference,
    size_dependence,
    validate,
    validate_simulated,
    validate_with_references,
)
from uqviz.reporting import report
from uqviz.scores import (
    calibration_curve,
    compare_forecasts,
    dawid_sebastiani_score,
    energy_score,
    energy_score_normal,
    interval_coverage,
    predictive_scores,
    proper_scores,
    variogram_score,
)

from uqviz._version import __version__  # a leaf module: experiments/storage.py reads it too


def __getattr__(name):
    """``uqviz.plots`` and ``uqviz.widgets`` load on first use (matplotlib, ipywidgets)."""
    if name in ("plots", "widgets"):
        import importlib

        return importlib.import_module(f"uqviz.{name}")
    raise AttributeError(f"module 'uqviz' has no attribute {name!r}")


__all__ = sorted(
    [
        "BinningWarning",
        "DataWarning",
        "NumbaMissingWarning",
        "NumericalWarning",
        "UnreliableWarning",
        "UqvizWarning",
        "Recalibration",
        "acf",
        "adversarial_group_calibration",
        "adversarial_validation",
        "binned_errors",
        "calibration_curve",
        "check_dataset",
        "compare_forecasts",
        "compare_models",
        "comparison",
        "predictive_scores",
        "confidence_curve",
        "dawid_sebastiani_score",
        "datasets",
        "decimated",
        "decimation_curve",
        "distribution_shapes",
        "energy_score",
        "energy_score_normal",
        "experiments",
        "extrapolate",
        "fit_f",
        "fit_inverse_gamma",
        "fit_recalibration",
        "fit_student_t",
        "fraction_valid",
        "from_arrays",
        "from_dataframe",
        "from_datasets",
        "from_estimator",
        "from_predictions",
        "generative",
        "get_statistic",
        "group_coverage",
        "groups",
        "interval_coverage",
        "local_interval_coverage",
        "list_statistics",
        "load_study",
        "local_pit",
        "local_calibration",
        "nees",
        "nees_test",
        "nig_implied_shape",
        "nig_skewness_curve",
        "operating_characteristics",
        "ordering_study",
        "pit",
        "pool_targets",
        "predictive",
        "proper_scores",
        "qce",
        "qce_to_numpy",
        "quantile",
        "read_csv",
        "recalibrate",
        "recalibration",
        "reliability",
        "report",
        "running_statistics",
        "save_study",
        "stored_study",
        "simulated_reference",
        "size_dependence",
        "statistic_bias",
        "statistics",
        "synthetic",
        "tailedness",
        "validate_average",
        "validate_pit",
        "validate_simulated",
        "validate_with_references",
        "validation_probability",
        "variogram_score",
        "z_scores",
    ]
)
