// Format version, producer, metadata, extensions and members of an archive.

import { SUPPORTED_EXTENSIONS } from '../../src/index.js';
import { h, fill, keyValueTable } from '../dom.js';
import { formatBytes } from '../format.js';

/**
 * Shows the manifest's facts: format version, producer, extensions, members, and the metadata table.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 * @param {{label: string, size: number}} file
 */
export function renderOverview(el, archive, file) {
  const { producer, metadata } = archive;
  const ext = archive.extensionsUsed;
  /** @type {Array<[string, import('../dom.js').Child]>} */
  const rows = [
    ['file', file.label],
    ['size', `${formatBytes(file.size)} (${file.size} bytes)`],
    ['format version', h('span', { id: 'format-version' }, archive.formatVersion)],
    ['producer', h('span', { id: 'producer' }, `${producer.name} ${producer.version}`)],
    [
      'extensions',
      ext.length
        ? ext.map((x, i) => [
            i ? ', ' : '',
            h('code', null, x),
            SUPPORTED_EXTENSIONS.includes(x) ? '' : ' (not supported by this reader)',
          ])
        : 'none',
    ],
    [
      'members',
      h(
        'div',
        null,
        `${archive.memberNames.length}:`,
        h(
          'ul',
          { class: 'members' },
          archive.memberNames.map((m) => h('li', null, h('code', null, m))),
        ),
      ),
    ],
  ];
  const meta = Object.entries(metadata);
  fill(
    el,
    keyValueTable(rows),
    h('h3', null, 'Metadata'),
    meta.length ? keyValueTable(meta, 'kv metadata') : h('p', { class: 'muted' }, 'No metadata.'),
  );
}
