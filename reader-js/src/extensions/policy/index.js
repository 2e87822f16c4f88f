// The portable policy, extension RLA_policy (spec/extensions/RLA_policy.md):
// its checks (description.js, spaces.js), the registry of its operations,
// activations and heads (ops.js, generated from spec/policy_ops.json), and
// running it (evaluator.js, activations.js, observations.js, gemm.js); the
// twin of python/rlarchive/extensions/policy/__init__.py. The evaluator's
// public names are importable from here.
export { Policy, act, ACTIVATIONS, BERNOULLI_THRESHOLD } from './evaluator.js';
export { erf } from './activations.js';
