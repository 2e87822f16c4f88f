#!/usr/bin/env python3
"""Broken references in a static site: ``check_links.py DIR`` (make docs, make test).

Every ``href`` and ``src`` of every HTML page under DIR that is not a URL with a scheme (http:, mailto:,
data:...; never fetched: no network) must resolve to a file under DIR, and its ``#fragment``, when it has
one, to an element ``id`` (or ``<a name>``) of that page. Prints each
broken reference as ``page: reference: why`` and exits 1 when there is one, 2 when DIR holds no page.
"""

from __future__ import annotations

import os
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    """The anchors a page defines and the references it makes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.append(value)
            elif name in ("href", "src") and tag not in ("base",):
                self.refs.append(value)


def parse(path: str) -> _Page:
    """The anchors and references of the page at ``path``."""
    page = _Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    return page


def check(site: str) -> tuple[int, list[str]]:
    """(pages checked, broken references) of the site under ``site``."""
    site = os.path.abspath(site)
    pages: dict[str, _Page] = {}
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith((".html", ".htm")):
                pages[os.path.join(folder, name)] = parse(os.path.join(folder, name))
    broken: list[str] = []
    for path, page in sorted(pages.items()):
        rel = os.path.relpath(path, site)
        for ref in page.refs:
            parts = urlsplit(ref)
            if parts.scheme or parts.netloc or ref.startswith("javascript:"):
                continue  # an outside URL: not fetched
            target = (
                path if not parts.path else os.path.normpath(os.path.join(os.path.dirname(path), unquote(parts.path)))
            )
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            if not (target == site or target.startswith(site + os.sep)):
                broken.append(f"{rel}: {ref}: points outside the site")
                continue
            if not os.path.isfile(target):
                broken.append(f"{rel}: {ref}: no such file")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target in pages and fragment not in pages[target].ids:
                broken.append(f"{rel}: {ref}: no anchor #{fragment} in {os.path.relpath(target, site)}")
    return len(pages), broken


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_links.py DIR", file=sys.stderr)
        return 2
    count, broken = check(argv[0])
    if count == 0:
        print(f"check_links: no HTML page under {argv[0]} (run make docs)", file=sys.stderr)
        return 2
    for line in broken:
        print(line)
    print(f"check_links: {count} pages, {len(broken)} broken references")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
