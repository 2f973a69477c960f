"""Tests of uqviz.predictive: the forecast as given, its predictive CDF, the PIT."""
