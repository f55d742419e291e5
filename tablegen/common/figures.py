"""matplotlib plumbing shared by every picture tablegen draws (tables, top-k bands, comparisons).

matplotlib is optional (the ``plots`` extra) and imported only when a picture is drawn; the caller's
backend is left alone (no ``matplotlib.use``), so Jupyter's inline backend keeps working.
"""

from __future__ import annotations

import os

from tablegen.errors import TablegenInputError

#: File formats matplotlib's default canvas writes (``FigureCanvasBase.get_supported_filetypes``); a name
#: without a suffix is written as PNG.
IMAGE_FORMATS = ("avif", "eps", "gif", "jpeg", "jpg", "pdf", "pgf", "png", "ps", "raw", "rgba", "svg", "svgz", "tif",
                 "tiff", "webp")


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


def image_file(path, name: str = "path") -> str:
    """The file an image named ``path`` is written to: ``path`` itself, or ``path + ".png"`` where it has no
    suffix (as matplotlib writes it); refused, naming ``name``, where that is a directory, its directory does not
    exist, or its suffix is not an image format.

    Examples
    --------
    >>> image_file("auc_C10"), image_file("auc.svg")
    ('auc_C10.png', 'auc.svg')
    >>> try:
    ...     image_file(".", "--plot")
    ... except TablegenInputError as error:
    ...     print(error)
    --plot .: is a directory; give an image file name such as ./figure.png
    """
    text = os.fspath(path)
    if os.path.isdir(text):
        raise TablegenInputError(f"{name} {text}: is a directory; give an image file name such as "
                                 f"{os.path.join(text, 'figure.png')}")
    suffix = os.path.splitext(text)[1][1:].lower()
    if not suffix:
        return image_file(text + ".png", name)
    if suffix not in IMAGE_FORMATS:
        raise TablegenInputError(f"{name} {text}: .{suffix} is not an image format; use one of "
                                 f"{', '.join('.' + f for f in IMAGE_FORMATS)}")
    check_output_file(text, name)
    return text


def check_output_file(path: str, name: str) -> None:
    """Refuse (naming ``name``) an output file that is a directory or whose directory does not exist.

    Examples
    --------
    >>> check_output_file("out.csv", "-o")
    """
    if os.path.isdir(path):
        raise TablegenInputError(f"{name} {path}: is a directory; give a file name")
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise TablegenInputError(f"{name} {path}: the directory {directory} does not exist")


def saved(figure, path, plt):
    """Write ``figure`` to ``path`` (if given; a path without a suffix gets ``.png``, see :func:`image_file`)
    at 120 dpi and close it; return the figure.  A file is written whole or not at all (a temporary file beside
    it, renamed over it: :func:`tablegen.common.outputs.replaced_on_success`); a file object is written to."""
    if path is not None:
        try:
            if isinstance(path, (str, os.PathLike)):
                from tablegen.common.outputs import replaced_on_success

                path = image_file(path)
                with replaced_on_success(path) as temporary:
                    figure.savefig(temporary, dpi=120, format=os.path.splitext(path)[1][1:].lower())
            else:
                figure.savefig(path, dpi=120)
        finally:
            plt.close(figure)
    return figure
