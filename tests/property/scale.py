"""How many examples the property tests run (``RLARCHIVE_HYPOTHESIS_PROFILE``); a module of its own name, so that one pytest run can collect every test folder."""

import os

#: multiplies every test's example count (the long profile runs ten times more)
SCALE = 10 if os.environ.get("RLARCHIVE_HYPOTHESIS_PROFILE") == "long" else 1


def examples(n: int) -> int:
    return n * SCALE
