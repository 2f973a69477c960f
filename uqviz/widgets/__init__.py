"""Interactive explorers (ipywidgets): controls -> compute functions -> plots."""
