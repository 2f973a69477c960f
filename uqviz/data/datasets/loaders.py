"""Loaders of the real ML-UQ validation sets of Pernot's papers, built as the authors' R scripts do.

Each set becomes a dataset (:func:`uqviz.from_dataframe`) whose ``point``
coordinate is the data-row number in the source file. How E and uE are built
per source (PAL2022, BUS2022, RAS2023) is described in the notes of the
documentation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.data.constructors import PAPERS_MIN_UNCERTAINTY, from_dataframe, from_datasets
from uqviz.data.datasets.formula import hetero_fractions, molecular_masses
from uqviz.data.datasets.registry import fetch
from uqviz.engine import checks
from uqviz.engine.warning_classes import DataWarning

__all__ = ["list_datasets", "load_dataset", "load_collection", "COLLECTIONS"]

_RCE = "pernot-2024_RCE-v4.0"
_ADAPT = "pernot-2023_Adaptivity-v1.1"

_PERNOT2024 = (
    "Pernot, P. (2024). How to validate average calibration for machine learning "
    "regression tasks? arXiv:2402.10043; data: github.com/ppernot/2024_RCE v4.0, "
    "doi:10.5281/zenodo.13341150"
)
_PERNOT2023 = (
    "Pernot, P. (2023). Calibration in machine learning uncertainty quantification: "
    "beyond consistency to target adaptivity; data: "
    "github.com/ppernot/2023_Adaptivity v1.1"
)
_PALMER = (
    "Palmer, G. et al. (2022). Calibration after bootstrap for accurate uncertainty "
    "quantification in regression models. npj Comput. Mater. 8:115"
)
_BUSK = (
    "Busk, J. et al. (2022). Calibrated uncertainty for molecular property prediction using "
    "ensembles of message passing neural networks. Mach. Learn.: Sci. Technol. 3:015012"
)
_RASMUSSEN = (
    "Rasmussen, M. H. et al. (2023). Uncertain of uncertainties? A comparison of "
    "uncertainty quantification metrics for chemical data sets. J. Cheminform. 15"
)


@dataclass(frozen=True)
class _Spec:
    name: str
    kind: str  # "pal", "qm9" or "logp"
    key: str  # registry key of the calibrated file
    size: int  # rows after the papers' filter
    citation: str
    units: str
    key_uncal: str | None = None
    size_uncal: int | None = None
    target: str = "E_"  # QM9 reference column


def _pal(name: str, size: int) -> _Spec:
    stem = f"{_RCE}/PAL2022/{name}_Test"
    return _Spec(
        name,
        "pal",
        f"{stem}_cal.csv",
        size,
        f"{_PALMER}; {_PERNOT2024}",
        "eV",
        f"{stem}_uncal.csv",
        size,
    )


#: The sets, paper order first (Pernot (2024a), Table 1), then QM9_U0 (Pernot (2023)).
_SPECS: dict[str, _Spec] = {
    s.name: s
    for s in (
        _pal("Diffusion_RF", 2040),
        _pal("Perovskite_RF", 3834),
        _pal("Diffusion_LR", 2040),
        _pal("Perovskite_LR", 3836),
        _pal("Diffusion_GPR_Bayesian", 2040),
        _pal("Perovskite_GPR_Bayesian", 3818),
        _Spec(
            "QM9_E",
            "qm9",
            f"{_RCE}/BUS2022/qm9_qm9_E_calibrated_isotonic_test.csv",
            13885,
            f"{_BUSK}; {_PERNOT2024}",
            "eV",
            f"{_RCE}/BUS2022/qm9_qm9_E_uncalibrated_test.csv",
            13885,
        ),
        _Spec(
            "logP_10k_a_LS-GCN",
            "logp",
            f"{_RCE}/RAS2023/logP_10k_a_LS-GCN_test.csv",
            5000,
            f"{_RASMUSSEN}; {_PERNOT2024}",
            "",
        ),
        _Spec(
            "logP_150k_LS-GCN",
            "logp",
            f"{_RCE}/RAS2023/logP_150k_LS-GCN_test.csv",
            5000,
            f"{_RASMUSSEN}; {_PERNOT2024}",
            "",
        ),
        _Spec(
            "QM9_U0",
            "qm9",
            f"{_ADAPT}/BUS2022/qm9_U0_test_Orig.csv",
            13885,
            f"{_BUSK}; {_PERNOT2023}",
            "eV",
            target="U0",
        ),
    )
}

#: Named collections of sets, in order: ``{collection: (set names...)}``.
COLLECTIONS: dict[str, tuple[str, ...]] = {
    "pernot2024": (
        "Diffusion_RF",
        "Perovskite_RF",
        "Diffusion_LR",
        "Perovskite_LR",
        "Diffusion_GPR_Bayesian",
        "Perovskite_GPR_Bayesian",
        "QM9_E",
        "logP_10k_a_LS-GCN",
        "logP_150k_LS-GCN",
    ),
}
_COLLECTION_CITATION = {"pernot2024": _PERNOT2024}


def list_datasets() -> pd.DataFrame:
    """The real datasets uqviz can load.

    Returns
    -------
    pandas.DataFrame
        One row per set (the nine of Pernot (2024a), ``QM9_U0``, then the
        uncalibrated twins): ``name``, ``calibrated``, ``size``, ``units``,
        ``source``, ``citation``.

    Examples
    --------
    >>> from uqviz.datasets import list_datasets
    >>> df = list_datasets()
    >>> df.loc[df.calibrated, "name"].tolist()[:3]
    ['Diffusion_RF', 'Perovskite_RF', 'Diffusion_LR']
    """
    rows = [
        dict(
            name=s.name,
            calibrated=True,
            size=s.size,
            units=s.units,
            source=s.key,
            citation=s.citation,
        )
        for s in _SPECS.values()
    ]
    rows += [
        dict(
            name=s.name,
            calibrated=False,
            size=s.size_uncal,
            units=s.units,
            source=s.key_uncal,
            citation=s.citation,
        )
        for s in _SPECS.values()
        if s.key_uncal is not None
    ]
    df = pd.DataFrame(rows, columns=["name", "calibrated", "size", "units", "source", "citation"])
    return df.astype({"size": "int64", "calibrated": bool})


def _spec(name: str) -> _Spec:
    if not isinstance(name, str) or name not in _SPECS:
        raise ValueError(
            f"unknown dataset {name!r}; known datasets: {', '.join(_SPECS)} "
            "(see uqviz.datasets.list_datasets())"
        )
    return _SPECS[name]


def _papers_filter(e: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, float]:
    """Keep-mask of the papers' filter ``uE > 1e-6 * sd(E)`` (sample sd, all rows)."""
    threshold = PAPERS_MIN_UNCERTAINTY * float(np.std(e, ddof=1))
    return u > threshold, threshold


def _build(
    df: pd.DataFrame,
    *,
    spec: _Spec,
    key: str,
    calibrated: bool,
    e: np.ndarray,
    u: np.ndarray,
    features=(),
    metadata=(),
    **columns,
) -> xr.Dataset:
    """Apply the papers' filter, call from_dataframe, set the attributes."""
    # The filter runs here on all rows, as in the authors' scripts, because some
    # of the filtered rows have uE <= 0, which from_dataframe rejects before its
    # own min_uncertainty filter runs.
    keep, threshold = _papers_filter(e, u)
    n_pre = int((~keep).sum())
    rows = np.flatnonzero(keep)
    kept = df.iloc[rows].reset_index(drop=True)
    name = spec.name if calibrated else f"{spec.name}_uncal"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = from_dataframe(
            kept,
            features=list(features),
            metadata=list(metadata),
            name=name,
            units=spec.units,
            min_uncertainty="papers",
            **columns,
        )
    for w in caught:  # the filter is documented loader behaviour: no warning for it
        if not (
            issubclass(w.category, DataWarning) and str(w.message).startswith("min_uncertainty")
        ):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    n_post = int(ds.attrs.get("n_filtered", 0))
    # back to row numbers of the file
    ds = ds.assign_coords(point=("point", rows[ds["point"].values], ds["point"].attrs))
    ds["point"].attrs.update(long_name="0-based data-row number in the source file")
    ds.attrs.update(
        name=name,
        units=spec.units,
        source=key,
        citation=spec.citation,
        calibration="calibrated" if calibrated else "uncalibrated",
        n_filtered=n_pre + n_post,
        min_uncertainty=threshold,
    )
    return ds


def _load_pal(spec: _Spec, key: str, calibrated: bool) -> xr.Dataset:
    df = pd.read_csv(fetch(key), float_precision="round_trip")
    # _cal: E, X, uE with X the uncalibrated uE; _uncal: E, uE, X with X the calibrated uE
    other = "uE_uncalibrated" if calibrated else "uE_calibrated"
    _require(df, ["E", "uE", "X"], key)
    df = df.rename(columns={"X": other})
    ds = _build(
        df,
        spec=spec,
        key=key,
        calibrated=calibrated,
        e=df["E"].to_numpy(float),
        u=df["uE"].to_numpy(float),
        errors="E",
        uncertainties="uE",
        metadata=[other],
    )
    ds[other].attrs.update(
        long_name=f"{other.split('_')[1]} standard uncertainty (column X of the file)",
        units=spec.units,
    )
    return ds


def _load_qm9(spec: _Spec, key: str, calibrated: bool) -> xr.Dataset:
    df = pd.read_csv(fetch(key), float_precision="round_trip")
    _require(df, ["index", "formula", spec.target, "prediction", "uncertainty_total"], key)
    df = df.rename(columns={"index": "qm9_index"})
    formulas = df["formula"].to_numpy(dtype=object)
    df["mass"] = molecular_masses(formulas)
    df["hetero_fraction"] = hetero_fractions(formulas)
    e = df[spec.target].to_numpy(float) - df["prediction"].to_numpy(float)
    u = np.sqrt(df["uncertainty_total"].to_numpy(float))
    ds = _build(
        df,
        spec=spec,
        key=key,
        calibrated=calibrated,
        e=e,
        u=u,
        reference=spec.target,
        prediction="prediction",
        variances="uncertainty_total",
        features=["mass", "hetero_fraction"],
        metadata=["formula", "qm9_index"],
    )
    ds["mass"].attrs.update(long_name="molecular mass (standard atomic weights)", units="Da")
    ds["hetero_fraction"].attrs.update(
        long_name="fraction of heteroatoms: 1 - (nC + nH) / n_atoms", units=""
    )
    ds["formula"].attrs.update(long_name="molecular formula")
    ds["qm9_index"].attrs.update(long_name="molecule index in QM9 (column 'index' of the file)")
    return ds


def _load_logp(spec: _Spec, key: str, calibrated: bool) -> xr.Dataset:
    df = pd.read_csv(fetch(key), index_col=0, float_precision="round_trip")
    _require(df, ["smiles", "logP", "y_pred", "uq"], key)
    # E = logP - y_pred in double precision, as the authors' getData.R
    e = df["logP"].to_numpy(float) - df["y_pred"].to_numpy(float)
    ds = _build(
        df,
        spec=spec,
        key=key,
        calibrated=calibrated,
        e=e,
        u=df["uq"].to_numpy(float),
        reference="logP",
        prediction="y_pred",
        uncertainties="uq",
        metadata=["smiles"],
    )
    ds["smiles"].attrs.update(long_name="SMILES of the molecule")
    return ds


def _require(df: pd.DataFrame, columns: list[str], key: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"data file {key!r}: missing column(s) {missing}; "
            f"columns found: {list(map(str, df.columns))}"
        )


_LOADERS = {"pal": _load_pal, "qm9": _load_qm9, "logp": _load_logp}


def load_dataset(name: str, *, calibrated: bool = True) -> xr.Dataset:
    """Load one real validation set as a uqviz dataset.

    Parameters
    ----------
    name : str
        A name of :func:`list_datasets`, e.g. ``"QM9_E"``.
    calibrated : bool, default True
        False loads the uncalibrated twin (PAL2022 sets and ``QM9_E``).

    Returns
    -------
    xarray.Dataset
        ``E``, ``uE`` and the set's features and metadata; attributes ``name``,
        ``units``, ``source``, ``citation``, ``calibration``, ``n_filtered``,
        ``min_uncertainty``.

    Raises
    ------
    ValueError
        Unknown name, or no uncalibrated twin.
    uqviz.datasets.DataFileNotFoundError, uqviz.datasets.DataFileHashError
        The file is missing or differs from the registry.

    Examples
    --------
    >>> from uqviz.datasets import load_dataset
    >>> ds = load_dataset("Perovskite_RF")           # doctest: +SKIP
    >>> ds.sizes["point"], ds.attrs["n_filtered"]    # doctest: +SKIP
    (3834, 2)
    """
    spec = _spec(name)
    calibrated = checks.boolean("calibrated", calibrated)
    if calibrated:
        key = spec.key
    else:
        if spec.key_uncal is None:
            twins = [s.name for s in _SPECS.values() if s.key_uncal is not None]
            raise ValueError(
                f"dataset {name!r} has no uncalibrated twin (calibrated=False); "
                f"sets with one: {', '.join(twins)}"
            )
        key = spec.key_uncal
    return _LOADERS[spec.kind](spec, key, calibrated)


def load_collection(name: str = "pernot2024") -> xr.DataTree:
    """Load a named collection of sets as a DataTree, one child per set, in order.

    Parameters
    ----------
    name : str, default "pernot2024"
        ``"pernot2024"``: the nine sets of Pernot (2024a), calibrated.

    Returns
    -------
    xarray.DataTree
        Children as :func:`load_dataset` returns them.

    Raises
    ------
    ValueError
        Unknown collection.

    Examples
    --------
    >>> from uqviz.datasets import load_collection
    >>> list(load_collection("pernot2024").children)[:2]  # doctest: +SKIP
    ['Diffusion_RF', 'Perovskite_RF']
    """
    if name not in COLLECTIONS:
        raise ValueError(f"unknown collection {name!r}; known: {', '.join(COLLECTIONS)}")
    tree = from_datasets({n: load_dataset(n) for n in COLLECTIONS[name]})
    tree.attrs = {"name": name, "citation": _COLLECTION_CITATION[name]}
    return tree
