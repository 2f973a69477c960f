"""Interactive explorers (ipywidgets): controls -> compute functions -> plots."""

from .conditional import ConditionalExplorer
from .reference import ReferenceExplorer

__all__ = ["ConditionalExplorer", "ReferenceExplorer"]
