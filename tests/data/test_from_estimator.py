"""uqviz.from_estimator on scikit-learn models (load_diabetes ships with scikit-learn: no
download), against hand computations from the models' own methods; NGBoost and MAPIE through
duck-typed stand-ins (and the real packages when installed)."""

import types

import numpy as np
import pandas as pd
import pytest

import uqviz
import uqviz.data.estimators as est_mod

import sklearn  # noqa: F401  (the test extra installs scikit-learn, NGBoost and MAPIE)

from sklearn.compose import TransformedTargetRegressor  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import (
    BaggingRegressor,
    ExtraTreesRegressor,  # noqa: E402
    GradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel  # noqa: E402
from sklearn.linear_model import ARDRegression, BayesianRidge, LinearRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:300], y.iloc[:300], X.iloc[300:], y.iloc[300:]


def _check_e(ds, y, y_pred):
    np.testing.assert_allclose(
        ds["E"].values, np.asarray(y) - np.asarray(y_pred), rtol=1e-10, atol=1e-9
    )


@pytest.mark.parametrize(
    "model",
    [
        BayesianRidge(),
        ARDRegression(),
        GaussianProcessRegressor(
            ConstantKernel() * RBF(1.0) + WhiteKernel(), normalize_y=True, random_state=0
        ),
    ],
    ids=["BayesianRidge", "ARDRegression", "GaussianProcessRegressor"],
)
def test_return_std_models(diabetes, model):
    Xtr, ytr, Xte, yte = diabetes
    model.fit(Xtr, ytr)
    ds = uqviz.from_estimator(model, Xte, yte)
    mu, sd = model.predict(Xte, return_std=True)
    _check_e(ds, yte, mu)
    np.testing.assert_allclose(ds["uE"].values, sd, rtol=1e-12)
    assert ds.attrs["estimator"] == type(model).__name__ == ds.attrs["name"]
    assert ds.attrs["uE_from"] == "predict(X, return_std=True)"
    assert [v for v in ds.data_vars if ds[v].attrs.get("role") == "feature"] == list(Xte.columns)
    np.testing.assert_array_equal(ds["bmi"].values, Xte["bmi"].values)


@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor])
def test_forest_mean_and_sd_of_the_trees(diabetes, cls):
    Xtr, ytr, Xte, yte = diabetes
    rf = cls(n_estimators=40, random_state=0).fit(Xtr, ytr)
    ds = uqviz.from_estimator(rf, Xte, yte, name="forest")
    trees = np.array([t.predict(Xte.to_numpy(dtype=np.float32)) for t in rf.estimators_])
    _check_e(ds, yte, rf.predict(Xte))
    np.testing.assert_allclose(ds["E"].values, yte.values - trees.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(ds["uE"].values, trees.std(axis=0, ddof=1), rtol=1e-9)
    assert ds.attrs["n_members"] == 40 and ds.attrs["ddof"] == 1
    assert ds.attrs["name"] == "forest"


def test_forest_threads_and_blocks_give_the_same_numbers(diabetes, monkeypatch):
    Xtr, ytr, Xte, yte = diabetes
    rf = RandomForestRegressor(n_estimators=20, random_state=0).fit(Xtr, ytr)
    one = uqviz.from_estimator(rf, Xte, yte)
    monkeypatch.setattr(est_mod, "BLOCK_ROWS", 17)  # 142 rows: 9 blocks
    for n_jobs in (1, 2, -1):
        rf.n_jobs = n_jobs
        other = uqviz.from_estimator(rf, Xte, yte)
        np.testing.assert_allclose(other["uE"].values, one["uE"].values, rtol=1e-12)
        np.testing.assert_allclose(other["E"].values, one["E"].values, rtol=1e-12)


def test_bagging_members_predict_their_feature_subsets(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    bag = BaggingRegressor(
        LinearRegression(), n_estimators=25, max_features=0.5, random_state=0
    ).fit(Xtr, ytr)
    ds = uqviz.from_estimator(bag, Xte, yte)
    xa = Xte.to_numpy()
    members = np.array(
        [m.predict(xa[:, f]) for m, f in zip(bag.estimators_, bag.estimators_features_)]
    )
    _check_e(ds, yte, bag.predict(Xte))
    np.testing.assert_allclose(ds["uE"].values, members.std(axis=0, ddof=1), rtol=1e-10)
    assert ds.attrs["n_members"] == 25


def test_pipeline_transforms_x_for_its_final_step(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    pipe = make_pipeline(StandardScaler(), BayesianRidge()).fit(Xtr, ytr)
    ds = uqviz.from_estimator(pipe, Xte, yte)
    mu, sd = pipe[-1].predict(pipe[0].transform(Xte), return_std=True)
    _check_e(ds, yte, mu)
    np.testing.assert_allclose(ds["uE"].values, sd, rtol=1e-12)
    assert ds.attrs["estimator"] == "Pipeline > BayesianRidge"
    rf_pipe = make_pipeline(StandardScaler(), RandomForestRegressor(10, random_state=0))
    rf_pipe.fit(Xtr, ytr)
    ds = uqviz.from_estimator(rf_pipe, Xte, yte)
    _check_e(ds, yte, rf_pipe.predict(Xte))
    assert list(Xte.columns) == [v for v in ds.data_vars if v not in ("E", "uE")]


def test_transformed_target_linear_and_nonlinear(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    ttr = TransformedTargetRegressor(BayesianRidge(), transformer=StandardScaler()).fit(Xtr, ytr)
    ds = uqviz.from_estimator(ttr, Xte, yte)
    _, sd_t = ttr.regressor_.predict(Xte, return_std=True)
    _check_e(ds, yte, ttr.predict(Xte))
    np.testing.assert_allclose(ds["uE"].values, sd_t * ttr.transformer_.scale_[0], rtol=1e-6)
    assert ds.attrs["estimator"] == "TransformedTargetRegressor > BayesianRidge"
    log = TransformedTargetRegressor(BayesianRidge(), func=np.log, inverse_func=np.exp)
    log.fit(Xtr, ytr)
    ds = uqviz.from_estimator(log, Xte, yte)
    mu_t, sd_t = log.regressor_.predict(Xte, return_std=True)
    _check_e(ds, yte, log.predict(Xte))
    np.testing.assert_allclose(ds["uE"].values, np.exp(mu_t) * sd_t, rtol=1e-5)  # delta method


def test_grid_search_uses_its_best_estimator(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    gs = GridSearchCV(BayesianRidge(), {"alpha_1": [1e-6, 1e-3]}, cv=2).fit(Xtr, ytr)
    ds = uqviz.from_estimator(gs, Xte, yte)
    np.testing.assert_allclose(ds["uE"].values, gs.best_estimator_.predict(Xte, return_std=True)[1])
    assert ds.attrs["estimator"] == "GridSearchCV > BayesianRidge"


# ---------------------------------------------------------------------------------------
# features
# ---------------------------------------------------------------------------------------
def test_feature_choices(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    model = BayesianRidge().fit(Xtr.to_numpy(), ytr)
    ds = uqviz.from_estimator(model, Xte.to_numpy(), yte.to_numpy())
    assert set(ds.data_vars) == {"E", "uE"}
    names = [f"x{i}" for i in range(Xte.shape[1])]
    ds = uqviz.from_estimator(model, Xte.to_numpy(), yte.to_numpy(), features=names)
    np.testing.assert_array_equal(ds["x2"].values, Xte.to_numpy()[:, 2])
    with pytest.raises(ValueError, match=r"name every column: X has shape \(142, 10\), got 2"):
        uqviz.from_estimator(model, Xte.to_numpy(), yte.to_numpy(), features=["a", "b"])
    model = BayesianRidge().fit(Xtr, ytr)
    ds = uqviz.from_estimator(model, Xte, yte, features=["bmi", "age"])
    assert set(ds.data_vars) == {"E", "uE", "bmi", "age"}
    with pytest.raises(ValueError, match=r"features: not columns of X: 'mass'"):
        uqviz.from_estimator(model, Xte, yte, features=["mass"])


def test_non_numeric_columns_are_not_features_and_indexes_must_match(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    pipe = make_pipeline(
        sklearn.compose.ColumnTransformer([("num", "passthrough", list(Xtr.columns))]),
        BayesianRidge(),
    ).fit(Xtr, ytr)
    Xc = Xte.assign(group=np.where(Xte["sex"] > 0, "a", "b"))
    ds = uqviz.from_estimator(pipe, Xc, yte)
    assert "group" not in ds and "bmi" in ds
    with pytest.raises(ValueError, match="different indexes"):
        uqviz.from_estimator(pipe, Xc, yte.reset_index(drop=True))


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------
def test_no_uncertainty_is_a_clear_type_error(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    for model in (LinearRegression(), GradientBoostingRegressor(n_estimators=5)):
        model.fit(Xtr, ytr)
        with pytest.raises(
            TypeError,
            match=rf"estimator: {type(model).__name__} gives no "
            r"uncertainty.*RandomForestRegressor.*from_predictions",
        ):
            uqviz.from_estimator(model, Xte, yte)
    with pytest.raises(TypeError, match="estimator: expected a fitted estimator instance"):
        uqviz.from_estimator(BayesianRidge, Xte, yte)
    with pytest.raises(TypeError, match="no predict method"):
        uqviz.from_estimator(object(), Xte, yte)


def test_unfitted_estimator_and_bad_data(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    with pytest.raises(ValueError, match=r"^estimator: .*not fitted"):
        uqviz.from_estimator(RandomForestRegressor(3), Xte, yte)
    model = BayesianRidge().fit(Xtr, ytr)
    with pytest.raises(ValueError, match=r"length mismatch: y_true has 5 rows, y_pred has 142"):
        uqviz.from_estimator(model, Xte, yte.iloc[:5].to_numpy())
    y_bad = yte.to_numpy().copy()
    y_bad[[0, 10]] = np.nan
    with pytest.raises(ValueError, match=r"E: 2 rows with NaN \(rows 0, 10\)") as err:
        uqviz.from_estimator(model, Xte, y_bad)
    # issue 22 item 7: the message advised drop_invalid=True, which from_estimator lacks
    assert "drop_invalid=True to drop" not in str(err.value)
    assert str(err.value).startswith(
        "invalid values (drop these rows from X and y, or pass the "
        "predictions to uqviz.from_predictions(..., "
        "drop_invalid=True)):"
    )


def test_multi_output_forest_is_refused(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    rf = RandomForestRegressor(3, random_state=0).fit(Xtr, np.c_[ytr, ytr])
    with pytest.raises(ValueError, match="multi-output"):
        uqviz.from_estimator(rf, Xte, yte)


# ---------------------------------------------------------------------------------------
# NGBoost and MAPIE (duck-typed stand-ins; the real packages when installed)
# ---------------------------------------------------------------------------------------
def _fake(module, name, **methods):
    cls = type(
        name, (), {k: (lambda f: lambda self, *a, **k: f(*a, **k))(v) for k, v in methods.items()}
    )
    cls.__module__ = module
    return cls()


def test_ngboost_like_pred_dist():
    X = np.arange(6.0).reshape(3, 2)
    dist = types.SimpleNamespace(std=lambda: np.array([0.5, 1.0, 2.0]))
    model = _fake(
        "ngboost.api", "NGBRegressor", predict=lambda X: X[:, 0], pred_dist=lambda X: dist
    )
    ds = uqviz.from_estimator(model, X, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(ds["E"].values, [1.0, 0.0, -1.0])
    np.testing.assert_allclose(ds["uE"].values, [0.5, 1.0, 2.0])
    assert ds.attrs["uE_from"] == "pred_dist(X).std()"


def test_mapie_like_interval_regressor():
    X = np.zeros((3, 1))
    yp = np.array([1.0, 2.0, 3.0])
    pis = np.stack([yp - 1.6448536269514722, yp + 1.6448536269514722], axis=1)[:, :, None]
    model = _fake(
        "mapie.regression", "SplitConformalRegressor", predict_interval=lambda X: (yp, pis)
    )
    model.confidence_level = 0.9
    ds = uqviz.from_estimator(model, X, [1.5, 2.0, 2.0])
    np.testing.assert_allclose(ds["uE"].values, 1.0)
    assert ds.attrs["uE_source"] == "interval" and ds.attrs["level"] == 0.9
    old = _fake("mapie.regression", "MapieRegressor", predict=lambda X, alpha=None: yp)
    with pytest.raises(TypeError, match="MAPIE < 1.0.*from_predictions"):
        uqviz.from_estimator(old, X, [1.0, 2.0, 3.0])


def test_real_ngboost():
    import ngboost

    X, y = load_diabetes(return_X_y=True)
    model = ngboost.NGBRegressor(n_estimators=20, verbose=False).fit(X[:300], y[:300])
    ds = uqviz.from_estimator(model, X[300:], y[300:])
    np.testing.assert_allclose(ds["uE"].values, model.pred_dist(X[300:]).params["scale"])


def test_real_mapie():
    import mapie.regression as mapie

    X, y = load_diabetes(return_X_y=True)
    model = mapie.SplitConformalRegressor(LinearRegression(), confidence_level=0.9, prefit=False)
    model.fit(X[:200], y[:200]).conformalize(X[200:300], y[200:300])
    ds = uqviz.from_estimator(model, X[300:], y[300:])
    assert ds.attrs["level"] == 0.9 and ds.sizes["point"] == 142


@pytest.mark.filterwarnings("ignore:equal-count binning")  # bmi has tied values
def test_dataset_feeds_the_analyses(diabetes):
    Xtr, ytr, Xte, yte = diabetes
    rf = RandomForestRegressor(30, min_samples_leaf=5, random_state=0).fit(Xtr, ytr)
    ds = uqviz.from_estimator(rf, pd.concat([Xte] * 3), pd.concat([yte] * 3))
    res = uqviz.local_calibration(ds, conditioning="bmi", n_bins=4, n_boot=100, rng=0)
    assert res.sizes["bin"] == 4


@pytest.mark.parametrize("make", [RandomForestRegressor, BaggingRegressor])
def test_an_ensemble_of_one_member_is_named(make):
    """issue 38, item 9: a one-tree forest said "uE: 40 rows with NaN"."""
    r = np.random.default_rng(0)
    X = r.random((40, 2))
    y = X[:, 0] + 0.1 * r.standard_normal(40)
    est = make(n_estimators=1, random_state=0).fit(X, y)
    with pytest.raises(
        ValueError,
        match=r"estimator: an ensemble of 1 member\(s\) "
        r"\(n_estimators=1\) has no spread",
    ):
        uqviz.from_estimator(est, X, y)
