"""Where each vector breaks its check: case id -> [(check id of spec/checks.json, site)], one per issue of its report.

The generator derives each case's expected issues from these and the table
(tests/vectors/sites.py) and stops when the reference validator reports
anything else. Grouped by check, in the order of spec/checks.json, one module
per part of the format: the ZIP container, the JSON documents, the tensor
groups and the extensions.
"""

from __future__ import annotations

import locations_documents
import locations_extensions
import locations_tensors
import locations_zip

SITES = {**locations_zip.SITES, **locations_documents.SITES, **locations_tensors.SITES, **locations_extensions.SITES}
