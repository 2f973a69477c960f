"""The quoted-number check runs for the notebooks whose markdown quotes printed numbers: those
with a ``tests/project/course_quotes/<notebook>.json`` (00 and 08-10, issue 37); for the others
it is not collected (deselected, not skipped)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
QUOTES = HERE.parent / "course_quotes"


def pytest_collection_modifyitems(config, items):
    drop = [
        item
        for item in items
        if Path(str(item.path)).resolve().parent == HERE
        and getattr(item, "originalname", None) == "test_quoted_numbers_are_printed"
        and not (QUOTES / f"{item.module.NOTEBOOK}.json").is_file()
    ]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item not in drop]
