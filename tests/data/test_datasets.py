"""uqviz.datasets: registry, data directory, loaders of the real sets (local files only).

The real files are read from ``$UQVIZ_DATA_DIR`` (CI: ``../shared/data`` relative to
the repository root). These tests never download anything.
"""

import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pooch
import pytest
import requests
import xarray as xr

import uqviz.datasets as uds
from uqviz.data import check_dataset
from uqviz.data.datasets import registry as reg
from uqviz.datasets.formula import hetero_fractions, molecular_masses

PAPER_ORDER = [
    "Diffusion_RF",
    "Perovskite_RF",
    "Diffusion_LR",
    "Perovskite_LR",
    "Diffusion_GPR_Bayesian",
    "Perovskite_GPR_Bayesian",
    "QM9_E",
    "logP_10k_a_LS-GCN",
    "logP_150k_LS-GCN",
]
# Pernot (2024a), Table 1
PAPER_SIZES = [2040, 3834, 2040, 3836, 2040, 3818, 13885, 5000, 5000]
PAL = PAPER_ORDER[:6]
QM9_U0_SIZE = 13885
DIFFUSION_RF = "pernot-2024_RCE-v4.0/PAL2022/Diffusion_RF_Test_cal.csv"


@pytest.fixture(scope="module")
def real(data_root):
    """Loader with the absolute data dir set and a cache, so each set is read once."""
    cache = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UQVIZ_DATA_DIR", str(data_root))

        def load(name, calibrated=True):
            if (name, calibrated) not in cache:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # loading is silent, filter included
                    cache[name, calibrated] = uds.load_dataset(name, calibrated=calibrated)
            return cache[name, calibrated]

        yield load


@pytest.fixture
def no_download(monkeypatch):
    """Make any download attempt fail the test loudly."""
    calls = []

    def forbidden(*args, **kwargs):
        calls.append(args)
        raise AssertionError("a download was attempted")

    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", forbidden)
    monkeypatch.setattr(pooch, "retrieve", forbidden)
    monkeypatch.setattr(requests.Session, "request", forbidden)
    return calls


def _read(root: Path, key: str, **kw) -> pd.DataFrame:
    # exact decimal -> double, whatever pandas' default parser (2.x's is off by one ulp)
    return pd.read_csv(root / key, float_precision="round_trip", **kw)


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------
def test_registry_matches_sha256sums(data_root):
    sums = {}
    for line in (data_root / "SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, path = line.split()
            sums[path.removeprefix("./")] = f"sha256:{digest}"
    assert uds.REGISTRY == sums
    assert set(uds.URLS) == set(sums)
    for key, url in uds.URLS.items():
        top, rest = key.split("/", 1)
        repo, tag = {
            "pernot-2024_RCE-v4.0": ("2024_RCE", "v4.0"),
            "pernot-2023_Adaptivity-v1.1": ("2023_Adaptivity", "v1.1"),
        }[top]
        assert url == f"https://raw.githubusercontent.com/ppernot/{repo}/{tag}/Data/{rest}"


def test_every_dataset_source_is_registered():
    sources = uds.list_datasets()["source"]
    assert sources.isin(list(uds.REGISTRY)).all()
    assert sources.is_unique


def test_fetch_checks_the_local_file(data_root, monkeypatch, no_download):
    monkeypatch.setenv("UQVIZ_DATA_DIR", str(data_root))
    path = uds.fetch(DIFFUSION_RF)
    assert path == data_root / DIFFUSION_RF
    assert uds.data_dir() == data_root
    with pytest.raises(KeyError, match="not a registered"):
        uds.fetch("PAL2022/Diffusion_RF_Test_cal.csv")
    assert not no_download


def test_relative_data_dir_is_resolved_against_cwd(data_root, monkeypatch, no_download):
    monkeypatch.chdir(data_root.parent)
    monkeypatch.setenv("UQVIZ_DATA_DIR", os.path.join(".", data_root.name))
    assert uds.data_dir() == data_root
    assert uds.fetch(DIFFUSION_RF) == data_root / DIFFUSION_RF


def test_hash_mismatch_is_a_clear_error(data_root, tmp_path, monkeypatch, no_download):
    target = tmp_path / DIFFUSION_RF
    target.parent.mkdir(parents=True)
    shutil.copyfile(data_root / DIFFUSION_RF, target)
    raw = bytearray(target.read_bytes())
    raw[-3] = ord("7") if raw[-3] != ord("7") else ord("8")  # alter one digit
    target.write_bytes(bytes(raw))
    monkeypatch.setenv("UQVIZ_DATA_DIR", str(tmp_path))
    expected = uds.REGISTRY[DIFFUSION_RF].removeprefix("sha256:")
    actual = pooch.file_hash(str(target))
    with pytest.raises(uds.DataFileHashError) as info:
        uds.load_dataset("Diffusion_RF")
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    for part in (DIFFUSION_RF, str(target), expected, actual, uds.URLS[DIFFUSION_RF]):
        assert part in msg
    assert not no_download


def test_missing_file_with_data_dir_set_never_downloads(tmp_path, monkeypatch, no_download):
    monkeypatch.setenv("UQVIZ_DATA_DIR", str(tmp_path))
    with pytest.raises(uds.DataFileNotFoundError) as info:
        uds.load_dataset("QM9_U0")
    key = "pernot-2023_Adaptivity-v1.1/BUS2022/qm9_U0_test_Orig.csv"
    msg = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert key in msg
    assert str(tmp_path / key) in msg  # where to put it
    assert uds.URLS[key] in msg  # where to get it
    assert "UQVIZ_DATA_DIR" in msg
    assert not no_download
    assert not (tmp_path / "pernot-2023_Adaptivity-v1.1").exists()


def test_cache_mode_offline_is_a_clear_error(tmp_path, monkeypatch):
    """Without UQVIZ_DATA_DIR: pooch's cache, download attempted; offline -> clear error."""
    monkeypatch.delenv("UQVIZ_DATA_DIR", raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setattr(reg, "_cache_dir", lambda: cache)
    attempts = []

    def offline(self, url, output_file, pooch_obj, check_only=False):
        attempts.append(url)
        raise requests.exceptions.ConnectionError(f"no network for {url}")

    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", offline)
    with pytest.raises(uds.DataFileNotFoundError) as info:
        uds.fetch(DIFFUSION_RF)
    msg = str(info.value)
    assert DIFFUSION_RF in msg and uds.URLS[DIFFUSION_RF] in msg
    assert str(cache / DIFFUSION_RF) in msg and "UQVIZ_DATA_DIR" in msg
    assert attempts and attempts[0] == uds.URLS[DIFFUSION_RF]


def test_cache_mode_uses_a_cached_file_without_download(
    data_root, tmp_path, monkeypatch, no_download
):
    monkeypatch.delenv("UQVIZ_DATA_DIR", raising=False)
    cache = tmp_path / "cache"
    (cache / DIFFUSION_RF).parent.mkdir(parents=True)
    shutil.copyfile(data_root / DIFFUSION_RF, cache / DIFFUSION_RF)
    monkeypatch.setattr(reg, "_cache_dir", lambda: cache)
    assert uds.fetch(DIFFUSION_RF) == cache / DIFFUSION_RF
    assert uds.data_dir() == Path(pooch.os_cache("uqviz"))
    assert not no_download


# --------------------------------------------------------------------------
# list_datasets
# --------------------------------------------------------------------------
def test_list_datasets_table(real):
    df = uds.list_datasets()
    assert list(df.columns) == ["name", "calibrated", "size", "units", "source", "citation"]
    cal = df[df["calibrated"]]
    assert cal["name"].tolist() == PAPER_ORDER + ["QM9_U0"]
    assert cal["size"].tolist() == PAPER_SIZES + [QM9_U0_SIZE]
    twins = df[~df["calibrated"]]
    assert twins["name"].tolist() == PAL + ["QM9_E"]
    assert (df["citation"].str.len() > 20).all()
    # the advertised sizes are what the loaders give
    for row in df.itertuples():
        assert real(row.name, row.calibrated).sizes["point"] == row.size, row.name


# --------------------------------------------------------------------------
# the nine sets and QM9_U0
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, size", list(zip(PAPER_ORDER, PAPER_SIZES)) + [("QM9_U0", QM9_U0_SIZE)]
)
def test_sizes_and_attributes(real, name, size):
    ds = real(name)
    assert ds.sizes["point"] == size
    assert ds["E"].dims == ds["uE"].dims == ("point",)
    assert np.isfinite(ds["E"]).all() and (ds["uE"] > 0).all()
    spec = uds.list_datasets().set_index(["name", "calibrated"]).loc[(name, True)]
    assert ds.attrs["name"] == name
    assert ds.attrs["source"] == spec["source"] and ds.attrs["citation"] == spec["citation"]
    assert ds.attrs["units"] == ("" if name.startswith("logP") else "eV")
    assert ds.attrs["calibration"] == "calibrated"
    n_filtered = {"Perovskite_RF": 2, "Perovskite_GPR_Bayesian": 18}.get(name, 0)
    assert ds.attrs["n_filtered"] == n_filtered
    assert isinstance(ds.attrs["n_filtered"], int)
    check_dataset(ds)


@pytest.mark.parametrize("name", PAL)
def test_pal2022_columns_and_filter(real, data_root, name):
    ds = real(name)
    raw = _read(data_root, ds.attrs["source"])
    assert list(raw.columns) == ["E", "X", "uE"]
    keep = raw["uE"] > 1e-6 * raw["E"].std(ddof=1)  # the papers' filter, sample sd
    assert ds.attrs["n_filtered"] == int((~keep).sum())
    np.testing.assert_array_equal(ds["point"], np.flatnonzero(keep))  # row numbers in the file
    np.testing.assert_array_equal(ds["E"], raw["E"][keep])
    np.testing.assert_array_equal(ds["uE"], raw["uE"][keep])
    # X is the uncalibrated uncertainty: kept aside, never a feature
    np.testing.assert_array_equal(ds["uE_uncalibrated"], raw["X"][keep])
    assert ds["uE_uncalibrated"].attrs["role"] == "metadata"
    assert "X" not in ds.variables
    assert [v for v in ds.data_vars if ds[v].attrs.get("role") == "feature"] == []


@pytest.mark.parametrize("name, target", [("QM9_E", "E_"), ("QM9_U0", "U0")])
def test_qm9_sign_convention_and_features(real, data_root, name, target):
    ds = real(name)
    raw = _read(data_root, ds.attrs["source"])
    assert list(raw.columns) == [
        "index",
        "formula",
        target,
        "prediction",
        "uncertainty_aleatoric",
        "uncertainty_epistemic",
        "uncertainty_total",
    ]
    np.testing.assert_array_equal(ds["E"], raw[target] - raw["prediction"])  # E = ref - pred
    np.testing.assert_array_equal(ds["uE"], np.sqrt(raw["uncertainty_total"]))
    np.testing.assert_array_equal(ds["formula"], raw["formula"].to_numpy(dtype=object))
    np.testing.assert_array_equal(ds["qm9_index"], raw["index"])
    assert ds["formula"].dtype == object and isinstance(ds["formula"].values[0], str)
    assert ds["mass"].attrs["role"] == ds["hetero_fraction"].attrs["role"] == "feature"
    assert ds["formula"].attrs["role"] == "metadata"
    assert ds["mass"].attrs["units"] == "Da"
    np.testing.assert_array_equal(ds["mass"], molecular_masses(raw["formula"]))
    np.testing.assert_array_equal(ds["hetero_fraction"], hetero_fractions(raw["formula"]))
    # first row, by hand: C5H10N2O
    assert ds["formula"].values[0] == "C5H10N2O"
    assert ds["mass"].values[0] == pytest.approx(5 * 12.011 + 10 * 1.008 + 2 * 14.007 + 15.999)
    assert ds["hetero_fraction"].values[0] == pytest.approx(3 / 18)
    assert 30.0 <= float(ds["mass"].min()) and float(ds["mass"].max()) <= 145.0


def test_qm9_u0_stratification_as_in_the_adaptivity_paper(real):
    """Pernot (2023): 138 distinct uE, 398 distinct masses, 76 heteroatom fractions."""
    ds = real("QM9_U0")
    assert len(np.unique(ds["uE"])) == 138
    assert len(np.unique(ds["mass"])) == 398
    assert len(np.unique(ds["hetero_fraction"])) == 76


@pytest.mark.parametrize("name", ["logP_10k_a_LS-GCN", "logP_150k_LS-GCN"])
def test_logp_sign_convention(real, data_root, name):
    ds = real(name)
    raw = _read(data_root, ds.attrs["source"], index_col=0)
    assert list(raw.columns) == ["smiles", "logP", "uq", "y_pred", "error"]
    # the authors' definition (getData.R): E = logP - y_pred in double precision, exactly;
    # the file's error column (float32 y_pred) agrees to 3e-7
    np.testing.assert_array_equal(ds["E"], raw["logP"].to_numpy() - raw["y_pred"].to_numpy())
    np.testing.assert_allclose(ds["E"], -raw["error"], rtol=0, atol=3e-7)
    np.testing.assert_array_equal(ds["uE"], raw["uq"])
    np.testing.assert_array_equal(ds["smiles"], raw["smiles"].to_numpy(dtype=object))
    assert ds["smiles"].attrs["role"] == "metadata"


def test_logp_zms_equals_the_authors_full_precision_value(real):
    """Pernot (2024a) data: ZMS of logP_10k_a_LS-GCN = 0.925696305128359 (E in double)."""
    ds = real("logP_10k_a_LS-GCN")
    zms = float(np.mean((ds["E"].values / ds["uE"].values) ** 2))
    assert zms == pytest.approx(0.925696305128359, rel=1e-13)
    # the former float32 y_pred was off in the 8th digit
    assert abs(zms - 0.925696305128359) < 1e-13


def test_paper_statistics_are_reproduced(real):
    """ZMS = <(E/uE)^2> of Pernot (2024a), Table 2, to its 3 printed digits (sets 1-4, 7)."""
    zms = {
        n: float(((real(n)["E"] / real(n)["uE"]) ** 2).mean())
        for n in ["Diffusion_RF", "Perovskite_RF", "Diffusion_LR", "Perovskite_LR"]
    }
    assert zms == pytest.approx(
        {
            "Diffusion_RF": 0.960,
            "Perovskite_RF": 0.885,
            "Diffusion_LR": 1.120,
            "Perovskite_LR": 1.230,
        },
        abs=0.0051,
    )
    qm9 = real("QM9_E")
    assert float(((qm9["E"] / qm9["uE"]) ** 2).mean()) == pytest.approx(0.97, abs=0.0051)


# --------------------------------------------------------------------------
# uncalibrated twins
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", PAL + ["QM9_E"])
def test_uncalibrated_twins(real, name):
    cal, unc = real(name), real(name, calibrated=False)
    assert unc.attrs["calibration"] == "uncalibrated"
    assert unc.attrs["name"] == f"{name}_uncal" and unc.attrs["source"].endswith(
        "_uncal.csv" if name in PAL else "_uncalibrated_test.csv"
    )
    np.testing.assert_array_equal(unc["point"], cal["point"])
    np.testing.assert_array_equal(unc["E"], cal["E"])
    assert not np.array_equal(unc["uE"], cal["uE"])
    assert unc.attrs["n_filtered"] == cal.attrs["n_filtered"]
    if name in PAL:  # the twin files hold each other's uncertainty in column X
        np.testing.assert_array_equal(unc["uE"], cal["uE_uncalibrated"])
        np.testing.assert_array_equal(unc["uE_calibrated"], cal["uE"])


@pytest.mark.parametrize("name", ["logP_10k_a_LS-GCN", "logP_150k_LS-GCN", "QM9_U0"])
def test_no_twin_raises(name, no_download):
    with pytest.raises(ValueError, match=f"{name}.*no uncalibrated twin"):
        uds.load_dataset(name, calibrated=False)


@pytest.mark.parametrize("flag", ["no", "False", 0, 1, None])
def test_calibrated_must_be_a_bool(flag, no_download):
    # issue 22 item 7: calibrated="no" (truthy) silently loaded the calibrated set
    with pytest.raises(TypeError, match=r"calibrated must be True or False"):
        uds.load_dataset("Diffusion_RF", calibrated=flag)


def test_unknown_names_raise():
    with pytest.raises(ValueError, match="unknown dataset 'QM9'.*QM9_E"):
        uds.load_dataset("QM9")
    with pytest.raises(ValueError, match="unknown collection 'pernot2025'.*pernot2024"):
        uds.load_collection("pernot2025")


# --------------------------------------------------------------------------
# collection
# --------------------------------------------------------------------------
def test_load_collection_order_and_content(real, data_root, monkeypatch):
    monkeypatch.setenv("UQVIZ_DATA_DIR", str(data_root))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = uds.load_collection("pernot2024")
    assert isinstance(tree, xr.DataTree)
    assert list(tree.children) == PAPER_ORDER
    assert [tree[n].to_dataset().sizes["point"] for n in PAPER_ORDER] == PAPER_SIZES
    assert tree.attrs["name"] == "pernot2024"
    for n in PAPER_ORDER:
        child = tree[n].to_dataset()
        assert child.attrs["name"] == n
        xr.testing.assert_identical(child, real(n))
    assert uds.COLLECTIONS["pernot2024"] == tuple(PAPER_ORDER)


def test_loaders_parse_the_file_text_exactly(real, data_root):
    # the decimal text of the file, parsed by Python's float (correctly rounded)
    ds = real("Diffusion_RF")
    lines = (data_root / ds.attrs["source"]).read_text().splitlines()[1:]
    e = np.array([float(line.split(",")[0]) for line in lines])
    np.testing.assert_array_equal(ds["E"].values, e[ds["point"].values])
