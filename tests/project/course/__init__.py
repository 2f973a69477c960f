"""One module per course notebook: each executes its notebook once (tests/project/course_run.py)
and runs the checks of the executed notebook on it, so that ``--dist loadfile`` spreads the
notebooks over the xdist workers."""
