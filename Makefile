# uqviz developer commands. Both targets create .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.uqviz-installed

.PHONY: demo test check lint docs bench clean chromium

# the dashboard's Voila template (voila.json) is copied into the venv: editable installs skip
# pyproject's data-files
$(STAMP): pyproject.toml $(wildcard share/jupyter/voila/templates/uqviz/*)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	$(BIN)/python scripts/install-voila-template
	@touch $(STAMP)

## demo: install, then check the average calibration of the embedded default dataset (uqviz average) and write its report
demo: $(STAMP)
	$(BIN)/uqviz average
	MPLBACKEND=Agg $(BIN)/uqviz report --out uqviz-report

## chromium: the system browser of the browser tests (Debian's package when missing)
chromium:
	@scripts/ensure-chromium

## test: install, then run the test suite (unit tests, docstring examples, real-data
## fidelity tests, browser tests, and the course: tests/project/course/ executes each notebook
## once in fast mode and checks what it printed and drew); UQVIZ_PROGRESS=0: no progress bars in
## the tests (the executed notebooks hide theirs themselves); pytest-xdist: one worker per core
## (at most 4), a test file per worker at a time (one file per notebook)
test: $(STAMP) chromium
	UQVIZ_PROGRESS=0 $(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile --durations=25 tests --doctest-modules uqviz

## check: the edit loop: unit tests, contract and docstring examples, without the slow,
## fidelity (real data), browser and notebook tiers (tests/conftest.py marks them)
check: $(STAMP)
	UQVIZ_PROGRESS=0 $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile -m "not slow and not fidelity and not browser and not notebook" tests --doctest-modules uqviz

## lint: ruff (lint and format), codespell, mypy on uqviz/_array and uqviz/engine, notebooks stripped
lint: $(STAMP)
	$(BIN)/ruff check uqviz tests benchmarks scripts docs/conf.py
	$(BIN)/ruff format --check uqviz tests benchmarks scripts docs/conf.py
	$(BIN)/codespell uqviz tests docs README.md CONTRIBUTING.md CHANGELOG.md benchmarks scripts
	$(BIN)/mypy
	$(BIN)/python scripts/check-notebook-outputs notebooks/*.ipynb

## docs: install, then build the documentation site into docs/_build/html (notebooks executed;
## UQVIZ_DOCS_EXECUTE=off skips that), warnings and broken cross-references are errors; then
## screenshot two pages into test-artifacts/
docs: $(STAMP) chromium
	$(BIN)/sphinx-build -E -W --keep-going -n -c docs . docs/_build/html
	$(BIN)/python scripts/docs-screenshots

## bench: speed of the bootstrap engine against scipy (not part of test)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_bootstrap.py
	$(BIN)/python benchmarks/bench_table_iv.py --no-scipy
	$(BIN)/python benchmarks/bench_conditional.py
	$(BIN)/python benchmarks/bench_reference.py
	$(BIN)/python benchmarks/bench_quantile.py
	$(BIN)/python benchmarks/bench_recalibration.py
	$(BIN)/python benchmarks/bench_scores.py
	$(BIN)/python benchmarks/bench_from_estimator.py
	$(BIN)/python benchmarks/bench_scaling.py
	$(BIN)/python benchmarks/bench_dask.py
	$(BIN)/python benchmarks/bench_null.py
	$(BIN)/python benchmarks/bench_report_cost.py
	$(BIN)/python benchmarks/bench_verdicts.py --quick
	$(BIN)/python benchmarks/bench_without_numba.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache docs/_build
