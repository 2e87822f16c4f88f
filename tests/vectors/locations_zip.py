"""Where each vector of the ZIP container (spec §2) breaks its check: identification, the end records,
the central directory, member names, local headers and the layout."""

from __future__ import annotations

from sites import POLICY_TENSORS, after_member, central_record, directory_end, issue, local_header, record, start

SITES = {
    # identification: offset 0; member `mimetype` when the first member has that name
    "not-rlarchive-plain-zip": issue("identification", offset=start()),
    "not-rlarchive-empty-file": issue("identification", offset=start()),
    "not-rlarchive-wrong-media-type": issue("identification", offset=start()),
    "not-rlarchive-prepended-bytes": issue("identification", offset=start()),
    "not-rlarchive-mimetype-too-long": issue("identification", member="mimetype", offset=start()),
    "decide-mimetype-local-extra": issue("identification", offset=start()),
    # eocd-not-found: no location
    "zip-eocd-missing-truncated": issue("eocd-not-found"),
    # eocd-trailing-data: the last end record signature found in the searched tail; the end record itself when its comment length runs past the file's end
    "zip-trailing-bytes": issue("eocd-trailing-data", offset=record("eocd", 0)),
    "zip-eocd-comment": issue("eocd-trailing-data", offset=record("eocd", 0)),
    # eocd-multiple: the first byte after the central directory
    "zip-two-end-records": issue("eocd-multiple", offset=record("eocd", 0, anchor="after-directory")),
    # zip64-end-records: the record holding the field at fault: the EOCD (a field at its maximum without ZIP64, a field disagreeing with the ZIP64 record), the locator, or the ZIP64 end record (its signature, size)
    "zip64-bad-record-size": issue("zip64-end-records", offset=record("zip64-record", 0)),
    "zip64-max-count-without-locator": issue("zip64-end-records", offset=record("eocd", 0)),
    "zip64-max-disk-without-locator": issue("zip64-end-records", offset=record("eocd", 0)),
    # disk-numbers: the record holding the disk field or count at fault: the EOCD, the ZIP64 locator or the ZIP64 end record
    "zip-multi-disk": issue("disk-numbers", offset=record("eocd", 0)),
    "zip64-locator-other-disk": issue("disk-numbers", offset=record("zip64-locator", 0)),
    "zip64-entry-counts-differ-above-2-53": issue("disk-numbers", offset=record("zip64-record", 0)),
    # member-count-limit: the EOCD, or the ZIP64 end record when the EOCD's count holds its maximum
    "too-many-members": issue("member-count-limit", offset=record("eocd", 0)),
    # directory-bounds: the first byte of the central directory
    "zip-directory-past-region": issue("directory-bounds", offset=record("central-record", 0, anchor="directory")),
    # central-signature: the first byte of the record (or the first leftover byte when the records end before the directory does)
    "zip-bad-central-signature": issue("central-signature", offset=central_record("data.json")),
    "zip-entry-count-wrong": issue("central-signature", offset=record("central-record", -1)),
    # central-version-made-by: the central record
    "zip-made-by-host-atari-symlink": issue(
        "central-version-made-by", member="extensions/ACME_files/link", offset=record("central-record", 2)
    ),
    "zip-made-by-host-ntfs-directory": issue(
        "central-version-made-by", member="data.json", offset=record("central-record", 1)
    ),
    "zip-host-checked-before-version-needed": issue(
        "central-version-made-by", member="data.json", offset=record("central-record", 1)
    ),
    # central-version-needed: the central record
    "zip-version-needed-63": issue("central-version-needed", member="data.json", offset=record("central-record", 1)),
    # central-encrypted: the central record
    "zip-encrypted": issue("central-encrypted", member="data.json", offset=record("central-record", 1)),
    # central-data-descriptor: the central record
    "zip-data-descriptor": issue("central-data-descriptor", member="data.json", offset=record("central-record", 1)),
    # central-flags: the central record
    "zip-utf8-flag": issue("central-flags", member="data.json", offset=record("central-record", 1)),
    # central-method: the central record
    "zip-deflated": issue("central-method", member="data.json", offset=record("central-record", 1)),
    # central-disk: the central record
    "zip-member-on-other-disk": issue("central-disk", member="data.json", offset=record("central-record", 1)),
    # central-attributes: the central record
    "zip-attributes-unix-symlink": issue(
        "central-attributes", member="extensions/ACME_files/link", offset=record("central-record", 2)
    ),
    "zip-attributes-unix-directory": issue(
        "central-attributes", member="data.json", offset=record("central-record", 1)
    ),
    "zip-attributes-unix-setuid": issue(
        "central-attributes", member=POLICY_TENSORS, offset=record("central-record", 2)
    ),
    "zip-attributes-unix-device": issue(
        "central-attributes", member="extensions/ACME_files/dev", offset=record("central-record", 2)
    ),
    "zip-attributes-unix-not-owner-readable": issue(
        "central-attributes", member="data.json", offset=record("central-record", 1)
    ),
    "zip-attributes-dos-directory": issue("central-attributes", member="data.json", offset=record("central-record", 1)),
    "zip-attributes-dos-volume-label": issue(
        "central-attributes", member="data.json", offset=record("central-record", 1)
    ),
    "zip-attributes-dos-reparse-point": issue(
        "central-attributes", member="data.json", offset=record("central-record", 1)
    ),
    "zip-attributes-dos-with-unix-symlink-mode": issue(
        "central-attributes", member="extensions/ACME_files/link", offset=record("central-record", 2)
    ),
    # central-comment-sizes: the central record (a comment, sizes that differ)
    "zip-member-comment": issue("central-comment-sizes", member="data.json", offset=record("central-record", 1)),
    "zip-sizes-differ": issue("central-comment-sizes", member="data.json", offset=record("central-record", 1)),
    "zip64-sizes-differ-above-2-53": issue(
        "central-comment-sizes", member="data.json", offset=record("central-record", 1)
    ),
    # central-name: the central record
    "zip-name-dotdot": issue("central-name", member="extensions/../../evil", offset=record("central-record", 2)),
    "zip-name-absolute": issue("central-name", member="/etc/passwd", offset=record("central-record", 2)),
    "zip-name-backslash": issue(
        "central-name", member="tensors\\policy.safetensors", offset=record("central-record", 2)
    ),
    "zip-name-directory": issue("central-name", member="tensors/", offset=record("central-record", 2)),
    "zip-name-non-ascii": issue("central-name", member="données.json", offset=record("central-record", 2)),
    "zip-name-too-long": issue(
        "central-name",
        member="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        offset=record("central-record", 2),
    ),
    "zip-name-with-space": issue("central-name", member="extensions/ACME_x/a b", offset=record("central-record", 2)),
    # central-extra: the central record
    "zip-extra-unknown-id": issue("central-extra", member="data.json", offset=record("central-record", 1)),
    # central-zip64-extra: the central record
    "zip64-extra-without-max-field": issue(
        "central-zip64-extra", member="data.json", offset=record("central-record", 1)
    ),
    # names-duplicate: the later of the two records
    "zip-name-duplicate": issue("names-duplicate", member="data.json", offset=record("central-record", 2)),
    # names-case-collision: the later of the two records
    "zip-name-case-collision": issue("names-case-collision", member="DATA.json", offset=record("central-record", 2)),
    "zip-case-collision-before-directory-clash": issue(
        "names-case-collision", member="DATA.json", offset=record("central-record", 2)
    ),
    # names-directory-clash: the record whose name is a directory of another
    "zip-name-file-and-directory": issue(
        "names-directory-clash", member="extensions/ACME_files/d", offset=record("central-record", 2)
    ),
    "zip-name-file-and-directory-ignoring-case": issue(
        "names-directory-clash", member="extensions/ACME_files/D", offset=record("central-record", 2)
    ),
    # local-header: the first byte of the local header (where the central record says it is)
    "zip-local-signature": issue("local-header", member="data.json", offset=local_header("data.json")),
    "zip-member-past-end-then-bad-local-header": issue(
        "local-header", member="manifest.json", offset=local_header("manifest.json")
    ),
    "decide-second-end-record-after-local-headers": issue(
        "local-header", member="manifest.json", offset=local_header("manifest.json")
    ),
    # local-extra: the local header
    "zip-extra-truncated": issue("local-extra", member="data.json", offset=record("local-header", 1)),
    "zip-extra-padding-nonzero": issue("local-extra", member="data.json", offset=record("local-header", 1)),
    "decide-local-extra-into-directory": issue(
        "local-extra", member="manifest.json", offset=record("local-header", -1)
    ),
    # local-agreement: the local header
    "zip-local-name-differs": issue("local-agreement", member="data.json", offset=record("local-header", 1)),
    "zip-local-crc-differs": issue("local-agreement", member="data.json", offset=record("local-header", 1)),
    "decide-local-name-into-directory": issue(
        "local-agreement", member="manifest.json", offset=record("local-header", -1)
    ),
    # layout-overlap: the local header of the member that overlaps
    "zip-hidden-member-overlap": issue("layout-overlap", member="hidden", offset=record("local-header", 2)),
    "zip-member-runs-into-directory": issue(
        "layout-overlap", member="manifest.json", offset=record("local-header", -1)
    ),
    "zip-member-data-past-end-of-file": issue("layout-overlap", member="data.json", offset=record("local-header", 1)),
    # layout-gap: the first byte no record accounts for; no member
    "zip-gap-before-member": issue("layout-gap", offset=after_member("gap", "mimetype")),
    "zip-gap-before-directory": issue("layout-gap", offset=record("local-header", -1, anchor="gap")),
    "zip-gap-before-end-record": issue("layout-gap", offset=directory_end("gap")),
    # layout-required: the member alone
    "member-missing-data-json": issue("layout-required", member="data.json"),
    "member-missing-manifest": issue("layout-required", member="manifest.json"),
    # layout-unexpected: the member alone
    "member-unexpected-name": issue("layout-unexpected", member="notes.txt"),
    "member-unexpected-nested-tensor": issue("layout-unexpected", member="tensors/a/b.safetensors"),
    "member-unexpected-dot-group": issue("layout-unexpected", member="tensors/..safetensors"),
    "member-undeclared-extension": issue("layout-unexpected", member="extensions/ACME_x/a.bin"),
    "decide-extension-name-invalid": issue("layout-unexpected", member="extensions/bad-name/x.bin"),
    "member-unexpected-tensor-suffix": issue("layout-unexpected", member="tensors/a.bin"),
    "member-unexpected-empty-group-name": issue("layout-unexpected", member="tensors/.safetensors"),
    "member-unexpected-bare-extension": issue("layout-unexpected", member="extensions/x"),
}
