"""Where each vector breaks its check: case id -> [(check id of spec/checks.json, site)], one per issue of its report.

The generator derives each case's expected issues from these and the table
(tests/vectors/sites.py) and stops when the reference validator reports
anything else. Grouped by check, in the order of spec/checks.json.
"""

from __future__ import annotations

from sites import (  # noqa: F401
    after_member,
    at_byte,
    central_record,
    directory_end,
    doc,
    in_member,
    local_header,
    record,
    site,
    start,
)

SITES = {
    # identification: offset 0; member `mimetype` when the first member has that name
    "not-rlarchive-plain-zip": [("identification", site(offset=start()))],
    "not-rlarchive-empty-file": [("identification", site(offset=start()))],
    "not-rlarchive-wrong-media-type": [("identification", site(offset=start()))],
    "not-rlarchive-prepended-bytes": [("identification", site(offset=start()))],
    "not-rlarchive-mimetype-too-long": [("identification", site(member="mimetype", offset=start()))],
    "decide-mimetype-local-extra": [("identification", site(offset=start()))],
    # eocd-not-found: no location
    "zip-eocd-missing-truncated": [("eocd-not-found", site())],
    # eocd-trailing-data: the last end record signature found in the searched tail; the end record itself when its comment length runs past the file's end
    "zip-trailing-bytes": [("eocd-trailing-data", site(offset=record("eocd", 0)))],
    "zip-eocd-comment": [("eocd-trailing-data", site(offset=record("eocd", 0)))],
    # eocd-multiple: the first byte after the central directory
    "zip-two-end-records": [("eocd-multiple", site(offset=record("eocd", 0, anchor="after-directory")))],
    # zip64-end-records: the record holding the field at fault: the EOCD (a field at its maximum without ZIP64, a field disagreeing with the ZIP64 record), the locator, or the ZIP64 end record (its signature, size)
    "zip64-bad-record-size": [("zip64-end-records", site(offset=record("zip64-record", 0)))],
    "zip64-max-count-without-locator": [("zip64-end-records", site(offset=record("eocd", 0)))],
    "zip64-max-disk-without-locator": [("zip64-end-records", site(offset=record("eocd", 0)))],
    # disk-numbers: the record holding the disk field or count at fault: the EOCD, the ZIP64 locator or the ZIP64 end record
    "zip-multi-disk": [("disk-numbers", site(offset=record("eocd", 0)))],
    "zip64-locator-other-disk": [("disk-numbers", site(offset=record("zip64-locator", 0)))],
    "zip64-entry-counts-differ-above-2-53": [("disk-numbers", site(offset=record("zip64-record", 0)))],
    # member-count-limit: the EOCD, or the ZIP64 end record when the EOCD's count holds its maximum
    "too-many-members": [("member-count-limit", site(offset=record("eocd", 0)))],
    # directory-bounds: the first byte of the central directory
    "zip-directory-past-region": [("directory-bounds", site(offset=record("central-record", 0, anchor="directory")))],
    # central-signature: the first byte of the record (or the first leftover byte when the records end before the directory does)
    "zip-bad-central-signature": [("central-signature", site(offset=central_record("data.json")))],
    "zip-entry-count-wrong": [("central-signature", site(offset=record("central-record", -1)))],
    # central-version-made-by: the central record
    "zip-made-by-host-atari-symlink": [
        ("central-version-made-by", site(member="extensions/ACME_files/link", offset=record("central-record", 2)))
    ],
    "zip-made-by-host-ntfs-directory": [
        ("central-version-made-by", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-host-checked-before-version-needed": [
        ("central-version-made-by", site(member="data.json", offset=record("central-record", 1)))
    ],
    # central-version-needed: the central record
    "zip-version-needed-63": [("central-version-needed", site(member="data.json", offset=record("central-record", 1)))],
    # central-encrypted: the central record
    "zip-encrypted": [("central-encrypted", site(member="data.json", offset=record("central-record", 1)))],
    # central-data-descriptor: the central record
    "zip-data-descriptor": [("central-data-descriptor", site(member="data.json", offset=record("central-record", 1)))],
    # central-flags: the central record
    "zip-utf8-flag": [("central-flags", site(member="data.json", offset=record("central-record", 1)))],
    # central-method: the central record
    "zip-deflated": [("central-method", site(member="data.json", offset=record("central-record", 1)))],
    # central-disk: the central record
    "zip-member-on-other-disk": [("central-disk", site(member="data.json", offset=record("central-record", 1)))],
    # central-attributes: the central record
    "zip-attributes-unix-symlink": [
        ("central-attributes", site(member="extensions/ACME_files/link", offset=record("central-record", 2)))
    ],
    "zip-attributes-unix-directory": [
        ("central-attributes", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-attributes-unix-setuid": [
        ("central-attributes", site(member="tensors/policy.safetensors", offset=record("central-record", 2)))
    ],
    "zip-attributes-unix-device": [
        ("central-attributes", site(member="extensions/ACME_files/dev", offset=record("central-record", 2)))
    ],
    "zip-attributes-unix-not-owner-readable": [
        ("central-attributes", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-attributes-dos-directory": [
        ("central-attributes", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-attributes-dos-volume-label": [
        ("central-attributes", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-attributes-dos-reparse-point": [
        ("central-attributes", site(member="data.json", offset=record("central-record", 1)))
    ],
    "zip-attributes-dos-with-unix-symlink-mode": [
        ("central-attributes", site(member="extensions/ACME_files/link", offset=record("central-record", 2)))
    ],
    # central-comment-sizes: the central record (a comment, sizes that differ)
    "zip-member-comment": [("central-comment-sizes", site(member="data.json", offset=record("central-record", 1)))],
    "zip-sizes-differ": [("central-comment-sizes", site(member="data.json", offset=record("central-record", 1)))],
    "zip64-sizes-differ-above-2-53": [
        ("central-comment-sizes", site(member="data.json", offset=record("central-record", 1)))
    ],
    # central-name: the central record
    "zip-name-dotdot": [("central-name", site(member="extensions/../../evil", offset=record("central-record", 2)))],
    "zip-name-absolute": [("central-name", site(member="/etc/passwd", offset=record("central-record", 2)))],
    "zip-name-backslash": [
        ("central-name", site(member="tensors\\policy.safetensors", offset=record("central-record", 2)))
    ],
    "zip-name-directory": [("central-name", site(member="tensors/", offset=record("central-record", 2)))],
    "zip-name-non-ascii": [("central-name", site(member="données.json", offset=record("central-record", 2)))],
    "zip-name-too-long": [
        (
            "central-name",
            site(
                member="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                offset=record("central-record", 2),
            ),
        )
    ],
    "zip-name-with-space": [("central-name", site(member="extensions/ACME_x/a b", offset=record("central-record", 2)))],
    # central-extra: the central record
    "zip-extra-unknown-id": [("central-extra", site(member="data.json", offset=record("central-record", 1)))],
    # central-zip64-extra: the central record
    "zip64-extra-without-max-field": [
        ("central-zip64-extra", site(member="data.json", offset=record("central-record", 1)))
    ],
    # names-duplicate: the later of the two records
    "zip-name-duplicate": [("names-duplicate", site(member="data.json", offset=record("central-record", 2)))],
    # names-case-collision: the later of the two records
    "zip-name-case-collision": [("names-case-collision", site(member="DATA.json", offset=record("central-record", 2)))],
    "zip-case-collision-before-directory-clash": [
        ("names-case-collision", site(member="DATA.json", offset=record("central-record", 2)))
    ],
    # names-directory-clash: the record whose name is a directory of another
    "zip-name-file-and-directory": [
        ("names-directory-clash", site(member="extensions/ACME_files/d", offset=record("central-record", 2)))
    ],
    "zip-name-file-and-directory-ignoring-case": [
        ("names-directory-clash", site(member="extensions/ACME_files/D", offset=record("central-record", 2)))
    ],
    # local-header: the first byte of the local header (where the central record says it is)
    "zip-local-signature": [("local-header", site(member="data.json", offset=local_header("data.json")))],
    "zip-member-past-end-then-bad-local-header": [
        ("local-header", site(member="manifest.json", offset=local_header("manifest.json")))
    ],
    "decide-second-end-record-after-local-headers": [
        ("local-header", site(member="manifest.json", offset=local_header("manifest.json")))
    ],
    # local-extra: the local header
    "zip-extra-truncated": [("local-extra", site(member="data.json", offset=record("local-header", 1)))],
    "zip-extra-padding-nonzero": [("local-extra", site(member="data.json", offset=record("local-header", 1)))],
    "decide-local-extra-into-directory": [
        ("local-extra", site(member="manifest.json", offset=record("local-header", -1)))
    ],
    # local-agreement: the local header
    "zip-local-name-differs": [("local-agreement", site(member="data.json", offset=record("local-header", 1)))],
    "zip-local-crc-differs": [("local-agreement", site(member="data.json", offset=record("local-header", 1)))],
    "decide-local-name-into-directory": [
        ("local-agreement", site(member="manifest.json", offset=record("local-header", -1)))
    ],
    # layout-overlap: the local header of the member that overlaps
    "zip-hidden-member-overlap": [("layout-overlap", site(member="hidden", offset=record("local-header", 2)))],
    "zip-member-runs-into-directory": [
        ("layout-overlap", site(member="manifest.json", offset=record("local-header", -1)))
    ],
    "zip-member-data-past-end-of-file": [
        ("layout-overlap", site(member="data.json", offset=record("local-header", 1)))
    ],
    # layout-gap: the first byte no record accounts for; no member
    "zip-gap-before-member": [("layout-gap", site(offset=after_member("gap", "mimetype")))],
    "zip-gap-before-directory": [("layout-gap", site(offset=record("local-header", -1, anchor="gap")))],
    "zip-gap-before-end-record": [("layout-gap", site(offset=directory_end("gap")))],
    # layout-required: the member alone
    "member-missing-data-json": [("layout-required", site(member="data.json"))],
    "member-missing-manifest": [("layout-required", site(member="manifest.json"))],
    # layout-unexpected: the member alone
    "member-unexpected-name": [("layout-unexpected", site(member="notes.txt"))],
    "member-unexpected-nested-tensor": [("layout-unexpected", site(member="tensors/a/b.safetensors"))],
    "member-unexpected-dot-group": [("layout-unexpected", site(member="tensors/..safetensors"))],
    "member-undeclared-extension": [("layout-unexpected", site(member="extensions/ACME_x/a.bin"))],
    "decide-extension-name-invalid": [("layout-unexpected", site(member="extensions/bad-name/x.bin"))],
    "member-unexpected-tensor-suffix": [("layout-unexpected", site(member="tensors/a.bin"))],
    "member-unexpected-empty-group-name": [("layout-unexpected", site(member="tensors/.safetensors"))],
    "member-unexpected-bare-extension": [("layout-unexpected", site(member="extensions/x"))],
    # json-too-large: the text's first byte
    "json-too-large": [("json-too-large", site(member="data.json", offset=in_member("json-start", "data.json")))],
    # json-bom: the text's first byte
    "json-bom": [("json-bom", site(member="data.json", offset=in_member("json-start", "data.json")))],
    "st-header-bom": [
        ("json-bom", site(member="tensors/g.safetensors", offset=in_member("json-start", "tensors/g.safetensors", 8)))
    ],
    # json-utf8: the end of the longest well-formed UTF-8 prefix of complete characters; for an escaped lone surrogate, the opening quote of the first string holding one
    "json-invalid-utf8": [("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 14)))],
    "json-overlong-utf8": [("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 14)))],
    "json-encoded-surrogate": [("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 14)))],
    "json-lone-surrogate-escape": [
        ("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 13)))
    ],
    "json-lone-surrogate-in-dropped-duplicate": [
        ("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 13)))
    ],
    "location-json-surrogate-string": [
        ("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", b'"a')))
    ],
    "location-json-invalid-utf8-after-ascii": [
        ("json-utf8", site(member="data.json", offset=in_member("json-utf8", "data.json", 17)))
    ],
    # json-depth: the text's first byte
    "json-too-deep": [("json-depth", site(member="data.json", offset=in_member("json-start", "data.json")))],
    # json-syntax: the end of the longest prefix that begins some JSON text
    "json-syntax-trailing-comma": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", b"]")))
    ],
    "json-syntax-single-quotes": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", 1)))
    ],
    "decide-extension-name-invalid-at-step-6": [
        ("json-syntax", site(member="manifest.json", offset=record("central-record", 0, anchor="json-prefix")))
    ],
    "st-header-not-json": [
        ("json-syntax", site(member="tensors/g.safetensors", offset=record("local-header", -1, anchor="json-prefix")))
    ],
    "vec-normalize-member-not-json": [
        (
            "json-syntax",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                offset=record("local-header", -1, anchor="json-prefix"),
            ),
        )
    ],
    "location-json-literal-cut": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", b"}")))
    ],
    "location-json-unterminated-string": [
        ("json-syntax", site(member="data.json", offset=record("local-header", -1, anchor="json-prefix")))
    ],
    "location-json-number-cut": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", b"}")))
    ],
    "location-json-bad-escape": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", b"q")))
    ],
    "location-json-bad-unicode-escape": [
        ("json-syntax", site(member="data.json", offset=in_member("json-prefix", "data.json", b"G")))
    ],
    "training-member-not-json": [
        (
            "json-syntax",
            site(
                member="extensions/RLA_training/training.json", offset=record("local-header", -1, anchor="json-prefix")
            ),
        )
    ],
    "replay-buffer-member-not-json": [
        (
            "json-syntax",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                offset=record("local-header", -1, anchor="json-prefix"),
            ),
        )
    ],
    # json-nan-literal: the first byte of the literal
    "json-nan-literal": [
        ("json-nan-literal", site(member="data.json", offset=in_member("json-literal", "data.json", b"N")))
    ],
    "json-infinity-literal": [
        ("json-nan-literal", site(member="data.json", offset=in_member("json-literal", "data.json", b"-")))
    ],
    # json-duplicate-key: the opening quote of the first repeated key in document order
    "json-duplicate-key": [
        ("json-duplicate-key", site(member="data.json", offset=in_member("json-key", "data.json", 21)))
    ],
    "json-duplicate-key-escaped": [
        ("json-duplicate-key", site(member="data.json", offset=in_member("json-key", "data.json", 15)))
    ],
    "manifest-json-duplicate-key": [
        ("json-duplicate-key", site(member="manifest.json", offset=in_member("json-key", "manifest.json", 223)))
    ],
    "st-header-duplicate-key": [
        (
            "json-duplicate-key",
            site(member="tensors/policy.safetensors", offset=in_member("json-key", "tensors/policy.safetensors", 67)),
        )
    ],
    "location-json-duplicate-document-order": [
        ("json-duplicate-key", site(member="data.json", offset=in_member("json-key", "data.json", b'"b":2')))
    ],
    # json-integer-range: the first byte of the literal (its `-` when it has one)
    "json-integer-beyond-2-53": [
        ("json-integer-range", site(member="data.json", offset=in_member("json-literal", "data.json", b"9")))
    ],
    # json-number-range: the first byte of the literal (its `-` when it has one)
    "json-float-overflow": [
        ("json-number-range", site(member="data.json", offset=in_member("json-literal", "data.json", b"1")))
    ],
    # member-crc: the member's first data byte (manifest.json and data.json when read; the others at step 10)
    "zip-crc-wrong-data": [("member-crc", site(member="data.json", offset=in_member("data", "data.json")))],
    "zip-crc-wrong-tensor": [
        (
            "member-crc",
            site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")),
        )
    ],
    "zip-crc-wrong-manifest": [("member-crc", site(member="manifest.json", offset=in_member("data", "manifest.json")))],
    "zip-crc-wrong-mimetype": [("member-crc", site(member="mimetype", offset=in_member("data", "mimetype")))],
    # manifest-version: the version value
    "version-from-the-future": [
        ("manifest-version", site(member="manifest.json", pointer="/format_version", by="value"))
    ],
    # manifest-schema: by the document principles
    "manifest-not-object": [("manifest-schema", site(member="manifest.json", pointer="", by="value"))],
    "manifest-missing-producer": [("manifest-schema", site(member="manifest.json", pointer="", by="value"))],
    "manifest-wrong-format": [("manifest-schema", site(member="manifest.json", pointer="/format", by="value"))],
    "manifest-bad-version-string": [
        ("manifest-schema", site(member="manifest.json", pointer="/format_version", by="value"))
    ],
    "manifest-member-listed-twice": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/1/name", by="later"))
    ],
    "manifest-lists-mimetype": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/1/name", by="value"))
    ],
    "manifest-digest-uppercase": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/0/sha256", by="value"))
    ],
    "manifest-digest-trailing-newline": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/0/sha256", by="value"))
    ],
    "manifest-producer-name-empty": [
        ("manifest-schema", site(member="manifest.json", pointer="/producer/name", by="value"))
    ],
    "manifest-producer-name-too-long": [
        ("manifest-schema", site(member="manifest.json", pointer="/producer/name", by="value"))
    ],
    "manifest-producer-version-too-long": [
        ("manifest-schema", site(member="manifest.json", pointer="/producer/version", by="value"))
    ],
    "manifest-producer-extra-property": [
        ("manifest-schema", site(member="manifest.json", pointer="/producer/url", by="value"))
    ],
    "manifest-member-sha256-upper-case": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/0/sha256", by="value"))
    ],
    "manifest-member-size-negative": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/0/size", by="value"))
    ],
    "manifest-metadata-not-string": [
        ("manifest-schema", site(member="manifest.json", pointer="/metadata/steps", by="value"))
    ],
    "manifest-extension-name-invalid": [
        ("manifest-schema", site(member="manifest.json", pointer="/extensions_used/0", by="value"))
    ],
    "manifest-extensions-used-twice": [
        ("manifest-schema", site(member="manifest.json", pointer="/extensions_used/1", by="later"))
    ],
    "manifest-entry-extra-property": [
        ("manifest-schema", site(member="manifest.json", pointer="/members/0/crc", by="value"))
    ],
    "location-manifest-two-problems": [
        ("manifest-schema", site(member="manifest.json", pointer="/producer/url", by="value"))
    ],
    # manifest-unknown-property: the property
    "future-minor-version": [
        ("manifest-unknown-property", site(member="manifest.json", pointer="/created_with_care", by="not-allowed"))
    ],
    # extension-undeclared: the extension's name
    "extension-required-not-used": [
        ("extension-undeclared", site(member="manifest.json", pointer="/extensions_required/0", by="value"))
    ],
    "extension-data-not-used": [
        ("extension-undeclared", site(member="manifest.json", pointer="/extensions/ACME_x", by="value"))
    ],
    # extension-unsupported: the element of extensions_required
    "extension-required-unsupported": [
        ("extension-unsupported", site(member="manifest.json", pointer="/extensions_required/0", by="value"))
    ],
    # extension-unknown: the element of extensions_used
    "extension-optional": [
        ("extension-unknown", site(member="manifest.json", pointer="/extensions_used/0", by="manifest-entry"))
    ],
    "zip-versions-and-attributes-allowed": [
        ("extension-unknown", site(member="manifest.json", pointer="/extensions_used/0", by="manifest-entry"))
    ],
    "zip-name-prefix-not-a-directory": [
        ("extension-unknown", site(member="manifest.json", pointer="/extensions_used/0", by="manifest-entry"))
    ],
    # member-unlisted: the member alone
    "member-unlisted": [("member-unlisted", site(member="tensors/policy.safetensors"))],
    # member-size: the member alone
    "member-size-mismatch": [("member-size", site(member="data.json"))],
    "decide-member-entries-one-by-one": [("member-size", site(member="extensions/ACME_x/a.bin"))],
    # member-missing: the manifest entry that names the member
    "member-listed-missing": [
        ("member-missing", site(member="manifest.json", pointer="/members/1", by="manifest-entry"))
    ],
    # member-digest: the member alone (data.json at step 6, the others at step 10)
    "member-digest-mismatch-data": [("member-digest", site(member="data.json"))],
    "member-digest-mismatch-tensor": [("member-digest", site(member="tensors/policy.safetensors"))],
    # data-structure: by the document principles
    "data-not-object": [("data-structure", site(member="data.json", pointer="", by="top"))],
    "data-missing-data": [("data-structure", site(member="data.json", pointer="", by="top"))],
    "data-optimizers-not-object": [("data-structure", site(member="data.json", pointer="/optimizers", by="value"))],
    # data-unknown-property: the property
    "data-unknown-property": [
        ("data-unknown-property", site(member="data.json", pointer="/comment", by="not-allowed"))
    ],
    # value-unknown-type: the `$type` member
    "value-unknown-type": [("value-unknown-type", site(member="data.json", pointer="/data/x/$type", by="value"))],
    "value-type-not-string": [("value-unknown-type", site(member="data.json", pointer="/data/x/$type", by="value"))],
    "value-unknown-tag-nested": [
        ("value-unknown-type", site(member="data.json", pointer="/data/v/0/x/$type", by="value"))
    ],
    "value-error-before-references": [
        ("value-unknown-type", site(member="data.json", pointer="/data/b/$type", by="value"))
    ],
    # value-invalid: by the document principles
    "value-float-finite-tagged": [("value-invalid", site(member="data.json", pointer="/data/x/value", by="value"))],
    "value-int-tag-in-safe-range": [("value-invalid", site(member="data.json", pointer="/data/x/value", by="value"))],
    "value-int-tag-leading-zero": [("value-invalid", site(member="data.json", pointer="/data/x/value", by="value"))],
    "value-bytes-noncanonical-base64": [
        ("value-invalid", site(member="data.json", pointer="/data/x/base64", by="value"))
    ],
    "value-bytes-base64-whitespace": [
        ("value-invalid", site(member="data.json", pointer="/data/x/base64", by="value"))
    ],
    "value-tuple-extra-member": [("value-invalid", site(member="data.json", pointer="/data/x/len", by="value"))],
    "value-dict-tag-string-keys": [("value-invalid", site(member="data.json", pointer="/data/x", by="value"))],
    "value-dict-key-unhashable": [
        ("value-invalid", site(member="data.json", pointer="/data/x/entries/0/0", by="value"))
    ],
    "value-dict-key-nan": [("value-invalid", site(member="data.json", pointer="/data/x/entries/0/0", by="value"))],
    "value-ndarray-both-forms": [("value-invalid", site(member="data.json", pointer="/data/x", by="exclusive"))],
    "value-ndarray-bad-dtype": [("value-invalid", site(member="data.json", pointer="/data/x/dtype", by="value"))],
    "value-class-bad-module": [("value-invalid", site(member="data.json", pointer="/data/x/module", by="value"))],
    "value-opaque-wrong-format": [("value-invalid", site(member="data.json", pointer="/data/x/format", by="value"))],
    "space-missing-member": [("value-invalid", site(member="data.json", pointer="/data/x", by="missing"))],
    "space-unknown-kind": [("value-invalid", site(member="data.json", pointer="/data/x/kind", by="value"))],
    "schedule-value-tagged": [("value-invalid", site(member="data.json", pointer="/data/x/value", by="value"))],
    "value-ndarray-base64-astral-characters": [
        ("value-invalid", site(member="data.json", pointer="/data/x/base64", by="value"))
    ],
    "decide-int-leading-zero-and-too-long": [
        ("value-invalid", site(member="data.json", pointer="/data/x/value", by="value"))
    ],
    "decide-empty-dict-tag": [("value-invalid", site(member="data.json", pointer="/data/x", by="value"))],
    "decide-discrete-dtype-not-a-code": [
        ("value-invalid", site(member="data.json", pointer="/data/x/dtype", by="value"))
    ],
    "decide-box-low-bytes": [("value-invalid", site(member="data.json", pointer="/data/x/low", by="value"))],
    "decide-box-low-unknown-tag": [("value-invalid", site(member="data.json", pointer="/data/x/low", by="value"))],
    "decide-piecewise-interpolation": [
        ("value-invalid", site(member="data.json", pointer="/data/x/interpolation", by="value"))
    ],
    "value-data-checked-before-optimizers": [
        ("value-invalid", site(member="data.json", pointer="/data/b/value", by="value"))
    ],
    "value-opaque-note-not-string": [("value-invalid", site(member="data.json", pointer="/data/v/note", by="value"))],
    "value-ndarray-shape-negative": [
        ("value-invalid", site(member="data.json", pointer="/data/v/shape/0", by="value"))
    ],
    "value-ndarray-shape-float": [("value-invalid", site(member="data.json", pointer="/data/v/shape/0", by="value"))],
    "value-ndarray-ref-extra-member": [
        ("value-invalid", site(member="data.json", pointer="/data/v/ref/x", by="value"))
    ],
    "space-discrete-n-float": [("value-invalid", site(member="data.json", pointer="/data/v/n", by="value"))],
    "space-dict-member-not-a-space": [
        ("value-invalid", site(member="data.json", pointer="/data/v/spaces/0/1", by="value"))
    ],
    "schedule-parameter-nan": [("value-invalid", site(member="data.json", pointer="/data/v/value", by="value"))],
    "schedule-piecewise-point-triple": [
        ("value-invalid", site(member="data.json", pointer="/data/v/points/0", by="value"))
    ],
    "location-value-extra-member": [
        ("value-invalid", site(member="data.json", pointer="/data/x/note", by="not-allowed"))
    ],
    "location-value-missing-member": [("value-invalid", site(member="data.json", pointer="/data/x", by="missing"))],
    "location-value-missing-and-extra-member": [
        ("value-invalid", site(member="data.json", pointer="/data/x", by="missing"))
    ],
    "location-ref-group-not-string": [
        ("value-invalid", site(member="data.json", pointer="/data/x/ref/group", by="value"))
    ],
    "location-ref-extra-member": [
        ("value-invalid", site(member="data.json", pointer="/data/x/ref/at", by="not-allowed"))
    ],
    "location-space-extra-member": [
        ("value-invalid", site(member="data.json", pointer="/data/x/seed", by="not-allowed"))
    ],
    # value-duplicate-key: the later key
    "value-dict-duplicate-int-float": [
        ("value-duplicate-key", site(member="data.json", pointer="/data/x/entries/1/0", by="later"))
    ],
    "value-dict-duplicate-bool-int": [
        ("value-duplicate-key", site(member="data.json", pointer="/data/x/entries/1/0", by="later"))
    ],
    "decide-key-int-equals-float": [
        ("value-duplicate-key", site(member="data.json", pointer="/data/x/entries/1/0", by="later"))
    ],
    "value-dict-duplicate-negative-zero": [
        ("value-duplicate-key", site(member="data.json", pointer="/data/v/entries/1/0", by="later"))
    ],
    "value-dict-duplicate-tuple": [
        ("value-duplicate-key", site(member="data.json", pointer="/data/v/entries/1/0", by="later"))
    ],
    # value-array-size: the `base64` member
    "array-size-mismatch": [("value-array-size", site(member="data.json", pointer="/data/x/base64", by="value"))],
    "scalar-size-mismatch": [("value-array-size", site(member="data.json", pointer="/data/x/base64", by="value"))],
    "vec-normalize-value-invalid": [
        (
            "value-array-size",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs/mean/base64",
                by="value",
            ),
        )
    ],
    # value-limit: the value whose size passes the limit
    "value-int-too-many-digits": [("value-limit", site(member="data.json", pointer="/data/x/value", by="limit"))],
    "value-ndarray-too-many-dims": [("value-limit", site(member="data.json", pointer="/data/x/shape", by="limit"))],
    "value-ndarray-inline-too-large": [("value-limit", site(member="data.json", pointer="/data/x/base64", by="limit"))],
    "decide-box-shape-33-dimensions": [("value-limit", site(member="data.json", pointer="/data/x/shape", by="limit"))],
    "value-ndarray-element-bytes": [("value-limit", site(member="data.json", pointer="/data/v/shape", by="limit"))],
    # space-invalid: by the document principles
    "space-discrete-n-zero": [("space-invalid", site(member="data.json", pointer="/data/x/n", by="value"))],
    "space-box-shape-mismatch": [("space-invalid", site(member="data.json", pointer="/data/x/low", by="value"))],
    "space-multi-discrete-nvec-zero": [("space-invalid", site(member="data.json", pointer="/data/x/nvec", by="value"))],
    "space-text-charset-unsorted": [("space-invalid", site(member="data.json", pointer="/data/x/charset", by="value"))],
    "space-dict-duplicate-key": [("space-invalid", site(member="data.json", pointer="/data/x/spaces/1/0", by="later"))],
    "decide-discrete-dtype-float-code": [
        ("space-invalid", site(member="data.json", pointer="/data/x/dtype", by="value"))
    ],
    "space-box-complex-dtype": [("space-invalid", site(member="data.json", pointer="/data/v/dtype", by="value"))],
    "space-box-low-dtype-differs": [("space-invalid", site(member="data.json", pointer="/data/v/low", by="value"))],
    "space-multi-discrete-shapes-differ": [
        ("space-invalid", site(member="data.json", pointer="/data/v/start", by="contradiction"))
    ],
    "space-multi-discrete-nvec-referenced": [
        ("space-invalid", site(member="data.json", pointer="/data/v/nvec", by="value"))
    ],
    "space-multi-binary-empty-shape": [("space-invalid", site(member="data.json", pointer="/data/v/n", by="value"))],
    "space-multi-binary-zero": [("space-invalid", site(member="data.json", pointer="/data/v/n", by="value"))],
    "space-text-charset-repeated": [("space-invalid", site(member="data.json", pointer="/data/v/charset", by="value"))],
    "space-text-lengths-reversed": [
        ("space-invalid", site(member="data.json", pointer="/data/v/max_length", by="value"))
    ],
    # schedule-invalid: by the document principles
    "schedule-linear-end-fraction-zero": [
        ("schedule-invalid", site(member="data.json", pointer="/data/x/end_fraction", by="value"))
    ],
    "schedule-piecewise-not-increasing": [
        ("schedule-invalid", site(member="data.json", pointer="/data/x/points/1/0", by="value"))
    ],
    "schedule-linear-end-fraction-above-one": [
        ("schedule-invalid", site(member="data.json", pointer="/data/v/end_fraction", by="value"))
    ],
    "schedule-piecewise-empty": [("schedule-invalid", site(member="data.json", pointer="/data/v/points", by="value"))],
    "schedule-piecewise-point-outside": [
        ("schedule-invalid", site(member="data.json", pointer="/data/v/points/1/0", by="value"))
    ],
    # st-truncated: the member's first byte
    "st-shorter-than-8-bytes": [
        (
            "st-truncated",
            site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")),
        )
    ],
    "st-header-past-member": [
        (
            "st-truncated",
            site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")),
        )
    ],
    # st-header-too-large: the member's first byte
    "st-header-too-large": [
        (
            "st-header-too-large",
            site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")),
        )
    ],
    # st-header: the member's first byte, and the entry when the rule is about one tensor
    "st-metadata": [
        (
            "st-header",
            site(
                member="tensors/policy.safetensors",
                pointer="/__metadata__",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-header-leading-space": [
        ("st-header", site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")))
    ],
    "st-header-newline-padding": [
        ("st-header", site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")))
    ],
    "st-entry-missing-offsets": [
        (
            "st-header",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-name-reserved": [
        (
            "st-header",
            site(
                member="tensors/policy.safetensors",
                pointer="/__x",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "decide-safetensors-shape-float-literal": [
        (
            "st-header",
            site(
                member="tensors/g.safetensors",
                pointer="/t",
                by="entry",
                offset=in_member("data", "tensors/g.safetensors"),
            ),
        )
    ],
    "decide-safetensors-offset-float-literal": [
        (
            "st-header",
            site(
                member="tensors/g.safetensors",
                pointer="/t",
                by="entry",
                offset=in_member("data", "tensors/g.safetensors"),
            ),
        )
    ],
    "location-st-entry-missing-member": [
        (
            "st-header",
            site(
                member="tensors/g.safetensors",
                pointer="/a~1b",
                by="entry",
                offset=in_member("data", "tensors/g.safetensors"),
            ),
        )
    ],
    # st-dtype: the member's first byte and the entry
    "st-dtype-unknown": [
        (
            "st-dtype",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-dtype-before-offsets": [
        (
            "st-dtype",
            site(
                member="tensors/g.safetensors",
                pointer="/b",
                by="entry",
                offset=in_member("data", "tensors/g.safetensors"),
            ),
        )
    ],
    # st-rank-limit: the member's first byte and the entry
    "st-too-many-dims": [
        (
            "st-rank-limit",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    # st-offsets: the member's first byte and the entry
    "st-offsets-reversed": [
        (
            "st-offsets",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-offsets-past-buffer": [
        (
            "st-offsets",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    # st-shape: the member's first byte and the entry
    "st-shape-mismatch": [
        (
            "st-shape",
            site(
                member="tensors/policy.safetensors",
                pointer="/w",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "decide-tensor-huge-shape": [
        (
            "st-shape",
            site(
                member="tensors/g.safetensors",
                pointer="/t",
                by="entry",
                offset=in_member("data", "tensors/g.safetensors"),
            ),
        )
    ],
    # st-hole: the member's first byte and the entry
    "st-hole": [
        (
            "st-hole",
            site(
                member="tensors/policy.safetensors",
                pointer="/b",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-hole-at-start": [
        (
            "st-hole",
            site(
                member="tensors/policy.safetensors",
                pointer="/a",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    # st-overlap: the member's first byte and the entry
    "st-overlap": [
        (
            "st-overlap",
            site(
                member="tensors/policy.safetensors",
                pointer="/b",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    # st-misaligned: the member's first byte and the entry
    "st-misaligned": [
        (
            "st-misaligned",
            site(
                member="tensors/policy.safetensors",
                pointer="/b",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    "st-misaligned-header": [
        (
            "st-misaligned",
            site(
                member="tensors/policy.safetensors",
                pointer="/a",
                by="entry",
                offset=in_member("data", "tensors/policy.safetensors"),
            ),
        )
    ],
    # st-trailing: the member's first byte
    "st-trailing-bytes": [
        (
            "st-trailing",
            site(member="tensors/policy.safetensors", offset=in_member("data", "tensors/policy.safetensors")),
        )
    ],
    "st-empty-group-trailing-byte": [
        ("st-trailing", site(member="tensors/g.safetensors", offset=in_member("data", "tensors/g.safetensors")))
    ],
    # st-bool-value: the entry and the tensor's first byte
    "bool-tensor-nonzero-byte": [
        (
            "st-bool-value",
            site(
                member="tensors/flags.safetensors",
                pointer="/m",
                by="entry",
                offset=in_member("tensor-data", "tensors/flags.safetensors", 64),
            ),
        )
    ],
    # ref-not-found: the `ref` member
    "ref-missing-group": [("ref-not-found", site(member="data.json", pointer="/data/x/ref", by="ref"))],
    "ref-missing-tensor": [("ref-not-found", site(member="data.json", pointer="/data/x/ref", by="ref"))],
    "vec-normalize-ref-not-found": [
        (
            "ref-not-found",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs/mean/ref",
                by="ref",
            ),
        )
    ],
    "policy-ref-not-found": [
        (
            "ref-not-found",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/2/weight/ref", by="ref"),
        )
    ],
    "training-ref-not-found": [
        (
            "ref-not-found",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/torch/ref", by="ref"),
        )
    ],
    "replay-buffer-ref-not-found": [
        (
            "ref-not-found",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/rewards/ref", by="ref"
            ),
        )
    ],
    # ref-mismatch: the `ndarray`
    "ref-dtype-mismatch": [("ref-mismatch", site(member="data.json", pointer="/data/x", by="ndarray"))],
    "ref-shape-mismatch": [("ref-mismatch", site(member="data.json", pointer="/data/x", by="ndarray"))],
    "decide-references-data-first": [("ref-mismatch", site(member="data.json", pointer="/data/y", by="ndarray"))],
    "policy-ref-mismatch": [
        (
            "ref-mismatch",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/2/weight", by="ndarray"),
        )
    ],
    # extension-members: the member at fault alone: the absent member, or another member under the extension's folder
    "vec-normalize-member-absent": [
        ("extension-members", site(member="extensions/RLA_vec_normalize/vec_normalize.json"))
    ],
    "vec-normalize-extra-member": [("extension-members", site(member="extensions/RLA_vec_normalize/notes.txt"))],
    "policy-member-absent": [("extension-members", site(member="extensions/RLA_policy/policy.json"))],
    "training-member-absent": [("extension-members", site(member="extensions/RLA_training/training.json"))],
    "training-extra-member": [("extension-members", site(member="extensions/RLA_training/notes.txt"))],
    "replay-buffer-member-absent": [
        ("extension-members", site(member="extensions/RLA_replay_buffer/replay_buffer.json"))
    ],
    "replay-buffer-extra-member": [("extension-members", site(member="extensions/RLA_replay_buffer/notes.txt"))],
    # extension-document: by the document principles
    "vec-normalize-top-level-key": [
        (
            "extension-document",
            site(member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/more", by="value"),
        )
    ],
    "vec-normalize-key-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize", by="value"),
        )
    ],
    "vec-normalize-key-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/shift", by="value"),
        )
    ],
    "vec-normalize-flag-not-bool": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/norm_obs", by="value"
            ),
        )
    ],
    "vec-normalize-float-is-string": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/clip_obs", by="value"
            ),
        )
    ],
    "vec-normalize-mean-not-f64": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/obs/mean", by="value"
            ),
        )
    ],
    "vec-normalize-mean-var-shapes": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs/var",
                by="contradiction",
            ),
        )
    ],
    "vec-normalize-stats-extra-key": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/obs/std", by="value"
            ),
        )
    ],
    "vec-normalize-ret-not-scalar": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/ret/mean", by="value"
            ),
        )
    ],
    "vec-normalize-obs-null-but-normalised": [
        (
            "extension-document",
            site(member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/obs", by="value"),
        )
    ],
    "vec-normalize-box-shape": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/obs/mean", by="value"
            ),
        )
    ],
    "vec-normalize-keys-order": [
        (
            "extension-document",
            site(member="extensions/RLA_vec_normalize/vec_normalize.json", pointer="/vec_normalize/obs", by="value"),
        )
    ],
    "vec-normalize-key-not-in-space": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs_keys/1",
                by="value",
            ),
        )
    ],
    "vec-normalize-dict-space-one-stats": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs_keys",
                by="contradiction",
            ),
        )
    ],
    "vec-normalize-keys-for-box": [
        (
            "extension-document",
            site(
                member="extensions/RLA_vec_normalize/vec_normalize.json",
                pointer="/vec_normalize/obs_keys",
                by="contradiction",
            ),
        )
    ],
    "policy-top-level-key": [
        ("extension-document", site(member="extensions/RLA_policy/policy.json", pointer="/version", by="not-allowed"))
    ],
    "policy-key-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/device", by="not-allowed"),
        )
    ],
    "policy-key-missing": [
        ("extension-document", site(member="extensions/RLA_policy/policy.json", pointer="/policy", by="missing"))
    ],
    "policy-normalize-images-not-bool": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/normalize_images", by="value"),
        )
    ],
    "policy-vec-normalize-without-statistics": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/vec_normalize", by="value"),
        )
    ],
    "policy-observation-space-tuple": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/observation_space/kind", by="value"),
        )
    ],
    "policy-op-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/op", by="value"),
        )
    ],
    "policy-parameter-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/2", by="missing"),
        )
    ],
    "policy-parameter-extra": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/0/stride", by="not-allowed"),
        )
    ],
    "policy-input-not-computed": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/in/0", by="element"),
        )
    ],
    "policy-output-twice": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/out", by="later"),
        )
    ],
    "policy-weight-not-f32": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/2/weight", by="value"),
        )
    ],
    "policy-linear-width": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/2/weight", by="contradiction"),
        )
    ],
    "policy-bias-size": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/0/bias", by="contradiction"),
        )
    ],
    "policy-conv2d-on-vector": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/0/in/0", by="element"),
        )
    ],
    "policy-activation-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/fn", by="value"),
        )
    ],
    "policy-activation-parameter": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/alpha", by="not-allowed"),
        )
    ],
    "policy-layer-norm-size": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/weight", by="contradiction"),
        )
    ],
    "policy-lstm-without-recurrent": [
        ("extension-document", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/0", by="value"))
    ],
    "policy-recurrent-without-lstm": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes", by="contradiction"),
        )
    ],
    "policy-lstm-weight-shape": [
        (
            "extension-document",
            site(
                member="extensions/RLA_policy/policy.json",
                pointer="/policy/nodes/0/layers/0/weight_ih",
                by="contradiction",
            ),
        )
    ],
    "policy-state-read-by-linear": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/in/0", by="element"),
        )
    ],
    "policy-head-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action/op", by="value"),
        )
    ],
    "policy-head-space-kind": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action", by="contradiction"),
        )
    ],
    "policy-head-width": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action/in", by="contradiction"),
        )
    ],
    "policy-multi-argmax-sizes": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action/sizes", by="contradiction"),
        )
    ],
    "policy-box-squash": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action/squash", by="value"),
        )
    ],
    "policy-observation-box-bf16": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/observation_space/dtype", by="value"),
        )
    ],
    "policy-box-head-f16": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/action", by="contradiction"),
        )
    ],
    "policy-vec-normalize-other-space": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/vec_normalize", by="contradiction"),
        )
    ],
    "training-key-missing": [
        ("extension-document", site(member="extensions/RLA_training/training.json", pointer="/training", by="missing"))
    ],
    "training-key-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/seed", by="value"),
        )
    ],
    "training-counters-key-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/counters", by="value"),
        )
    ],
    "training-counter-negative": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json", pointer="/training/counters/num_timesteps", by="value"
            ),
        )
    ],
    "training-counter-float": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/counters/n_updates", by="value"),
        )
    ],
    "training-progress-not-float": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/progress_remaining", by="value"),
        )
    ],
    "training-exploration-rate-bool": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/exploration_rate", by="value"),
        )
    ],
    "training-episode-starts-not-bool": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_episode_starts", by="value"),
        )
    ],
    "training-obs-environments": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_episode_starts", by="value"),
        )
    ],
    "training-obs-map-for-box": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_obs", by="value"),
        )
    ],
    "training-obs-scalar": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_obs", by="value"),
        )
    ],
    "training-window-maxlen-zero": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/episode_info/maxlen", by="value"),
        )
    ],
    "training-window-over-maxlen": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/episode_success/items", by="value"),
        )
    ],
    "training-window-info-not-map": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/episode_info/items/1", by="value"),
        )
    ],
    "training-window-success-not-bool": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json", pointer="/training/episode_success/items/0", by="value"
            ),
        )
    ],
    "training-noise-kind-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/action_noise/kind", by="value"),
        )
    ],
    "training-noise-key-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/action_noise/theta", by="value"),
        )
    ],
    "training-noise-sigma-shape": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/action_noise/sigma", by="value"),
        )
    ],
    "training-noise-dtype": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/action_noise/dtype", by="value"),
        )
    ],
    "training-noise-vectorized-nested": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json", pointer="/training/action_noise/base/kind", by="value"
            ),
        )
    ],
    "training-noise-vectorized-empty": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/action_noise/noises", by="value"),
        )
    ],
    "training-lstm-shapes": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/lstm_states/vf/1", by="element"),
        )
    ],
    "training-lstm-not-pair": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/lstm_states/pi", by="value"),
        )
    ],
    "training-torch-not-u8": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/torch", by="value"),
        )
    ],
    "training-cuda-not-list": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/torch_cuda", by="value"),
        )
    ],
    "training-numpy-key-shape": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/numpy/key", by="value"),
        )
    ],
    "training-numpy-pos-range": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/numpy/pos", by="value"),
        )
    ],
    "training-numpy-has-gauss-int": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json", pointer="/training/random/numpy/has_gauss", by="value"
            ),
        )
    ],
    "training-python-version": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/python/version", by="value"),
        )
    ],
    "training-python-state-shape": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/random/python/state", by="value"),
        )
    ],
    "training-generator-unknown": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json",
                pointer="/training/random/action_space/generator/bit_generator",
                by="value",
            ),
        )
    ],
    "training-generator-state-range": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json",
                pointer="/training/random/action_space/generator/state",
                by="value",
            ),
        )
    ],
    "training-generator-has-uint32": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json",
                pointer="/training/random/action_space/generator/has_uint32",
                by="value",
            ),
        )
    ],
    "training-subspace-null": [
        (
            "extension-document",
            site(
                member="extensions/RLA_training/training.json",
                pointer="/training/random/observation_space/spaces/0",
                by="value",
            ),
        )
    ],
    "training-obs-dict-keys": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_obs", by="value"),
        )
    ],
    "training-obs-array-for-dict": [
        (
            "extension-document",
            site(member="extensions/RLA_training/training.json", pointer="/training/last_obs", by="value"),
        )
    ],
    "training-top-level-key": [
        ("extension-document", site(member="extensions/RLA_training/training.json", pointer="/more", by="value"))
    ],
    "replay-buffer-key-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer", by="missing"),
        )
    ],
    "replay-buffer-key-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/size", by="value"),
        )
    ],
    "replay-buffer-class-unknown": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/class", by="value"),
        )
    ],
    "replay-buffer-size-zero": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/buffer_size",
                by="value",
            ),
        )
    ],
    "replay-buffer-n-envs-float": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/n_envs", by="value"),
        )
    ],
    "replay-buffer-pos-negative": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/pos", by="value"),
        )
    ],
    "replay-buffer-full-not-bool": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/full", by="value"),
        )
    ],
    "replay-buffer-space-not-space": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/action_space",
                by="value",
            ),
        )
    ],
    "replay-buffer-observations-list": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observations",
                by="value",
            ),
        )
    ],
    "replay-buffer-rewards-not-ndarray": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/rewards", by="value"
            ),
        )
    ],
    "replay-buffer-her-key-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/her", by="missing"),
        )
    ],
    "replay-buffer-her-strategy": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/goal_selection_strategy",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-infos-not-lists": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/infos/0",
                by="value",
            ),
        )
    ],
    "replay-buffer-n-steps-zero": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/n_step/n_steps",
                by="value",
            ),
        )
    ],
    "replay-buffer-gamma-string": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/n_step/gamma",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-for-plain": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/her", by="value"),
        )
    ],
    "replay-buffer-n-step-missing": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/n_step", by="value"),
        )
    ],
    "replay-buffer-dict-class-box-space": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observation_space",
                by="value",
            ),
        )
    ],
    "replay-buffer-observations-map-for-box": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observations",
                by="value",
            ),
        )
    ],
    "replay-buffer-optimize-dict": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/optimize_memory_usage",
                by="value",
            ),
        )
    ],
    "replay-buffer-optimize-and-timeouts": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/handle_timeout_termination",
                by="contradiction",
            ),
        )
    ],
    "replay-buffer-next-observations-null": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/next_observations",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-without-goals": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observation_space",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-infos-without-copy": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/her/infos", by="value"
            ),
        )
    ],
    "replay-buffer-space-tuple": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observation_space/kind",
                by="value",
            ),
        )
    ],
    "replay-buffer-action-multi-binary-array": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/action_space/n",
                by="value",
            ),
        )
    ],
    "replay-buffer-observations-shape": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observations",
                by="contradiction",
            ),
        )
    ],
    "replay-buffer-dict-keys-order": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observations",
                by="value",
            ),
        )
    ],
    "replay-buffer-actions-dim": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/actions",
                by="contradiction",
            ),
        )
    ],
    "replay-buffer-rewards-shape": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/rewards", by="value"
            ),
        )
    ],
    "replay-buffer-her-ep-start-shape": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/ep_start",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-infos-rows": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/her/infos", by="value"
            ),
        )
    ],
    "replay-buffer-pos-out-of-range": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/pos", by="value"),
        )
    ],
    "replay-buffer-observations-dtype": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observations",
                by="value",
            ),
        )
    ],
    "replay-buffer-actions-f64": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/actions", by="value"
            ),
        )
    ],
    "replay-buffer-dones-bool": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/replay_buffer/dones", by="value"),
        )
    ],
    "replay-buffer-her-ep-length-dtype": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/ep_length",
                by="value",
            ),
        )
    ],
    "replay-buffer-space-differs": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/observation_space",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-ep-start-range": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/ep_start",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-ep-length-range": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/ep_length",
                by="value",
            ),
        )
    ],
    "replay-buffer-her-current-ep-start-range": [
        (
            "extension-document",
            site(
                member="extensions/RLA_replay_buffer/replay_buffer.json",
                pointer="/replay_buffer/her/current_ep_start",
                by="value",
            ),
        )
    ],
    "replay-buffer-top-level-key": [
        (
            "extension-document",
            site(member="extensions/RLA_replay_buffer/replay_buffer.json", pointer="/more", by="value"),
        )
    ],
    "policy-prelu-weight-shape": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/weight", by="contradiction"),
        )
    ],
    "policy-softplus-beta-zero": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/beta", by="value"),
        )
    ],
    "policy-celu-alpha-zero": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/alpha", by="value"),
        )
    ],
    "policy-hardtanh-min-above-max": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/min_val", by="contradiction"),
        )
    ],
    "policy-parameter-not-finite": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/alpha", by="value"),
        )
    ],
    "policy-parameter-beyond-float32": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/negative_slope", by="value"),
        )
    ],
    "policy-eps-not-finite": [
        (
            "extension-document",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/1/eps", by="value"),
        )
    ],
    # extension-limit: the first item beyond a count limit, or the value passing a limit
    "policy-value-too-large": [
        (
            "extension-limit",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/observation_space/n", by="limit"),
        )
    ],
    "policy-operations-too-many": [
        ("extension-limit", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/255", by="limit"))
    ],
    "policy-zero-width-linear-chain": [
        ("extension-limit", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/255", by="limit"))
    ],
    "policy-node-cost": [
        ("extension-limit", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/65535", by="limit"))
    ],
    "policy-conv2d-padding-huge": [
        ("extension-limit", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/0", by="limit"))
    ],
    "policy-memory-too-much": [
        ("extension-limit", site(member="extensions/RLA_policy/policy.json", pointer="/policy/nodes/13", by="limit"))
    ],
    "policy-recurrent-state-too-large": [
        (
            "extension-limit",
            site(member="extensions/RLA_policy/policy.json", pointer="/policy/recurrent/hidden_size", by="limit"),
        )
    ],
}
