"""The portable policy, extension ``RLA_policy`` (spec/extensions/RLA_policy.md).

- :mod:`.description`, :mod:`.spaces`: its checks (the member's structure, its spaces and heads);
- :mod:`.ops`: the registry of its operations, activations and heads (generated from spec/policy_ops.json);
- :mod:`.activations`, :mod:`.evaluator`, :mod:`.observations`: running it with NumPy;
- :mod:`.onnx_export` (:mod:`.onnx_graph`, :mod:`.onnx_lowering`): the same policy as an ONNX model.

The evaluator's public names are importable from here.
"""

from .evaluator import ACTIVATIONS, BERNOULLI_THRESHOLD, PRECISIONS, Policy, act, erf

__all__ = ["Policy", "ACTIVATIONS", "BERNOULLI_THRESHOLD", "PRECISIONS", "act", "erf"]
