// Test-only: a large archive laid out as the reference writer lays it out
// (spec §12), built in one buffer of its final size. Each tensor is filled in
// place, so an archive of 100 MB costs 100 MB of memory and no copy (build.mjs's
// archive() copies every member once per layer). No ZIP64: every size and
// offset must fit in 32 bits.
import { createHash } from 'node:crypto';
import { crc32 } from '../../src/crc32.js';
import { DTYPE_SIZE, MIMETYPE, enc } from './build.mjs';

const alignmentOf = (dtype) => (dtype === 'C64' ? 4 : DTYPE_SIZE[dtype]);
const bytewise = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const ALIGN_EXTRA = 0xd935;
const MEMBER_ALIGN = 64;

/**
 * A safetensors member's layout: tensors sorted by decreasing alignment then
 * name, contiguous, the header padded with spaces so that 8 + N is a multiple of 64.
 */
function safetensorsLayout(tensors) {
  const names = Object.keys(tensors).sort(
    (a, b) => alignmentOf(tensors[b].dtype) - alignmentOf(tensors[a].dtype) || bytewise(a, b),
  );
  const header = {};
  const placed = [];
  let pos = 0;
  for (const name of names) {
    const { dtype, shape, fill } = tensors[name];
    const nbytes = shape.reduce((a, d) => a * d, 1) * DTYPE_SIZE[dtype];
    header[name] = { dtype, shape, data_offsets: [pos, pos + nbytes] };
    placed.push({ name, begin: pos, nbytes, fill });
    pos += nbytes;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((64 - ((8 + text.length) % 64)) % 64);
  const head = enc(text);
  return { head, placed, size: 8 + head.length + pos };
}

/**
 * The archive's bytes. opts: {data: object (data.json's value), groups: {group:
 * {name: {dtype, shape, fill(bytes)}}} where fill writes the tensor's element
 * bytes into `bytes` (a zeroed Uint8Array of exactly its size, aligned for its
 * dtype), extensions: {member name: JSON text}, extensionsUsed: [name],
 * producer: {name, version}}. Returns {bytes, tensors: {group: {name: {offset,
 * nbytes}}}}, `offset` a tensor's first byte in the file.
 */
export function layOut({
  data,
  groups = {},
  extensions = {},
  extensionsUsed = [],
  producer = { name: 'test', version: '0' },
}) {
  const members = [
    { name: 'mimetype', content: enc(MIMETYPE) },
    { name: 'data.json', content: enc(JSON.stringify(data)) },
  ];
  for (const g of Object.keys(groups).sort(bytewise)) {
    const st = safetensorsLayout(groups[g]);
    members.push({ name: `tensors/${g}.safetensors`, group: g, st, size: st.size, align: true });
  }
  for (const n of Object.keys(extensions).sort(bytewise)) members.push({ name: n, content: enc(extensions[n]) });
  const listed = members
    .slice(1)
    .map((m) => ({ name: m.name, size: m.size ?? m.content.length }))
    .sort((a, b) => bytewise(a.name, b.name));
  const manifestText = (sha) => {
    const m = {
      format: 'rlarchive',
      format_version: '1.0',
      producer,
      members: listed.map((e) => ({ name: e.name, size: e.size, sha256: sha(e.name) })),
    };
    if (extensionsUsed.length) m.extensions_used = extensionsUsed;
    return JSON.stringify(m);
  };
  const manifest = { name: 'manifest.json', content: enc(manifestText(() => '0'.repeat(64))) };
  members.push(manifest);

  // where everything goes
  let offset = 0;
  for (const m of members) {
    m.nameBytes = enc(m.name);
    m.size ??= m.content.length;
    let extraLength = 0;
    if (m.align) {
      const base = offset + 30 + m.nameBytes.length + 6;
      extraLength = 6 + ((MEMBER_ALIGN - (base % MEMBER_ALIGN)) % MEMBER_ALIGN);
    }
    m.headerOffset = offset;
    m.extraLength = extraLength;
    m.dataOffset = offset + 30 + m.nameBytes.length + extraLength;
    offset = m.dataOffset + m.size;
  }
  const cdOffset = offset;
  const cdSize = members.reduce((a, m) => a + 46 + m.nameBytes.length, 0);
  const total = cdOffset + cdSize + 22;
  if (total > 0xffffffff) throw new RangeError('layOut writes no ZIP64: the archive must stay under 4 GiB');

  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  const tensors = {};
  const digests = new Map();
  for (const m of members) {
    if (m === manifest) {
      m.content = enc(manifestText((name) => digests.get(name)));
      if (m.content.length !== m.size) throw new Error('the manifest changed size');
    }
    if (m.content) bytes.set(m.content, m.dataOffset);
    else {
      const { head, placed } = m.st;
      view.setBigUint64(m.dataOffset, BigInt(head.length), true);
      bytes.set(head, m.dataOffset + 8);
      const buffer = m.dataOffset + 8 + head.length;
      tensors[m.group] = {};
      for (const t of placed) {
        t.fill(bytes.subarray(buffer + t.begin, buffer + t.begin + t.nbytes));
        tensors[m.group][t.name] = { offset: buffer + t.begin, nbytes: t.nbytes };
      }
    }
    const own = bytes.subarray(m.dataOffset, m.dataOffset + m.size);
    m.crc = crc32(own);
    digests.set(m.name, createHash('sha256').update(own).digest('hex'));
  }

  // ZIP records (spec §12: every field fixed but sizes, CRC-32 and offsets)
  for (const m of members) {
    let p = m.headerOffset;
    view.setUint32(p, 0x04034b50, true);
    view.setUint16(p + 4, 20, true); // version needed
    view.setUint16(p + 10, 0, true); // time
    view.setUint16(p + 12, 0x21, true); // date
    view.setUint32(p + 14, m.crc, true);
    view.setUint32(p + 18, m.size, true);
    view.setUint32(p + 22, m.size, true);
    view.setUint16(p + 26, m.nameBytes.length, true);
    view.setUint16(p + 28, m.extraLength, true);
    bytes.set(m.nameBytes, p + 30);
    if (m.extraLength) {
      p += 30 + m.nameBytes.length;
      view.setUint16(p, ALIGN_EXTRA, true);
      view.setUint16(p + 2, m.extraLength - 4, true);
      view.setUint16(p + 4, MEMBER_ALIGN, true);
    }
  }
  let p = cdOffset;
  for (const m of members) {
    view.setUint32(p, 0x02014b50, true);
    view.setUint16(p + 4, 45, true); // version made by
    view.setUint16(p + 6, 20, true); // version needed
    view.setUint16(p + 14, 0x21, true);
    view.setUint32(p + 16, m.crc, true);
    view.setUint32(p + 20, m.size, true);
    view.setUint32(p + 24, m.size, true);
    view.setUint16(p + 28, m.nameBytes.length, true);
    view.setUint32(p + 42, m.headerOffset, true);
    bytes.set(m.nameBytes, p + 46);
    p += 46 + m.nameBytes.length;
  }
  view.setUint32(p, 0x06054b50, true);
  view.setUint16(p + 8, members.length, true);
  view.setUint16(p + 10, members.length, true);
  view.setUint32(p + 12, cdSize, true);
  view.setUint32(p + 16, cdOffset, true);
  return { bytes, tensors };
}
