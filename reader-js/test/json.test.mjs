// The strict JSON dialect (§6) and the canonical serialization (§13.3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonFloat, parseJson, rawDepth } from '../src/json.js';
import { canonicalJson, floatText, canonicalValue } from '../src/dump.js';
import { RlarchiveError } from '../src/errors.js';

const enc = (s) => new TextEncoder().encode(s);
const code = (s) => {
  try {
    parseJson(typeof s === 'string' ? enc(s) : s);
    return null;
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, String(e));
    return e.code;
  }
};

test('integer and float literals stay distinct', () => {
  const v = parseJson(enc('{"i":1,"f":1.0,"e":1e2,"z":-0,"nz":-0.0,"max":9007199254740991}'));
  assert.equal(v.get('i'), 1n);
  assert.equal(v.get('f'), 1);
  assert.equal(typeof v.get('f'), 'number');
  assert.equal(v.get('e'), 100);
  assert.equal(v.get('z'), 0n);
  assert.ok(Object.is(v.get('nz'), -0));
  assert.equal(v.get('max'), 9007199254740991n);
  assert.deepEqual([...v.keys()], ['i', 'f', 'e', 'z', 'nz', 'max']);
});

test('keys keep document order, including integer-like keys', () => {
  assert.deepEqual([...parseJson(enc('{"b":1,"2":2,"a":3,"1":4}')).keys()], ['b', '2', 'a', '1']);
});

test('each rule gives its code, in rule order', () => {
  const cases = [
    ['x'.repeat(10), 'JSON_SYNTAX'],
    ['\ufeff{}', 'JSON_BOM'],
    [new Uint8Array([0x22, 0xc3, 0x28, 0x22]), 'JSON_UTF8'],
    ['['.repeat(65) + ']'.repeat(65), 'JSON_DEPTH'],
    ['['.repeat(64) + ']'.repeat(64), null],
    ['"' + '['.repeat(100) + '"', null],
    ['"\\\\"' + '['.repeat(65), 'JSON_DEPTH'],
    ['["\\"' + '['.repeat(100) + '"]', null],
    ['[NaN]', 'JSON_NAN_LITERAL'],
    ['NaNx', 'JSON_NAN_LITERAL'],
    ['-Infinity', 'JSON_NAN_LITERAL'],
    ['-NaN', 'JSON_SYNTAX'],
    ['nan', 'JSON_SYNTAX'],
    ['{Infinity:1}', 'JSON_SYNTAX'],
    ['[1] NaN', 'JSON_SYNTAX'],
    ['"\\ud800"', 'JSON_UTF8'],
    ['"\\uDBFF\\uDFFF"', null],
    ['{"a":1,"a":2}', 'JSON_DUPLICATE_KEY'],
    ['{"a":{"b":1},"b":{"b":1}}', null],
    ['9007199254740992', 'JSON_INTEGER_RANGE'],
    ['-9007199254740992', 'JSON_INTEGER_RANGE'],
    ['12345678901234567890123', 'JSON_INTEGER_RANGE'],
    ['9007199254740992.0', null],
    ['1e308', null],
    ['1.8e308', 'JSON_NUMBER_RANGE'],
    ['-1e400', 'JSON_NUMBER_RANGE'],
    ['[1e400, "\\udc00"]', 'JSON_UTF8'],
    ['{"a":1e400,"a":1}', 'JSON_DUPLICATE_KEY'],
    ['', 'JSON_SYNTAX'],
    [' ', 'JSON_SYNTAX'],
    [' \t\r\n1 \n', null],
    ['\u00a01', 'JSON_SYNTAX'],
    ['"\u0000"', 'JSON_SYNTAX'],
    ['"\u007f"', null],
    ['"\\u00zz"', 'JSON_SYNTAX'],
    ['"\\/"', null],
    ['[1,2', 'JSON_SYNTAX'],
    ['{"a"}', 'JSON_SYNTAX'],
    ['{"a":1,}', 'JSON_SYNTAX'],
    ['tru', 'JSON_SYNTAX'],
    ['truex', 'JSON_SYNTAX'],
    ['1.5e', 'JSON_SYNTAX'],
    ['0x10', 'JSON_SYNTAX'],
    ['-', 'JSON_SYNTAX'],
  ];
  for (const [text, want] of cases) assert.equal(code(text), want, JSON.stringify(text));
});

/** The [code, offset] of the issue parseJson raises for `bytes`, the text starting at file offset 0. */
const where = (bytes) => {
  try {
    parseJson(typeof bytes === 'string' ? enc(bytes) : bytes, { offset: 0 });
    return null;
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, String(e));
    return [e.code, e.offset];
  }
};

/** The length of the longest prefix of `bytes` that decodes as well-formed UTF-8 (complete characters). */
const longestUtf8 = (bytes) => {
  const strict = new TextDecoder('utf-8', { fatal: true });
  for (let k = bytes.length; k >= 0; k--) {
    try {
      strict.decode(bytes.subarray(0, k));
      return k;
    } catch {
      // a shorter prefix
    }
  }
  return 0;
};

test('JSON_UTF8 is at the length of the longest well-formed prefix (§6 rule 3)', () => {
  const texts = [
    [0x22, 0x61, 0xed, 0xa0, 0x80, 0x22], // an encoded surrogate: at ED
    [0x22, 0x61, 0xe2, 0x82], // cut off by the end of the text: at E2
    [0x22, 0xc0, 0xaf, 0x22], // overlong: at C0
    [0x22, 0xff, 0x22],
    [0x22, 0xe2, 0x28, 0xa1, 0x22],
    [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], // above U+10FFFF: at F4
    [0x22, 0xf0, 0x9f, 0x98, 0x80, 0xf0, 0x9f, 0x22], // a complete 4-byte character, then a cut one
  ];
  for (const t of texts) {
    const bytes = new Uint8Array(t);
    assert.deepEqual(where(bytes), ['JSON_UTF8', longestUtf8(bytes)], Buffer.from(bytes).toString('hex'));
  }
});

test('a value position beginning with NaN, Infinity or -Infinity is JSON_NAN_LITERAL at its first byte (§6 rule 5)', () => {
  for (const lit of ['NaN', 'Infinity', '-Infinity']) {
    for (const after of ['', 'x', ']', '1', ' ']) {
      const text = `[1,${lit}${after}`;
      assert.deepEqual(where(text), ['JSON_NAN_LITERAL', 3], text);
    }
  }
  // a literal met before a later grammar error; a grammar error before a later literal
  assert.deepEqual(where('{"a":[1e999,NaN]}'), ['JSON_NAN_LITERAL', '{"a":[1e999,'.length]);
  assert.deepEqual(where('[1 NaN]'), ['JSON_SYNTAX', 3]);
  // not a value position, or not the literal: JSON_SYNTAX where no JSON text can go on
  assert.deepEqual(where('{NaN:1}'), ['JSON_SYNTAX', 1]);
  assert.deepEqual(where('[Nax]'), ['JSON_SYNTAX', 1]);
  assert.deepEqual(where('[-Inf]'), ['JSON_SYNTAX', 2]);
  assert.deepEqual(where('[Infinit]'), ['JSON_SYNTAX', 1]);
});

test('rules 6 to 9 go one after the other over the whole text, each at its first place (§6)', () => {
  const at = (text, token) => text.indexOf(token);
  let t = '{"a":1,"a":"\\ud800"}';
  assert.deepEqual(where(t), ['JSON_UTF8', at(t, '"\\ud800"')]);
  t = '[1e400,-9007199254740992]';
  assert.deepEqual(where(t), ['JSON_INTEGER_RANGE', at(t, '-9007')]);
  t = '{"a":{"b":1,"b":2},"a":3}';
  assert.deepEqual(where(t), ['JSON_DUPLICATE_KEY', at(t, '"b":2')]);
  t = '{"a":1,"a":2,}';
  assert.deepEqual(where(t), ['JSON_SYNTAX', at(t, ',}') + 1]);
  t = '[' + '['.repeat(64) + ']'.repeat(64) + ']';
  assert.deepEqual(where(t), ['JSON_DEPTH', 0]);
});

test('rule 4 before the grammar wherever the text stops: a nesting beyond the limit after a syntax error, a NaN, the value', () => {
  const deep = '['.repeat(65) + ']'.repeat(65);
  for (const t of [`[1,,${deep}]`, `[NaN,${deep}]`, `[1] ${deep}`, `{"a":1 ${deep}`, `"\\ud800" ${deep}`, `[${deep}`]) {
    assert.deepEqual(where(t), ['JSON_DEPTH', 0], t);
  }
  for (const t of ['[1,,' + '['.repeat(63), '[NaN,' + '['.repeat(63)]) assert.notEqual(where(t)[0], 'JSON_DEPTH', t);
  assert.deepEqual(parseJson(new TextEncoder().encode('{"a":' + '['.repeat(63) + ']'.repeat(63) + '}')).size, 1);
});

test('rawDepth follows rule 4 literally', () => {
  assert.equal(rawDepth('[[]]'), 2);
  assert.equal(rawDepth(']]][['), 0);
  assert.equal(rawDepth('"\\"[["'), 0);
  assert.equal(rawDepth('"\\\\"[['), 2);
});

// a small seeded generator
function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

test('differential: agrees with JSON.parse on the grammar', () => {
  const r = rng(42);
  const atoms = [
    '0',
    '1',
    '-1',
    '1.5',
    '1e5',
    '2E-3',
    '"a"',
    '"\\n"',
    '"é"',
    'true',
    'false',
    'null',
    '[',
    ']',
    '{',
    '}',
    ',',
    ':',
    ' ',
    '"k"',
    '01',
    '.',
    '-',
    'e',
    '"\\u0041"',
    '"',
    '\\',
    'NaN',
    '1e400',
    '9007199254740993',
  ];
  let checked = 0;
  for (let n = 0; n < 20000; n++) {
    let s = '';
    const len = 1 + Math.floor(r() * 12);
    for (let i = 0; i < len; i++) s += atoms[Math.floor(r() * atoms.length)];
    let native;
    try {
      native = { ok: true, v: JSON.parse(s) };
    } catch {
      native = { ok: false };
    }
    const c = code(s);
    if (c === null) {
      assert.ok(native.ok, `accepted what JSON.parse rejects: ${s}`);
      checked++;
    } else if (c === 'JSON_SYNTAX' || c === 'JSON_NAN_LITERAL') {
      assert.ok(!native.ok, `rejected (${c}) what JSON.parse accepts: ${s}`);
    } else if (c !== 'JSON_DEPTH') {
      assert.ok(native.ok, `${c} for what JSON.parse rejects: ${s}`);
    }
  }
  assert.ok(checked > 100);
});

test('ECMAScript number formatting of canonical floats', () => {
  const cases = [
    [0.1, '0.1'],
    [1, '1'],
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [1.5e-7, '1.5e-7'],
    [1e-6, '0.000001'],
    [-0, '-0'],
    [0, '0'],
    [NaN, 'nan'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [123456789012345680000, '123456789012345680000'],
    [0.30000000000000004, '0.30000000000000004'],
  ];
  for (const [x, s] of cases) assert.equal(floatText(x), s);
});

test('RFC 8785 serialization: key order by UTF-16 code units, escapes, numbers', () => {
  const m = new Map([
    ['b', 1n],
    ['a', [true, null, 'x']],
    ['\u20ac', 1],
    ['\ud83d\ude00', 2],
    ['\ufb33', 3],
    ['A', -0],
    ['', 1.5],
  ]);
  assert.equal(canonicalJson(m), '{"":1.5,"A":0,"a":[true,null,"x"],"b":1,"\u20ac":1,"\ud83d\ude00":2,"\ufb33":3}');
  assert.equal(
    canonicalJson('\u0000\u001f"\\/\u007f\u2028é\n\t\b\f\r'),
    '"\\u0000\\u001f\\"\\\\/\u007f\u2028é\\n\\t\\b\\f\\r"',
  );
  assert.equal(
    canonicalJson(canonicalValue(parseJson(enc('[1,1.0,-0.0,{"x":2.5e-8}]')))),
    '[1,{"$type":"float","value":"1"},{"$type":"float","value":"-0"},{"x":{"$type":"float","value":"2.5e-8"}}]',
  );
});

test('integer literals of every length up to 16 digits: the bigint (or, with integers: number, the number) of their text', () => {
  const texts = ['0', '-0', '7', '-7', '10', '999999999999999', '-999999999999999', '1000000000000000'];
  for (let n = 1; n <= 16; n++) texts.push('9'.repeat(Math.min(n, 15)), '-' + '1'.repeat(n), String(10 ** (n - 1) + 3));
  texts.push('9007199254740991', '-9007199254740991');
  for (const t of texts) {
    assert.deepEqual(parseJson(enc(`[${t}]`)), [BigInt(t)], t);
    assert.ok(Object.is(parseJson(enc(`[${t}]`), { integers: 'number' })[0], Number(t) + 0), t);
  }
  for (const t of ['9007199254740992', '-9999999999999999', '12345678901234567']) {
    assert.equal(where(`[${t}]`)[0], 'JSON_INTEGER_RANGE', t);
    assert.throws(() => parseJson(enc(`[${t}]`), { integers: 'number' }), { code: 'JSON_INTEGER_RANGE' });
  }
  const [f] = parseJson(enc('[1.0]'), { integers: 'number' });
  assert.ok(f instanceof JsonFloat && f.value === 1);
});
