"""Notebook 11 executed once in fast mode, and checked (tests/project/course_run.py)."""

from tests.project.course_run import *  # noqa: F401,F403  the fixture and the tests

NOTEBOOK = "11_potentials"
