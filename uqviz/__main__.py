"""``python -m uqviz``: the ``uqviz`` command (:func:`uqviz.cli.main`), for environments where the
console script is not on the PATH (a notebook's kernel, a Binder session)."""

from uqviz.cli import main

if __name__ == "__main__":  # pragma: no branch
    raise SystemExit(main())
