"""The version of uqviz, in a leaf module that modules of any layer may import.

Examples
--------
>>> from uqviz._version import __version__
>>> __version__.count(".") >= 1
True
"""

__version__ = "0.1.0"
