"""Shared fixtures: the real data directory (``$UQVIZ_DATA_DIR``, never a download)."""

import os
from pathlib import Path

import pytest


def _data_root() -> Path:
    env = os.environ.get("UQVIZ_DATA_DIR", "").strip()
    if not env:
        pytest.fail("UQVIZ_DATA_DIR is not set: these tests read the real data files locally "
                    "(never download). Run e.g. `UQVIZ_DATA_DIR=../shared/data pytest` from the "
                    "repository root (.ci/run does this).", pytrace=False)
    root = Path(env).expanduser().resolve()
    if not (root / "SHA256SUMS").is_file():
        pytest.fail(f"UQVIZ_DATA_DIR={env!r} -> {root} holds no SHA256SUMS: not the uqviz "
                    "data directory (expected the folder with pernot-2024_RCE-v4.0/ ...)",
                    pytrace=False)
    return root


@pytest.fixture(scope="session")
def data_root():
    return _data_root()
