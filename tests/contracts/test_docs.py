"""The explanation pages under docs/explanation/: every test, module and benchmark they name exists, every page
is reachable from the index, and none points outside the repository.

The pages name the test that checks each claimed error bound; a renamed or deleted test would leave a
claim unchecked without anyone noticing, so this test fails instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPLANATION = ROOT / "docs" / "explanation"
PAGES = sorted(EXPLANATION.glob("*.md"))
TEST_FUNCTION = re.compile(r"\btest_[a-z0-9_]+\b")
TEST_FILE = re.compile(r"\btests/(test_[a-z0-9_]+\.py)\b|\b(test_[a-z0-9_]+)\.py\b")
REPO_PATH = re.compile(r"`((?:benchmarks|tablegen|tests|notebooks|configs|jobs)/[\w./-]+)`")


def defined_tests() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        names.add(path.stem)
        names.update(re.findall(r"^\s*def (test_[a-z0-9_]+)", path.read_text(), flags=re.M))
    return names


def test_there_are_explanation_pages():
    assert len(PAGES) >= 4 and (EXPLANATION / "index.md") in PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_test_a_page_names_exists(page):
    text = page.read_text()
    known = defined_tests()
    missing = sorted({name for name in TEST_FUNCTION.findall(text) if name not in known})
    assert not missing, f"{page.name} names tests that do not exist: {missing}"
    for path in REPO_PATH.findall(text):
        assert (ROOT / path.rstrip(".")).exists(), f"{page.name} names {path}, which does not exist"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_pages_stay_inside_the_repository(page):
    text = page.read_text()
    assert "shared/" not in text and not re.search(r"DESIGN\s*§", text), page.name


def test_every_page_is_linked_from_the_index():
    index = (EXPLANATION / "index.md").read_text()
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert {page.name for page in PAGES} - {"index.md"} <= linked
    assert linked <= {page.name for page in PAGES}, "the index links a page that does not exist"
