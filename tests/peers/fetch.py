"""Fetch the persistence tests of Stable-Baselines3 and sb3-contrib (the peer tests) for ``make peers``.

The tests ship in each package's source distribution. This script asks the
package registry for the source distributions of the installed versions
(``pip download --no-binary :all: --no-deps``), or takes them from a folder
(``--from DIR``: ``stable_baselines3-X.tar.gz`` and ``sb3_contrib-X.tar.gz``),
and unpacks each into ``DEST/NAME-VERSION/``. Nothing is copied into the
repository. Without network and without ``--from`` it says so and exits 0:
the peer runs then report themselves skipped.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import os
import subprocess
import sys
import tarfile

PACKAGES = {"stable-baselines3": "stable_baselines3", "sb3-contrib": "sb3_contrib"}


def unpack(archive: str, dest: str) -> str:
    """Unpack a source distribution into ``dest``; returns its top folder."""
    with tarfile.open(archive) as tf:
        top = tf.getnames()[0].split("/")[0]
        tf.extractall(dest, filter="data")
    return os.path.join(dest, top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", help="folder to unpack into (e.g. .peers)")
    ap.add_argument("--from", dest="source", help="folder holding the source distributions already")
    args = ap.parse_args(argv)
    os.makedirs(args.dest, exist_ok=True)
    dists = os.path.join(args.dest, "dist")
    for package, module in PACKAGES.items():
        version = importlib.metadata.version(package)
        top = os.path.join(args.dest, f"{module}-{version}")
        if os.path.isdir(os.path.join(top, "tests")):
            print(f"peers: {module}-{version} already there")
            continue
        found = glob.glob(os.path.join(args.source or dists, f"{module}-{version}.tar.gz"))
        if not found and args.source is None:
            cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
            done = subprocess.run([*cmd, f"{package}=={version}", "-d", dists], check=False)
            if done.returncode != 0:
                print(
                    f"peers: could not download the source distribution of {package}=={version}; the peer runs will be skipped"
                )
                return 0
            found = glob.glob(os.path.join(dists, f"{module}-{version}.tar.gz"))
        if not found:
            print(f"peers: no {module}-{version}.tar.gz; the peer runs will be skipped")
            return 0
        print(f"peers: unpacked {unpack(found[0], args.dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
