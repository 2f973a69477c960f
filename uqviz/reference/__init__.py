"""Simulated references (Sim/Sim2, the validation workflow), extrapolation, confidence curves."""

from uqviz.reference.confidence import confidence_curve
from uqviz.reference.extrapolation import extrapolate, size_dependence
from uqviz.reference.simulated import (
    simulated_reference,
    validate,
    validate_simulated,
    validate_with_references,
)

# ``validate``: the deprecated name of validate_with_references, importable until uqviz 0.3.0
__all__ = [
    "confidence_curve",
    "extrapolate",
    "simulated_reference",
    "size_dependence",
    "validate_simulated",
    "validate_with_references",
]
