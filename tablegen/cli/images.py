"""Output files of the commands, checked before any work, and errors from writing an image said in the command
line's terms (the option that named the file).

:func:`check_output_files` runs before every command (from :func:`tablegen.cli.main.main`): an image option
(:data:`IMAGE_OPTIONS`) naming a directory, a missing directory or an unknown format is refused (exit code 2,
nothing written), and a name without a suffix becomes the ``.png`` file matplotlib writes, so that the command's
"wrote ..." names the file written.  Every file is written whole or not at all (:mod:`tablegen.common.outputs`):
a full disk leaves an existing file as it was and no partial one (exit code 4).
"""

from __future__ import annotations

from contextlib import contextmanager

from tablegen.errors import TablegenInputError

#: dest -> option of every option that names an image file to draw (any command).
IMAGE_OPTIONS = {"plot": "--plot", "cd": "--cd", "bayes_plot": "--bayes-plot"}
#: command -> (dest, option, whether it is an image) of its ``-o`` file.
OUTPUT_FILES = {("plot",): ("output", "-o", True), ("export",): ("output", "-o", False)}


def check_output_files(args) -> None:
    """Check and resolve every output file ``args`` names (see the module docstring); changes ``args`` in place.

    Examples
    --------
    >>> import argparse
    >>> args = argparse.Namespace(plot="curves", command="topk")
    >>> check_output_files(args); args.plot
    'curves.png'
    """
    from tablegen.common.figures import check_output_file, image_file

    for dest, option in IMAGE_OPTIONS.items():
        if getattr(args, dest, None) is not None:
            setattr(args, dest, image_file(getattr(args, dest), option))
    words = tuple(getattr(args, name) for name in ("command", "compare_command") if hasattr(args, name))
    dest, option, image = OUTPUT_FILES.get(words[:1], (None, None, None))
    if dest is not None and getattr(args, dest, None) is not None:
        path = getattr(args, dest)
        if image:
            setattr(args, dest, image_file(path, option))
        else:
            check_output_file(path, option)


@contextmanager
def image_errors(option: str, path):
    """Turn a failure to write the image at ``path`` into an error naming ``option`` (CLI use).

    Errors that already name their argument (:class:`TablegenInputError`) pass through unchanged.
    """
    from tablegen.common.outputs import output_error

    try:
        yield
    except TablegenInputError:
        raise
    except OSError as error:  # a full disk: exit 4, as a run (the file is as it was: written whole or not at all)
        raise output_error(option, path, error, "the image") from None
    except ValueError as error:
        raise TablegenInputError(f"{option} {path}: cannot write the image ({error})") from None
