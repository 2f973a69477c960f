"""The engine: statistics registry, bootstrap, binning, seeds, dispatch, argument checks."""
