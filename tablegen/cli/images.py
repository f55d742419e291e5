"""Errors from writing an image, said in the command line's terms (the option that named the file)."""

from __future__ import annotations

from contextlib import contextmanager

from tablegen.errors import TablegenInputError


@contextmanager
def image_errors(option: str, path):
    """Turn a failure to write the image at ``path`` into an error naming ``option`` (CLI use).

    Errors that already name their argument (:class:`TablegenInputError`) pass through unchanged.
    """
    try:
        yield
    except TablegenInputError:
        raise
    except (OSError, ValueError) as error:
        raise TablegenInputError(f"{option} {path}: cannot write the image ({error})") from None
