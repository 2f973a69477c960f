"""Where the data files are: a pooch registry (``registry.txt``) and the data directory.

With ``UQVIZ_DATA_DIR`` set, files are read from ``$UQVIZ_DATA_DIR/<key>`` after
their sha256 check and never downloaded (relative paths from the working
directory). Unset: pooch's cache ``pooch.os_cache("uqviz")``, downloaded on first use.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pooch

__all__ = [
    "ENV_VAR",
    "REGISTRY",
    "URLS",
    "DataFileNotFoundError",
    "DataFileHashError",
    "data_dir",
    "fetch",
    "file_hash",
]

#: Environment variable naming a local data directory (no download when set).
ENV_VAR = "UQVIZ_DATA_DIR"

_REGISTRY_FILE = Path(__file__).with_name("registry.txt")


class DataFileNotFoundError(FileNotFoundError):
    """A registered data file is neither in the data directory nor downloadable.

    Examples
    --------
    >>> from uqviz.datasets import DataFileNotFoundError
    >>> issubclass(DataFileNotFoundError, FileNotFoundError)
    True
    """


class DataFileHashError(ValueError):
    """A data file exists but its sha256 differs from the registry's.

    Raised instead of reading a corrupted or altered file; delete the file to download it again.

    Examples
    --------
    >>> from uqviz.datasets import DataFileHashError
    >>> issubclass(DataFileHashError, ValueError)
    True
    """


def _read_registry() -> tuple[dict[str, str], dict[str, str]]:
    pup = pooch.create(path=pooch.os_cache("uqviz"), base_url="")
    pup.load_registry(_REGISTRY_FILE)
    return dict(pup.registry), dict(pup.urls)


#: ``{key: "sha256:<hash>"}`` for every known file.
#: ``URLS`` maps the same keys to their upstream download URL.
REGISTRY, URLS = _read_registry()


def data_dir() -> Path:
    """The directory data files are read from (see the module docstring).

    ``$UQVIZ_DATA_DIR`` resolved against the current working directory when the
    variable is set and not empty, else pooch's cache ``pooch.os_cache("uqviz")``.

    Returns
    -------
    pathlib.Path
        An absolute path (it may not exist yet).

    Examples
    --------
    >>> import os
    >>> from uqviz.datasets import data_dir
    >>> data_dir().is_absolute()
    True
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    return Path(pooch.os_cache("uqviz"))


def _cache_dir() -> Path:
    # Separate function so that tests can point the download cache elsewhere.
    return Path(pooch.os_cache("uqviz"))


# (path, size, mtime_ns) -> sha256 hex, so that loading the same file twice hashes it once.
_HASH_MEMO: dict[tuple[str, int, int], str] = {}


def file_hash(path: str | os.PathLike) -> str:
    """sha256 (hex) of a file; memoised on (path, size, modification time)."""
    path = Path(path)
    st = path.stat()
    memo_key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    try:
        return _HASH_MEMO[memo_key]
    except KeyError:
        pass
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    _HASH_MEMO[memo_key] = digest = h.hexdigest()
    return digest


def _known(key: str) -> str:
    if key not in REGISTRY:
        raise KeyError(
            f"{key!r} is not a registered uqviz data file; known files: {sorted(REGISTRY)}"
        )
    alg, _, expected = REGISTRY[key].partition(":")
    if alg != "sha256":  # pragma: no cover - registry.txt only holds sha256
        raise ValueError(f"registry entry for {key!r}: unsupported hash {REGISTRY[key]!r}")
    return expected


def fetch(key: str) -> Path:
    """Path of the checked local copy of the registered file ``key``.

    Downloads the file into :func:`data_dir` when it is missing and a URL is registered,
    then checks its sha256 against the registry.

    Parameters
    ----------
    key : str
        A key of ``uqviz.datasets.REGISTRY``: the file's path inside the data directory.

    Returns
    -------
    pathlib.Path
        The local file, its hash checked.

    Examples
    --------
    >>> from uqviz.datasets import fetch
    >>> fetch("pernot-2023_Adaptivity-v1.1/BUS2022/qm9_U0_test_Orig.csv").name
    'qm9_U0_test_Orig.csv'

    Raises
    ------
    KeyError
        ``key`` is not registered.
    DataFileNotFoundError
        The file is missing (and not downloadable).
    DataFileHashError
        The file's sha256 differs from the registry's.
    """
    expected = _known(key)
    url = URLS[key]
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        root = data_dir()
        path = root.joinpath(*key.split("/"))
        if not path.is_file():
            raise DataFileNotFoundError(
                f"uqviz data file {key!r} not found: expected at {path} "
                f"({ENV_VAR}={env!r} -> {root}). Nothing is downloaded while {ENV_VAR} is set: "
                f"put the file there (upstream: {url}), or unset {ENV_VAR} to download it "
                f"into the cache {_cache_dir()}."
            )
        actual = file_hash(path)
        if actual != expected:
            raise DataFileHashError(
                f"uqviz data file {key!r} at {path} has sha256 {actual}, but the registry "
                f"expects {expected}: the file is corrupt or another version. Replace it with "
                f"the upstream file {url} (or fix {ENV_VAR}={env!r})."
            )
        return path

    cache = _cache_dir()
    pup = pooch.create(
        path=cache, base_url="", registry={key: REGISTRY[key]}, urls={key: url}, retry_if_failed=1
    )
    target = cache.joinpath(*key.split("/"))
    try:
        return Path(pup.fetch(key))
    except ValueError:  # pooch: downloaded file with a wrong hash; already explicit
        raise
    except Exception as err:  # network down, HTTP error, no permission ...
        raise DataFileNotFoundError(
            f"uqviz data file {key!r} is not in the cache and could not be downloaded from "
            f"{url} ({type(err).__name__}: {err}). Put the file at {target}, or set "
            f"{ENV_VAR} to a directory holding {key}."
        ) from err
