"""The critical-difference diagram as a function: :func:`plot_cd` draws it from a result of
:func:`tablegen.compare.across_datasets` (its :meth:`~.analysis.AcrossDatasetsResult.plot_cd`) or from the scores,
compared first.  The drawing is :mod:`.cd_diagram`'s; this module only chooses what to draw it from (and
imports :mod:`.analysis`, which does not import it back).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tablegen.compare.datasets.cd_diagram import METHODS
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from tablegen.compare.datasets.analysis import AcrossDatasetsResult


def _check_path(path) -> None:
    """None, an image file name (its directory existing) or a writable file object; refused naming ``path``."""
    from tablegen.common.figures import image_file

    if isinstance(path, (str, os.PathLike)):
        image_file(path)
    elif path is not None and not callable(getattr(path, "write", None)):
        raise TablegenInputError.naming(Argument("path"), f" must be None, a file name or a file object, got {path!r}")


def plot_cd(data: AcrossDatasetsResult | ArrayLike | str | os.PathLike[str],
            path: str | os.PathLike[str] | None = None, *, method: str = "tests",
            **options: object) -> Figure:
    """The critical-difference diagram of m algorithms on n data sets (Demšar 2006, as drawn by
    :mod:`tablegen.compare.datasets.cd_diagram`): bars join the algorithms the tests do not separate.

    Parameters
    ----------
    data : AcrossDatasetsResult, array_like, str or os.PathLike
        The result of :func:`tablegen.compare.across_datasets`, or the (n data sets × m algorithms) scores it
        reads (an array, a DataFrame or a CSV path), which are compared first.
    path : str or os.PathLike, optional
        Image file (PNG, PDF, SVG, …); the figure is closed after saving.
    method : str
        ``"tests"``: groups from the pairwise tests (Wilcoxon or sign, adjusted); ``"nemenyi"`` (or another
        mean-ranks law) for the mean-ranks version, which needs the mean-ranks test: from scores it is run here,
        from a result it must have been (``mean_ranks_posthoc=True``).
    **options
        Passed to :func:`tablegen.compare.across_datasets` when ``data`` is scores (``higher_is_better``,
        ``test``, ``correction``, ``alpha``, ...); refused with a result, which has its options already.

    Returns
    -------
    matplotlib.figure.Figure
        The same picture as :meth:`AcrossDatasetsResult.plot_cd`.

    Examples
    --------
    >>> X = [[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72], [0.8, 0.78, 0.6]]
    >>> len(plot_cd(X).axes), len(plot_cd(X, method="nemenyi").axes)
    (1, 1)
    """
    from tablegen.compare.datasets.analysis import AcrossDatasetsResult, across_datasets

    _check_path(path)
    if not isinstance(method, str) or method not in METHODS:
        raise TablegenInputError.naming(Argument("method"), f" must be one of {', '.join(map(repr, METHODS))}, "
                                        f"got {method!r}")
    import inspect

    known = set(inspect.signature(across_datasets).parameters) - {"scores"}
    if set(options) - known:
        raise TablegenInputError(f"plot_cd: unknown option(s) {sorted(set(options) - known)}; the options are "
                                 f"across_datasets's: {', '.join(sorted(known))}")
    if isinstance(data, AcrossDatasetsResult):
        if options:
            raise TablegenInputError(f"plot_cd: the options {sorted(options)} are for scores; a result of "
                                     "across_datasets has its options already (run it again to change them)")
        return data.plot_cd(path, method)
    if method != "tests":
        options.setdefault("mean_ranks_posthoc", True)
        if method != "nemenyi":
            options.setdefault("mean_ranks_law", method)
    return across_datasets(data, **options).plot_cd(path, method)
