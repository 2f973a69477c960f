"""Run independent, seeded blocks of work serially, on threads, or on dask.

A computation is cut into ``n_blocks`` blocks whose random streams depend only
on ``(seed, block index)``; the results therefore do not depend on how the
blocks are scheduled. Numpy releases the GIL in its random generators and
ufunc loops, so a thread pool uses both cores without copying data.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["run_blocks", "block_rng", "n_threads", "progress_bar", "show_progress"]


def n_threads() -> int:
    """Worker threads for local block execution (``UQVIZ_THREADS`` or the core count)."""
    return max(1, int(os.environ.get("UQVIZ_THREADS", os.cpu_count() or 1)))


def block_rng(seed: int, block: int) -> np.random.Generator:
    """The random stream of one block: PCG64 seeded by ``[seed, block]``."""
    return np.random.default_rng([int(seed), int(block)])


def run_blocks(func, n_blocks: int, *, client=None, progress=None):
    """Evaluate ``func(block)`` for ``block = 0..n_blocks-1``, results in block order.

    Parameters
    ----------
    func : callable
        ``func(block) -> ndarray``; must depend only on its argument (and
        read-only captured data).
    n_blocks : int
    client : dask.distributed.Client, optional
        Submit the blocks to a dask cluster instead of local threads.
    progress : tqdm-like, optional
        Updated by one per finished block.

    Returns
    -------
    list
        ``[func(0), ..., func(n_blocks - 1)]``.
    """
    if client is not None:
        futures = client.map(func, range(n_blocks), pure=False)
        results = client.gather(futures)
        if progress is not None:
            progress.update(n_blocks)
        return results
    workers = min(n_threads(), n_blocks)
    if workers <= 1:
        out = []
        for b in range(n_blocks):
            out.append(func(b))
            if progress is not None:
                progress.update(1)
        return out
    with ThreadPoolExecutor(max_workers=workers) as pool:
        out = []
        for res in pool.map(func, range(n_blocks)):
            out.append(res)
            if progress is not None:
                progress.update(1)
        return out


def show_progress(progress) -> bool:
    """Resolve the ``progress`` option: True/False as given; None (the default) means
    "show a bar when someone is watching": an interactive terminal or a Jupyter kernel."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)()) or "ipykernel" in sys.modules
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    return bool(progress)


def progress_bar(total: int, *, desc: str, progress=None, unit: str = "it"):
    """A tqdm bar (``tqdm.auto``: a widget in Jupyter) honouring the ``progress`` option."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not show_progress(progress),
                leave=False)
