"""Modules imported on first use: ``import uqviz`` stays light (issue 25, item 2).

``scipy.stats`` alone takes about 0.6 s to import, ``scipy.optimize`` and ``scipy.special``
another 0.3 s, while most sessions (a dashboard, one explorer) need a few of their functions,
or none. :func:`lazy_module` returns a stand-in for a module that imports it at its first
attribute access, so a kernel keeps writing ``stats.norm.ppf(q)``, ``special.ndtri(p)``, with
the same functions and thus the same numbers. Nothing here imports anything of uqviz.

Examples
--------
>>> import sys
>>> colorsys = lazy_module("colorsys")
>>> colorsys
<lazy module 'colorsys'>
>>> colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
(0.0, 1.0, 1.0)
>>> "colorsys" in sys.modules
True
"""

from __future__ import annotations

import importlib
import types

__all__ = ["LazyModule", "lazy_module"]


class LazyModule(types.ModuleType):
    """A stand-in for module ``name``, imported at the first access to one of its attributes.

    Parameters
    ----------
    name : str
        The module's dotted name, as given to :func:`importlib.import_module`.

    See Also
    --------
    lazy_module : the constructor the kernels call.

    Notes
    -----
    An attribute, once read, is stored on the stand-in, so that later reads cost what a
    module attribute costs. Attributes set on the real module later (monkeypatching in a
    test) are therefore not seen through an attribute already read.

    Examples
    --------
    >>> m = LazyModule("textwrap")
    >>> m.dedent("  a")
    'a'
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self.__name__), attr)
        self.__dict__[attr] = value
        return value

    def __dir__(self):
        return dir(importlib.import_module(self.__name__))

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def lazy_module(name: str) -> LazyModule:
    """A module imported when one of its attributes is first read.

    Parameters
    ----------
    name : str
        The module's dotted name (``"scipy.stats"``).

    Returns
    -------
    LazyModule
        The stand-in; ``lazy_module("scipy.stats").norm`` is ``scipy.stats.norm``.

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
    return LazyModule(name)
