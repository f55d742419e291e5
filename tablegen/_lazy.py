"""One lazy-import helper for the package façades (SPEC 1 style): names resolve on first use.

``import tablegen`` (or ``tablegen.compare``, ``tablegen.store``) stays cheap: a public name's module is
imported when the name is first looked up, then kept in the package's namespace.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def attach(package: str, names: dict[str, str], extra: tuple[str, ...] = ()) -> tuple[Callable, Callable, list]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` resolving each of ``names`` (name -> module) lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (for error messages and its namespace).
    names : dict
        Public name -> the module that defines it.
    extra : tuple of str
        Names the package defines itself, listed in ``__all__`` too (e.g. ``__version__``).

    Examples
    --------
    >>> getattr_, dir_, all_ = attach("tablegen", {"TablegenInputError": "tablegen.errors"})
    >>> getattr_("TablegenInputError").__name__, all_
    ('TablegenInputError', ['TablegenInputError'])
    >>> getattr_("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'tablegen' has no attribute 'nothing'
    """
    import sys

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        setattr(sys.modules[package], name, value)  # resolved once
        return value

    public = [*extra, *sorted(names)]

    def __dir__():
        return list(public)

    return __getattr__, __dir__, public
