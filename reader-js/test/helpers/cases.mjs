// Archives that each break one rule, with the code a reader must report.
// stage 'open': open() rejects; stage 'dump': open() succeeds and dump() rejects.
import { archive, zip, enc, concat, safetensors, extraRecord, zip64Data, bytesOf, b64, MIMETYPE, sha256 } from './build.mjs';

const f32 = (...v) => bytesOf(new Float32Array(v));
const POLICY = { policy: { w: { dtype: 'F32', shape: [2], data: f32(1, 2) } } };
const dataDoc = (value) => `{"data":{"v":${value}}}`;
const v = (value, extra = {}) => () => archive({ data: dataDoc(value), ...extra });
const stDoc = (header, buffer = new Uint8Array(0), opts = {}) => () => archive({ tensors: { g: safetensors({}, { header, buffer, ...opts }) } });
const ref = (group, name, dtype = 'F32', shape = [2]) => JSON.stringify({ $type: 'ndarray', dtype, shape, ref: { group, name } });
const nd = (dtype, shape, bytes) => JSON.stringify({ $type: 'ndarray', dtype, shape, base64: b64(bytes) });
const space = (o) => JSON.stringify({ $type: 'space', ...o });
const sched = (o) => JSON.stringify({ $type: 'schedule', ...o });
const I64 = (...x) => bytesOf(new BigInt64Array(x.map(BigInt)));
const box = (o = {}) => space({ kind: 'box', dtype: 'F32', shape: [2], low: JSON.parse(nd('F32', [2], f32(0, 0))), high: JSON.parse(nd('F32', [2], f32(1, 1))), ...o });
const mutate = (fn) => () => {
  const b = archive({ tensors: POLICY });
  fn(b);
  return b;
};
const replaceOnce = (bytes, from, to) => {
  const s = Buffer.from(bytes).toString('latin1');
  const i = s.indexOf(from);
  if (i < 0 || from.length !== to.length) throw new Error('replaceOnce');
  bytes.set(enc(to), i);
  return bytes;
};

export const CASES = [
  // §3 identification
  ['not-zip', () => enc('hello, this is not an archive at all'.repeat(3)), 'ARCHIVE_NOT_RLARCHIVE'],
  ['empty-file', () => new Uint8Array(0), 'ARCHIVE_NOT_RLARCHIVE'],
  ['short-file', () => archive().subarray(0, 60), 'ARCHIVE_NOT_RLARCHIVE'],
  ['wrong-mimetype', () => archive({ mimetype: 'application/vnd.rlarchive+zap' }), 'ARCHIVE_NOT_RLARCHIVE'],
  ['mimetype-too-long', () => archive({ mimetype: MIMETYPE + '\n' }), 'ARCHIVE_NOT_RLARCHIVE'],
  // §2.1 end records
  ['eocd-missing', () => archive().subarray(0, archive().length - 22), 'ZIP_EOCD_NOT_FOUND'],
  ['trailing-byte', () => archive({ zipOpts: { trailing: enc('x') } }), 'ZIP_TRAILING_DATA'],
  ['eocd-comment', () => archive({ zipOpts: { comment: 'hi' } }), 'ZIP_TRAILING_DATA'],
  ['second-eocd', () => archive({ zipOpts: { afterCd: concat([enc('PK\x05\x06'), new Uint8Array(18)]) } }), 'ZIP_MULTIPLE_EOCD'],
  ['gap-before-eocd', () => archive({ zipOpts: { afterCd: new Uint8Array(5) } }), 'ZIP_GAP'],
  ['disk-number', () => archive({ zipOpts: { eocd: { disk: 1 } } }), 'ZIP_MULTI_DISK'],
  ['disk-counts-differ', () => archive({ zipOpts: { eocd: { entriesDisk: 2 } } }), 'ZIP_MULTI_DISK'],
  ['eocd-max-without-zip64', () => archive({ zipOpts: { eocd: { cdOffset: 0xffffffff } } }), 'ZIP_ZIP64_INVALID'],
  ['eocd-max-disk-without-zip64', () => archive({ zipOpts: { eocd: { disk: 0xffff } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-record-size', () => archive({ zipOpts: { zip64End: true, z64: { size: 45 } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-record-signature', () => archive({ zipOpts: { zip64End: true, z64: { sig: 0x06064b51 } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-locator-disks', () => archive({ zipOpts: { zip64End: true, locator: { total: 2 } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-locator-offset', () => archive({ zipOpts: { zip64End: true, locator: { offset: 3 } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-eocd-disagrees', () => archive({ zipOpts: { zip64End: true, eocd: { entries: 2, entriesDisk: 2 } } }), 'ZIP_ZIP64_INVALID'],
  ['zip64-locator-disk', () => archive({ zipOpts: { zip64End: true, locator: { disk: 1 } } }), 'ZIP_MULTI_DISK'],
  ['cd-larger-than-records', () => archive({ zipOpts: { eocd: { cdSize: 3 * 329 + 1 } } }), 'ZIP_CD_INVALID'],
  ['zip64-disk', () => archive({ zipOpts: { zip64End: true, z64: { disk: 1 } } }), 'ZIP_MULTI_DISK'],
  ['too-many-members', () => archive({ zipOpts: { eocd: { entries: 4097, entriesDisk: 4097 } } }), 'LIMIT_EXCEEDED'],
  // §2.2 central directory
  ['cd-bad-signature', () => archive({ entry: { 'data.json': { csig: 0x02014b51 } } }), 'ZIP_CD_INVALID'],
  ['cd-comment', () => archive({ entry: { 'data.json': { comment: 'c' } } }), 'ZIP_CD_INVALID'],
  ['cd-sizes-differ', () => archive({ entry: { 'data.json': { csize: 1 } } }), 'ZIP_CD_INVALID'],
  ['cd-sizes-differ-after-name', () => archive({ extensions: { 'extensions/x/a b': 'abc' }, entry: { 'extensions/x/a b': { csize: 1 } } }), 'ZIP_NAME_INVALID'],
  ['cd-zip64-sizes-differ', () => archive({ entry: { 'data.json': { csize: 0xffffffff, usize: 0xffffffff, centralExtra: extraRecord(1, zip64Data(20, 21)) } } }), 'ZIP_CD_INVALID'],
  ['cd-count-too-high', () => archive({ zipOpts: { eocd: { entries: 5, entriesDisk: 5 } } }), 'ZIP_CD_INVALID'],
  ['encrypted', () => archive({ entry: { 'data.json': { flags: 1 } } }), 'ZIP_ENCRYPTED'],
  ['strong-encryption', () => archive({ entry: { 'data.json': { flags: 0x40 } } }), 'ZIP_ENCRYPTED'],
  ['data-descriptor', () => archive({ entry: { 'data.json': { flags: 8 } } }), 'ZIP_DATA_DESCRIPTOR'],
  ['utf8-flag', () => archive({ entry: { 'data.json': { flags: 0x800 } } }), 'ZIP_FLAGS'],
  ['deflated', () => archive({ entry: { 'data.json': { method: 8 } } }), 'ZIP_COMPRESSED'],
  ['disk-start', () => archive({ entry: { 'data.json': { diskStart: 1 } } }), 'ZIP_MULTI_DISK'],
  ['name-dotdot', () => archive({ extensions: { 'extensions/x/../y': 'a' } }), 'ZIP_NAME_INVALID'],
  ['name-absolute', () => archive({ extensions: { '/etc/passwd': 'a' } }), 'ZIP_NAME_INVALID'],
  ['name-directory', () => archive({ extensions: { 'extensions/x/': '' } }), 'ZIP_NAME_INVALID'],
  ['name-backslash', () => archive({ extensions: { 'extensions\\x': '' } }), 'ZIP_NAME_INVALID'],
  ['name-space', () => archive({ extensions: { 'extensions/x/a b': '' } }), 'ZIP_NAME_INVALID'],
  ['name-too-long', () => archive({ extensions: { ['extensions/x/' + 'a'.repeat(243)]: '' } }), 'ZIP_NAME_INVALID'],
  ['cd-extra-unknown', () => archive({ entry: { 'data.json': { centralExtra: extraRecord(0x5455, new Uint8Array(5)) } } }), 'ZIP_EXTRA_FIELD'],
  ['cd-extra-alignment', () => archive({ entry: { 'data.json': { centralExtra: extraRecord(0xd935, new Uint8Array(2)) } } }), 'ZIP_EXTRA_FIELD'],
  ['cd-extra-truncated', () => archive({ entry: { 'data.json': { centralExtra: new Uint8Array([1, 0, 8]) } } }), 'ZIP_EXTRA_FIELD'],
  ['cd-zip64-not-needed', () => archive({ entry: { 'data.json': { centralExtra: extraRecord(1, zip64Data(5)) } } }), 'ZIP_ZIP64_INVALID'],
  ['cd-zip64-missing', () => archive({ entry: { 'data.json': { csize: 0xffffffff, usize: 0xffffffff } } }), 'ZIP_ZIP64_INVALID'],
  ['duplicate-name', () => archive({ extensions: { 'extensions/x/a': '1' }, order: (e) => [...e.slice(0, -1), { ...e[1] }, e.at(-1)] }), 'ZIP_NAME_DUPLICATE'],
  ['case-collision', () => archive({ order: (e) => [...e.slice(0, -1), { ...e[1], name: 'Data.json' }, e.at(-1)] }), 'ZIP_NAME_CASE_COLLISION'],
  // §2.3 local headers and layout
  ['local-signature', () => archive({ entry: { 'data.json': { offsetDelta: 1 } } }), 'ZIP_LOCAL_HEADER_INVALID'],
  ['local-beyond-eof', () => archive({ entry: { 'data.json': { localOffset: 0x7fffffff } } }), 'ZIP_TRUNCATED'],
  ['local-crc', () => archive({ entry: { 'data.json': { lcrc: 1 } } }), 'ZIP_HEADER_MISMATCH'],
  ['local-time', () => archive({ entry: { 'data.json': { ltime: 1 } } }), 'ZIP_HEADER_MISMATCH'],
  ['local-name', () => archive({ entry: { 'data.json': { localName: 'data.jsoN' } } }), 'ZIP_HEADER_MISMATCH'],
  ['local-extra-unknown', () => archive({ entry: { 'data.json': { localExtra: extraRecord(0x7875, new Uint8Array(3)) } } }), 'ZIP_EXTRA_FIELD'],
  ['local-extra-duplicate', () => archive({ entry: { 'data.json': { localExtra: concat([extraRecord(0xd935, new Uint8Array(2)), extraRecord(0xd935, new Uint8Array(2))]) } } }), 'ZIP_EXTRA_FIELD'],
  ['local-padding-nonzero', () => archive({ entry: { 'data.json': { localExtra: extraRecord(0xd935, new Uint8Array([64, 0, 1])) } } }), 'ZIP_EXTRA_FIELD'],
  ['local-padding-short', () => archive({ entry: { 'data.json': { localExtra: extraRecord(0xd935, new Uint8Array([64])) } } }), 'ZIP_EXTRA_FIELD'],
  ['local-zip64-one-size', () => archive({ entry: { 'data.json': { lcsize: 0xffffffff } } }), 'ZIP_ZIP64_INVALID'],
  ['local-zip64-not-needed', () => archive({ entry: { 'data.json': { localExtra: extraRecord(1, zip64Data(29, 29)) } } }), 'ZIP_ZIP64_INVALID'],
  ['gap-between-members', () => archive({ order: (e) => [e[0], { raw: new Uint8Array(3) }, ...e.slice(1)] }), 'ZIP_GAP'],
  ['gap-before-cd', () => archive({ zipOpts: { beforeCd: new Uint8Array(4) } }), 'ZIP_GAP'],
  ['member-overlaps-cd', () => archive({ entry: { 'manifest.json': { csize: 0, usize: 0, lcsize: 0, lusize: 0 } } }), 'ZIP_GAP'],
  ['cd-order-differs', () => archive({ zipOpts: { cdOrder: [0, 2, 1] } }), 'ZIP_GAP'],
  // §4 layout
  ['no-manifest', () => zip([{ name: 'mimetype', data: MIMETYPE }, { name: 'data.json', data: '{"data":{}}' }]), 'MEMBER_REQUIRED_MISSING'],
  ['no-data', () => archive({ order: (e) => e.filter((x) => x.name !== 'data.json') }), 'MEMBER_REQUIRED_MISSING'],
  ['unexpected-member', () => archive({ extensions: { 'README.txt': 'hi' } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-tensor-dir', () => archive({ extensions: { 'tensors/a/b.safetensors': 'hi' } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-tensor-suffix', () => archive({ extensions: { 'tensors/a.bin': 'hi' } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-tensor-empty-group', () => archive({ extensions: { 'tensors/.safetensors': 'hi' } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-tensor-dot-group', () => archive({ tensors: { '.': { w: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } } } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-tensor-dotdot-group', () => archive({ tensors: { '..': { w: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } } } }), 'MEMBER_UNEXPECTED'],
  ['unexpected-extension-bare', () => archive({ extensions: { 'extensions/x': 'hi' } }), 'MEMBER_UNEXPECTED'],
  ['extension-not-used', () => archive({ extensions: { 'extensions/x/a': 'hi' } }), 'MEMBER_UNEXPECTED'],
  // §5 manifest
  ['manifest-crc', () => archive({ entry: { 'manifest.json': { crc: 7 } } }), 'ZIP_CRC_MISMATCH'],
  ['manifest-not-json', () => archive({ manifest: '{"format":' }), 'JSON_SYNTAX'],
  ['manifest-array', () => archive({ manifest: '[]' }), 'MANIFEST_INVALID'],
  ['manifest-format', () => archive({ manifest: (m) => ({ ...m, format: 'zip' }) }), 'MANIFEST_INVALID'],
  ['manifest-version-absent', () => archive({ manifest: (m) => { delete m.format_version; } }), 'MANIFEST_INVALID'],
  ['manifest-version-malformed', () => archive({ manifest: (m) => ({ ...m, format_version: '01.0' }) }), 'MANIFEST_INVALID'],
  ['manifest-version-number', () => archive({ manifest: (m) => ({ ...m, format_version: 1.0 }) }), 'MANIFEST_INVALID'],
  ['manifest-version-2', () => archive({ manifest: (m) => ({ ...m, format_version: '2.0', members: 'anything' }) }), 'VERSION_UNSUPPORTED'],
  ['manifest-producer-missing', () => archive({ manifest: (m) => { delete m.producer; } }), 'MANIFEST_INVALID'],
  ['manifest-producer-extra', () => archive({ manifest: (m) => { m.producer.x = '1'; } }), 'MANIFEST_INVALID'],
  ['manifest-size-negative', () => archive({ manifest: (m) => { m.members[0].size = -1; } }), 'MANIFEST_INVALID'],
  ['manifest-size-string', () => archive({ manifest: (m) => { m.members[0].size = '29'; } }), 'MANIFEST_INVALID'],
  ['manifest-sha-upper', () => archive({ manifest: (m) => { m.members[0].sha256 = m.members[0].sha256.toUpperCase(); } }), 'MANIFEST_INVALID'],
  ['manifest-entry-extra', () => archive({ manifest: (m) => { m.members[0].crc = 1; } }), 'MANIFEST_INVALID'],
  ['manifest-lists-mimetype', () => archive({ manifest: (m) => { m.members.push({ name: 'mimetype', size: 29, sha256: sha256(enc(MIMETYPE)) }); } }), 'MANIFEST_INVALID'],
  ['manifest-lists-itself', () => archive({ manifest: (m) => { m.members.push({ name: 'manifest.json', size: 1, sha256: '0'.repeat(64) }); } }), 'MANIFEST_INVALID'],
  ['manifest-duplicate-entry', () => archive({ manifest: (m) => { m.members.push(m.members[0]); } }), 'MANIFEST_INVALID'],
  ['manifest-metadata-number', () => archive({ manifest: (m) => ({ ...m, metadata: { a: 1 } }) }), 'MANIFEST_INVALID'],
  ['manifest-extension-name', () => archive({ manifest: (m) => ({ ...m, extensions_used: ['a-b'] }) }), 'MANIFEST_INVALID'],
  ['manifest-extensions-not-unique', () => archive({ manifest: (m) => ({ ...m, extensions_used: ['a', 'a'] }) }), 'MANIFEST_INVALID'],
  ['extension-required-not-used', () => archive({ manifest: (m) => ({ ...m, extensions_required: ['a'] }) }), 'EXTENSION_UNDECLARED'],
  ['extension-data-not-used', () => archive({ manifest: (m) => ({ ...m, extensions: { a: 1 } }) }), 'EXTENSION_UNDECLARED'],
  ['extension-required', () => archive({ manifest: (m) => ({ ...m, extensions_used: ['a'], extensions_required: ['a'] }) }), 'EXTENSION_UNSUPPORTED'],
  ['member-unlisted', () => archive({ tensors: POLICY, manifest: (m) => { m.members.pop(); } }), 'MEMBER_UNLISTED'],
  ['member-missing', () => archive({ manifest: (m) => { m.members.push({ name: 'tensors/x.safetensors', size: 8, sha256: '0'.repeat(64) }); } }), 'MEMBER_MISSING'],
  ['member-size', () => archive({ manifest: (m) => { m.members[0].size += 1; } }), 'MEMBER_SIZE_MISMATCH'],
  ['data-digest', () => archive({ manifest: (m) => { m.members[0].sha256 = '0'.repeat(64); } }), 'MEMBER_DIGEST_MISMATCH'],
  // §6 JSON (in data.json)
  ['data-crc', () => archive({ entry: { 'data.json': { crc: 5 } } }), 'ZIP_CRC_MISMATCH'],
  ['json-bom', () => archive({ data: '\ufeff{"data":{}}' }), 'JSON_BOM'],
  ['json-utf8-overlong', () => archive({ data: concat([enc('{"data":{"a":"'), new Uint8Array([0xc0, 0x80]), enc('"}}')]) }), 'JSON_UTF8'],
  ['json-utf8-surrogate', () => archive({ data: concat([enc('{"data":{"a":"'), new Uint8Array([0xed, 0xa0, 0x80]), enc('"}}')]) }), 'JSON_UTF8'],
  ['json-utf8-beyond', () => archive({ data: concat([enc('{"data":{"a":"'), new Uint8Array([0xf4, 0x90, 0x80, 0x80]), enc('"}}')]) }), 'JSON_UTF8'],
  ['json-lone-surrogate', v('"\\ud800"'), 'JSON_UTF8'],
  ['json-lone-low-surrogate', v('"\\udc00x"'), 'JSON_UTF8'],
  ['json-surrogate-pair-ok', v('"\\ud83d\\ude00"'), null],
  ['json-depth-65', () => archive({ data: `{"data":{"v":${'['.repeat(63)}${']'.repeat(63)}}}` }), 'JSON_DEPTH'],
  ['json-depth-64', () => archive({ data: `{"data":{"v":${'['.repeat(62)}${']'.repeat(62)}}}` }), null],
  ['json-depth-unbalanced', () => archive({ data: `{"data":{"v":${'['.repeat(70)}}}` }), 'JSON_DEPTH'],
  ['json-depth-in-string', () => archive({ data: `{"data":{"v":"${'['.repeat(70)}\\"${'{'.repeat(70)}"}}` }), null],
  ['json-trailing-comma', v('[1,]'), 'JSON_SYNTAX'],
  ['json-leading-zero', v('01'), 'JSON_SYNTAX'],
  ['json-bare-fraction', v('1.'), 'JSON_SYNTAX'],
  ['json-plus', v('+1'), 'JSON_SYNTAX'],
  ['json-single-quote', v("'a'"), 'JSON_SYNTAX'],
  ['json-control-char', v('"a\tb"'), 'JSON_SYNTAX'],
  ['json-bad-escape', v('"\\x41"'), 'JSON_SYNTAX'],
  ['json-extra-data', () => archive({ data: '{"data":{}} x' }), 'JSON_SYNTAX'],
  ['json-nan', v('NaN'), 'JSON_NAN_LITERAL'],
  ['json-infinity', v('Infinity'), 'JSON_NAN_LITERAL'],
  ['json-minus-infinity', v('[1,-Infinity]'), 'JSON_NAN_LITERAL'],
  ['json-syntax-before-nan', v('[1 2, NaN]'), 'JSON_SYNTAX'],
  ['json-duplicate-key', () => archive({ data: '{"data":{"a":1,"a":1}}' }), 'JSON_DUPLICATE_KEY'],
  ['json-duplicate-escaped-key', () => archive({ data: '{"data":{"a":1,"\\u0061":1}}' }), 'JSON_DUPLICATE_KEY'],
  ['json-integer-range', v('9007199254740992'), 'JSON_INTEGER_RANGE'],
  ['json-integer-max', v('[9007199254740991,-9007199254740991]'), null],
  ['json-integer-long', v('1' + '0'.repeat(400)), 'JSON_INTEGER_RANGE'],
  ['json-number-range', v('1e309'), 'JSON_NUMBER_RANGE'],
  ['json-underflow-ok', v('1e-400'), null],
  ['json-rule-order-dup-before-int', () => archive({ data: '{"data":{"a":9007199254740992,"a":1}}' }), 'JSON_DUPLICATE_KEY'],
  ['json-rule-order-surrogate-before-dup', () => archive({ data: '{"data":{"a":1,"a":"\\udc00"}}' }), 'JSON_UTF8'],
  ['json-rule-order-int-before-float', v('[1e999, 9007199254740993]'), 'JSON_INTEGER_RANGE'],
  // §7.1 data document
  ['data-array', () => archive({ data: '[]' }), 'DATA_INVALID'],
  ['data-missing', () => archive({ data: '{"optimizers":{}}' }), 'DATA_INVALID'],
  ['data-not-object', () => archive({ data: '{"data":[]}' }), 'DATA_INVALID'],
  ['optimizers-first', () => archive({ data: '{"optimizers":{"a":{"$type":"x"}},"data":{"b":{"$type":"int","value":"1"}}}' }), 'VALUE_INVALID'],
  ['optimizers-null', () => archive({ data: '{"data":{},"optimizers":null}' }), 'DATA_INVALID'],
  // §7.2-7.8 values
  ['tag-unknown', v('{"$type":"complex","re":1}'), 'VALUE_UNKNOWN_TYPE'],
  ['tag-not-string', v('{"$type":1}'), 'VALUE_UNKNOWN_TYPE'],
  ['tag-nested-unknown', v('[{"x":{"$type":"nope"}}]'), 'VALUE_UNKNOWN_TYPE'],
  ['float-bad-value', v('{"$type":"float","value":"NaN"}'), 'VALUE_INVALID'],
  ['float-extra-member', v('{"$type":"float","value":"nan","x":1}'), 'VALUE_INVALID'],
  ['int-fits', v('{"$type":"int","value":"12"}'), 'VALUE_INVALID'],
  ['int-leading-zero', v('{"$type":"int","value":"012345678901234567890"}'), 'VALUE_INVALID'],
  ['int-too-long', v(`{"$type":"int","value":"${'9'.repeat(4097)}"}`), 'LIMIT_EXCEEDED'],
  ['int-4096-digits', v(`{"$type":"int","value":"-${'9'.repeat(4096)}"}`), null],
  ['bytes-noncanonical', v('{"$type":"bytes","base64":"AR=="}'), 'VALUE_INVALID'],
  ['bytes-unpadded', v('{"$type":"bytes","base64":"AQ"}'), 'VALUE_INVALID'],
  ['bytes-whitespace', v('{"$type":"bytes","base64":"AQ== "}'), 'VALUE_INVALID'],
  ['bytes-urlsafe', v('{"$type":"bytes","base64":"-_8="}'), 'VALUE_INVALID'],
  ['tuple-not-array', v('{"$type":"tuple","items":{}}'), 'VALUE_INVALID'],
  ['dict-plain-keys', v('{"$type":"dict","entries":[["a",1]]}'), 'VALUE_INVALID'],
  ['dict-type-key-ok', v('{"$type":"dict","entries":[["$type",1]]}'), null],
  ['dict-entry-not-pair', v('{"$type":"dict","entries":[[1]]}'), 'VALUE_INVALID'],
  ['dict-unhashable-key', v('{"$type":"dict","entries":[[[1],1]]}'), 'VALUE_INVALID'],
  ['dict-nan-key', v('{"$type":"dict","entries":[[{"$type":"float","value":"nan"},1]]}'), 'VALUE_INVALID'],
  ['dict-dup-int-float', v('{"$type":"dict","entries":[[1,"a"],[1.0,"b"]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-dup-bool-int', v('{"$type":"dict","entries":[[false,"a"],[0,"b"]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-dup-negzero', v('{"$type":"dict","entries":[[0.0,"a"],[-0.0,"b"]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-dup-tuple', v('{"$type":"dict","entries":[[{"$type":"tuple","items":[1,"x"]},1],[{"$type":"tuple","items":[1.0,"x"]},2]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-dup-bigint-float', v('{"$type":"dict","entries":[[{"$type":"int","value":"1152921504606846976"},1],[1.152921504606847e18,2]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-distinct-keys', v('{"$type":"dict","entries":[[1,"a"],["1","b"],[{"$type":"bytes","base64":"MQ=="},"c"],[null,"d"],[1.5,"e"],[true,"f"]]}'), 'VALUE_DUPLICATE_KEY'],
  ['dict-distinct-keys-ok', v('{"$type":"dict","entries":[[1,"a"],["1","b"],[{"$type":"bytes","base64":"MQ=="},"c"],[null,"d"],[1.5,"e"],[{"$type":"float","value":"inf"},"f"]]}'), null],
  ['class-bad-module', v('{"$type":"class","module":"1torch","qualname":"X"}'), 'VALUE_INVALID'],
  ['class-ok', v('{"$type":"class","module":"torch.nn","qualname":"ReLU"}'), null],
  ['opaque-format', v('{"$type":"opaque","format":"json","base64":""}'), 'VALUE_INVALID'],
  ['opaque-note-number', v('{"$type":"opaque","format":"pickle","base64":"gAROLg==","note":1}'), 'VALUE_INVALID'],
  ['ndarray-both', v('{"$type":"ndarray","dtype":"U8","shape":[0],"base64":"","ref":{"group":"a","name":"b"}}'), 'VALUE_INVALID'],
  ['ndarray-dtype', v('{"$type":"ndarray","dtype":"F4","shape":[0],"base64":""}'), 'VALUE_INVALID'],
  ['ndarray-shape-negative', v('{"$type":"ndarray","dtype":"U8","shape":[-1],"base64":""}'), 'VALUE_INVALID'],
  ['ndarray-shape-float', v('{"$type":"ndarray","dtype":"U8","shape":[1.0],"base64":"AA=="}'), 'VALUE_INVALID'],
  ['ndarray-ndim', v(`{"$type":"ndarray","dtype":"U8","shape":[${Array(33).fill(1)}],"base64":"AA=="}`), 'LIMIT_EXCEEDED'],
  ['ndarray-element-bytes', v('{"$type":"ndarray","dtype":"U8","shape":[4503599627370496,4],"base64":""}'), 'LIMIT_EXCEEDED'],
  ['ndarray-size', v(nd('F32', [3], f32(1, 2))), 'ARRAY_SIZE_MISMATCH'],
  ['ndarray-inline-limit', v(nd('U8', [65537], new Uint8Array(65537))), 'LIMIT_EXCEEDED'],
  ['ndarray-inline-max', v(nd('U8', [65536], new Uint8Array(65536))), null],
  ['ndarray-ref-extra', v('{"$type":"ndarray","dtype":"U8","shape":[0],"ref":{"group":"a","name":"b","x":1}}'), 'VALUE_INVALID'],
  ['scalar-size', v('{"$type":"scalar","dtype":"F64","base64":"AAAAAA=="}'), 'ARRAY_SIZE_MISMATCH'],
  ['scalar-ok', v('{"$type":"scalar","dtype":"F16","base64":"ADw="}'), null],
  // §8 spaces
  ['space-unknown-kind', v(space({ kind: 'graph' })), 'VALUE_INVALID'],
  ['space-extra-member', v(space({ kind: 'discrete', n: 2, start: 0, dtype: 'I64', seed: 1 })), 'VALUE_INVALID'],
  ['space-discrete-n-float', v(space({ kind: 'discrete', n: 2.5, start: 0, dtype: 'I64' })), 'VALUE_INVALID'],
  ['space-discrete-n-zero', v(space({ kind: 'discrete', n: 0, start: 0, dtype: 'I64' })), 'SPACE_INVALID'],
  ['space-discrete-dtype', v(space({ kind: 'discrete', n: 2, start: 0, dtype: 'F32' })), 'SPACE_INVALID'],
  ['space-box-ok', v(box()), null],
  ['space-box-c64', v(box({ dtype: 'C64' })), 'SPACE_INVALID'],
  ['space-box-low-dtype', v(box({ low: JSON.parse(nd('F64', [2], bytesOf(new Float64Array([0, 0])))) })), 'SPACE_INVALID'],
  ['space-box-shape', v(box({ shape: [3] })), 'SPACE_INVALID'],
  ['space-box-low-not-array', v(box({ low: [0, 0] })), 'VALUE_INVALID'],
  ['space-md-nvec-zero', v(space({ kind: 'multi_discrete', dtype: 'I64', nvec: JSON.parse(nd('I64', [2], I64(2, 0))), start: JSON.parse(nd('I64', [2], I64(0, 0))) })), 'SPACE_INVALID'],
  ['space-md-ok', v(space({ kind: 'multi_discrete', dtype: 'I64', nvec: JSON.parse(nd('I64', [2], I64(2, 3))), start: JSON.parse(nd('I64', [2], I64(0, 0))) })), null],
  ['space-md-shapes', v(space({ kind: 'multi_discrete', dtype: 'I64', nvec: JSON.parse(nd('I64', [2], I64(2, 3))), start: JSON.parse(nd('I64', [1], I64(0))) })), 'SPACE_INVALID'],
  ['space-mb-empty', v(space({ kind: 'multi_binary', n: [] })), 'SPACE_INVALID'],
  ['space-mb-zero', v(space({ kind: 'multi_binary', n: 0 })), 'SPACE_INVALID'],
  ['space-dict-dup', v(space({ kind: 'dict', spaces: [['a', JSON.parse(space({ kind: 'multi_binary', n: 1 }))], ['a', JSON.parse(space({ kind: 'multi_binary', n: 1 }))]] })), 'SPACE_INVALID'],
  ['space-dict-not-space', v(space({ kind: 'dict', spaces: [['a', 1]] })), 'VALUE_INVALID'],
  ['space-tuple-nested-bad', v(space({ kind: 'tuple', spaces: [JSON.parse(space({ kind: 'multi_binary', n: 0 }))] })), 'SPACE_INVALID'],
  ['space-text-order', v(space({ kind: 'text', min_length: 0, max_length: 3, charset: 'ba' })), 'SPACE_INVALID'],
  ['space-text-repeat', v(space({ kind: 'text', min_length: 0, max_length: 3, charset: 'aa' })), 'SPACE_INVALID'],
  ['space-text-lengths', v(space({ kind: 'text', min_length: 4, max_length: 3, charset: 'a' })), 'SPACE_INVALID'],
  ['space-text-astral-ok', v(space({ kind: 'text', min_length: 0, max_length: 3, charset: 'a\uffff😀' })), null],
  // §9 schedules
  ['schedule-unknown', v(sched({ kind: 'cosine', value: 1 })), 'VALUE_INVALID'],
  ['schedule-param-string', v(sched({ kind: 'constant', value: '1' })), 'VALUE_INVALID'],
  ['schedule-param-nan', v(sched({ kind: 'constant', value: { $type: 'float', value: 'nan' } })), 'VALUE_INVALID'],
  ['schedule-param-bigint', v(sched({ kind: 'constant', value: { $type: 'int', value: '9007199254740993' } })), 'VALUE_INVALID'],
  ['schedule-end-fraction-zero', v(sched({ kind: 'linear', start: 1, end: 0, end_fraction: 0 })), 'SCHEDULE_INVALID'],
  ['schedule-end-fraction-big', v(sched({ kind: 'linear', start: 1, end: 0, end_fraction: 1.5 })), 'SCHEDULE_INVALID'],
  ['schedule-piecewise-empty', v(sched({ kind: 'piecewise', points: [], interpolation: 'linear' })), 'SCHEDULE_INVALID'],
  ['schedule-piecewise-order', v(sched({ kind: 'piecewise', points: [[0.5, 1], [0.5, 2]], interpolation: 'linear' })), 'SCHEDULE_INVALID'],
  ['schedule-piecewise-range', v(sched({ kind: 'piecewise', points: [[0, 1], [2, 2]], interpolation: 'step' })), 'SCHEDULE_INVALID'],
  ['schedule-piecewise-interp', v(sched({ kind: 'piecewise', points: [[0, 1]], interpolation: 'cubic' })), 'VALUE_INVALID'],
  ['schedule-piecewise-point', v(sched({ kind: 'piecewise', points: [[0, 1, 2]], interpolation: 'step' })), 'VALUE_INVALID'],
  // §7.6 references
  ['ref-group-missing', v(ref('nope', 'w'), { tensors: POLICY }), 'REF_NOT_FOUND'],
  ['ref-name-missing', v(ref('policy', 'nope'), { tensors: POLICY }), 'REF_NOT_FOUND'],
  ['ref-dtype', v(ref('policy', 'w', 'F64'), { tensors: POLICY }), 'REF_MISMATCH'],
  ['ref-shape', v(ref('policy', 'w', 'F32', [1, 2]), { tensors: POLICY }), 'REF_MISMATCH'],
  ['ref-ok', v(ref('policy', 'w'), { tensors: POLICY }), null],
  ['space-md-ref', v(space({ kind: 'multi_discrete', dtype: 'I64', nvec: JSON.parse(ref('arrays', 'n', 'I64', [2])), start: JSON.parse(nd('I64', [2], I64(0, 0))) }), { tensors: { arrays: { n: { dtype: 'I64', shape: [2], data: I64(1, 1) } } } }), 'SPACE_INVALID'],
  ['ref-before-value-error', () => archive({ data: `{"data":{"a":${ref('nope', 'x')},"b":{"$type":"nope"}}}` }), 'VALUE_UNKNOWN_TYPE'],
  ['tensor-error-before-ref', v(ref('nope', 'w'), { tensors: { g: safetensors({}, { header: '[]' }) } }), 'ST_HEADER_INVALID'],
  // §10 safetensors
  ['st-short', () => archive({ tensors: { g: new Uint8Array(5) } }), 'ST_TRUNCATED'],
  ['st-header-past-member', () => archive({ tensors: { g: concat([zip64Data(100), enc('{}')]) } }), 'ST_TRUNCATED'],
  ['st-header-too-large', () => archive({ tensors: { g: concat([zip64Data(16 * 1024 * 1024 + 1), enc('{}')]) } }), 'ST_HEADER_TOO_LARGE'],
  ['st-header-array', stDoc('[]'), 'ST_HEADER_INVALID'],
  ['st-header-leading-space', stDoc(' {}'), 'ST_HEADER_INVALID'],
  ['st-header-trailing-newline', stDoc('{}\n'), 'ST_HEADER_INVALID'],
  ['st-header-trailing-spaces-ok', stDoc('{}      '), null],
  ['st-header-json', stDoc('{"a":'), 'JSON_SYNTAX'],
  ['st-header-duplicate', stDoc('{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), 'JSON_DUPLICATE_KEY'],
  ['st-header-bom', stDoc('\ufeff{}'), 'JSON_BOM'],
  ['st-metadata', stDoc('{"__metadata__":{"a":"b"}}'), 'ST_HEADER_INVALID'],
  ['st-name-dunder', stDoc('{"__a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), 'ST_HEADER_INVALID'],
  ['st-name-empty', stDoc('{"":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), 'ST_HEADER_INVALID'],
  ['st-name-long', stDoc(`{"${'é'.repeat(128)}":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`), 'ST_HEADER_INVALID'],
  ['st-entry-missing', stDoc('{"a":{"dtype":"U8","shape":[0]}}'), 'ST_HEADER_INVALID'],
  ['st-entry-extra', stDoc('{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":1}}'), 'ST_HEADER_INVALID'],
  ['st-shape-negative', stDoc('{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}'), 'ST_HEADER_INVALID'],
  ['st-offsets-three', stDoc('{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0,0]}}'), 'ST_HEADER_INVALID'],
  ['st-dtype-unknown', stDoc('{"a":{"dtype":"F4","shape":[0],"data_offsets":[0,0]}}'), 'ST_DTYPE_UNKNOWN'],
  ['st-dtype-before-offsets', stDoc('{"a":{"dtype":"U8","shape":[0],"data_offsets":[9,0]},"b":{"dtype":"X","shape":[0],"data_offsets":[0,0]}}'), 'ST_DTYPE_UNKNOWN'],
  ['st-ndim', stDoc(`{"a":{"dtype":"U8","shape":[${Array(33).fill(1)}],"data_offsets":[0,1]}}`, new Uint8Array(1)), 'LIMIT_EXCEEDED'],
  ['st-offsets-reversed', stDoc('{"a":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}', new Uint8Array(1)), 'ST_OFFSETS_INVALID'],
  ['st-offsets-outside', stDoc('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', new Uint8Array(1)), 'ST_OFFSETS_INVALID'],
  ['st-shape-mismatch', stDoc('{"a":{"dtype":"U16","shape":[2],"data_offsets":[0,2]}}', new Uint8Array(2)), 'ST_SHAPE_MISMATCH'],
  ['st-hole', stDoc('{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', new Uint8Array(2)), 'ST_HOLE'],
  ['st-overlap', stDoc('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', new Uint8Array(2)), 'ST_OVERLAP'],
  ['st-trailing', stDoc('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', new Uint8Array(2)), 'ST_TRAILING_BYTES'],
  ['st-empty-group-trailing', stDoc('{}', new Uint8Array(1)), 'ST_TRAILING_BYTES'],
  ['st-empty-group-ok', stDoc('{}'), null],
  ['st-misaligned', stDoc('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F64","shape":[1],"data_offsets":[1,9]}}', new Uint8Array(9)), 'ST_MISALIGNED'],
  ['st-zero-size-tensors', stDoc('{"a":{"dtype":"F64","shape":[0,5],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}', undefined, { pad: true }), null],
  // deferred checks (§11.1 step 10)
  ['tensor-crc', () => archive({ tensors: POLICY, entry: { 'tensors/policy.safetensors': { crc: 3 } } }), 'ZIP_CRC_MISMATCH', 'dump'],
  ['tensor-digest', () => archive({ tensors: POLICY, manifest: (m) => { m.members[1].sha256 = 'f'.repeat(64); } }), 'MEMBER_DIGEST_MISMATCH', 'dump'],
  ['mimetype-crc', () => archive({ entry: { mimetype: { crc: 3 } } }), 'ZIP_CRC_MISMATCH', 'dump'],
  ['extension-member-digest', () => archive({ extensions: { 'extensions/ext_a/x.bin': 'abc' }, manifest: (m) => ({ ...m, extensions_used: ['ext_a'], members: m.members.map((e) => (e.name.startsWith('ext') ? { ...e, sha256: '0'.repeat(64) } : e)) }) }), 'MEMBER_DIGEST_MISMATCH', 'dump'],
  // valid archives with unusual but permitted features
  ['zip64-everywhere', () => archive({ tensors: POLICY, entry: { 'data.json': { zip64: true }, 'manifest.json': { zip64: true }, 'tensors/policy.safetensors': { zip64: true } }, zipOpts: { zip64End: true } }), null],
  ['minor-version-later', () => archive({ manifest: (m) => ({ ...m, format_version: '1.7', added_later: true }) }), null],
  ['extension-used-not-required', () => archive({ extensions: { 'extensions/ext_a/x.bin': 'abc' }, manifest: (m) => ({ ...m, extensions_used: ['ext_a'], extensions: { ext_a: { v: 1 } } }) }), null],
  ['unknown-data-property', () => archive({ data: '{"data":{},"extra":1}' }), null],
  ['manifest-size-float', () => archive({ manifest: (m) => JSON.stringify(m).replace(/"size":(\d+)/, '"size":$1.0') }), null],
];

// a few cases need byte surgery rather than builder options
CASES.push(
  ['cd-size-short', () => archive({ zipOpts: { eocd: { cdSize: archive().length - 22 - cdOffsetOf(archive()) - 1 } } }), 'ZIP_CD_INVALID'],
  ['cd-past-region', () => { const a = archive(); const dv = new DataView(a.buffer); dv.setUint32(a.length - 10, dv.getUint32(a.length - 10, true) + 10, true); return a; }, 'ZIP_TRUNCATED'],
  ['member-runs-into-cd', mutate((b) => {
    // grow manifest.json's recorded size in both headers so its data runs into the directory
    const dv = new DataView(b.buffer);
    const s = Buffer.from(b).toString('latin1');
    let i = -1;
    while ((i = s.indexOf('manifest.json', i + 1)) >= 0) {
      const sigLocal = dv.getUint32(i - 30, true) === 0x04034b50;
      const sigCentral = i >= 46 && dv.getUint32(i - 46, true) === 0x02014b50;
      if (sigLocal) { dv.setUint32(i - 12, dv.getUint32(i - 12, true) + 5, true); dv.setUint32(i - 8, dv.getUint32(i - 8, true) + 5, true); }
      if (sigCentral) { dv.setUint32(i - 26, dv.getUint32(i - 26, true) + 5, true); dv.setUint32(i - 22, dv.getUint32(i - 22, true) + 5, true); }
    }
  }), 'ZIP_OVERLAP'],
  ['json-utf8-invalid', () => archive({ data: concat([enc('{"data":{"a":"'), new Uint8Array([0xff]), enc('"}}')]) }), 'JSON_UTF8'],
  ['data-bytes-flipped', () => { const a = archive({ data: '{"data":{"a":1}}' }); return replaceOnce(a, '{"data":{"a":1}}', '{"data":{"a":2}}'); }, 'MEMBER_DIGEST_MISMATCH'],
);

function cdOffsetOf(a) {
  return new DataView(a.buffer, a.byteOffset).getUint32(a.length - 6, true);
}

/** Every case as {id, make, code, stage}; code null means the archive is valid. */
export function cases() {
  const seen = new Set();
  return CASES.map(([id, make, code, stage]) => {
    if (seen.has(id)) throw new Error(`duplicate case id ${id}`);
    seen.add(id);
    return { id, make, code, stage: stage ?? 'open' };
  });
}
