// Test-only builders: a ZIP writer with knobs for breaking every rule, and an
// archive builder laid out like the reference writer (spec §12).
import { createHash } from 'node:crypto';
import { crc32 } from '../../src/crc32.js';

export const enc = (s) => (typeof s === 'string' ? new TextEncoder().encode(s) : s);
export const sha256 = (b) => createHash('sha256').update(b).digest('hex');
export const MIMETYPE = 'application/vnd.rlarchive+zip';

export function concat(parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

class W {
  constructor() {
    this.b = [];
  }
  u8(v) {
    this.b.push(v & 0xff);
    return this;
  }
  u16(v) {
    return this.u8(v).u8(v >>> 8);
  }
  u32(v) {
    return this.u16(v & 0xffff).u16(Math.floor(v / 0x10000));
  }
  u64(v) {
    return this.u32(v % 0x100000000).u32(Math.floor(v / 0x100000000));
  }
  bytes(a) {
    for (const x of a) this.b.push(x);
    return this;
  }
  get out() {
    return Uint8Array.from(this.b);
  }
}

/** An extra-field record. */
export function extraRecord(id, data) {
  return new W().u16(id).u16(data.length).bytes(data).out;
}
export function zip64Data(...values) {
  const w = new W();
  values.forEach((v) => w.u64(v));
  return w.out;
}

/**
 * Builds a ZIP. entries: [{name, data, align, localExtra, centralExtra,
 * flags, cflags, method, cmethod, crc, lcrc, version, lversion, time, date,
 * comment, diskStart, csize, usize, lcsize, lusize, localName, zip64,
 * offsetDelta}] or {raw: bytes} for stray bytes between members.
 * opts: {cdOrder, beforeCd, afterCd, zip64End, eocd: {...overrides}, comment,
 * trailing, locator: {...}, z64: {...}}.
 */
export function zip(entries, opts = {}) {
  const parts = [];
  let offset = 0;
  const recs = [];
  for (const e of entries) {
    if (e.raw) {
      parts.push(e.raw);
      offset += e.raw.length;
      continue;
    }
    const name = enc(e.name);
    const lname = e.localName !== undefined ? enc(e.localName) : name;
    const data = enc(e.data ?? '');
    const crc = e.crc ?? crc32(data);
    const z = e.zip64 ?? false; // true: ZIP64 in both headers
    let localExtra = e.localExtra ?? (z ? extraRecord(1, zip64Data(data.length, data.length)) : new Uint8Array(0));
    if (e.align) {
      const base = offset + 30 + lname.length + localExtra.length + 6;
      const pad = (e.align - (base % e.align)) % e.align;
      localExtra = concat([localExtra, extraRecord(0xd935, concat([new W().u16(e.align).out, new Uint8Array(pad)]))]);
    }
    const lsz = z ? 0xffffffff : data.length;
    const h = new W()
      .u32(0x04034b50)
      .u16(e.lversion ?? e.version ?? (z ? 45 : 20))
      .u16(e.lflags ?? e.flags ?? 0)
      .u16(e.lmethod ?? e.method ?? 0)
      .u16(e.ltime ?? e.time ?? 0)
      .u16(e.date ?? 0x21)
      .u32(e.lcrc ?? crc)
      .u32(e.lcsize ?? lsz)
      .u32(e.lusize ?? lsz)
      .u16(lname.length)
      .u16(localExtra.length)
      .bytes(lname)
      .bytes(localExtra).out;
    recs.push({ e, name, crc, size: data.length, offset: offset + (e.offsetDelta ?? 0), z });
    parts.push(h, data);
    offset += h.length + data.length;
  }
  if (opts.beforeCd) {
    parts.push(opts.beforeCd);
    offset += opts.beforeCd.length;
  }
  const cdOffset = offset;
  const order = opts.cdOrder ?? recs.map((_, i) => i);
  const cdParts = [];
  for (const i of order) {
    const { e, name, crc, size, offset: off, z } = recs[i];
    const cextra = e.centralExtra ?? (z ? extraRecord(1, zip64Data(size, size, off)) : new Uint8Array(0));
    const comment = enc(e.comment ?? '');
    cdParts.push(
      new W()
        .u32(e.csig ?? 0x02014b50)
        .u16(45)
        .u16(e.version ?? (z ? 45 : 20))
        .u16(e.cflags ?? e.flags ?? 0)
        .u16(e.cmethod ?? e.method ?? 0)
        .u16(e.time ?? 0)
        .u16(e.date ?? 0x21)
        .u32(crc)
        .u32(e.csize ?? (z ? 0xffffffff : size))
        .u32(e.usize ?? (z ? 0xffffffff : size))
        .u16(name.length)
        .u16(cextra.length)
        .u16(comment.length)
        .u16(e.diskStart ?? 0)
        .u16(0)
        .u32(0)
        .u32(e.localOffset ?? (z ? 0xffffffff : off))
        .bytes(name)
        .bytes(cextra)
        .bytes(comment).out,
    );
  }
  const cd = concat(cdParts);
  parts.push(cd);
  offset += cd.length;
  if (opts.afterCd) {
    parts.push(opts.afterCd);
    offset += opts.afterCd.length;
  }
  const n = order.length;
  const ev = { disk: 0, cdDisk: 0, entriesDisk: n, entries: n, cdSize: cd.length, cdOffset, ...(opts.eocd ?? {}) };
  if (opts.zip64End) {
    const z64At = offset;
    const zv = {
      size: 44,
      disk: 0,
      cdDisk: 0,
      entriesDisk: n,
      entries: n,
      cdSize: cd.length,
      cdOffset,
      sig: 0x06064b50,
      ...(opts.z64 ?? {}),
    };
    parts.push(
      new W()
        .u32(zv.sig)
        .u64(zv.size)
        .u16(45)
        .u16(45)
        .u32(zv.disk)
        .u32(zv.cdDisk)
        .u64(zv.entriesDisk)
        .u64(zv.entries)
        .u64(zv.cdSize)
        .u64(zv.cdOffset).out,
    );
    offset += 56;
    const lv = { disk: 0, offset: z64At, total: 1, ...(opts.locator ?? {}) };
    parts.push(new W().u32(0x07064b50).u32(lv.disk).u64(lv.offset).u32(lv.total).out);
    offset += 20;
    Object.assign(ev, {
      disk: 0xffff,
      cdDisk: 0xffff,
      entriesDisk: 0xffff,
      entries: 0xffff,
      cdSize: 0xffffffff,
      cdOffset: 0xffffffff,
      ...(opts.eocd ?? {}),
    });
  }
  const comment = enc(opts.comment ?? '');
  parts.push(
    new W()
      .u32(0x06054b50)
      .u16(ev.disk)
      .u16(ev.cdDisk)
      .u16(ev.entriesDisk)
      .u16(ev.entries)
      .u32(ev.cdSize)
      .u32(ev.cdOffset)
      .u16(comment.length)
      .bytes(comment).out,
  );
  if (opts.trailing) parts.push(opts.trailing);
  return concat(parts);
}

export const DTYPE_SIZE = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  U16: 2,
  I16: 2,
  U32: 4,
  I32: 4,
  U64: 8,
  I64: 8,
  F16: 2,
  BF16: 2,
  F32: 4,
  F64: 8,
  C64: 8,
  F8_E4M3: 1,
  F8_E5M2: 1,
  F8_E4M3FNUZ: 1,
  F8_E5M2FNUZ: 1,
  F8_E8M0: 1,
};
const ALIGN = (d) => (d === 'C64' ? 4 : (DTYPE_SIZE[d] ?? 1));

/**
 * A safetensors member. tensors: {name: {dtype, shape, data (Uint8Array)}}.
 * Laid out like the writer (decreasing alignment, then name; header padded so
 * 8 + N is a multiple of 64) unless `header` (a string) is given.
 */
export function safetensors(tensors, { header, pad = 'auto', buffer } = {}) {
  const names = Object.keys(tensors).sort(
    (a, b) => ALIGN(tensors[b].dtype) - ALIGN(tensors[a].dtype) || (a < b ? -1 : a > b ? 1 : 0),
  );
  let pos = 0;
  const parts = [];
  const h = {};
  for (const n of names) {
    const t = tensors[n];
    const data = t.data ?? new Uint8Array(t.shape.reduce((a, d) => a * d, 1) * DTYPE_SIZE[t.dtype]);
    h[n] = { dtype: t.dtype, shape: t.shape, data_offsets: t.offsets ?? [pos, pos + data.length] };
    parts.push(data);
    pos += data.length;
  }
  let text = header ?? JSON.stringify(h);
  if (pad === true || (pad && header === undefined)) text += ' '.repeat((64 - ((8 + text.length) % 64)) % 64);
  const hb = enc(text);
  return concat([new W().u64(hb.length).out, hb, buffer ?? concat(parts)]);
}

/**
 * A whole archive. opts: {data: string (data.json text) or object (JSON.stringify'd),
 * tensors: {group: member bytes or tensors object}, extensions: {name: bytes},
 * manifest: object | string | (m) => m, entry: {name: overrides for zip()},
 * zipOpts, order: (entries) => entries}.
 */
export function archive(opts = {}) {
  const dataText =
    typeof opts.data === 'string' || opts.data instanceof Uint8Array
      ? opts.data
      : JSON.stringify(opts.data ?? { data: {} });
  const members = [
    { name: 'mimetype', data: enc(opts.mimetype ?? MIMETYPE) },
    { name: 'data.json', data: enc(dataText) },
  ];
  for (const g of Object.keys(opts.tensors ?? {}).sort()) {
    const v = opts.tensors[g];
    members.push({ name: `tensors/${g}.safetensors`, data: v instanceof Uint8Array ? v : safetensors(v), align: 64 });
  }
  for (const n of Object.keys(opts.extensions ?? {}).sort()) members.push({ name: n, data: enc(opts.extensions[n]) });
  let m = {
    format: 'rlarchive',
    format_version: '1.0',
    producer: { name: 'test', version: '0' },
    members: members
      .slice(1)
      .map((x) => ({ name: x.name, size: x.data.length, sha256: sha256(x.data) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
  if (typeof opts.manifest === 'function') m = opts.manifest(m) ?? m;
  else if (opts.manifest !== undefined) m = opts.manifest;
  members.push({ name: 'manifest.json', data: enc(typeof m === 'string' ? m : JSON.stringify(m)) });
  let entries = members.map((x) => ({ ...x, ...(opts.entry?.[x.name] ?? {}) }));
  if (opts.order) entries = opts.order(entries);
  return zip(entries, opts.zipOpts ?? {});
}

/** Little-endian bytes of a typed array. */
export const bytesOf = (ta) => new Uint8Array(ta.buffer, ta.byteOffset, ta.byteLength).slice();
export const b64 = (bytes) => Buffer.from(bytes).toString('base64');
