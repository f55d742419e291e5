"""Code blocks that fit: every line of a ``<pre>`` in its own span, so a long line wraps with a hanging indent.

At 1280 px a code block shows ``CODE_COLUMNS`` characters (measured in headless Chromium with the site's CSS, 13 px
DejaVu Sans Mono: 89 in a page's code block, 85 in an example inside an API entry; ``docs/screenshots.py``).  A
block with a longer line is marked ``tg-long`` and wraps there instead of scrolling; on a narrow screen (below the
theme's 960 px breakpoint) every block wraps.  A wrapped line continues 4 characters right of its own
indentation.  ``conf.py`` calls :func:`split_lines` on each page's body (``html-page-context``), and
``tests/docs/test_site.py`` checks the built site with :func:`pre_blocks`.
"""

from __future__ import annotations

import html
import re

#: Characters a code block shows at 1280 px without a scroll bar (the narrowest case: an example in an API entry).
CODE_COLUMNS = 85
#: How far right of its indentation a wrapped line continues, in characters.
HANG = 4

PRE = re.compile(r"<pre(?P<attrs>[^>]*)>(?P<body>.*?)</pre>", re.S)
TAG = re.compile(r"(<[^>]+>)")
LINE = '<span class="tg-line" style="--tg-hang: {hang}ch">{html}</span>'


def _text(fragment: str) -> str:
    """The characters a fragment of highlighted HTML shows."""
    return html.unescape(TAG.sub("", fragment))


def _lines(body: str) -> list[tuple[str, str]]:
    """``(html, text)`` of each line of a ``<pre>``'s body, each line's tags balanced (Pygments' spans may cross
    lines: they are closed at the end of a line and opened again on the next)."""
    lines, parts, stack, opened = [], [], [], []
    for token in TAG.split(body):
        if token.startswith("<"):
            if token.startswith("</"):
                stack.pop()
            elif not token.endswith("/>"):
                stack.append(token)
            parts.append(token)
            continue
        pieces = token.split("\n")
        for piece in pieces[:-1]:
            parts.append(piece + "\n")
            lines.append(("".join(opened + parts + ["</span>"] * len(stack)), _text("".join(parts))))
            parts, opened = [], list(stack)
        parts.append(pieces[-1])
    if _text("".join(parts)):
        lines.append(("".join(opened + parts + ["</span>"] * len(stack)), _text("".join(parts))))
    return lines


def _split_pre(match: re.Match) -> str:
    attrs, lines = match["attrs"], _lines(match["body"])
    if 'tg-' in attrs:  # already split (an incremental build hands a cached body again)
        return match[0]
    long = any(len(text.rstrip("\n")) > CODE_COLUMNS for _, text in lines)
    classes = "tg-lines tg-long" if long else "tg-lines"
    if 'class="' in attrs:
        attrs = attrs.replace('class="', f'class="{classes} ', 1)
    else:
        attrs += f' class="{classes}"'
    spans = (LINE.format(hang=len(text) - len(text.lstrip(" ")) + HANG, html=line_html) for line_html, text in lines)
    return f"<pre{attrs}>{''.join(spans)}</pre>"


def split_lines(body: str) -> str:
    """A page's HTML body with every ``<pre>`` line in a ``tg-line`` span (long blocks marked ``tg-long``)."""
    return PRE.sub(_split_pre, body)


def pre_blocks(page_html: str) -> list[tuple[str, list[str]]]:
    """``(class attribute, lines)`` of every ``<pre>`` in a built page."""
    blocks = []
    for match in PRE.finditer(page_html):
        classes = re.search(r'class="([^"]*)"', match["attrs"])
        blocks.append((classes[1] if classes else "", _text(match["body"]).rstrip("\n").split("\n")))
    return blocks


#: A link to an API page in the navigation, its text a dotted name (``compare.across_datasets``).
API_LINK = re.compile(r'(<a class="reference internal" href="[^"]*tablegen\.[\w.]+\.html[^"]*">)([\w.]+)(</a>)')


def breakable_names(nav_html: str) -> str:
    """The navigation with a line-break opportunity after each ``.`` and ``_`` of an API page's name, so that a
    long name in the sidebar breaks between its words, not inside one."""
    return API_LINK.sub(lambda m: m[1] + re.sub(r"([._])", r"\1<wbr>", m[2]) + m[3], nav_html)


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    """Sphinx ``html-page-context``: split the code blocks of the page's body; breakable API names in the nav."""
    if "body" in context:
        context["body"] = split_lines(context["body"])
    toctree = context.get("generate_toctree_html")
    if toctree is not None:
        def sidebar_toctree(*args, **kwargs):
            html_or_soup = toctree(*args, **kwargs)  # kind="raw" gives a BeautifulSoup object: left as it is
            return breakable_names(html_or_soup) if isinstance(html_or_soup, str) else html_or_soup

        context["generate_toctree_html"] = sidebar_toctree
