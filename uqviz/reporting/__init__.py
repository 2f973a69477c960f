"""The report (:func:`uqviz.report`): verdicts in plain words, as HTML (figures embedded) and JSON.

- :mod:`uqviz.reporting.build`: ``report`` runs the analyses; ``Report`` / ``ReportCollection``
  (a DataTree: one section per dataset) hold the results and save them.
- :mod:`uqviz.reporting.comparison`: the comparison of models of the same points (a DataTree).
- :mod:`uqviz.reporting.wording`: the sentences (failing regions, verdicts, "n/a").
- :mod:`uqviz.reporting.render`: the HTML.
- :mod:`uqviz.reporting.text`: console tables of the CLI.
"""

from uqviz.reporting.build import Report, ReportCollection, report

__all__ = ["Report", "ReportCollection", "report"]
