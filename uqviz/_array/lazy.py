"""Modules imported on first use: ``import uqviz`` stays light (issue 25, item 2).

``scipy.stats`` alone takes about 0.6 s to import, ``scipy.optimize`` and ``scipy.special``
another 0.3 s, while most sessions (a dashboard, one explorer) need a few of their functions,
or none; so too numba (0.2 s), which the compiled kernel modules import. :func:`lazy_module`
returns a stand-in for a module that imports it at its first attribute access, so a kernel
keeps writing ``stats.norm.ppf(q)``, ``special.ndtri(p)``, ``rank_kernels.cc_prepare(e, u)``,
with the same functions and thus the same numbers. Nothing here imports anything of uqviz.

Examples
--------
>>> import sys
>>> colorsys = lazy_module("colorsys")
>>> colorsys
<lazy module 'colorsys'>
>>> colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
(0.0, 1.0, 1.0)
>>> type(colorsys).__name__, "colorsys" in sys.modules  # the name now holds the module itself
('module', True)
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["LazyModule", "lazy_module"]


class LazyModule(types.ModuleType):
    """A stand-in for module ``name``, imported at the first access to one of its attributes.

    Parameters
    ----------
    name : str
        The module's dotted name, as given to :func:`importlib.import_module`.
    namespace : dict, optional
        The globals of the module that holds the stand-in (:func:`lazy_module` passes its
        caller's): at the first access, every name of ``namespace`` bound to the stand-in is
        rebound to the real module.

    See Also
    --------
    lazy_module : the constructor the kernels call.

    Notes
    -----
    After the first access, the holder's ``stats.norm`` is an attribute of the real module, as
    after ``from scipy import stats``: no cost per access, and a patched attribute
    (``monkeypatch.setattr``) is seen. Through the stand-in itself (one held elsewhere), every
    attribute is read from, set on and deleted from the real module, which the stand-in gets from
    the import system (:func:`importlib.import_module`): it holds nothing of its own.

    Examples
    --------
    >>> m = LazyModule("textwrap")
    >>> m.dedent("  a")
    'a'
    >>> import textwrap
    >>> m.dedent is textwrap.dedent
    True
    """

    def __init__(self, name: str, namespace: dict | None = None) -> None:
        super().__init__(name)
        self.__dict__["_holder_namespace"] = namespace

    def _module(self):
        # always through the import system, never sys.modules directly: when another thread
        # is still executing the module (the explorers' Monte Carlo blocks run on threads),
        # import_module waits on the module's import lock instead of returning a partially
        # initialised module
        module = importlib.import_module(self.__dict__["__name__"])
        namespace = self.__dict__["_holder_namespace"]
        if namespace is not None:
            for key, value in list(namespace.items()):
                if value is self:
                    namespace[key] = module
            self.__dict__["_holder_namespace"] = None
        return module

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return getattr(self._module(), attr)

    def __setattr__(self, attr: str, value) -> None:
        setattr(self._module(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._module(), attr)

    def __dir__(self):
        return dir(self._module())

    def __repr__(self) -> str:
        return f"<lazy module {self.__dict__['__name__']!r}>"


def lazy_module(name: str) -> LazyModule:
    """A module imported when one of its attributes is first read.

    Parameters
    ----------
    name : str
        The module's dotted name (``"scipy.stats"``).

    Returns
    -------
    LazyModule
        The stand-in; ``lazy_module("scipy.stats").norm`` is ``scipy.stats.norm``. Assigned at
        module level (``stats = lazy_module("scipy.stats")``), the name is rebound to the real
        module at the first access.

    See Also
    --------
    LazyModule : the stand-in's class.

    Notes
    -----
    The module is not imported, nor looked for, until then: a missing module raises its
    :class:`ImportError` at the first use, not here.

    Examples
    --------
    >>> lazy_module("math").sqrt(4.0)
    2.0
    """
    return LazyModule(name, sys._getframe(1).f_globals)
