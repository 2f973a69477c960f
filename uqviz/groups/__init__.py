"""Calibration across groups: adversarial (random) groups of decreasing size."""

from uqviz.groups.adversarial import adversarial_group_calibration, adversarial_validation

__all__ = ["adversarial_group_calibration", "adversarial_validation"]
