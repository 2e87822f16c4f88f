"""Run the RL Zoo's ``train.py`` with every persistence call routed through ``rlarchive.sb3.use_archives()``.

    python tests/peers/zoo_train.py -f LOGS -- --algo sac --env Pendulum-v1 -n 400 --save-freq 200 --save-replay-buffer

needs ``rl_zoo3`` importable (installed, or its source on ``PYTHONPATH``) with
its dependencies. It trains, then lists every ``.zip`` and ``.pkl`` the run
wrote under ``LOGS`` with the part each archive holds, and exits 1 when one of
them is not an rlarchive.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-f", "--folder", required=True, help="the Zoo's log folder (its -f)")
    ap.add_argument("zoo_args", nargs=argparse.REMAINDER, help="the Zoo's train.py arguments, after --")
    args = ap.parse_args(argv)
    zoo_args = [a for a in args.zoo_args if a != "--"]

    import rlarchive
    import rlarchive.sb3
    from rlarchive import metadata as keys
    from rlarchive.sb3 import files as sb3_files

    with rlarchive.sb3.use_archives():
        from rl_zoo3.train import train

        sys.argv = ["train.py", "-f", args.folder, *zoo_args]
        train()
    bad = 0
    for path in sorted(glob.glob(os.path.join(args.folder, "**", "*.*"), recursive=True)):
        if not path.endswith((".zip", ".pkl")):
            continue
        if not sb3_files.is_archive(path):
            print(f"{path}: not an rlarchive")
            bad += 1
            continue
        with rlarchive.open(path) as ar:
            print(
                f"{path}: rlarchive, part {keys.part_of(ar.metadata)}, extensions {', '.join(ar.manifest.extensions_used)}"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
