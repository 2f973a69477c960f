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

import atexit
import importlib.util
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from uqviz._array.lazy import lazy_module
from uqviz.engine import checks

resample_kernels = lazy_module("uqviz._array.resample")

__all__ = [
    "run_blocks",
    "run_split",
    "run_task",
    "split_ranges",
    "stream_rows",
    "block_rng",
    "n_threads",
    "progress_bar",
    "show_progress",
    "resolve_client",
    "check_client",
    "local_cluster",
    "close_local",
    "scatter",
    "STREAM_ELEMENTS",
]

#: values of one chunk of simulated sets held at once (8 MB of float64): memory O(M + chunk)
STREAM_ELEMENTS = 1 << 20


def n_threads() -> int:
    """Worker threads for local blocks (``UQVIZ_THREADS`` or the core count)."""
    value = os.environ.get("UQVIZ_THREADS", os.cpu_count() or 1)
    try:
        return max(1, int(value))
    except ValueError:
        raise ValueError(f"UQVIZ_THREADS must be a whole number, got {value!r}") from None


_LOCAL_CLIENT: list = []


def _installed(name: str) -> bool:
    """Whether the module ``name`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent missing; ``sys.modules[name] = None``
        return False


def check_client(client):
    """The ``client`` option checked, nothing started: None, ``"local"`` or a Client.

    ``"local"`` needs dask.distributed, an extra (``pip install 'uqviz[dask]'``): without it,
    a ValueError naming the option and the extra.

    Examples
    --------
    >>> check_client(None) is None, check_client("local")
    (True, 'local')
    """
    if isinstance(client, str):
        if client != "local":
            raise ValueError(
                f"client must be None, 'local' or a dask.distributed.Client; got {client!r}"
            )
        if not (_installed("dask") and _installed("distributed")):
            raise ValueError(
                "client='local' needs dask.distributed, which is not installed: "
                "pip install 'uqviz[dask]' (or client=None: local threads)"
            )
    elif client is not None and not (
        callable(getattr(client, "map", None)) and callable(getattr(client, "gather", None))
    ):
        raise TypeError(
            "client must be None, 'local' or a dask.distributed.Client; got "
            f"{type(client).__name__}"
        )
    return client


def resolve_client(client):
    """The ``client`` option: None (threads), ``"local"`` (a dask LocalCluster) or a Client.

    ``"local"`` is one in-process cluster, started at the first use and closed at exit
    (its scratch space with it, :func:`local_cluster`).
    """
    if check_client(client) != "local":
        return client
    if not _LOCAL_CLIENT:
        from dask.distributed import Client

        cluster = local_cluster(processes=False)
        _LOCAL_CLIENT.append(Client(cluster))
        atexit.register(close_local, _LOCAL_CLIENT[0], cluster)
    return _LOCAL_CLIENT[0]


def local_cluster(**kwargs):
    """A dask ``LocalCluster(**kwargs)`` whose scratch space (the scheduler's and the
    workers' ``local_directory``) is a temporary folder, removed by :func:`close_local` (or
    at exit): no ``dask-scratch-space`` is left in the temporary folder."""
    import dask
    from dask.distributed import LocalCluster

    scratch = tempfile.TemporaryDirectory(prefix="uqviz-dask-")
    kwargs.setdefault("dashboard_address", None)
    with dask.config.set({"temporary-directory": scratch.name}):
        cluster = LocalCluster(local_directory=scratch.name, **kwargs)
    cluster.uqviz_scratch = scratch
    return cluster


def close_local(client, cluster):
    """Close ``client`` and ``cluster``, then remove the cluster's scratch folder."""
    for obj in (client, cluster):
        try:
            obj.close()
        except Exception:  # noqa: BLE001 - already closed, or closing at exit
            pass
    scratch = getattr(cluster, "uqviz_scratch", None)
    if scratch is not None:
        scratch.cleanup()


def block_rng(seed: int, block: int) -> np.random.Generator:
    """The random stream of one block, :func:`uqviz._array.resample.block_generator`."""
    return resample_kernels.block_generator(seed, block)


def scatter(client, value):
    """``value`` sent once to every worker of ``client`` (a future), or itself without client."""
    if client is None or value is None or isinstance(value, (bool, int, float, str)):
        return value
    return client.scatter(value, broadcast=True, hash=False)


def run_blocks(func, n_blocks: int, *, client=None, progress=None, shared=None):
    """Evaluate ``func(block)`` for ``block = 0..n_blocks-1``, results in block order.

    ``func`` must depend only on its argument; ``client``: see
    :func:`resolve_client`; ``progress`` (tqdm-like) is updated per block.
    With ``shared`` (large data used by every block), ``func(block, shared)`` is called
    and ``shared`` is sent to the dask workers once, not with every task.

    Examples
    --------
    >>> run_blocks(lambda b: b * b, 4)
    [0, 1, 4, 9]
    >>> run_blocks(lambda b, s: b + s, 3, shared=10)
    [10, 11, 12]
    """
    n_blocks = checks.count("n_blocks", n_blocks, minimum=0)
    client = resolve_client(client)
    if shared is not None:
        if client is not None:
            fut = scatter(client, shared)
            futures = client.map(func, range(n_blocks), [fut] * n_blocks, pure=False)
            results = client.gather(futures)
            if progress is not None:
                progress.update(n_blocks)
            return results
        inner = func

        def func(b):
            return inner(b, shared)

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


def split_ranges(n: int, n_parts: int) -> list[tuple[int, int]]:
    """``[(first, last), ...]``: ``0..n`` cut into at most ``n_parts`` near-equal ranges.

    Examples
    --------
    >>> split_ranges(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    """
    n_parts = max(1, min(int(n_parts), int(n)))
    cuts = [n * k // n_parts for k in range(n_parts + 1)]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def _n_workers(client) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - a client-like object without nthreads
        return 1


def run_split(func, n_items: int, *, shared, client=None, parts_per_worker: int = 2):
    """``func(first, last, shared)`` over ranges of ``0..n_items``, results in order (a list).

    Without a client, one call over all items (the kernel uses the local threads); with a
    client, ``shared`` is scattered once and the items are split over the workers'
    threads. ``func``'s result for an item must not depend on the range it is computed in
    (each item has its own random stream), so the split never changes the numbers.

    Examples
    --------
    >>> run_split(lambda a, b, s: list(range(a, b)), 5, shared=None)
    [[0, 1, 2, 3, 4]]
    """
    client = resolve_client(client)
    if client is None:
        return [func(0, int(n_items), shared)]
    fut = scatter(client, shared)
    ranges = split_ranges(n_items, parts_per_worker * _n_workers(client))
    futures = [client.submit(func, a, b, fut, pure=False) for a, b in ranges]
    return client.gather(futures)


def call_recording_warnings(func, args, kwargs):
    """``func(*args, **kwargs)`` and the warnings it raised, as ``(message, category)`` pairs.

    Run as a task on a worker (run_task here, the DataTree dispatch of engine.tree), so that
    the caller can raise the worker's warnings again.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [(w.message, w.category) for w in caught]


def run_task(func, *args, client=None, **kwargs):
    """``func(*args, **kwargs)`` here, or as one task on ``client`` (positional args scattered).

    Warnings raised on the worker are raised again here, so that a result computed on a
    cluster comes with the same warnings as a local one.

    Examples
    --------
    >>> run_task(divmod, 7, 2)
    (3, 1)
    """
    client = resolve_client(client)
    if client is None:
        return func(*args, **kwargs)
    import warnings

    futs = [scatter(client, a) for a in args]
    result, caught = client.submit(call_recording_warnings, func, futs, kwargs, pure=False).result()
    for message, category in caught:
        warnings.warn(message, category, stacklevel=3)
    return result


def stream_rows(n_rows: int, m: int) -> int:
    """Rows of ``m`` values to hold at once so that a chunk stays near :data:`STREAM_ELEMENTS`.

    Examples
    --------
    >>> stream_rows(64, 1000), stream_rows(64, 2_000_000)
    (64, 1)
    """
    return max(1, min(int(n_rows), STREAM_ELEMENTS // max(int(m), 1)))


#: environment variable overriding ``progress=None``: "0" hides every bar (an executed notebook,
#: a documentation build), "1" shows them
PROGRESS_ENV = "UQVIZ_PROGRESS"


def show_progress(progress) -> bool:
    """The ``progress`` option: None shows a bar in a terminal or in an interactive Jupyter
    front end (JupyterLab, Notebook, VS Code), unless the environment variable
    ``UQVIZ_PROGRESS`` is "0" (hide) or "1" (show).

    A notebook executed unattended (nbclient, nbmake, ``jupyter nbconvert --execute``, myst-nb,
    Voilà) shows no bar: its closed bar would be stored as frozen text ("0%| | 0/5") or as a
    widget without a model. Such executors send their cells without ``allow_stdin`` (no one
    could answer an ``input()``), which is how a kernel tells them from a front end.
    """
    if progress is None:
        env = os.environ.get(PROGRESS_ENV, "").strip().lower()
        if env in ("0", "false", "no", "off"):
            return False
        if env in ("1", "true", "yes", "on"):
            return True
        kernel = _interactive_kernel() if "ipykernel" in sys.modules else None
        if kernel is not None:
            return kernel
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return checks.boolean("progress", progress)


def _interactive_kernel():
    """In an IPython kernel: True when its current cell was sent by an interactive front end
    (the execute request allows stdin), False when an unattended executor runs it; None
    outside a kernel."""
    try:
        from ipykernel.kernelbase import Kernel

        if not Kernel.initialized():
            return None
        return bool(getattr(Kernel.instance(), "_allow_stdin", True))
    except Exception:  # another kernel implementation: keep the former rule (show)
        return True


def progress_bar(total: int, *, desc: str, progress=None, unit: str = "it"):
    """A ``tqdm.auto`` bar honouring the ``progress`` option."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not show_progress(progress), leave=False)
