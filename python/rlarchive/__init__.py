"""rlarchive: a language-neutral archive format for trained reinforcement-learning agents.

>>> import numpy as np, rlarchive
>>> rlarchive.save("agent.rlarchive", {"gamma": 0.99}, tensors={"policy": {"w": np.zeros(3, np.float32)}})
>>> with rlarchive.open("agent.rlarchive") as ar:
...     ar.data["gamma"], ar.tensors("policy")["w"].shape
(0.99, (3,))
"""

from .errors import RlarchiveError
from .manifest import FORMAT_VERSION
from .reader import Archive
from .reader import open_archive as open
from .schedules import Constant, Linear, Piecewise
from .tensors import RawTensor
from .validate import validate
from .values import ClassRef, Opaque
from .version import VERSION
from .writer import save

__version__ = VERSION

__all__ = [
    "Archive",
    "ClassRef",
    "Constant",
    "FORMAT_VERSION",
    "Linear",
    "Opaque",
    "Piecewise",
    "RawTensor",
    "RlarchiveError",
    "open",
    "save",
    "validate",
]
