"""One-call validation report: every analysis of uqviz on a dataset, as HTML and JSON.

For each dataset the report runs the tailedness screen, average calibration
(ZMS, RCE, NLL by default, or the ``statistics`` given), consistency (LZM/LZMS vs uE),
adaptivity per feature, and ENCE, ZMSE and CC through simulated references
(Pernot (2024c)), and ends with a plain-language conclusion. Its headline
(``numbers["verdict"]``) answers the calibration questions only (average calibration,
consistency, adaptivity, the PIT of a forecast given as more than a standard uncertainty);
ENCE, ZMSE, CC and the interval coverage are further
diagnostics with their own words (:mod:`uqviz.reporting.verdicts`). Numbers come from the
public compute functions,
figures from :mod:`uqviz.plots`, words from :mod:`uqviz.reporting.wording`.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from uqviz.average.validation import average_statistic_names, tailedness, validate_average
from uqviz.conditional.local import fraction_valid, local_calibration
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.parallel import progress_bar
from uqviz.engine.binning import default_n_bins
from uqviz.engine.options import GROUP_COORD, streams
from uqviz.engine.statistics import DEFAULT_N_BINS
from uqviz.engine.verdicts import FAILS
from uqviz.engine.tree import datasets_of, naming_child
from uqviz.predictive.forecast import forecast_form
from uqviz.predictive.pit import validate_pit
from uqviz.reference.simulated import validate_shared
from uqviz.reporting import comparison as cmp
from uqviz.reporting import remedy as rmd
from uqviz.recalibration.fitting import recalibrate
from uqviz.reporting import render, text, wording
from uqviz.reporting import verdicts as vd
from uqviz.scores.coverage import calibration_curve, interval_coverage
from uqviz.scores.predictive import predictive_scores
from uqviz.reporting.serialise import dataset_to_json, jsonable  # noqa: F401  (public here too)
from uqviz.reporting.wording import describe_failures  # noqa: F401  (public here too)

__all__ = [
    "Report",
    "ReportCollection",
    "report",
    "describe_failures",
    "safe_filename",
    "DISCRETE_MAX_VALUES",
    "is_targets",
    "resampling",
]

#: a conditioning variable with at most this many distinct values is binned by value
DISCRETE_MAX_VALUES = 20
#: the forms of a forecast given as more than a standard uncertainty: the report gets a PIT
#: section (the PIT of a std forecast is Phi(E/uE), which the calibration curve shows)
PIT_FORMS = ("interval", "quantiles", "samples")


def safe_filename(name) -> str:
    """A file-name stem made from a dataset name: no folder part, no leading dot.

    Every character outside letters, digits, ``.``, ``_`` and ``-`` becomes ``_``,
    so a name can never direct a file outside the chosen folder.

    Examples
    --------
    >>> safe_filename("../../x"), safe_filename("/etc/passwd"), safe_filename("QM9 U0")
    ('x', 'etc_passwd', 'QM9_U0')
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name))
    stem = re.sub(r"^[._]+|[._]+$", "", re.sub(r"\.{2,}", "", stem))
    return stem[:120] or "data"


def write_atomic(path: str, content: str) -> None:
    """Write via a temporary file in the same folder and rename: never a partial file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".uqviz-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # the permissions of an ordinary new file, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def prepare_folder(out_dir) -> str:
    """Create the output folder (and parents) or raise an OSError that says what is wrong.

    Examples
    --------
    >>> import tempfile, os
    >>> d = prepare_folder(os.path.join(tempfile.mkdtemp(), "a", "b"))
    >>> os.path.isdir(d)
    True
    """
    if not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"out_dir must be a folder path, got {type(out_dir).__name__}")
    out_dir = os.fspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise NotADirectoryError(f"output folder {out_dir!r} is a file, not a folder")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise NotADirectoryError(
            f"cannot create output folder {out_dir!r}: a part of the path is a file"
        ) from None
    except PermissionError:
        raise PermissionError(f"no permission to create output folder {out_dir!r}") from None
    except OSError as exc:
        raise OSError(f"cannot create output folder {out_dir!r}: {exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise PermissionError(f"output folder {out_dir!r} is not writable")
    return out_dir


def _save(out_dir, stem: str, html: str, json_text: str) -> dict:
    """Create ``out_dir`` and write ``<stem>_report.html/.json`` inside it, atomically."""
    out_dir = prepare_folder(out_dir)
    root = os.path.realpath(out_dir)
    paths = {
        "html": os.path.join(out_dir, f"{stem}_report.html"),
        "json": os.path.join(out_dir, f"{stem}_report.json"),
    }
    for p in paths.values():  # defensive: the stem holds no separator
        if os.path.dirname(os.path.realpath(p)) != root:
            raise ValueError(f"refusing to write {p!r} outside {out_dir!r}")
    write_atomic(paths["json"], json_text)
    write_atomic(paths["html"], html)
    return paths


@dataclass
class Report:
    """Report of one dataset: its verdicts and analyses as data, its words, its figures.

    Returned by :func:`uqviz.report`. The data: ``verdicts``, an ``xarray.Dataset`` with one
    row per test (dim ``test``: ``"average"``, ``"consistency"``, ``"adaptivity:<feature>"``,
    ``"pit"``, ``"ENCE"``, ``"ZMSE"``, ``"CC"``, ``"coverage"``), ``verdict``, ``p_value``,
    ``p_adjusted``, ``reliable``, ``reason`` and the numbers its sentence quotes
    (``uqviz.reporting.verdicts.verdict_table``), so that
    ``rep.verdicts["verdict"].sel(test="consistency")`` is a verdict; ``analyses``, an
    ``xarray.DataTree`` of the result Datasets the report computed (``average``,
    ``tailedness``, ``local/<variable>/LZMS``, ``beyond_uE/<feature>/fv_LZMS``, ``coverage``,
    ``calibration_curve``, ``simulated_references/ENCE``, ``pit/validate_pit``...). The edge,
    written from them: ``conclusion`` (the sentences, each test's from its row of
    ``verdicts``, ``uqviz.reporting.wording.conclusion_lines``), ``to_html()`` (its table
    of the tests and the PIT's verdict read ``verdicts``), ``to_json()`` (``numbers`` and
    ``verdict_table``, ``verdicts`` serialised), ``save(folder)`` (both files into that folder
    only); it shows itself in a notebook. ``numbers`` (the JSON document, JSON-ready) keeps
    the entries ``numbers["verdicts"]`` for the readers of the JSON and for what a row cannot
    hold: lists and dicts (the coverage's levels and PICP, the references per D of ENCE, ZMSE
    and CC) and the booleans other than the table's flags (``valid``, ``adjusted``), which the
    sentences and the HTML take from there. ``verdict`` is the headline word (the answer to the
    calibration questions, ``uqviz.reporting.verdicts.headline``), ``headline`` its sentence.

    Parameters
    ----------
    name : str
    numbers : dict
        Every number of the report, JSON-ready.
    conclusion : list of str
    warnings : list of str
    figures : dict
        Name -> PNG figure, base64-encoded.
    verdicts : xarray.Dataset, optional
        The verdict table; default: made from ``numbers["verdicts"]``.
    analyses : xarray.DataTree, optional
        The result Datasets; default: an empty tree.

    Examples
    --------
    >>> import uqviz
    >>> rep = uqviz.report(uqviz.synthetic.default_example(), rng=0)  # doctest: +ELLIPSIS
    >>> isinstance(rep.to_json(), str), rep.to_html().startswith("<")
    (True, True)
    >>> rep.verdict, rep.headline.startswith("Headline: fails (the calibration questions")
    ('fails', True)
    >>> rep.verdicts["verdict"].sel(test="consistency").item()
    'OK'
    >>> float(rep.analyses["average"].ds["estimate"].sel(statistic="ZMS")) == float(
    ...     rep.verdicts["estimate"].sel(test="average"))
    True
    >>> import json
    >>> json.loads(rep.to_json())["verdict_table"]["coords"]["test"][:2]
    ['average', 'consistency']
    """

    name: str
    numbers: dict
    conclusion: list
    warnings: list
    figures: dict = field(default_factory=dict)
    verdicts: xr.Dataset = None
    analyses: xr.DataTree = None

    def __post_init__(self):
        if self.verdicts is None:
            self.verdicts = vd.verdict_table(self.numbers.get("verdicts", {}))
        if self.analyses is None:
            self.analyses = xr.DataTree(name="analyses")

    def __repr__(self) -> str:
        rows = [
            f"  {t:<22} {str(w):<11} p_adj={_p(p)}"
            for t, w, p in zip(
                self.verdicts["test"].values,
                self.verdicts["verdict"].values,
                self.verdicts["p_adjusted"].values,
            )
        ]
        nodes = [n.path for n in self.analyses.subtree if n.has_data]
        return (
            f"<uqviz Report {self.name!r}: {self.verdict}>\n"
            f"verdicts ({len(rows)} tests; rep.verdicts, an xarray.Dataset):\n"
            + "\n".join(rows)
            + f"\nanalyses ({len(nodes)} results; rep.analyses, an xarray.DataTree): "
            + ", ".join(nodes)
        )

    @property
    def verdict(self) -> str:
        """The headline word: "OK", "fails", "unreliable" or "not tested" (the calibration
        questions: average calibration, consistency, adaptivity, the PIT when present)."""
        return self.numbers.get("verdict", "not tested")

    @property
    def headline(self) -> str:
        """The headline in one sentence: its word and the word of each question."""
        return self.numbers.get("headline", {}).get("sentence", "")

    def _section(self):
        return (
            self.name,
            self.numbers,
            self.conclusion,
            self.warnings,
            self.figures,
            self.verdicts,
        )

    def _document(self) -> dict:
        """The JSON document: name, conclusion, warnings, every key of ``numbers`` and
        ``verdict_table``, the verdict table serialised like every Dataset of the JSON
        (``uqviz.reporting.serialise.dataset_to_json``)."""
        return {
            "name": self.name,
            "conclusion": self.conclusion,
            "warnings": self.warnings,
            **self.numbers,
            "verdict_table": dataset_to_json(self.verdicts),
        }

    def to_json(self) -> str:
        """The numbers, conclusion and warnings as a JSON string, with ``verdict_table``: the
        verdict table (``verdicts``, ``uqviz.reporting.serialise.dataset_to_json``; read
        it back with ``uqviz.reporting.serialise.dataset_from_json``), beside
        ``verdicts``, the entries of ``numbers``, kept for the readers of the JSON and for
        the details a table cannot hold (lists, dicts and booleans other than its flags: the
        coverage's levels and PICP, the references per D of ENCE, ZMSE and CC, ``valid``,
        ``adjusted``)."""
        return json.dumps(self._document(), indent=1)

    def to_html(self) -> str:
        """A self-contained HTML page (figures embedded as base64 PNG)."""
        return render.page(self.name, render.fragment([self._section()]))

    def _repr_html_(self):
        return render.fragment([self._section()])

    def save(self, out_dir) -> dict:
        """Write ``<name>_report.html`` and ``<name>_report.json`` into `out_dir`.

        The name is made safe for a file name
        (``uqviz.reporting.build.safe_filename``); both files are rendered first and
        written atomically. Returns their paths.
        """
        return _save(out_dir, safe_filename(self.name), self.to_html(), self.to_json())


@dataclass
class ReportCollection:
    """Reports of the datasets of a DataTree: one page with one section per dataset.

    Returned by :func:`uqviz.report` for a DataTree; ``collection[name]`` is one :class:`Report`.
    When the datasets are models of the same points (the option ``compare`` of
    :func:`uqviz.report`), ``comparison`` holds the section comparing them.

    Parameters
    ----------
    name : str
    reports : dict
        Dataset name -> :class:`Report`.
    comparison : dict, optional
        The comparison of the models (JSON-ready: ``conclusion``, ``warnings``, ``table``,
        ``pairs``, ``result``, ...), None without comparison.
    comparison_figures : dict
        Name -> PNG figure of the comparison, base64-encoded.

    Examples
    --------
    >>> import uqviz
    >>> tree = uqviz.synthetic.nig(2000, nu=20, n_datasets=2, rng=0)
    >>> col = uqviz.report(tree, rng=0)
    >>> sorted(col.reports)
    ['set_0', 'set_1']
    """

    name: str
    reports: dict
    comparison: dict | None = None
    comparison_figures: dict = field(default_factory=dict)
    layout: str | None = None
    family: dict | None = None

    def __getitem__(self, key) -> Report:
        return self.reports[key]

    @property
    def _dim(self) -> str:
        return "target" if self.layout == "targets" else "dataset"

    @property
    def table(self) -> xr.Dataset:
        """The per-target table of a targets tree (dim ``target``: each target, then the
        pooled child): ``n_points``, ``n_missing``, ``n_groups`` (-1 without groups),
        ``resampling`` ("points" or "groups"), the ZMS (``ZMS``, ``ZMS_lower``,
        ``ZMS_upper``), the words and Holm-adjusted p-values (over the whole family of the
        targets) of the average calibration and of the consistency (f_v of LZMS in bins of
        uE), the coverage's word, and ``verdict``, each target's headline word; attrs: the
        family (``alpha``, ``method``, ``size``).

        Examples
        --------
        >>> import uqviz
        >>> tree = uqviz.synthetic.nig(600, nu=20, n_datasets=2, rng=0)
        >>> tree.attrs.update(layout="targets", targets=["set_0", "set_1"])
        >>> col = uqviz.report(tree, rng=0, n_boot=200, n_mc=50, figures=False, remedy=False)
        >>> col.table["average"].values.tolist(), int(col.table.attrs["size"])
        (['OK', 'OK'], 10)
        """
        if self.layout != "targets":
            raise ValueError("table: a ReportCollection of a targets tree (layout='targets')")
        rows = [_target_row(r) for r in self.reports.values()]
        out = {}
        for k in rows[0]:
            values = [row[k] for row in rows]
            kind = object if isinstance(values[0], str) else type(values[0])
            out[k] = ("target", np.array(values, dtype=kind))
        family = {k: v for k, v in (self.family or {}).items() if k in ("alpha", "method", "size")}
        return xr.Dataset(out, coords={"target": list(self.reports)}, attrs=family)

    def summary(self) -> str:
        """The per-target table in plain text (:attr:`table`), with the family's sentence.

        Examples
        --------
        >>> import uqviz
        >>> tree = uqviz.synthetic.nig(600, nu=20, n_datasets=2, rng=0)
        >>> tree.attrs.update(layout="targets", targets=["set_0", "set_1"])
        >>> col = uqviz.report(tree, rng=0, n_boot=200, n_mc=50, figures=False, remedy=False)
        >>> print(col.summary().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        target n points n missing n groups resampling ZMS [95 % CI] average p_adj
        consistency p_adj coverage verdict
        """
        return text.targets_table(self.table, self.family or {})

    @property
    def verdicts(self) -> xr.Dataset:
        """The verdict tables of the datasets stacked along a dim ``dataset`` (the union of
        their tests and variables; NaN, "" or False where a dataset lacks one).

        Examples
        --------
        >>> import uqviz
        >>> col = uqviz.report(uqviz.synthetic.nig(600, nu=20, n_datasets=2, rng=0), rng=0,
        ...                    n_boot=200, n_mc=50, figures=False, remedy=False)
        >>> col.verdicts["verdict"].sel(test="average").values.tolist()
        ['OK', 'OK']
        """
        tables = [r.verdicts for r in self.reports.values()]
        dim = self._dim
        tests = list(dict.fromkeys(t for tab in tables for t in tab["test"].values))
        names = list(dict.fromkeys(v for tab in tables for v in tab.data_vars))
        out = {}
        for v in names:
            kind = next(tab[v].dtype for tab in tables if v in tab)
            fill = False if kind == np.dtype(bool) else "" if kind == np.dtype(object) else np.nan
            rows = [
                (tab[v] if v in tab else xr.full_like(tab["verdict"], fill, dtype=kind)).reindex(
                    test=tests, fill_value=fill
                )
                for tab in tables
            ]
            out[v] = xr.concat(rows, dim=dim)
        table = xr.Dataset(out).assign_coords({dim: list(self.reports)})
        if self.layout == "targets":  # the per-target columns beside the (target, test) ones
            per = self.table
            table = table.assign({f"target_{k}": per[k] for k in per.data_vars})
            table.attrs = dict(per.attrs)
        return table

    @property
    def analyses(self) -> xr.DataTree:
        """The analyses of the datasets: one child per dataset (``Report.analyses``)."""
        return xr.DataTree(
            name="analyses", children={k: r.analyses.copy() for k, r in self.reports.items()}
        )

    @property
    def conclusion(self) -> dict:
        """``{dataset: conclusion lines}``."""
        return {k: r.conclusion for k, r in self.reports.items()}

    def to_json(self) -> str:
        """``{"name": ..., "datasets": {name: <the JSON of its Report>}}``, and
        ``"comparison"`` when the models were compared."""
        out = {"name": self.name, "datasets": {k: r._document() for k, r in self.reports.items()}}
        if self.comparison is not None:
            out["comparison"] = self.comparison
        if self.layout == "targets":
            out["layout"] = "targets"
            out["targets"] = {
                "family": jsonable(self.family or {}),
                "table": dataset_to_json(self.table),
                "verdict_table": dataset_to_json(self.verdicts),
            }
        return json.dumps(out, indent=1)

    def to_html(self) -> str:
        """One self-contained page, a section per dataset (and the comparison of the models)."""
        return render.page(self.name, self._repr_html_())

    def _repr_html_(self):
        comparison = None if self.comparison is None else (self.comparison, self.comparison_figures)
        targets = None if self.layout != "targets" else (self.table, self.family or {})
        return render.fragment(
            [r._section() for r in self.reports.values()],
            title=self.name,
            comparison=comparison,
            targets=targets,
        )

    def save(self, out_dir) -> dict:
        """Write ``<name>_report.html`` and ``<name>_report.json`` (all datasets) into `out_dir`."""
        return _save(out_dir, safe_filename(self.name), self.to_html(), self.to_json())


def _p(p) -> str:
    return "   -  " if not np.isfinite(p) else f"{p:.3g}"


def _target_row(rep: Report) -> dict:
    """One row of the per-target table, read from a target's report."""
    tab, data = rep.verdicts, rep.numbers.get("data", {})

    def col(test, var, fill):
        if test not in tab["test"].values or var not in tab:
            return fill
        v = tab[var].sel(test=test).item()
        return fill if v is None else v

    how = rep.numbers.get("resampling", {}).get("resample", "points")
    return {
        "n_points": int(data.get("n_points", 0)),
        "n_missing": int(data.get("n_missing", 0)),
        "n_groups": int(data.get("n_groups", -1)),
        "resampling": str(how),
        "ZMS": float(col("average", "estimate", np.nan)),
        "ZMS_lower": float(col("average", "ci_lower", np.nan)),
        "ZMS_upper": float(col("average", "ci_upper", np.nan)),
        "average": str(col("average", "verdict", "not tested")),
        "average_p_adjusted": float(col("average", "p_adjusted", np.nan)),
        "consistency": str(col("consistency", "verdict", "not tested")),
        "consistency_p_adjusted": float(col("consistency", "p_adjusted", np.nan)),
        "coverage": str(col("coverage", "verdict", "not tested")),
        "verdict": str(rep.verdict),
    }


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _features(ds, features):
    if features is None:
        return [
            v
            for v, da in ds.data_vars.items()
            if da.attrs.get("role") == "feature" and np.issubdtype(da.dtype, np.number)
        ]
    missing = [f for f in features if f not in ds.data_vars]
    if missing:
        raise ValueError(
            f"features: not in the dataset {ds.attrs.get('name', '')!r}: "
            f"{', '.join(map(repr, missing))} (variables: "
            f"{', '.join(map(str, ds.data_vars))})"
        )
    return list(features)


def report(
    data,
    *,
    features=None,
    statistics=("ZMS", "RCE", "NLL"),
    n_boot=10_000,
    n_mc=2000,
    n_bins=None,
    rng=0,
    progress=None,
    figures=True,
    remedy=True,
    compare=None,
    client=None,
    engine=None,
):
    r"""Validate a dataset with every analysis of uqviz and say the verdict in words.

    The report holds the tailedness screen, average calibration (``statistics``: ZMS, RCE, NLL),
    consistency (LZM, LZMS vs uE), adaptivity (vs each feature), the interval coverage
    (:func:`uqviz.interval_coverage`: PICP at 50, 68, 90, 95 and 99 % with binomial
    intervals and verdicts), the calibration curve (:func:`uqviz.calibration_curve`:
    miscalibration area, MACE, RMSCE and the figure), ENCE, ZMSE and CC against simulated
    references, and a conclusion in words.

    The headline (``numbers["verdict"]``, ``Report.verdict``; ``numbers["headline"]`` holds
    its sentence and the keys behind it) answers the calibration questions: average
    calibration (the ZMS), consistency, adaptivity per feature and, for a forecast given as
    more than a standard uncertainty, the PIT (``uqviz.reporting.verdicts.headline``):
    "fails" when one of them fails, else "unreliable" when one is, else "OK". ENCE, ZMSE and
    CC (whose references depend on the unknown shape D of the errors, Pernot (2024c)) and
    the interval coverage are further diagnostics (``numbers["further_diagnostics"]``, a
    section of the page, the last sentences of the conclusion) with their own words: a
    "fails" of ENCE, ZMSE or CC, decided under every D and kept after the Holm adjustment of
    the family they share with the questions, makes the headline "fails"; their "unreliable"
    never makes it "unreliable". Every test's entry is in ``numbers["verdicts"]``
    (``headline``: whether it is a question). The page opens with the table of the tests
    (test, verdict, the number it rests on, adjusted p-value, reason) above the sentences.

    When the forecast is given as more than a standard uncertainty
    (:func:`uqviz.predictive.forecast_form` ``"interval"``, ``"quantiles"`` or ``"samples"``,
    from :func:`uqviz.from_predictions`), a "PIT" section follows: :func:`uqviz.validate_pit`
    of the forecast as given (KS and Cramér-von Mises tests, the PIT mean and variance with
    their intervals, the ECDF against its simultaneous band with ``band_p_value``), its two
    figures (``uqviz.plots.pit``), and the scores of the forecast as given
    (:func:`uqviz.predictive_scores`, ``n_boot`` replicates). Its verdict, the band's, is the
    entry ``"pit"`` of the verdicts, decided in the report's Holm family with the others
    (p-value ``band_p_value``). A std forecast (``uE * D``, data of :func:`uqviz.from_arrays`)
    gets no PIT section and its report is unchanged: its PIT is :math:`\Phi(E/u_E)`, whose
    uniformity the calibration curve already shows.

    When average calibration (ZMS rejected), consistency or adaptivity fails, a "Remedy"
    section follows (``remedy=True``): the data are recalibrated by each method of
    :func:`uqviz.recalibrate` (cross-fitted on 5 folds, the same folds for every method):
    scaling, linear, isotonic, BVS on uE and BVS on each feature (with more than 20 distinct
    values); each result is re-validated, side by side with the data before: ZMS with its
    verdict (never "OK" when the tailedness screen of the recalibrated data fails), f_v of
    LZMS vs uE (stratified bins for the isotonic output, a step function of uE) and vs each
    feature, the PICP at 95 %, and NLL and CRPS before and after
    (:func:`uqviz.proper_scores`, the same resamples before and after). Each re-validation
    uses ``min(n_boot, 1000)`` bootstrap replicates and a calibrated null of f_v of 1000
    simulated bins (enough for the verdicts; this keeps the section within seconds on QM9).
    A sentence says which method repairs what, decided by the verdicts: a property is
    repaired when its reference lies inside the interval after recalibration; the validated
    remedy is the simplest method after which every test passes (JSON:
    ``remedy.recommended``, ``remedy.validated``, ``remedy.methods``).

    Beside the variance methods, in its own block (``remedy.distribution``) and sentence, the
    Remedy section recalibrates the distribution when a test fails (one of those above, or the
    PIT): cross-fitted conformal intervals at 90 % (:func:`uqviz.recalibrate`,
    ``method="conformal"``), with their marginal PICP and Wilson interval (the finite-sample
    guarantee: under exchangeability the expected coverage is at least the level) and their
    PICP in each bin of uE and of each feature (the report's bins): how many bins' interval
    excludes the level, which the guarantee does not cover; and, for a forecast given as an
    interval, quantiles or samples, the quantile recalibration (``method="quantile"``)
    re-validated by :func:`uqviz.validate_pit` (its verdict after).

    When the children of a DataTree are models of the same points (``compare``), a section
    "Comparison of the models" ends the page (:class:`uqviz.reporting.ReportCollection`
    ``.comparison``): :func:`uqviz.compare_models` with ``n_boot`` paired replicates (ZMS and
    RCE, by their distance to the reference, then NLL and CRPS where every model's form of
    forecast takes them: CRPS alone for samples or quantiles, no score for intervals); a
    table of each model's values with their intervals and its most probable rank with that
    rank's probability; the verdict of each pair of models in words ("model A has a better NLL
    than model B: difference -0.12 [-0.18, -0.05]" only when the interval of the difference
    excludes 0, else "no difference detected"); one sentence per measure in the comparison's
    conclusion; the ranking matrices, SIP matrices and differences
    (``uqviz.plots.comparison``). The report of each dataset is the same with or without
    the comparison.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset, or several (one child each): a DataTree gives a
        :class:`uqviz.reporting.ReportCollection`, one page with one section per dataset.
        A targets tree (attrs ``layout = "targets"``: one child per target of one model, an
        optional pooled child) gets, before the sections, a per-target table
        (``collection.table``, ``collection.summary()``; ``collection.verdicts`` on dims
        ``(target, test)``), and its tests are decided in one Holm family over every
        target and the pooled child (Holm (1979)): 3 calibrated targets and their pooled
        points get a false "fails" in at most ``1 - ci`` of reports, not about 4 times that.
        Data with a ``group`` coordinate: when the bootstraps resampled whole groups (their
        results say ``resample = "groups"``), the conclusion says so in one line.
        Recalibrated data (from :func:`uqviz.recalibrate` or ``Recalibration.apply``) are
        validated as they are: their ``uE``; the ``uE_original`` they keep is history, left out
        of the analyses.
    features : sequence of str, optional
        Features for the adaptivity analysis (default: every numeric feature).
    statistics : sequence of str, default ("ZMS", "RCE", "NLL")
        The statistics of the average-calibration table, validated by
        :func:`uqviz.validate_average`: any statistic it accepts, a registered one included
        (:func:`uqviz.statistics.register_statistic`, kind ``"moments"`` or ``"generic"``).
        ``"ZMS"`` must be among them: the average-calibration verdict is the ZMS's (Pernot
        (2024a)); the other statistics are reported with their intervals, not gated. The
        local analyses stay LZM and LZMS, the simulated references ENCE, ZMSE and CC.
    n_boot : int, default 10000
        Bootstrap replicates of every interval.
    n_mc : int, default 2000
        Monte Carlo samples of the simulated references (ENCE, ZMSE, CC).
    n_bins : int, optional
        Bins of the local analyses; default ``min(round(sqrt(M)), M // 100)``
        (bins of at least 100 points, Pernot (2023)). A conditioning variable with
        at most 20 distinct values is binned by value instead (``binning="stratified"``),
        and the report says so.
    rng : None, int, SeedSequence or Generator, default 0
        The same seed gives the same report. Each dataset of a tree gets its own
        child stream, in order; within a dataset the analyses use the children of
        ``rng.spawn(8 + 2 * n_features)`` in this order: average calibration, LZMS
        for uE then each feature, then one child shared by ENCE, ZMSE and CC (their
        synthetic sets are drawn once for the three, each result equal to
        ``validate_with_references(statistic=s, rng=<a copy of that child>)``), then the uE
        adjustment
        (BVS folds) and each feature beyond the uE effect; child ``4 + 2 n_features``,
        spawned in two, gives the PIT's stream and the native scores'; child
        ``5 + 2 n_features`` the distribution remedy's (the folds, the PIT after); the remedy
        uses the last child (``uqviz.engine.seeds``: one seed for the folds of every method,
        one for the bootstrap of the re-validations, one for the scores before and after).
        The PIT's streams are spare children: a std forecast's numbers do not depend on them.
        The comparison of the models uses the child after the datasets' (child
        ``n_datasets`` of ``rng``), so each dataset's numbers do not depend on it.
    progress : bool or None, default None
        tqdm progress bar: None shows it in a terminal or Jupyter unless the environment
        variable ``UQVIZ_PROGRESS=0`` is set, True always shows it, False never.
    figures : bool, default True
        Draw the figures (HTML); False for numbers only.
    remedy : bool, default True
        Recalibrate and re-validate when a test fails (the "Remedy" section); False
        switches it off (no ``remedy`` block in the numbers).
    compare : bool or None, default None
        Compare the children of a DataTree as models of the same points (the "Comparison of
        the models" section). None (auto): when there are at least two children, of the same
        number of points, that all give the same observed values ``y`` (a forecast of
        :func:`uqviz.from_predictions` as an interval, quantiles or samples keeps ``y``);
        without ``y`` nothing tells models of the same test set from independent sets of
        the same size (e.g. the draws of ``uqviz.synthetic.nig(n_datasets=2)``), so such a
        tree is compared only with True. True: compare (a ValueError when the children differ
        in their number of points or in ``y``, or a Dataset is given); False: never.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstraps and Monte Carlo references run: None (this process), "local" (a
        dask LocalCluster) or a dask.distributed.Client; the report does not depend on it.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of every bootstrap of the report, the remedy's included
        (docs/conventions.md).

    Returns
    -------
    Report or ReportCollection
        ``.verdicts`` (an ``xarray.Dataset``, dim ``test``: every test's ``verdict``,
        ``p_value``, ``p_adjusted``, ``reliable``, ``reason`` and the numbers it quotes),
        ``.analyses`` (an ``xarray.DataTree`` of the result Datasets),
        ``.numbers`` (JSON-ready), ``.verdict`` (the headline word), ``.headline`` (its
        sentence), ``.conclusion`` (sentences: the calibration questions, then the further
        diagnostics), ``.save(folder)`` writes HTML + JSON named after the (sanitised)
        dataset name; renders inline in Jupyter. A value that could not be computed reads
        "n/a", with the reason.

    See Also
    --------
    uqviz.validate_average : average calibration.
    uqviz.local_calibration : consistency and adaptivity.
    uqviz.fraction_valid : the verdicts of the local analyses.
    uqviz.validate_with_references : ENCE, ZMSE and CC against simulated references.
    uqviz.recalibrate : the remedy.
    uqviz.validate_pit, uqviz.predictive_scores : the PIT section.
    uqviz.compare_models : the comparison of models.

    Notes
    -----
    With the z-scores :math:`Z_i = E_i / u_{E_i}` of the :math:`M` points,

    .. math::

       \mathrm{ZMS} = \langle Z^2 \rangle = \frac{1}{M}\sum_{i=1}^M Z_i^2, \qquad
       \mathrm{RCE} = \frac{\mathrm{RMV} - \mathrm{RMSE}}{\mathrm{RMV}}, \quad
       \mathrm{RMV} = \sqrt{\langle u_E^2 \rangle}, \ \mathrm{RMSE} = \sqrt{\langle E^2 \rangle}

    with references 1 and 0 (Pernot (2024b), eqs. 11 and 7).

    The statistic is validated when its reference lies in the interval
    :math:`I = [I^-, I^+]`, :math:`\vartheta_{ref} \in I` (Pernot (2024b), eq. 13), or
    equivalently :math:`|\zeta| \le 1` (eq. 15) with the zeta-score (eq. 14)

    .. math::

       \zeta = \begin{cases}
       \dfrac{\vartheta_{est} - \vartheta_{ref}}{I^+ - \vartheta_{est}} &
       \vartheta_{est} \le \vartheta_{ref} \\[1ex]
       \dfrac{\vartheta_{est} - \vartheta_{ref}}{\vartheta_{est} - I^-} &
       \vartheta_{est} > \vartheta_{ref}
       \end{cases}

    The local verdicts test the fraction of valid bins :math:`f_v = n_v / N` (Pernot (2023)); the
    calibration tests of a family are decided together with Holm's step-down adjustment of their
    p-values (Holm (1979)).

    The PIT of a forecast given as :math:`F_i` is :math:`F_i(y_i)` (randomised where
    :math:`F_i` jumps); uniform for a calibrated forecast (Gneiting et al. (2007)). The
    conformal interval of a point of fold :math:`k` is
    :math:`\hat y_i \pm \hat q_{-k}\, u_{E,i}`, :math:`\hat q_{-k}` the
    :math:`\lceil (n + 1)\,\mathrm{level} \rceil`-th smallest :math:`|Z|` of the other folds'
    n points: :math:`P(y_i \in I_i) \ge \mathrm{level}` marginally (Vovk et al. (2005)),
    not in a bin of uE or of a feature.

    References
    ----------
    - Pernot (2024b): average calibration and the tailedness screen.
    - Pernot (2023): consistency and adaptivity.
    - Pernot (2024c): simulated references.
    - Holm (1979): the family-wise decision.
    - Gneiting et al. (2007): the PIT; Säilynoja et al. (2022): its simultaneous band.
    - Vovk et al. (2005): the conformal guarantee; Kuleshov et al. (2018): quantile
      recalibration.
    - Pernot & Savin (2020a, 2020b): the SIP, and the ranking probabilities, of a
      comparison of models.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> rep = uqviz.report(uqviz.synthetic.default_example(), n_boot=500, n_mc=200,
    ...                    progress=False, figures=False)
    >>> rep.conclusion[0]  # doctest: +ELLIPSIS
    'Average calibration: OK (ZMS = 0.98..., 95 % CI [0.9..., 1.0...] holds 1; p = ...'
    >>> rep.numbers["verdicts"]["consistency"]["verdict"], rep.numbers["verdict"]
    ('OK', 'fails')
    >>> rep.verdicts["verdict"].sel(test=["consistency", "adaptivity:X"]).values.tolist()
    ['OK', 'fails']
    """
    n_boot = checks.count("n_boot", n_boot, minimum=2)
    n_mc = checks.count("n_mc", n_mc, minimum=1)
    n_bins = checks.optional_count("n_bins", n_bins)
    figures = checks.boolean("figures", figures)
    remedy = checks.boolean("remedy", remedy)
    if compare is not None:
        compare = checks.boolean("compare", compare)
    engine = checks.engine(engine)
    if features is not None:
        features = checks.names("features", features)
    statistics = average_statistic_names(statistics)
    if "ZMS" not in statistics:
        raise ValueError(
            f"statistics must include 'ZMS' (the average-calibration verdict of the "
            f"report is the ZMS's), got {list(statistics)}"
        )
    gen = checks.rng(rng)
    pairs = datasets_of(data)
    targets = is_targets(data)
    if targets and compare:
        raise ValueError(
            "compare=True: a targets tree (attrs layout='targets') holds several targets of "
            "one model, not models of the same points"
        )
    comparing = False if targets else cmp.decide(data, compare)  # compare=True fails fast
    settings = _Settings(
        features=features,
        statistics=statistics,
        n_boot=n_boot,
        n_mc=n_mc,
        n_bins=n_bins,
        progress=progress,
        figures=figures,
        remedy=remedy,
        client=client,
        engine=engine,
    )
    if isinstance(data, xr.Dataset):
        return _report_one(data, settings, gen)
    if targets:
        return _report_targets(data, pairs, settings, gen)
    reports = {}
    for (name, ds), child in zip(pairs, gen.spawn(len(pairs))):
        ds = ds.copy()
        ds.attrs = {**ds.attrs, "name": name}
        with naming_child(name):
            reports[name] = _report_one(ds, settings, child)
    name = str(data.attrs.get("name") or data.name or "datasets")
    if not comparing:
        return ReportCollection(name, reports)
    numbers, figs = cmp.comparison_section(
        data,
        n_boot=n_boot,
        rng=gen.spawn(1)[0],
        client=client,
        engine=engine,
        progress=progress,
        figures=figures,
        forced=compare is True,
    )
    return ReportCollection(
        name, reports, comparison=numbers, comparison_figures={k: _png(f) for k, f in figs.items()}
    )


def is_targets(data) -> bool:
    """Whether ``data`` is a targets tree: a DataTree with attrs ``layout = "targets"`` (one
    child per target, an optional pooled child; docs/conventions.md).

    Examples
    --------
    >>> import uqviz
    >>> tree = uqviz.synthetic.nig(100, n_datasets=2, rng=0)
    >>> is_targets(tree), is_targets(tree["set_0"].to_dataset())
    (False, False)
    >>> tree.attrs.update(layout="targets", targets=["set_0", "set_1"])
    >>> is_targets(tree)
    True
    """
    return isinstance(data, xr.DataTree) and data.attrs.get("layout") == "targets"


def _report_targets(data, pairs, settings: _Settings, gen) -> ReportCollection:
    """The report of a targets tree: each child's tests computed (the streams of a tree of
    datasets, one child stream per child), decided in one Holm family over every target and
    the pooled child (:func:`uqviz.reporting.verdicts.decide_targets_family`), then each
    child's remedies and words."""
    drafts = {}
    for (name, ds), child in zip(pairs, gen.spawn(len(pairs))):
        ds = ds.copy()
        ds.attrs = {**ds.attrs, "name": name}
        with naming_child(name):
            drafts[name] = _report_compute(ds, settings, child)
    family = vd.decide_targets_family({k: d.entries for k, d in drafts.items()})
    reports = {}
    for name, d in drafts.items():
        with naming_child(name):
            rep = _report_finish(d, settings, decided=True)
        rep.numbers["family"].update(scope="targets", size=family["size"])
        reports[name] = rep
    declared = [str(t) for t in data.attrs.get("targets", [])]
    family["targets"] = [k for k in reports if k in declared] or list(reports)
    family["pooled"] = [k for k in reports if declared and k not in declared]
    name = str(data.attrs.get("name") or data.name or "targets")
    return ReportCollection(name, reports, layout="targets", family=family)


def _binning(ds, cond, n_bins):
    """``(binning, n_bins or None, n_distinct)``: by value for a few-valued variable."""
    n_distinct = int(np.unique(ds[cond].values).size)
    if n_distinct <= DISCRETE_MAX_VALUES:
        return "stratified", None, n_distinct
    return "equal_count", n_bins, n_distinct


def local_analyses(data, cond, *, n_bins, n_boot, rng, client, donor=None, engine=None):
    """LZM and LZMS (with the calibrated null) of ``cond`` binned as the report does, their
    f_v and warnings; None when ``cond`` is constant. ``donor``: an LZMS of the same data
    whose null the LZMS may share."""
    binning, nb, n_distinct = _binning(data, cond, n_bins)
    if n_distinct == 1:
        return None, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lzm = local_calibration(
            data,
            statistic="ZM",
            conditioning=cond,
            n_bins=nb,
            binning=binning,
            n_mc=0,
            engine=engine,
        )
        lzms = rmd.lzms_sharing_null(
            data,
            donor=donor,
            conditioning=cond,
            n_bins=nb,
            binning=binning,
            n_boot=n_boot,
            rng=rng,
            client=client,
            engine=engine,
        )
    warns = sorted({f"{cond}: {w.message}" for w in caught})
    out = {
        "LZM": lzm,
        "LZMS": lzms,
        "fv_LZM": fraction_valid(lzm, method="wilson"),
        "fv_LZMS": fraction_valid(lzms),
        "binning": binning,
        "note": wording.binning_note(
            cond, n_distinct, binning, int(lzms.sizes["bin"]), data.sizes["point"]
        ),
    }
    return out, warns


def uE_adjusted(data, *, rng):
    """The data with uE recalibrated by a cross-fitted BVS on uE (:func:`uqviz.recalibrate`):
    what is left in the bins of a feature is its effect beyond the uE effect."""
    return recalibrate(data, method="bvs", conditioning="uE", folds=rmd.REMEDY_FOLDS, rng=rng)


def _local_block(loc, cond, m):
    block = {k: dataset_to_json(loc[k]) for k in ("LZM", "LZMS", "fv_LZM", "fv_LZMS")}
    block["failing_regions"] = [r["text"] for r in wording.failing_regions(loc["LZMS"], cond)]
    block["binning"] = loc["binning"]
    block["binning_note"] = loc["note"]
    return block


@dataclass(frozen=True)
class _Settings:
    """The checked options of :func:`report` that every dataset's report shares."""

    features: object
    statistics: tuple
    n_boot: int
    n_mc: int
    n_bins: int | None
    progress: object
    figures: bool
    remedy: bool
    client: object
    engine: str


@dataclass
class _Draft:
    """One dataset's report while its sections are computed: the data, its named random
    streams (:func:`report_streams`), the numbers, figures, warnings, entries and result
    Datasets gathered so far."""

    data: xr.Dataset
    name: str
    feats: list
    n_bins: int
    rng: object
    bar: object
    numbers: dict = field(default_factory=dict)
    figs: dict = field(default_factory=dict)
    warns: list = field(default_factory=list)
    entries: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    local: dict = field(default_factory=dict)
    tested: dict = field(default_factory=dict)
    cov: object = None
    curve: object = None
    form: str = "std"

    @property
    def m(self) -> int:
        return self.data.sizes["point"]

    @property
    def conds(self) -> list:
        return ["uE", *self.feats]


def report_streams(rng, n_features: int):
    """The named random streams of one dataset's report (:func:`uqviz.engine.options.streams`):
    ``average``, ``local`` (uE, then each feature), ``references`` (ENCE, ZMSE and CC),
    ``adjustment`` (the BVS folds of the uE adjustment), ``beyond`` (each feature beyond the
    uE effect), ``pit`` (the PIT and the native scores), ``distribution`` (the distribution
    remedy), a ``spare`` and ``remedy``: the children of ``rng.spawn(8 + 2 n_features)`` in
    this order (docstring of :func:`report`, parameter ``rng``).

    Examples
    --------
    >>> s = report_streams(0, 2)
    >>> len(s.local), len(s.beyond)
    (3, 2)
    >>> int(s.remedy.integers(10**6)) == int(seeds.spawn(0, 12)[-1].integers(10**6))
    True
    """
    local = ["local_uE", *(f"local_{i}" for i in range(n_features))]
    beyond = [f"beyond_{i}" for i in range(n_features)]
    s = streams(
        rng,
        "average",
        *local,
        "references",
        "adjustment",
        *beyond,
        "pit",
        "distribution",
        "spare",
        "remedy",
    )
    s.local = [getattr(s, k) for k in local]
    s.beyond = [getattr(s, k) for k in beyond]
    return s


def _report_one(data, settings: _Settings, rng) -> Report:
    """The report of one Dataset: each section in turn, then the verdicts and the words."""
    return _report_finish(_report_compute(data, settings, rng), settings)


def _report_compute(data, settings: _Settings, rng) -> _Draft:
    """The sections of one Dataset's report that compute its tests, up to its verdicts: the
    draft whose entries :func:`_report_finish` decides (alone, or in the family of the
    targets of a targets tree, :func:`decide_targets_family`)."""
    check_dataset(data)
    if "uE_original" in data.variables:  # recalibrated data: validate uE; the old uE is history
        data = data.drop_vars("uE_original")
    name = str(data.attrs.get("name") or "data")
    feats = _features(data, settings.features)
    nf = len(feats)
    n_bins = default_n_bins(data.sizes["point"]) if settings.n_bins is None else settings.n_bins
    d = _Draft(
        data,
        name,
        feats,
        n_bins,
        report_streams(rng, nf),
        progress_bar(5 + 2 * nf, desc=f"uqviz report {name}", progress=settings.progress),
    )
    d.numbers["data"] = _summary(data, feats)
    _average_section(d, settings)
    _local_section(d, settings)
    _beyond_uE_section(d, settings)
    cov, curve = _coverage_section(d, settings)
    _reference_section(d, settings)
    form = str(data.attrs.get("forecast", "std"))  # checked by forecast_form in the section
    if form in PIT_FORMS:
        _pit_of_report(d, settings, form)
    d.cov, d.curve, d.form = cov, curve, form
    return d


def _report_finish(d: _Draft, settings: _Settings, *, decided: bool = False) -> Report:
    """The verdicts (Holm over the draft's own family unless ``decided``: the entries were
    decided in a larger family), the remedies, the words: the :class:`Report`."""
    cov, curve, form = d.cov, d.curve, d.form
    head = _decide(d, cov, decided=decided)
    _remedy_sections(d, settings, form)
    d.bar.update()
    d.bar.close()
    table = vd.verdict_table(jsonable(d.entries))  # the verdicts as data: the words read it
    conclusion = _words(d, head, curve, table)
    how = resampling(d.results, d.data)
    if how["resample"] == "groups":  # ungrouped data: no line, the words of before
        d.numbers["resampling"] = how
        conclusion.append(wording.resampling_line(how))
    return Report(
        d.name,
        jsonable(d.numbers),
        conclusion,
        d.warns,
        d.figs,
        verdicts=table,
        analyses=_analysis_tree(d.results),
    )


def _average_section(d: _Draft, settings: _Settings) -> None:
    """The tailedness screen and the average calibration (stream ``average``)."""
    tail = tailedness(d.data)
    d.results["tailedness"] = tail
    d.numbers["tailedness"] = dataset_to_json(tail)
    d.warns += text.tailedness_warnings(tail)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        avg = validate_average(
            d.data,
            statistics=settings.statistics,
            n_boot=settings.n_boot,
            rng=d.rng.average,
            client=settings.client,
            engine=settings.engine,
        )
    d.warns += sorted({f"average calibration: {w.message}" for w in caught})
    d.results["average"] = avg
    d.numbers["average"] = dataset_to_json(avg)
    d.entries["average"] = vd.average_entry(avg)
    d.bar.update()
    if settings.figures:
        from uqviz.plots.average import intervals  # lazy: plotting

        d.figs["average"] = _png(intervals(avg).figure)


def _local_section(d: _Draft, settings: _Settings) -> None:
    """LZM and LZMS vs uE and each feature (streams ``local``); the consistency entry."""
    donor = None  # the first LZMS with a null: the others of these data share it
    tail = d.results["tailedness"]
    for cond, r in zip(d.conds, d.rng.local):
        loc, w = local_analyses(
            d.data,
            cond,
            n_bins=d.n_bins,
            n_boot=settings.n_boot,
            rng=r,
            client=settings.client,
            donor=donor,
            engine=settings.engine,
        )
        if donor is None and loc is not None:
            donor = loc["LZMS"]
        d.warns += w
        d.local[cond] = loc
        key = "consistency" if cond == "uE" else f"adaptivity:{cond}"
        if loc is None:
            d.numbers[f"local_{cond}"] = {"skipped": wording.constant_note(cond)}
            d.entries[key] = vd.not_tested(wording.constant_note(cond))
        else:
            d.numbers[f"local_{cond}"] = _local_block(loc, cond, d.m)
            d.results[f"local/{cond}"] = loc
            if settings.figures:
                d.figs[f"LZMS_{cond}"] = _local_figure(loc, cond)
            if cond == "uE":
                d.entries[key] = vd.local_entry(
                    loc["fv_LZMS"], loc["LZMS"], tail, conditioning=cond
                )
                d.tested[cond] = loc
        d.bar.update()


def _local_figure(loc, cond) -> bytes:
    from uqviz.plots.conditional import local as plot_local  # lazy: plotting

    ax = plot_local(loc["LZMS"], fv=loc["fv_LZMS"])
    ax.set_title(f"LZMS vs {cond}")
    return _png(ax.figure)


def _beyond_uE_section(d: _Draft, settings: _Settings) -> None:
    """Each feature beyond the uE effect: the adaptivity entries."""
    adjusted = _adjusted_features(
        d, n_boot=settings.n_boot, client=settings.client, engine=settings.engine
    )
    for cond, (loc, tail_adj, w, block) in adjusted.items():
        d.warns += w
        d.numbers[f"local_{cond}"]["beyond_uE"] = block
        if loc is not None:
            d.entries[f"adaptivity:{cond}"] = vd.local_entry(
                loc["fv_LZMS"], loc["LZMS"], tail_adj, conditioning=cond, adjusted=True
            )
            d.tested[cond] = loc
            d.results[f"beyond_uE/{cond}"] = loc
        else:
            d.entries[f"adaptivity:{cond}"] = vd.not_tested(block["skipped"])


def _coverage_section(d: _Draft, settings: _Settings):
    """The interval coverage and the calibration curve: ``(coverage, curve)``."""
    cov, curve = interval_coverage(d.data), calibration_curve(d.data)
    d.results["coverage"], d.results["calibration_curve"] = cov, curve
    d.numbers["coverage"] = dataset_to_json(cov)
    d.numbers["calibration_curve"] = dataset_to_json(curve)
    if settings.figures:
        from uqviz.plots.scores import calibration_curve as plot_curve  # lazy: plotting
        from uqviz.plots.scores import coverage as plot_coverage

        d.figs["coverage"] = _png(plot_coverage(cov).figure)
        d.figs["calibration_curve"] = _png(plot_curve(curve).figure)
    d.bar.update()
    return cov, curve


def _reference_section(d: _Draft, settings: _Settings) -> None:
    """ENCE, ZMSE and CC against their simulated references (stream ``references``)."""
    wf = {}
    if d.local["uE"] is not None and d.m >= 2 * DEFAULT_N_BINS:
        # ENCE, ZMSE bin uE (20 bins of >= 2 points); CC ranks it: undefined for constant uE
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # one synthetic set gives the three statistics their values (shared draws):
            # each result is that of validate(statistic=s) with this one stream
            wf = validate_shared(
                d.data,
                statistics=("ENCE", "ZMSE", "CC"),
                n_mc=settings.n_mc,
                n_boot=settings.n_boot,
                rng=d.rng.references,
                client=settings.client,
                progress=settings.progress,
                engine=settings.engine,
            )
        d.warns += sorted({str(w.message) for w in caught})
        for s, res in wf.items():
            d.entries[s] = vd.reference_entry(res, s)
            d.results[f"simulated_references/{s}"] = res
    else:
        why = (
            "uE is constant: its bins and ranks are undefined"
            if d.local["uE"] is None
            else f"{d.m} points are too few for {DEFAULT_N_BINS} bins of uE"
        )
        for s in ("ENCE", "ZMSE", "CC"):
            d.entries[s] = {**vd.not_tested(why), "statistic": s}
    d.numbers["simulated_references"] = {s: dataset_to_json(v) for s, v in wf.items()}
    d.bar.update()


def _pit_of_report(d: _Draft, settings: _Settings, form: str) -> None:
    """The PIT section of a forecast given as more than a std (stream ``pit``)."""
    try:
        res, block, w, pit_figs = _pit_section(
            d.data,
            n_boot=settings.n_boot,
            rng=d.rng.pit,
            client=settings.client,
            engine=settings.engine,
            figures=settings.figures,
        )
    except (TypeError, ValueError) as exc:  # e.g. a hand-built forecast lacking y
        why = f"the PIT could not be computed: {exc}"
        d.numbers["pit"] = {"forecast": form, "skipped": why}
        d.entries["pit"] = vd.not_tested(why)
    else:
        d.numbers["pit"] = block
        d.entries["pit"] = vd.pit_entry(res)
        d.results["pit/validate_pit"] = res
        d.warns += w
        d.figs.update(pit_figs)


def _decide(d: _Draft, cov, *, decided: bool = False) -> dict:
    """The family's Holm decision (unless ``decided``: the entries were decided in the family
    of the targets), the coverage entry and the headline: returns the latter."""
    entries = d.entries
    if not decided:
        vd.decide_family(entries)
    conditional = {
        k: e["verdict"]
        for k, e in entries.items()
        if k == "consistency" or k.startswith("adaptivity:")
    }
    entries["coverage"] = vd.coverage_entry(
        cov, entries["average"]["verdict"], conditional=conditional
    )
    for k, e in entries.items():
        e["headline"] = vd.is_question(k)
    d.numbers["verdicts"] = entries
    head = vd.headline(entries)
    d.numbers["verdict"] = head["verdict"]
    d.numbers["headline"] = head
    d.numbers["family"] = {
        "alpha": vd.ALPHA,
        "method": "Holm (1979)",
        "tests": [k for k, e in entries.items() if "family_size" in e],
    }
    return head


def _remedy_sections(d: _Draft, settings: _Settings, form: str) -> None:
    """The variance remedy (stream ``remedy``) and the distribution remedy (``distribution``)
    when a test fails."""
    if not settings.remedy:
        return
    before, trigger = _before(d.entries, d.local, d.feats)
    conds = [c for c in d.conds if d.local[c] is not None]
    binning_of = lambda ds, c: _binning(ds, c, d.n_bins)[:2]  # noqa: E731
    if trigger:
        block, after_local, rwarns = rmd.run_remedy(
            d.data,
            before,
            conds=conds,
            binning_of=binning_of,
            n_bins=settings.n_bins,
            n_boot=min(settings.n_boot, rmd.REMEDY_N_BOOT),
            rng=d.rng.remedy,
            engine=settings.engine,
        )
        d.numbers["remedy"] = block
        d.warns += rwarns
        if settings.figures:
            fig = _remedy_figure(block, d.local, after_local)
            if fig is not None:
                d.figs["remedy"] = _png(fig)
    if trigger or d.entries.get("pit", {}).get("verdict") == FAILS:
        dist, dwarns = rmd.run_distribution_remedy(
            d.data,
            form=form,
            conds=conds,
            binning_of=binning_of,
            pit_before=d.entries.get("pit"),
            rng=d.rng.distribution,
        )
        d.numbers.setdefault("remedy", {})["distribution"] = dist
        d.warns += dwarns


def _words(d: _Draft, head: dict, curve, table) -> list:
    """The conclusion's sentences, written from the verdict table ``table``, and the further
    diagnostics' block of the numbers."""
    conclusion, further = wording.conclusion_lines(
        table, jsonable(d.entries), d.tested, d.local, d.feats, curve
    )
    d.numbers["further_diagnostics"] = {
        "tests": head["further_diagnostics"],
        "verdicts": {
            k: str(table["verdict"].sel(test=k).item()) for k in head["further_diagnostics"]
        },
        "conclusion": further,
        "rule": "their own words; a 'fails' of ENCE, ZMSE or CC (decided under every "
        "generative D, Holm-adjusted in the family) makes the headline 'fails', "
        "their 'unreliable' never makes it 'unreliable'; the interval coverage does "
        "not enter it",
    }
    remedy = d.numbers.get("remedy", {})
    if "summary" in remedy:
        conclusion.append("Remedy (cross-fitted recalibration, re-validated): " + remedy["summary"])
    if "distribution" in remedy:
        conclusion.append(
            "Distribution recalibration (cross-fitted, re-validated): "
            + remedy["distribution"]["summary"]
        )
    return conclusion


def _result_datasets(results: dict):
    """``(path, Dataset)`` of every result Dataset of a draft (``{path: Dataset or {name:
    Dataset}}``), in order."""
    for path, res in results.items():
        if isinstance(res, xr.Dataset):
            yield path, res
        elif isinstance(res, dict):
            for k, v in res.items():
                if isinstance(v, xr.Dataset):
                    yield f"{path}/{k}", v


def resampling(results: dict, data) -> dict:
    """How the bootstraps of a report resampled, read from the attrs of the results it
    computed: ``{"resample", "n_groups", "groups", "analyses"}``.

    ``resample`` is ``"groups"`` when a result says ``resample = "groups"`` (the data carry a
    ``group`` coordinate: whole groups resampled), else ``"points"``; ``n_groups`` that
    result's ``n_groups`` (else the number of distinct labels of the data's ``group``
    coordinate, else None); ``groups`` what a group is (the data's attr ``groups``, default
    ``"group"``; None without groups); ``analyses`` the results that resampled groups.

    Parameters
    ----------
    results : dict
        ``{path: Dataset or {name: Dataset}}``, the results of one dataset's report.
    data : xarray.Dataset
        The data the report validated.

    Returns
    -------
    dict

    Examples
    --------
    >>> import xarray as xr
    >>> data = xr.Dataset(attrs={"groups": "structure"})
    >>> avg = xr.Dataset(attrs={"resample": "groups", "n_groups": 120})
    >>> resampling({"average": avg, "local/uE": {"LZMS": xr.Dataset()}}, data)
    {'resample': 'groups', 'n_groups': 120, 'groups': 'structure', 'analyses': ['average']}
    >>> resampling({"average": xr.Dataset(attrs={"resample": "points"})}, xr.Dataset())
    {'resample': 'points', 'n_groups': None, 'groups': None, 'analyses': []}
    """
    grouped = [
        (path, res)
        for path, res in _result_datasets(results)
        if res.attrs.get("resample") == "groups"
    ]
    if not grouped:
        return {"resample": "points", "n_groups": None, "groups": None, "analyses": []}
    n = grouped[0][1].attrs.get("n_groups")
    if n is None and GROUP_COORD in data.coords:
        n = int(np.unique(data[GROUP_COORD].values).size)
    return {
        "resample": "groups",
        "n_groups": None if n is None else int(n),
        "groups": str(data.attrs.get("groups") or "group"),
        "analyses": [p for p, _ in grouped],
    }


def _node_name(name) -> str:
    """A DataTree node name from a variable name (no "/")."""
    return str(name).replace("/", "_") or "_"


def _analysis_tree(results: dict) -> xr.DataTree:
    """``{path: Dataset or {name: Dataset}}`` as a DataTree: one node per result Dataset
    (``local/<variable>/LZMS``...)."""
    nodes = {}
    for path, value in results.items():
        head, _, rest = path.partition("/")
        base = head if not rest else f"{head}/{_node_name(rest)}"
        if isinstance(value, dict):  # a local analysis: its four result Datasets
            for k in ("LZM", "LZMS", "fv_LZM", "fv_LZMS"):
                nodes[f"{base}/{k}"] = value[k]
        else:
            nodes[base] = value
    return xr.DataTree.from_dict(nodes, name="analyses")


def _adjusted_features(d: _Draft, *, n_boot, client, engine=None):
    """Each feature tested beyond the uE effect (streams ``adjustment`` and ``beyond``):
    ``{feature: (local, tail, warnings, json)}``."""
    todo = [c for c in d.feats if d.local[c] is not None]
    if not todo:
        return {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            adj = uE_adjusted(d.data, rng=d.rng.adjustment)
        except (TypeError, ValueError) as exc:
            adj, why = None, str(exc)
    base = sorted({f"uE adjustment: {w.message}" for w in caught})
    out = {}
    if adj is None:
        for cond in todo:
            out[cond] = (
                None,
                None,
                base,
                {"skipped": f"the uE effect could not be removed (cross-fitted BVS on uE: {why})"},
            )
        return out
    tail_adj = tailedness(adj)
    donor = None
    for cond, r in zip(d.feats, d.rng.beyond):
        if cond not in todo:
            continue
        loc, w = local_analyses(
            adj,
            cond,
            n_bins=d.n_bins,
            n_boot=n_boot,
            rng=r,
            client=client,
            donor=donor,
            engine=engine,
        )
        if donor is None and loc is not None:
            donor = loc["LZMS"]
        block = _local_block(loc, cond, d.m)
        block["adjustment"] = (
            f"uE recalibrated by BVS on uE, cross-fitted on {rmd.REMEDY_FOLDS} folds"
        )
        out[cond] = (loc, tail_adj, base + [f"beyond uE, {x}" for x in w], block)
        d.bar.update()
    return out


def _before(entries, local, feats):
    """``({property: status}, trigger)``: the tests of the remedy before recalibration;
    trigger when one fails (a rejected ZMS counts even when heavy tails make it unreliable)."""
    avg = entries["average"]
    before = {"average calibration": avg["verdict"]}
    trigger = avg["verdict"] == "fails" or (avg["verdict"] == "unreliable" and not avg["valid"])
    for cond in ["uE", *feats]:
        if local[cond] is None:
            continue
        e = entries["consistency" if cond == "uE" else f"adaptivity:{cond}"]
        before[wording.property_name(cond)] = e["verdict"]
        trigger = trigger or e["verdict"] == "fails"
    return before, trigger


def _remedy_figure(block, local, after_local):
    """LZMS before and after the recommended method (else the one repairing most) on the
    first variable that failed and that the method re-validated."""
    rows = [r for r in block["methods"] if r["label"] in after_local]
    if not rows:
        return None
    pick = next((r for r in rows if r["label"] == block["recommended"]), None)
    if pick is None:
        pick = max(rows, key=lambda r: len(r["repairs"]))
    failing = [
        c
        for c in after_local[pick["label"]]
        if block["before"]["status"].get(wording.property_name(c)) != "OK"
    ]
    if not failing:
        return None
    from uqviz.plots.recalibration import before_after

    cond = failing[0]
    ax = before_after(
        local[cond]["LZMS"],
        after_local[pick["label"]][cond],
        labels=("before", pick["description"]),
        log_x=cond == "uE",
    )
    ax.set_title(f"LZMS vs {cond}: before and after {pick['description']}")
    return ax.figure


def _summary(ds, feats):
    e, u = ds["E"].values, ds["uE"].values
    out = {
        "n_points": int(ds.sizes["point"]),
        "units": ds.attrs.get("units", ""),
        "features": feats,
        "E": {
            "mean": float(e.mean()),
            "sd": float(e.std(ddof=1)) if e.size > 1 else None,
            "min": float(e.min()),
            "max": float(e.max()),
        },
        "uE": {
            "mean": float(u.mean()),
            "min": float(u.min()),
            "max": float(u.max()),
            "n_distinct": int(np.unique(u).size),
        },
    }
    for key in ("n_dropped", "dropped_reasons", "n_filtered", "min_uncertainty", "n_missing"):
        if key in ds.attrs:
            out[key] = jsonable(ds.attrs[key])
    if GROUP_COORD in ds.coords:  # correlated points: their groups (ungrouped: as before)
        out["n_groups"] = int(np.unique(ds[GROUP_COORD].values).size)
        out["groups"] = str(ds.attrs.get("groups") or "group")
    return out


def _pit_section(data, *, n_boot, rng, client, engine, figures):
    """The PIT section of a forecast given as an interval, quantiles or samples:
    ``(validate_pit result, {"forecast", "validate_pit", "scores"} as JSON, warnings,
    figures)``; ``rng`` is spawned into the PIT's stream and the scores' stream."""
    pit_rng, score_rng = seeds.spawn(rng, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = validate_pit(data, rng=pit_rng)
        scores = predictive_scores(data, n_boot=n_boot, rng=score_rng, client=client, engine=engine)
    warns = sorted({f"PIT: {w.message}" for w in caught})
    figs = {}
    if figures:
        from uqviz.plots.pit import pit_ecdf_difference, pit_histogram

        figs["pit_histogram"] = _png(pit_histogram(res).figure)
        figs["pit_ecdf"] = _png(pit_ecdf_difference(res).figure)
    block = {
        "forecast": forecast_form(data),
        "validate_pit": dataset_to_json(res),
        "scores": dataset_to_json(scores),
    }
    return res, block, warns, figs
