"""Where a finished store holds a cell, and its values there: the part of :class:`tablegen.lookup.table.Table` that
checks a question's metric, P, N, C and alpha against the table's coordinates (never interpolating between grid
cells) and reads only the chunks of the cells asked, each checked against the manifest once (the
:class:`~tablegen.store.reader.StoreReader`'s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.validation import check_alpha, check_integer_array, check_metric
from tablegen.errors import TablegenInputError
from tablegen.store.schema import ALL_VARIABLES

if TYPE_CHECKING:
    from tablegen.store.reader import StoreReader


def shown_values(values) -> str:
    """Up to eight of ``values`` and the last, for messages.

    Examples
    --------
    >>> shown_values([1, 2.5])
    '1, 2.5'
    """
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    text = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values[:8])
    return text + (f", …, {values[-1]:g}" if len(values) > 8 else "")


class TableGrid:
    """A finished store's grid: its coordinates, and the checked cells and values a lookup asks for (the lookups
    themselves, and ``_instead``, the message of what can answer instead, are :class:`~tablegen.lookup.table.Table`'s).
    """

    def __init__(self, reader: StoreReader):
        self._store, self.source, self.attrs = reader, reader.source, reader.attrs
        self._P, self._N = reader.coordinate("P"), reader.coordinate("N")
        self._C, self._alpha = reader.coordinate("C"), reader.coordinate("alpha")
        self._metrics = [str(m) for m in reader.coordinate("metric")]
        self._tail_probabilities = reader.coordinate("tail_probability")
        self._chunks = reader.chunks("done")
        self._ds = None

    def _metric_index(self, metric) -> int:
        metric = check_metric("metric", metric)
        if metric not in self._metrics:
            raise TablegenInputError(f"metric {metric!r} is not in this table ({self.source}); "
                                     f"it holds: {', '.join(self._metrics)}")
        return self._metrics.index(metric)

    def _axis(self, name: str, wanted: np.ndarray, axis: np.ndarray, purpose) -> np.ndarray:
        if name in ("alpha", "power"):
            matches = np.isclose(wanted[..., None], axis, rtol=1e-6, atol=0)  # float32 alphas too
        else:
            matches = wanted[..., None] == axis
        found = matches.any(axis=-1)
        if not found.all():
            missing = wanted[~found].flat[0]
            raise TablegenInputError.naming(
                f"{name} = {missing.item():g} is not in this table ({self.source}; {name}: {shown_values(axis)}). "
                "Lookups never interpolate between grid cells", *purpose())
        return matches.argmax(axis=-1)

    def _indices(self, metric, P, N, C, alpha, what: str = ""):
        """Check a question's arguments, then :meth:`_locate` it (``what``: the answer, for messages)."""
        k = self._metric_index(metric)
        P, N = check_integer_array("P", P), check_integer_array("N", N)
        if C is not None:
            C = check_integer_array("C", C)
        if alpha is not None:
            alpha = np.asarray(alpha)
            for a in np.atleast_1d(alpha).ravel():
                check_alpha("alpha", a.item() if isinstance(a, np.generic) else a)
        return self._locate(k, P, N, C, alpha, lambda: self._instead(self._metrics[k], what, P, N) if what else ())

    def _locate(self, k: int, P, N, C, alpha, purpose):
        """(k, index per dimension, broadcast arrays) of checked arguments; an error where the table
        lacks a value (ending with the message parts ``purpose()`` returns: made only then) or a cell is
        unfinished."""
        arrays = [np.asarray(P), np.asarray(N)]
        if C is not None:
            arrays.append(np.asarray(C))
        if alpha is not None:
            arrays.append(np.asarray(alpha).astype(float))
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError:
            raise TablegenInputError("P, N, C, alpha and score must broadcast to one shape") from None
        index = {"P": self._axis("P", arrays[0], self._P, purpose), "N": self._axis("N", arrays[1], self._N, purpose)}
        if C is not None:
            index["C"] = self._axis("C", arrays[2], self._C, purpose)
        if alpha is not None:
            index["alpha"] = self._axis("alpha", arrays[-1], self._alpha, purpose)
        not_done = ~self._at("done", None, index).astype(bool)
        if not_done.any():
            i = np.argmax(not_done)
            raise TablegenInputError(
                f"cell (P = {arrays[0].flat[i]}, N = {arrays[1].flat[i]}) of {self.source} is not finished; "
                "resume the job with `tablegen run` to fill it"
            )
        return k, index, arrays

    def _gather(self, name: str, k: int, index: dict) -> np.ndarray:
        """Values of variable ``name`` for metric ``k`` at the broadcast integer ``index`` per dimension."""
        return self._at(name, k, index)

    def _at(self, name: str, k: int | None, index: dict) -> np.ndarray:
        """Values of ``name`` (at metric ``k`` if it has that dimension) at the broadcast integer ``index``:
        shape of the index arrays, then every dimension not indexed.  Only the chunks of the cells asked are
        read (each checked against the manifest once, then kept)."""
        dims = [d for d in ALL_VARIABLES[name][0] if d != "metric"]
        lead, trail = [d for d in dims if d in index], [d for d in dims if d not in index]
        p_index, n_index = np.broadcast_arrays(index["P"], index["N"])
        shape = p_index.shape
        flat = {d: np.broadcast_to(index[d], shape).ravel() for d in lead}
        sizes = {"C": len(self._C), "alpha": len(self._alpha), "tail_probability": len(self._tail_probabilities)}
        out = np.empty((flat["P"].size, *[sizes[d] for d in trail]), dtype=ALL_VARIABLES[name][1])
        cp, cn = self._chunks
        regions = flat["P"] // cp * (-(-len(self._N) // cn)) + flat["N"] // cn
        for region in dict.fromkeys(regions.tolist()):  # not np.unique: it imports numpy.ma (~50 ms cold)
            rows = np.nonzero(regions == region)[0]
            i, j = int(flat["P"][rows[0]] // cp), int(flat["N"][rows[0]] // cn)
            block = self._store.block(name, i, j)
            block = block[k] if k is not None else block
            block = np.moveaxis(block, [dims.index(d) for d in (*lead, *trail)], range(len(dims)))
            local = {d: flat[d][rows] for d in lead}
            local["P"], local["N"] = local["P"] - i * cp, local["N"] - j * cn
            out[rows] = block[tuple(local[d] for d in lead)]
        return out.reshape(shape + out.shape[1:])
