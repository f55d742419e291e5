"""Sphinx configuration of tablegen's documentation site.

Build it with ``.venv/bin/python -m sphinx -W -b html docs docs/_build/html`` (after
``.venv/bin/pip install -e '.[docs]'``).  Markdown pages (MyST) in the PyData theme (as numpy, scipy and
xarray); the Python reference comes from the docstrings (autosummary writes one page per public function
or class, autodoc fills it, numpy-style sections through napoleon), and the generated pages — the API
index, every command's options — are written here at build time, so they cannot fall behind the code.
``docs/screenshots.py`` takes screenshots of the built site in headless Chromium, to look at by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from code_blocks import CODE_COLUMNS, on_page_context  # noqa: E402
from generate_reference import dataclass_fields, write_reference_pages  # noqa: E402

from tablegen import __version__  # noqa: E402

project = "tablegen"
copyright = "2026, the tablegen developers"
author = "the tablegen developers"
release = version = __version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.mathjax"]
# Markdown for the pages; reStructuredText only for the pages autosummary generates (it writes .rst).
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"  # no second, undocumented parameter list
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autosummary_generate = True  # reference/api/<name>.rst, one page per public function or class (gitignored)
autosummary_imported_members = False
# The class template leaves out a dataclass's fields: its numpy "Attributes" section documents them.
autosummary_context = {"dataclass_fields": dataclass_fields()}

html_theme = "pydata_sphinx_theme"
html_title = f"tablegen {release}"
html_short_title = "tablegen"
html_static_path = ["_static"]
html_css_files = ["tablegen.css"]
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "logo": {"text": "tablegen"},  # a title, no logo image
    "navbar_start": ["navbar-logo"],
    "navbar_center": ["navbar-nav"],
    "navbar_end": ["theme-switcher"],
    "navbar_persistent": ["search-button"],
    "header_links_before_dropdown": 5,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
    "show_nav_level": 1,
    "navigation_depth": 3,
    "footer_start": ["copyright"],
    "footer_center": [],
    "footer_end": ["sphinx-version"],
    "show_prev_next": True,
    "pygments_light_style": "default",
    "pygments_dark_style": "monokai",
}
html_context = {"default_mode": "auto"}  # light or dark as the reader's system; the switcher overrides
html_sidebars = {"**": ["sidebar-nav-bs"], "index": []}  # the front page: the text across the width

write_reference_pages(HERE / "reference", columns=CODE_COLUMNS)


def setup(app):
    """Every code block's lines in spans, so that a line too long for the page wraps (docs/code_blocks.py)."""
    app.connect("html-page-context", on_page_context, priority=900)  # after the theme adds its functions
