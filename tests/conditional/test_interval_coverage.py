"""local_interval_coverage: the PICP per bin of local_calibration(statistic="PICP"), its own
function (issue 38, item 2); the old call kept one release with a FutureWarning."""

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats as sps

import uqviz
from uqviz._array.binomial import wilson_coverage, wilson_interval
from uqviz.engine import checks, seeds
from uqviz.engine.binning import compute_bins
from uqviz.engine.deprecation import REMOVED_IN


def _data(which):
    ds = uqviz.synthetic.default_example()
    if which == "ds":
        return ds
    return uqviz.from_arrays(
        ds["E"].values, ds["uE"].values, features={"g": np.round(ds["X"].values, 1)}
    )


# the options of each case and what local_calibration(statistic="PICP") gave before the
# function existed (computed at commit 45a2d04, then pinned): the same numbers and attrs
# (but engine, that of the machine)
CASES = {
    "default": ("ds", {"n_bins": 5}),
    "level_t6_X": (
        "ds",
        {"level": 0.9, "generative": "t6", "conditioning": "X", "n_bins": 4, "ci": 0.9},
    ),
    "ties": ("tied", {"conditioning": "g", "n_bins": 6, "random_ties": True, "rng": 3}),
    "stratified": ("tied", {"conditioning": "g", "binning": "stratified", "min_count": 300}),
    "nomc_width": ("ds", {"binning": "equal_width", "n_bins": 4, "n_mc": 0, "log": True}),
}
PINNED = {
    "default": {
        "estimate": [0.945, 0.949, 0.948, 0.948, 0.943],
        "ci_lower": [
            0.9285339750361439,
            0.9330042129233072,
            0.9318846522753058,
            0.9318846522753058,
            0.926306528502964,
        ],
        "ci_upper": [
            0.9579407905127268,
            0.9614345764815702,
            0.9605631847151498,
            0.9605631847151498,
            0.9561860263391427,
        ],
        "zeta": [
            -0.3863751596227949,
            -0.080420913529475,
            -0.15919530320908357,
            -0.15919530320908357,
            -0.5308650096671255,
        ],
        "beta_gm_z2": [
            0.6840051007843607,
            0.6702783812033921,
            0.6497516795876079,
            0.6497680936489482,
            0.6841498135455747,
        ],
        "null_coverage": [
            0.965030142722854,
            0.965030142722854,
            0.965030142722854,
            0.965030142722854,
            0.965030142722854,
        ],
        "count": [1000, 1000, 1000, 1000, 1000],
        "attrs": {
            "conditioning": "uE",
            "binning": "equal_count",
            "n_bins_requested": 5,
            "ties": "data order",
            "n_bins": 5,
            "statistic": "PICP",
            "n_boot": 5000,
            "ci": 0.95,
            "method": "wilson",
            "rng": "None",
            "random_ties": 0,
            "generative": "normal",
            "n_mc": 2000,
            "level": 0.95,
        },
    },
    "level_t6_X": {
        "estimate": [0.968, 0.9208, 0.8736, 0.8016],
        "ci_lower": [0.958299806475068, 0.9068802679150094, 0.856909078044662, 0.781990744977855],
        "ci_upper": [0.9755807531106686, 0.932844421239575, 0.8886354968585823, 0.8198784483950066],
        "zeta": [7.010169418292772, 1.4942816336550258, -1.7558448682013987, -5.383389107955221],
        "beta_gm_z2": [
            0.6316656237982002,
            0.6044531189471377,
            0.6046112240082089,
            0.6679999104261174,
        ],
        "null_coverage": [
            0.9013099577890142,
            0.9013099577890142,
            0.9013099577890142,
            0.9013099577890142,
        ],
        "count": [1250, 1250, 1250, 1250],
        "attrs": {
            "conditioning": "X",
            "binning": "equal_count",
            "n_bins_requested": 4,
            "ties": "data order",
            "n_bins": 4,
            "statistic": "PICP",
            "n_boot": 5000,
            "ci": 0.9,
            "method": "wilson",
            "rng": "None",
            "random_ties": 0,
            "generative": "t6",
            "n_mc": 2000,
            "level": 0.9,
        },
    },
    "ties": {
        "estimate": [
            0.992797118847539,
            0.9844124700239808,
            0.9735894357743097,
            0.943577430972389,
            0.9124700239808153,
            0.8727490996398559,
        ],
        "ci_lower": [
            0.9835621419230092,
            0.9727665512734442,
            0.9596217152456423,
            0.9251017770505192,
            0.8906941559427133,
            0.8477518873163019,
        ],
        "ci_upper": [
            0.997068666354373,
            0.9913108149500574,
            0.9829747191751088,
            0.9578263216296619,
            0.9303462032193469,
            0.8942338586415092,
        ],
        "zeta": [
            4.634242099063833,
            2.954895252244086,
            1.688853648374104,
            -0.4507416880438181,
            -2.0994405749909837,
            -3.5956140049883536,
        ],
        "beta_gm_z2": [
            0.6274593041967284,
            0.5693438859226172,
            0.6071404284193843,
            0.5940899222824977,
            0.6501132389346804,
            0.6527978378886,
        ],
        "null_coverage": [
            0.9615826569304409,
            0.9613757188997543,
            0.9615826569304409,
            0.9615826569304409,
            0.9613757188997543,
            0.9615826569304409,
        ],
        "count": [833, 834, 833, 833, 834, 833],
        "attrs": {
            "conditioning": "g",
            "binning": "equal_count",
            "n_bins_requested": 6,
            "ties": "random order",
            "n_bins": 6,
            "statistic": "PICP",
            "n_boot": 5000,
            "ci": 0.95,
            "method": "wilson",
            "rng": 3,
            "random_ties": 1,
            "generative": "normal",
            "n_mc": 2000,
            "level": 0.95,
        },
    },
    "stratified": {
        "estimate": [
            0.9923566878980892,
            0.991869918699187,
            0.9771784232365145,
            0.9713740458015268,
            0.9604989604989606,
            0.9423459244532804,
            0.914,
            0.9107142857142857,
            0.869684499314129,
        ],
        "ci_lower": [
            0.9825633347151805,
            0.9778490355770422,
            0.9582936856603588,
            0.9521427435690748,
            0.9378904144279806,
            0.9172793510849333,
            0.8850413860046946,
            0.881506378674426,
            0.8425597799624304,
        ],
        "ci_upper": [
            0.9968892099660099,
            0.9973924365185466,
            0.9879545485369927,
            0.98330014461565,
            0.9753855578292484,
            0.9603856049985857,
            0.9363918474048588,
            0.9334639109109837,
            0.8928253951980152,
        ],
        "zeta": [
            4.325044456888384,
            2.98625402796897,
            1.4391739957684457,
            1.1114195774771332,
            0.4643801713740864,
            -0.4242910802936303,
            -1.6077279980118266,
            -1.7268730339969036,
            -3.4707169976853542,
        ],
        "beta_gm_z2": [
            0.6294855719486313,
            0.6166435088499986,
            0.5348627457327124,
            0.6193333777570749,
            0.6342637920156136,
            0.584885039476079,
            0.6171323463286456,
            0.6661228225479394,
            0.6613753480851603,
        ],
        "null_coverage": [
            0.9595350791900776,
            0.9621311451944166,
            0.9538203449108761,
            0.9650025436684341,
            0.954154999349632,
            0.9602009523265257,
            0.9695446531826799,
            0.9600603326174242,
            0.9592814196716262,
        ],
        "count": [785, 492, 482, 524, 481, 503, 500, 504, 729],
        "attrs": {
            "conditioning": "g",
            "binning": "stratified",
            "min_count": 300,
            "log": False,
            "n_bins": 9,
            "statistic": "PICP",
            "n_boot": 5000,
            "ci": 0.95,
            "method": "wilson",
            "rng": "None",
            "random_ties": 0,
            "generative": "normal",
            "n_mc": 2000,
            "level": 0.95,
        },
    },
    "nomc_width": {
        "estimate": [0.944006309148265, 0.9485714285714286, 0.949438202247191, 0.9444885011895321],
        "ci_lower": [
            0.9295243417599462,
            0.9342879476084253,
            0.9353864896410335,
            0.9300104180217829,
        ],
        "ci_upper": [0.9557231456743573, 0.9599585512298018, 0.960636759593159, 0.9561825659754328],
        "zeta": [
            -0.5115451460287548,
            -0.12545499608901461,
            -0.05016697557129815,
            -0.471307360731655,
        ],
        "beta_gm_z2": [
            0.6846029616440464,
            0.6675659163624914,
            0.6625037210356609,
            0.6657077855774121,
        ],
        "count": [1268, 1225, 1246, 1261],
        "attrs": {
            "conditioning": "uE",
            "binning": "equal_width",
            "min_count": 0,
            "log": True,
            "n_bins": 4,
            "statistic": "PICP",
            "n_boot": 5000,
            "ci": 0.95,
            "method": "wilson",
            "rng": "None",
            "random_ties": 0,
            "generative": "normal",
            "n_mc": 0,
            "level": 0.95,
        },
    },
}


def _check_pinned(res, pinned, *, old):
    for name, values in pinned.items():
        if name == "attrs":
            expected = dict(values)
            if old:
                expected["engine"] = checks.engine(None)
            else:
                del expected["n_boot"]
            got = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in res.attrs.items()}
            assert got == expected
        else:
            assert np.asarray(res[name].values).tolist() == values, name  # bit-identical


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_numbers_and_attrs_as_local_calibration_picp(case):
    which, kwargs = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", uqviz.BinningWarning)
        res = uqviz.local_interval_coverage(_data(which), **kwargs)
    _check_pinned(res, PINNED[case], old=False)
    assert res["heavy_tail"].dtype == bool and not res["heavy_tail"].any()
    assert float(res["reference"]) == kwargs.get("level", 0.95)
    assert ("null_coverage" in res) == (kwargs.get("n_mc", 1) != 0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_local_calibration_picp_still_works_with_a_future_warning(case):
    which, kwargs = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", uqviz.BinningWarning)
        with pytest.warns(
            FutureWarning,
            match=r"local_calibration\(statistic='PICP'\) is "
            r"deprecated and will be removed in uqviz "
            rf"{REMOVED_IN}: use local_interval_coverage",
        ):
            res = uqviz.local_calibration(_data(which), statistic="PICP", **kwargs)
    _check_pinned(res, PINNED[case], old=True)


def test_every_number_by_hand():
    """PICP per bin, its Wilson interval (continuity correction) and the exact null, computed
    here from the points of each bin."""
    ds = _data("ds")
    res = uqviz.local_interval_coverage(
        ds, level=0.8, conditioning="X", n_bins=7, ci=0.9, generative="t6"
    )
    x = ds["X"].values
    order = np.argsort(x, kind="stable")
    z = np.abs(ds["E"].values / ds["uE"].values)[order]
    q = sps.t.ppf(0.9, 6) * np.sqrt(4.0 / 6.0)  # unit-variance t6
    sizes = res["count"].values
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    k = np.array([np.sum(z[a:b] <= q) for a, b in zip(bounds[:-1], bounds[1:])])
    np.testing.assert_allclose(res["estimate"], k / sizes, rtol=0, atol=1e-15)
    lo, hi = wilson_interval(k, sizes, ci=0.9, continuity=True)
    np.testing.assert_allclose(res["ci_lower"], lo, rtol=1e-14)
    np.testing.assert_allclose(res["ci_upper"], hi, rtol=1e-14)
    np.testing.assert_array_equal(res["valid"], (lo <= 0.8) & (0.8 <= hi))
    np.testing.assert_allclose(
        res["null_coverage"], [wilson_coverage(int(n), 0.8, ci=0.9) for n in sizes]
    )
    assert res.attrs["statistic"] == "PICP" and res.attrs["method"] == "wilson"
    assert res.attrs["level"] == 0.8 and res.attrs["generative"] == "t6"


def test_fraction_valid_takes_it_calibrated_and_wilson():
    ds = _data("ds")
    res = uqviz.local_interval_coverage(ds, n_bins=10)
    fv = uqviz.fraction_valid(res)
    assert fv.attrs["method"] == "calibrated" and fv.attrs["statistic"] == "PICP"
    assert float(fv["estimate"]) == float(res["valid"].mean())
    np.testing.assert_allclose(float(fv["reference"]), float(res["null_coverage"].mean()))
    fw = uqviz.fraction_valid(uqviz.local_interval_coverage(ds, n_bins=10, n_mc=0))
    assert fw.attrs["method"] == "wilson" and float(fw["estimate"]) == float(fv["estimate"])


def test_random_ties_use_the_stream_of_local_calibration():
    """The same rng breaks the ties as local_calibration does (the first stream of the
    dataset's child): the same bins, hence the PICP and the LZMS of the same points."""
    data = _data("tied")
    a = uqviz.local_interval_coverage(data, conditioning="g", n_bins=6, random_ties=True, rng=11)
    b = uqviz.local_calibration(
        data,
        conditioning="g",
        n_bins=6,
        random_ties=True,
        rng=11,
        n_boot=20,
        n_mc=0,
        method="percentile",
    )
    ties = uqviz.conditional.local.local_streams(seeds.spawn(11, 1)[0])[0]
    bins = compute_bins(data["g"].values, n_bins=6, rng=ties)
    z = (data["E"].values / data["uE"].values)[bins.order]
    inside = (np.abs(z) <= sps.norm.ppf(0.975)).astype(float)
    np.testing.assert_allclose(
        a["estimate"], np.add.reduceat(inside, bins.starts) / bins.sizes, rtol=0, atol=1e-15
    )
    np.testing.assert_allclose(
        b["estimate"], np.add.reduceat(z * z, bins.starts) / bins.sizes, rtol=1e-12
    )
    c = uqviz.local_interval_coverage(data, conditioning="g", n_bins=6, random_ties=True, rng=12)
    assert not np.array_equal(a["estimate"].values, c["estimate"].values)
    assert a.attrs["rng"] == 11 and a.attrs["random_ties"] == 1


def test_a_datatree_gives_one_result_per_dataset():
    ds = _data("ds")
    tree = xr.DataTree.from_dict(
        {"a": ds.isel(point=slice(0, 2500)), "b": ds.isel(point=slice(2500, None))}
    )
    res = uqviz.local_interval_coverage(tree, n_bins=4)
    assert res["estimate"].dims == ("dataset", "bin")
    one = uqviz.local_interval_coverage(ds.isel(point=slice(2500, None)), n_bins=4)
    np.testing.assert_array_equal(res["estimate"].sel(dataset="b"), one["estimate"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(level=1.5), "level must be in"),
        (dict(ci=0.0), "ci must be in"),
        (dict(n_mc=1), "n_mc must be 0"),
        (dict(edges=[0.0, 1.0]), "edges: bin edges are used only with binning='edges'"),
        (dict(binning="quantile"), "binning"),
        (dict(n_bins=0), "n_bins must be"),
        (dict(rng=-1), "rng must be a non-negative"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        uqviz.local_interval_coverage(_data("ds"), **kwargs)


def test_the_old_call_keeps_its_checks():
    ds = _data("ds")
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="method"):
        uqviz.local_calibration(ds, statistic="PICP", method="bca")
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="n_boot must be >= 2"):
        uqviz.local_calibration(ds, statistic="PICP", n_boot=1)
    with pytest.raises(ValueError, match="statistic='PICP' only"):
        uqviz.local_calibration(ds, level=0.9)
