"""Progress shown on the command line (stderr): one line with rate and ETA."""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """A one-line progress display with rate and ETA, on stderr."""

    def __init__(self, stream=None, label="replicates"):
        self.stream = sys.stderr if stream is None else stream
        self.label, self.start = label, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        self.stream.write(f"\r{done:>12,}/{total:,} {self.label}  {100 * done / total:5.1f}%  "
                          f"{rate:,.0f}/s  ETA {eta:5.1f}s ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()
