"""Notebook 06 executed once in fast mode, and checked (tests/project/course_run.py)."""

from tests.project.course_run import *  # noqa: F401,F403  the fixture and the tests

NOTEBOOK = "06_intervals_and_recalibration"

#: tests/project/course/conftest.py marks these xfail(strict=True)
KNOWN_FAILURES = {
    "test_figures_are_readable": (
        "a figure of 06 predating the check (issue 37 reviewed 00 and 08-10): in cell 21 "
        "(09e156b0) both legends of before_after lie over the error bars of 100 dense bins"),
}
