"""Run independent seeded blocks of work serially, on threads or on dask, in block order.

Examples
--------
>>> n_threads() >= 1, resolve_client(None) is None, show_progress(False)
(True, True, False)
>>> int(block_rng(3, 1).integers(1000)) == int(block_rng(3, 1).integers(1000))
True
>>> with progress_bar(3, desc="demo", progress=False) as bar:
...     bar.update(3)
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from uqviz._array.resample import block_generator
from uqviz.engine import checks

__all__ = ["run_blocks", "block_rng", "n_threads", "progress_bar", "show_progress",
           "resolve_client"]


def n_threads() -> int:
    """Worker threads for local blocks (``UQVIZ_THREADS`` or the core count)."""
    value = os.environ.get("UQVIZ_THREADS", os.cpu_count() or 1)
    try:
        return max(1, int(value))
    except ValueError:
        raise ValueError(f"UQVIZ_THREADS must be a whole number, got {value!r}") from None


_LOCAL_CLIENT = []


def resolve_client(client):
    """The ``client`` option: None (threads), ``"local"`` (a dask LocalCluster) or a Client."""
    if client is None:
        return None
    if isinstance(client, str):
        if client != "local":
            raise ValueError(f"client must be None, 'local' or a dask.distributed.Client; "
                             f"got {client!r}")
        if not _LOCAL_CLIENT:
            from dask.distributed import Client, LocalCluster

            _LOCAL_CLIENT.append(Client(LocalCluster(processes=False)))
        return _LOCAL_CLIENT[0]
    if not (callable(getattr(client, "map", None)) and callable(getattr(client, "gather", None))):
        raise TypeError("client must be None, 'local' or a dask.distributed.Client; got "
                        f"{type(client).__name__}")
    return client


def block_rng(seed: int, block: int) -> np.random.Generator:
    """The random stream of one block, :func:`uqviz._array.resample.block_generator`."""
    return block_generator(seed, block)


def run_blocks(func, n_blocks: int, *, client=None, progress=None):
    """Evaluate ``func(block)`` for ``block = 0..n_blocks-1``, results in block order.

    ``func`` must depend only on its argument; ``client``: see
    :func:`resolve_client`; ``progress`` (tqdm-like) is updated per block.

    Examples
    --------
    >>> run_blocks(lambda b: b * b, 4)
    [0, 1, 4, 9]
    """
    n_blocks = checks.count("n_blocks", n_blocks, minimum=0)
    client = resolve_client(client)
    if client is not None:
        futures = client.map(func, range(n_blocks), pure=False)
        results = client.gather(futures)
        if progress is not None:
            progress.update(n_blocks)
        return results
    workers = min(n_threads(), max(n_blocks, 1))
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
    """The ``progress`` option: None shows a bar in a terminal or Jupyter."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)()) or "ipykernel" in sys.modules
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    return bool(progress)


def progress_bar(total: int, *, desc: str, progress=None, unit: str = "it"):
    """A ``tqdm.auto`` bar honouring the ``progress`` option."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not show_progress(progress),
                leave=False)
