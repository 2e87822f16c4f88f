"""Failures of reader bugs that are known and not yet fixed.

A campaign recognises them so that it can tell them from new failures; it
still counts them as failures (exit status 1) unless --allow-known is given.
Add an entry (an id, a description, a test in ``classify``) when a bug is
recorded but not yet fixed; remove it once the bug is fixed, so that any
recurrence is reported as new.

None is open.
"""

from __future__ import annotations

#: open issue id -> description
KNOWN: dict[str, str] = {}


def classify(answers: dict, mutations: list = ()) -> str | None:
    """The open known issue a failing case shows, or None.

    ``answers``: reader name -> testee answer (with ``code``, ``message``,
    ``phase``); ``mutations``: the case's mutation descriptions. Example of an
    entry::

        if js.get("code") == "ZIP_TRUNCATED" and "member data runs past the end of the file" in js.get("message", ""):
            return "js-data-past-end"
    """
    return None
