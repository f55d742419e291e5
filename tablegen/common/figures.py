"""matplotlib plumbing shared by every picture tablegen draws (tables, top-k bands, comparisons).

matplotlib is optional (the ``plots`` extra) and imported only when a picture is drawn; the caller's
backend is left alone (no ``matplotlib.use``), so Jupyter's inline backend keeps working.
"""

from __future__ import annotations

from tablegen.errors import TablegenInputError


def pyplot():
    """``matplotlib.pyplot``, or an input error that says how to install it.

    Examples
    --------
    >>> plt = pyplot()
    >>> plt.__name__
    'matplotlib.pyplot'
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise TablegenInputError("plotting needs matplotlib: pip install 'tablegen[plots]'") from None
    import matplotlib.pyplot as plt

    return plt


def saved(figure, path, plt):
    """Write ``figure`` to ``path`` (if given) at 120 dpi and close it; return the figure."""
    if path is not None:
        try:
            figure.savefig(path, dpi=120)
        finally:
            plt.close(figure)
    return figure
