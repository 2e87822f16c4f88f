"""Where each vector of the tensor groups breaks its check: safetensors members (spec §8) and the
references to their tensors."""

from __future__ import annotations

from sites import POLICY, POLICY_TENSORS, REPLAY_BUFFER, TRAINING, VEC_NORMALIZE, in_doc, in_member, issue

SITES = {
    # st-truncated: the member's first byte
    "st-shorter-than-8-bytes": issue("st-truncated", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    "st-header-past-member": issue("st-truncated", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    # st-header-too-large: the member's first byte
    "st-header-too-large": issue(
        "st-header-too-large", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)
    ),
    # st-header: the member's first byte, and the entry when the rule is about one tensor
    "st-metadata": issue(
        "st-header",
        member=POLICY_TENSORS,
        pointer="/__metadata__",
        by="entry",
        offset=in_member("data", POLICY_TENSORS),
    ),
    "st-header-leading-space": issue("st-header", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    "st-header-newline-padding": issue("st-header", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    "st-entry-missing-offsets": issue(
        "st-header", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "st-name-reserved": issue(
        "st-header", member=POLICY_TENSORS, pointer="/__x", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "decide-safetensors-shape-float-literal": issue(
        "st-header",
        member="tensors/g.safetensors",
        pointer="/t",
        by="entry",
        offset=in_member("data", "tensors/g.safetensors"),
    ),
    "decide-safetensors-offset-float-literal": issue(
        "st-header",
        member="tensors/g.safetensors",
        pointer="/t",
        by="entry",
        offset=in_member("data", "tensors/g.safetensors"),
    ),
    "location-st-entry-missing-member": issue(
        "st-header",
        member="tensors/g.safetensors",
        pointer="/a~1b",
        by="entry",
        offset=in_member("data", "tensors/g.safetensors"),
    ),
    # st-dtype: the member's first byte and the entry
    "st-dtype-unknown": issue(
        "st-dtype", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "st-dtype-before-offsets": issue(
        "st-dtype",
        member="tensors/g.safetensors",
        pointer="/b",
        by="entry",
        offset=in_member("data", "tensors/g.safetensors"),
    ),
    # st-rank-limit: the member's first byte and the entry
    "st-too-many-dims": issue(
        "st-rank-limit", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    # st-offsets: the member's first byte and the entry
    "st-offsets-reversed": issue(
        "st-offsets", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "st-offsets-past-buffer": issue(
        "st-offsets", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    # st-shape: the member's first byte and the entry
    "st-shape-mismatch": issue(
        "st-shape", member=POLICY_TENSORS, pointer="/w", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "decide-tensor-huge-shape": issue(
        "st-shape",
        member="tensors/g.safetensors",
        pointer="/t",
        by="entry",
        offset=in_member("data", "tensors/g.safetensors"),
    ),
    # st-hole: the member's first byte and the entry
    "st-hole": issue(
        "st-hole", member=POLICY_TENSORS, pointer="/b", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "st-hole-at-start": issue(
        "st-hole", member=POLICY_TENSORS, pointer="/a", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    # st-overlap: the member's first byte and the entry
    "st-overlap": issue(
        "st-overlap", member=POLICY_TENSORS, pointer="/b", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    # st-misaligned: the member's first byte and the entry
    "st-misaligned": issue(
        "st-misaligned", member=POLICY_TENSORS, pointer="/b", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    "st-misaligned-header": issue(
        "st-misaligned", member=POLICY_TENSORS, pointer="/a", by="entry", offset=in_member("data", POLICY_TENSORS)
    ),
    # st-trailing: the member's first byte
    "st-trailing-bytes": issue("st-trailing", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    "st-empty-group-trailing-byte": issue(
        "st-trailing", member="tensors/g.safetensors", offset=in_member("data", "tensors/g.safetensors")
    ),
    # st-bool-value: the entry and the tensor's first byte
    "bool-tensor-nonzero-byte": issue(
        "st-bool-value",
        member="tensors/flags.safetensors",
        pointer="/m",
        by="entry",
        offset=in_member("tensor-data", "tensors/flags.safetensors", 64),
    ),
    # ref-not-found: the `ref` member
    "ref-missing-group": in_doc("ref-not-found", "data.json", "/data/x/ref", "ref"),
    "ref-missing-tensor": in_doc("ref-not-found", "data.json", "/data/x/ref", "ref"),
    "vec-normalize-ref-not-found": in_doc("ref-not-found", VEC_NORMALIZE, "/vec_normalize/obs/mean/ref", "ref"),
    "policy-ref-not-found": in_doc("ref-not-found", POLICY, "/policy/nodes/2/weight/ref", "ref"),
    "training-ref-not-found": in_doc("ref-not-found", TRAINING, "/training/random/torch/ref", "ref"),
    "replay-buffer-ref-not-found": in_doc("ref-not-found", REPLAY_BUFFER, "/replay_buffer/rewards/ref", "ref"),
    # ref-mismatch: the `ndarray`
    "ref-dtype-mismatch": in_doc("ref-mismatch", "data.json", "/data/x", "ndarray"),
    "ref-shape-mismatch": in_doc("ref-mismatch", "data.json", "/data/x", "ndarray"),
    "decide-references-data-first": in_doc("ref-mismatch", "data.json", "/data/y", "ndarray"),
    "policy-ref-mismatch": in_doc("ref-mismatch", POLICY, "/policy/nodes/2/weight", "ndarray"),
}
