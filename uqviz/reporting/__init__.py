"""The report (:func:`uqviz.report`): one verdict per dataset in HTML (figures embedded) and JSON, in plain words."""

from uqviz.reporting.build import Report, report

__all__ = ["Report", "report"]
