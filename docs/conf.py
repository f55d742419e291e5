"""Sphinx configuration of tablegen's documentation site.

Build it with ``.venv/bin/python -m sphinx -W -b html docs docs/_build/html`` (after
``.venv/bin/pip install -e '.[docs]'``).  Markdown pages (MyST); the Python reference comes from the
docstrings (autodoc, numpy-style sections through napoleon), and the two generated pages — every public
name, every command's options — are written here at build time, so they cannot fall behind the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_reference import write_reference_pages  # noqa: E402

from tablegen import __version__  # noqa: E402

project = "tablegen"
copyright = "2026, the tablegen developers"
author = "the tablegen developers"
release = version = __version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"  # no second, undocumented parameter list
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
html_theme = "alabaster"
html_title = f"tablegen {release}"
html_theme_options = {"description": "Is your best classifier better than chance?", "fixed_sidebar": True,
                      "page_width": "1300px", "sidebar_width": "240px"}

write_reference_pages(HERE / "reference")
