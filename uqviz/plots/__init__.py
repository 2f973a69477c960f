"""Plots: take result Datasets, draw, return the Axes. No statistics are computed here."""
