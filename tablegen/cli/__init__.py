"""The command line (``tablegen``): argument parsing, progress display and error presentation.

The top layer: it validates what the user typed, calls the library and prints; see
:func:`tablegen.cli.main.main`.
"""


def main(argv=None) -> int:
    """Run the ``tablegen`` command line; see :func:`tablegen.cli.main.main`."""
    from tablegen.cli.main import main as _main

    return _main(argv)
