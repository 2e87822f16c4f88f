// What to do with a file that is not an rlarchive but a Stable-Baselines
// model (a plain zip): the command line's advice (python/rlarchive/cli.py,
// `_conversion_hint`), in the same words. The zip's member names are read
// from its central directory (the end record in the last 64 KiB + 22 bytes);
// they are only compared with the names SB3 and SB2 write, never used.

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const MAX_TAIL = 65535 + 22;
const MAX_NAMES = 4096;

/**
 * The member names of a zip file, or null when it is not one this reads
 * (no end record, a ZIP64 directory, a directory larger than 16 MiB).
 * @param {{size: number, read(offset: number, length: number): Promise<Uint8Array>}} source
 * @returns {Promise<string[]|null>}
 */
export async function zipMemberNames(source) {
  const tailLength = Math.min(source.size, MAX_TAIL);
  if (tailLength < 22) return null;
  const tail = await source.read(source.size - tailLength, tailLength);
  const tv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tv.getUint32(i, true) === EOCD) {
      at = i;
      break;
    }
  }
  if (at < 0) return null;
  const count = tv.getUint16(at + 10, true);
  const size = tv.getUint32(at + 12, true);
  const offset = tv.getUint32(at + 16, true);
  if (count === 0xffff || offset === 0xffffffff || size > 16 * 1024 * 1024 || offset + size > source.size) return null;
  const dir = await source.read(offset, size);
  const dv = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
  const names = [];
  const utf8 = new TextDecoder('utf-8', { fatal: false });
  for (let p = 0; names.length < Math.min(count, MAX_NAMES) && p + 46 <= dir.length; ) {
    if (dv.getUint32(p, true) !== CENTRAL) return null;
    const n = dv.getUint16(p + 28, true),
      extra = dv.getUint16(p + 30, true),
      comment = dv.getUint16(p + 32, true);
    if (p + 46 + n > dir.length) return null;
    names.push(utf8.decode(dir.subarray(p + 46, p + 46 + n)));
    p += 46 + n + extra + comment;
  }
  return names;
}

/**
 * The command line's advice for a Stable-Baselines model given where an
 * rlarchive was expected (the same words as `rlarchive`'s error line), or ''.
 * @param {string[]|null} names the zip's member names
 * @param {string} label the file's name, as the command names it
 * @returns {string}
 */
export function conversionHint(names, label) {
  if (!names?.includes('data')) return '';
  const shown = label; // as the command line shows it: the name as given (the page puts it in as text)
  if (names.some((n) => n.endsWith('.pth')))
    return `this is a Stable-Baselines3 model: convert it with: rlarchive import-sb3 ${shown} OUT.rlarchive`;
  if (names.includes('parameters') && names.includes('parameter_list'))
    return `this is a Stable-Baselines (SB2) model: convert it with: rlarchive import-sb2 ${shown} OUT.rlarchive`;
  return '';
}
