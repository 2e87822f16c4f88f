"""Where each vector of the JSON documents breaks its check: the JSON dialect (spec §6), the manifest and
its members (§5), the data document, its values, spaces and schedules (§7)."""

from __future__ import annotations

from sites import POLICY_TENSORS, REPLAY_BUFFER, TRAINING, VEC_NORMALIZE, in_doc, in_member, issue, record

SITES = {
    # json-too-large: the text's first byte
    "json-too-large": issue("json-too-large", member="data.json", offset=in_member("json-start", "data.json")),
    # json-bom: the text's first byte
    "json-bom": issue("json-bom", member="data.json", offset=in_member("json-start", "data.json")),
    "st-header-bom": issue(
        "json-bom", member="tensors/g.safetensors", offset=in_member("json-start", "tensors/g.safetensors", 8)
    ),
    # json-utf8: the end of the longest well-formed UTF-8 prefix of complete characters; for an escaped lone surrogate, the opening quote of the first string holding one
    "json-invalid-utf8": issue("json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 14)),
    "json-overlong-utf8": issue("json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 14)),
    "json-encoded-surrogate": issue("json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 14)),
    "json-lone-surrogate-escape": issue(
        "json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 13)
    ),
    "json-lone-surrogate-in-dropped-duplicate": issue(
        "json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 13)
    ),
    "location-json-surrogate-string": issue(
        "json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", b'"a')
    ),
    "location-json-invalid-utf8-after-ascii": issue(
        "json-utf8", member="data.json", offset=in_member("json-utf8", "data.json", 17)
    ),
    # json-depth: the text's first byte
    "json-too-deep": issue("json-depth", member="data.json", offset=in_member("json-start", "data.json")),
    # json-syntax: the end of the longest prefix that begins some JSON text
    "json-syntax-trailing-comma": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", b"]")
    ),
    "json-syntax-single-quotes": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", 1)
    ),
    "decide-extension-name-invalid-at-step-6": issue(
        "json-syntax", member="manifest.json", offset=record("central-record", 0, anchor="json-prefix")
    ),
    "st-header-not-json": issue(
        "json-syntax", member="tensors/g.safetensors", offset=record("local-header", -1, anchor="json-prefix")
    ),
    "vec-normalize-member-not-json": issue(
        "json-syntax", member=VEC_NORMALIZE, offset=record("local-header", -1, anchor="json-prefix")
    ),
    "location-json-literal-cut": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", b"}")
    ),
    "location-json-unterminated-string": issue(
        "json-syntax", member="data.json", offset=record("local-header", -1, anchor="json-prefix")
    ),
    "location-json-number-cut": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", b"}")
    ),
    "location-json-bad-escape": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", b"q")
    ),
    "location-json-bad-unicode-escape": issue(
        "json-syntax", member="data.json", offset=in_member("json-prefix", "data.json", b"G")
    ),
    "training-member-not-json": issue(
        "json-syntax", member=TRAINING, offset=record("local-header", -1, anchor="json-prefix")
    ),
    "replay-buffer-member-not-json": issue(
        "json-syntax", member=REPLAY_BUFFER, offset=record("local-header", -1, anchor="json-prefix")
    ),
    # json-nan-literal: the first byte of the literal
    "json-nan-literal": issue(
        "json-nan-literal", member="data.json", offset=in_member("json-literal", "data.json", b"N")
    ),
    "json-infinity-literal": issue(
        "json-nan-literal", member="data.json", offset=in_member("json-literal", "data.json", b"-")
    ),
    # json-duplicate-key: the opening quote of the first repeated key in document order
    "json-duplicate-key": issue(
        "json-duplicate-key", member="data.json", offset=in_member("json-key", "data.json", 21)
    ),
    "json-duplicate-key-escaped": issue(
        "json-duplicate-key", member="data.json", offset=in_member("json-key", "data.json", 15)
    ),
    "manifest-json-duplicate-key": issue(
        "json-duplicate-key", member="manifest.json", offset=in_member("json-key", "manifest.json", 223)
    ),
    "st-header-duplicate-key": issue(
        "json-duplicate-key", member=POLICY_TENSORS, offset=in_member("json-key", POLICY_TENSORS, 67)
    ),
    "location-json-duplicate-document-order": issue(
        "json-duplicate-key", member="data.json", offset=in_member("json-key", "data.json", b'"b":2')
    ),
    # json-integer-range: the first byte of the literal (its `-` when it has one)
    "json-integer-beyond-2-53": issue(
        "json-integer-range", member="data.json", offset=in_member("json-literal", "data.json", b"9")
    ),
    # json-number-range: the first byte of the literal (its `-` when it has one)
    "json-float-overflow": issue(
        "json-number-range", member="data.json", offset=in_member("json-literal", "data.json", b"1")
    ),
    # member-crc: the member's first data byte (manifest.json and data.json when read; the others at step 10)
    "zip-crc-wrong-data": issue("member-crc", member="data.json", offset=in_member("data", "data.json")),
    "zip-crc-wrong-tensor": issue("member-crc", member=POLICY_TENSORS, offset=in_member("data", POLICY_TENSORS)),
    "zip-crc-wrong-manifest": issue("member-crc", member="manifest.json", offset=in_member("data", "manifest.json")),
    "zip-crc-wrong-mimetype": issue("member-crc", member="mimetype", offset=in_member("data", "mimetype")),
    # manifest-version: the version value
    "version-from-the-future": in_doc("manifest-version", "manifest.json", "/format_version", "value"),
    # manifest-schema: by the document principles
    "manifest-not-object": in_doc("manifest-schema", "manifest.json", "", "value"),
    "manifest-missing-producer": in_doc("manifest-schema", "manifest.json", "", "value"),
    "manifest-wrong-format": in_doc("manifest-schema", "manifest.json", "/format", "value"),
    "manifest-bad-version-string": in_doc("manifest-schema", "manifest.json", "/format_version", "value"),
    "manifest-member-listed-twice": in_doc("manifest-schema", "manifest.json", "/members/1/name", "later"),
    "manifest-lists-mimetype": in_doc("manifest-schema", "manifest.json", "/members/1/name", "value"),
    "manifest-digest-uppercase": in_doc("manifest-schema", "manifest.json", "/members/0/sha256", "value"),
    "manifest-digest-trailing-newline": in_doc("manifest-schema", "manifest.json", "/members/0/sha256", "value"),
    "manifest-producer-name-empty": in_doc("manifest-schema", "manifest.json", "/producer/name", "value"),
    "manifest-producer-name-too-long": in_doc("manifest-schema", "manifest.json", "/producer/name", "value"),
    "manifest-producer-version-too-long": in_doc("manifest-schema", "manifest.json", "/producer/version", "value"),
    "manifest-producer-extra-property": in_doc("manifest-schema", "manifest.json", "/producer/url", "value"),
    "manifest-member-sha256-upper-case": in_doc("manifest-schema", "manifest.json", "/members/0/sha256", "value"),
    "manifest-member-size-negative": in_doc("manifest-schema", "manifest.json", "/members/0/size", "value"),
    "manifest-metadata-not-string": in_doc("manifest-schema", "manifest.json", "/metadata/steps", "value"),
    "manifest-extension-name-invalid": in_doc("manifest-schema", "manifest.json", "/extensions_used/0", "value"),
    "manifest-extensions-used-twice": in_doc("manifest-schema", "manifest.json", "/extensions_used/1", "later"),
    "manifest-entry-extra-property": in_doc("manifest-schema", "manifest.json", "/members/0/crc", "value"),
    "location-manifest-two-problems": in_doc("manifest-schema", "manifest.json", "/producer/url", "value"),
    # manifest-unknown-property: the property
    "future-minor-version": in_doc("manifest-unknown-property", "manifest.json", "/created_with_care", "not-allowed"),
    # extension-undeclared: the extension's name
    "extension-required-not-used": in_doc("extension-undeclared", "manifest.json", "/extensions_required/0", "value"),
    "extension-data-not-used": in_doc("extension-undeclared", "manifest.json", "/extensions/ACME_x", "value"),
    # extension-unsupported: the element of extensions_required
    "extension-required-unsupported": in_doc(
        "extension-unsupported", "manifest.json", "/extensions_required/0", "value"
    ),
    # extension-unknown: the element of extensions_used
    "extension-optional": in_doc("extension-unknown", "manifest.json", "/extensions_used/0", "manifest-entry"),
    "zip-versions-and-attributes-allowed": in_doc(
        "extension-unknown", "manifest.json", "/extensions_used/0", "manifest-entry"
    ),
    "zip-name-prefix-not-a-directory": in_doc(
        "extension-unknown", "manifest.json", "/extensions_used/0", "manifest-entry"
    ),
    # member-unlisted: the member alone
    "member-unlisted": issue("member-unlisted", member=POLICY_TENSORS),
    # member-size: the member alone
    "member-size-mismatch": issue("member-size", member="data.json"),
    "decide-member-entries-one-by-one": issue("member-size", member="extensions/ACME_x/a.bin"),
    # member-missing: the manifest entry that names the member
    "member-listed-missing": in_doc("member-missing", "manifest.json", "/members/1", "manifest-entry"),
    # member-digest: the member alone (data.json at step 6, the others at step 10)
    "member-digest-mismatch-data": issue("member-digest", member="data.json"),
    "member-digest-mismatch-tensor": issue("member-digest", member=POLICY_TENSORS),
    # data-structure: by the document principles
    "data-not-object": in_doc("data-structure", "data.json", "", "top"),
    "data-missing-data": in_doc("data-structure", "data.json", "", "top"),
    "data-optimizers-not-object": in_doc("data-structure", "data.json", "/optimizers", "value"),
    # data-unknown-property: the property
    "data-unknown-property": in_doc("data-unknown-property", "data.json", "/comment", "not-allowed"),
    # value-unknown-type: the `$type` member
    "value-unknown-type": in_doc("value-unknown-type", "data.json", "/data/x/$type", "value"),
    "value-type-not-string": in_doc("value-unknown-type", "data.json", "/data/x/$type", "value"),
    "value-unknown-tag-nested": in_doc("value-unknown-type", "data.json", "/data/v/0/x/$type", "value"),
    "value-error-before-references": in_doc("value-unknown-type", "data.json", "/data/b/$type", "value"),
    # value-invalid: by the document principles
    "value-float-finite-tagged": in_doc("value-invalid", "data.json", "/data/x/value", "value"),
    "value-int-tag-in-safe-range": in_doc("value-invalid", "data.json", "/data/x/value", "value"),
    "value-int-tag-leading-zero": in_doc("value-invalid", "data.json", "/data/x/value", "value"),
    "value-bytes-noncanonical-base64": in_doc("value-invalid", "data.json", "/data/x/base64", "value"),
    "value-bytes-base64-whitespace": in_doc("value-invalid", "data.json", "/data/x/base64", "value"),
    "value-tuple-extra-member": in_doc("value-invalid", "data.json", "/data/x/len", "value"),
    "value-dict-tag-string-keys": in_doc("value-invalid", "data.json", "/data/x", "value"),
    "value-dict-key-unhashable": in_doc("value-invalid", "data.json", "/data/x/entries/0/0", "value"),
    "value-dict-key-nan": in_doc("value-invalid", "data.json", "/data/x/entries/0/0", "value"),
    "value-ndarray-both-forms": in_doc("value-invalid", "data.json", "/data/x", "exclusive"),
    "value-ndarray-bad-dtype": in_doc("value-invalid", "data.json", "/data/x/dtype", "value"),
    "value-class-bad-module": in_doc("value-invalid", "data.json", "/data/x/module", "value"),
    "value-opaque-wrong-format": in_doc("value-invalid", "data.json", "/data/x/format", "value"),
    "space-missing-member": in_doc("value-invalid", "data.json", "/data/x", "missing"),
    "space-unknown-kind": in_doc("value-invalid", "data.json", "/data/x/kind", "value"),
    "schedule-value-tagged": in_doc("value-invalid", "data.json", "/data/x/value", "value"),
    "value-ndarray-base64-astral-characters": in_doc("value-invalid", "data.json", "/data/x/base64", "value"),
    "decide-int-leading-zero-and-too-long": in_doc("value-invalid", "data.json", "/data/x/value", "value"),
    "decide-empty-dict-tag": in_doc("value-invalid", "data.json", "/data/x", "value"),
    "decide-discrete-dtype-not-a-code": in_doc("value-invalid", "data.json", "/data/x/dtype", "value"),
    "decide-box-low-bytes": in_doc("value-invalid", "data.json", "/data/x/low", "value"),
    "decide-box-low-unknown-tag": in_doc("value-invalid", "data.json", "/data/x/low", "value"),
    "decide-piecewise-interpolation": in_doc("value-invalid", "data.json", "/data/x/interpolation", "value"),
    "value-data-checked-before-optimizers": in_doc("value-invalid", "data.json", "/data/b/value", "value"),
    "value-opaque-note-not-string": in_doc("value-invalid", "data.json", "/data/v/note", "value"),
    "value-ndarray-shape-negative": in_doc("value-invalid", "data.json", "/data/v/shape/0", "value"),
    "value-ndarray-shape-float": in_doc("value-invalid", "data.json", "/data/v/shape/0", "value"),
    "value-ndarray-ref-extra-member": in_doc("value-invalid", "data.json", "/data/v/ref/x", "value"),
    "space-discrete-n-float": in_doc("value-invalid", "data.json", "/data/v/n", "value"),
    "space-dict-member-not-a-space": in_doc("value-invalid", "data.json", "/data/v/spaces/0/1", "value"),
    "schedule-parameter-nan": in_doc("value-invalid", "data.json", "/data/v/value", "value"),
    "schedule-piecewise-point-triple": in_doc("value-invalid", "data.json", "/data/v/points/0", "value"),
    "location-value-extra-member": in_doc("value-invalid", "data.json", "/data/x/note", "not-allowed"),
    "location-value-missing-member": in_doc("value-invalid", "data.json", "/data/x", "missing"),
    "location-value-missing-and-extra-member": in_doc("value-invalid", "data.json", "/data/x", "missing"),
    "location-ref-group-not-string": in_doc("value-invalid", "data.json", "/data/x/ref/group", "value"),
    "location-ref-extra-member": in_doc("value-invalid", "data.json", "/data/x/ref/at", "not-allowed"),
    "location-space-extra-member": in_doc("value-invalid", "data.json", "/data/x/seed", "not-allowed"),
    # value-duplicate-key: the later key
    "value-dict-duplicate-int-float": in_doc("value-duplicate-key", "data.json", "/data/x/entries/1/0", "later"),
    "value-dict-duplicate-bool-int": in_doc("value-duplicate-key", "data.json", "/data/x/entries/1/0", "later"),
    "decide-key-int-equals-float": in_doc("value-duplicate-key", "data.json", "/data/x/entries/1/0", "later"),
    "value-dict-duplicate-negative-zero": in_doc("value-duplicate-key", "data.json", "/data/v/entries/1/0", "later"),
    "value-dict-duplicate-tuple": in_doc("value-duplicate-key", "data.json", "/data/v/entries/1/0", "later"),
    # value-array-size: the `base64` member
    "array-size-mismatch": in_doc("value-array-size", "data.json", "/data/x/base64", "value"),
    "scalar-size-mismatch": in_doc("value-array-size", "data.json", "/data/x/base64", "value"),
    "vec-normalize-value-invalid": in_doc("value-array-size", VEC_NORMALIZE, "/vec_normalize/obs/mean/base64", "value"),
    # value-limit: the value whose size passes the limit
    "value-int-too-many-digits": in_doc("value-limit", "data.json", "/data/x/value", "limit"),
    "value-ndarray-too-many-dims": in_doc("value-limit", "data.json", "/data/x/shape", "limit"),
    "value-ndarray-inline-too-large": in_doc("value-limit", "data.json", "/data/x/base64", "limit"),
    "decide-box-shape-33-dimensions": in_doc("value-limit", "data.json", "/data/x/shape", "limit"),
    "value-ndarray-element-bytes": in_doc("value-limit", "data.json", "/data/v/shape", "limit"),
    # space-invalid: by the document principles
    "space-discrete-n-zero": in_doc("space-invalid", "data.json", "/data/x/n", "value"),
    "space-box-shape-mismatch": in_doc("space-invalid", "data.json", "/data/x/low", "value"),
    "space-multi-discrete-nvec-zero": in_doc("space-invalid", "data.json", "/data/x/nvec", "value"),
    "space-text-charset-unsorted": in_doc("space-invalid", "data.json", "/data/x/charset", "value"),
    "space-dict-duplicate-key": in_doc("space-invalid", "data.json", "/data/x/spaces/1/0", "later"),
    "decide-discrete-dtype-float-code": in_doc("space-invalid", "data.json", "/data/x/dtype", "value"),
    "space-box-complex-dtype": in_doc("space-invalid", "data.json", "/data/v/dtype", "value"),
    "space-box-low-dtype-differs": in_doc("space-invalid", "data.json", "/data/v/low", "value"),
    "space-multi-discrete-shapes-differ": in_doc("space-invalid", "data.json", "/data/v/start", "contradiction"),
    "space-multi-discrete-nvec-referenced": in_doc("space-invalid", "data.json", "/data/v/nvec", "value"),
    "space-multi-binary-empty-shape": in_doc("space-invalid", "data.json", "/data/v/n", "value"),
    "space-multi-binary-zero": in_doc("space-invalid", "data.json", "/data/v/n", "value"),
    "space-text-charset-repeated": in_doc("space-invalid", "data.json", "/data/v/charset", "value"),
    "space-text-lengths-reversed": in_doc("space-invalid", "data.json", "/data/v/max_length", "value"),
    # schedule-invalid: by the document principles
    "schedule-linear-end-fraction-zero": in_doc("schedule-invalid", "data.json", "/data/x/end_fraction", "value"),
    "schedule-piecewise-not-increasing": in_doc("schedule-invalid", "data.json", "/data/x/points/1/0", "value"),
    "schedule-linear-end-fraction-above-one": in_doc("schedule-invalid", "data.json", "/data/v/end_fraction", "value"),
    "schedule-piecewise-empty": in_doc("schedule-invalid", "data.json", "/data/v/points", "value"),
    "schedule-piecewise-point-outside": in_doc("schedule-invalid", "data.json", "/data/v/points/1/0", "value"),
}
