"""Interactive explorers (ipywidgets): controls -> compute functions -> plots."""

from uqviz.widgets.conditional import ConditionalExplorer
from uqviz.widgets.reference import ReferenceExplorer

__all__ = ["ConditionalExplorer", "ReferenceExplorer"]
