// The project's JSON Schemas, embedded in the package (schemas-embedded.js,
// generated from the repository's schemas/ by scripts/embed-schemas.mjs; a
// test fails when the copy is out of date). Nothing is read from disk, so what
// open() accepts never depends on files that happen to lie beside the package.

import embedded from './schemas-embedded.js';
import { addSchema } from './schema.js';

export const SCHEMA_FILES = [
  'manifest-1.0.schema.json',
  'data-1.0.schema.json',
  'dump-1.0.schema.json',
  'report-1.0.schema.json',
];

let registered = false;

/** All schemas, file name -> schema object. */
export async function loadSchemas() {
  if (!registered) {
    Object.values(embedded).forEach(addSchema);
    registered = true;
  }
  return { ...embedded };
}

/** One schema by file name, or null when the package has no such schema. */
export async function getSchema(name) {
  return Object.hasOwn(embedded, name) ? (await loadSchemas())[name] : null;
}
