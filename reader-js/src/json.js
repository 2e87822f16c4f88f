// The strict JSON dialect of spec §6.
//
// parseJson() returns a tree of: null, booleans, strings, `bigint` for integer
// literals, `number` for float literals, Array for arrays and Map (insertion
// ordered) for objects. The int/float split follows the literal, because the
// value model (§7.2) depends on it.

import { fail } from './errors.js';
/** @typedef {import('./errors.js').ErrorCode} ErrorCode */
import { rawDepth } from './jsonbounds.js';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH, MAX_SAFE_INTEGER_BIG } from './limits.js';

export { rawDepth };

/**
 * A parsed JSON value (§6): null, a boolean, a string, a bigint (integer literal), a number (float
 * literal), an array or a Map (object, in document order). What a file holds is this until checked.
 * (Parsed with `integers: 'number'`: a number for an integer literal, a JsonFloat for a float literal.)
 * @typedef {null | boolean | string | bigint | number | JsonFloat | JsonValue[] | JsonObject} JsonValue
 */
/** @typedef {Map<string, JsonValue>} JsonObject A parsed JSON object. */
/** @typedef {'JSON_SYNTAX' | 'JSON_NAN_LITERAL'} GrammarCode */
/**
 * The first place (a character index, -1: none) of each problem the grammar does not stop at.
 * @typedef {{surrogate: number, duplicate: number, int: number, float: number}} Found
 */
/**
 * `integers: 'number'` (a safetensors header's): an integer literal as a number (exact: one beyond ±(2^53-1) is
 * JSON_INTEGER_RANGE) and a float literal as a JsonFloat, so that the two stay apart without a bigint per integer.
 * @typedef {{member?: string, offset?: number, maxBytes?: number, integers?: 'bigint' | 'number'}} ParseOptions
 */

/** A float literal parsed with `integers: 'number'`: its value, told apart from an integer literal's number. */
export class JsonFloat {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

class GrammarError {
  /**
   * @param {number} pos
   * @param {GrammarCode} code
   * @param {string} message
   */
  constructor(pos, code, message) {
    this.pos = pos;
    this.code = code;
    this.message = message;
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/**
 * @param {string} s
 * @returns {boolean}
 */
function wellFormed(s) {
  const str = /** @type {string & {isWellFormed?: () => boolean}} */ (s); // ES2024, not in every runtime
  return typeof str.isWellFormed === 'function' ? str.isWellFormed() : !LONE_SURROGATE.test(s);
}

/** @param {number} c */
function isDigit(c) {
  return c >= 0x30 && c <= 0x39;
}

/** @param {number} c */
function hexVal(c) {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/**
 * The RFC 8259 grammar over `s` (already known to be valid Unicode text), one
 * method per production, the position in `i`. Throws GrammarError at the first
 * grammar problem; collects the first place of each rule 6 to 9 problem in
 * `found`.
 */
class Grammar {
  /**
   * @param {string} s
   * @param {Found} found
   * @param {boolean} bigints integer literals as bigints (else as numbers, float literals as JsonFloat)
   */
  constructor(s, found, bigints = true) {
    this.s = s;
    this.n = s.length;
    this.i = 0;
    this.found = found;
    this.bigints = bigints;
    this.depth = 0; // the containers open at i
    /** @type {JsonValue[]} the values of the arrays open at i, the innermost's last, below `top` */
    this.stack = [];
    this.top = 0;
  }

  /** Skips whitespace. */
  ws() {
    const s = this.s;
    while (this.i < this.n) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  /**
   * A JSON_SYNTAX error at `pos` (by default the current position).
   * @param {string} msg
   */
  bad(msg, pos = this.i) {
    return new GrammarError(pos, 'JSON_SYNTAX', msg);
  }

  /** A string: s[i] is its opening quote. */
  string() {
    // s[i] is the opening quote
    const start = this.i;
    this.i++;
    let out = '';
    let segStart = this.i;
    let surrogateEscape = false;
    for (;;) {
      if (this.i >= this.n) throw this.bad('unterminated string');
      const c = this.s.charCodeAt(this.i);
      if (c === 0x22) {
        out += this.s.slice(segStart, this.i);
        this.i++;
        break;
      }
      if (c < 0x20) throw this.bad('control character in string');
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += this.s.slice(segStart, this.i);
      const e = this.s.charCodeAt(this.i + 1);
      switch (e) {
        case 0x22:
          out += '"';
          break;
        case 0x5c:
          out += '\\';
          break;
        case 0x2f:
          out += '/';
          break;
        case 0x62:
          out += '\b';
          break;
        case 0x66:
          out += '\f';
          break;
        case 0x6e:
          out += '\n';
          break;
        case 0x72:
          out += '\r';
          break;
        case 0x74:
          out += '\t';
          break;
        case 0x75: {
          let v = 0;
          for (let k = 2; k < 6; k++) {
            const h = this.i + k < this.n ? hexVal(this.s.charCodeAt(this.i + k)) : -1;
            if (h < 0) throw this.bad('invalid \\u escape', Math.min(this.i + k, this.n));
            v = v * 16 + h;
          }
          if (v >= 0xd800 && v <= 0xdfff) surrogateEscape = true;
          out += String.fromCharCode(v);
          this.i += 4;
          break;
        }
        default:
          throw this.bad('invalid escape', Math.min(this.i + 1, this.n));
      }
      this.i += 2;
      segStart = this.i;
    }
    if (surrogateEscape && this.found.surrogate < 0 && !wellFormed(out)) this.found.surrogate = start;
    return out;
  }

  /**
   * A number: an integer literal as a bigint, a float literal as a number (with `bigints` false: an integer
   * literal as a number, a float literal as a JsonFloat).
   * @returns {bigint | number | JsonFloat}
   */
  number() {
    const start = this.i;
    const negative = this.s.charCodeAt(this.i) === 0x2d;
    if (negative) this.i++;
    const c0 = this.s.charCodeAt(this.i);
    let whole = 0; // the integer part's value, exact while it has at most 15 digits
    if (c0 === 0x30) this.i++;
    else if (c0 >= 0x31 && c0 <= 0x39) {
      for (let c = c0; this.i < this.n && isDigit((c = this.s.charCodeAt(this.i))); this.i++)
        whole = whole * 10 + c - 0x30;
    } else throw this.bad('invalid number');
    let isFloat = false;
    if (this.s.charCodeAt(this.i) === 0x2e) {
      this.i++;
      if (!isDigit(this.s.charCodeAt(this.i))) throw this.bad('invalid number fraction');
      while (this.i < this.n && isDigit(this.s.charCodeAt(this.i))) this.i++;
      isFloat = true;
    }
    const ce = this.s.charCodeAt(this.i);
    if (ce === 0x65 || ce === 0x45) {
      this.i++;
      const cs = this.s.charCodeAt(this.i);
      if (cs === 0x2b || cs === 0x2d) this.i++;
      if (!isDigit(this.s.charCodeAt(this.i))) throw this.bad('invalid number exponent');
      while (this.i < this.n && isDigit(this.s.charCodeAt(this.i))) this.i++;
      isFloat = true;
    }
    const digits = negative ? this.i - start - 1 : this.i - start;
    if (!isFloat && digits <= 15) {
      // below 2^53: the value scanned, without the literal's text
      const v = negative ? -whole : whole;
      return this.bigints ? BigInt(v) : v + 0; // -0 as 0
    }
    const text = this.s.slice(start, this.i);
    if (isFloat) {
      const v = Number(text);
      if (!Number.isFinite(v) && this.found.float < 0) this.found.float = start;
      return this.bigints ? v : new JsonFloat(v);
    }
    if (digits > 16) {
      if (this.found.int < 0) this.found.int = start;
      return this.bigints ? 0n : 0;
    }
    if (!this.bigints) {
      const v = Number(text) + 0; // exact up to 2^53; a 16-digit literal beyond rounds to 2^53 or more; -0 as 0
      if ((v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER) && this.found.int < 0) this.found.int = start;
      return v;
    }
    const v = BigInt(text);
    if ((v > MAX_SAFE_INTEGER_BIG || v < -MAX_SAFE_INTEGER_BIG) && this.found.int < 0) this.found.int = start;
    return v;
  }

  /**
   * The literal `word` (true, false, null) at i, as `v`.
   * @param {string} word
   * @param {boolean | null} v
   */
  literal(word, v) {
    if (!this.s.startsWith(word, this.i)) {
      let k = 1;
      while (k < word.length && this.s.charCodeAt(this.i + k) === word.charCodeAt(k)) k++;
      throw this.bad('invalid literal', this.i + k);
    }
    this.i += word.length;
    return v;
  }

  /**
   * A value, after any whitespace.
   * @returns {JsonValue}
   */
  value() {
    this.ws();
    if (this.i >= this.n) throw this.bad('expected a value');
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 0x7b:
      case 0x5b: {
        // deeper than the limit: parseJson finds JSON_DEPTH on the whole text (rule 4 comes before the grammar)
        if (++this.depth > MAX_JSON_DEPTH) throw this.bad('nesting exceeds the limit');
        const v = c === 0x7b ? this.object() : this.array();
        this.depth--;
        return v;
      }
      case 0x22:
        return this.string();
      case 0x74:
        return this.literal('true', true);
      case 0x66:
        return this.literal('false', false);
      case 0x6e:
        return this.literal('null', null);
      default:
        if (isDigit(c)) return this.number(); // a digit begins none of the literals below
        if (
          this.s.startsWith('NaN', this.i) ||
          this.s.startsWith('Infinity', this.i) ||
          this.s.startsWith('-Infinity', this.i)
        ) {
          throw new GrammarError(this.i, 'JSON_NAN_LITERAL', 'NaN or Infinity literal');
        }
        if (c === 0x2d || isDigit(c)) return this.number();
        throw this.bad('expected a value');
    }
  }

  /**
   * An array: s[i] is its opening bracket.
   * @returns {JsonValue[]}
   */
  array() {
    this.i++;
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return [];
    }
    // the values go on the stack shared by the arrays open, then into an array of their number (one grown a
    // push at a time takes room for 16)
    const start = this.top;
    for (;;) {
      const v = this.value();
      this.stack[this.top++] = v;
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x2c) this.i++;
      else if (c === 0x5d) {
        this.i++;
        const out = this.stack.slice(start, this.top);
        this.top = start;
        return out;
      } else throw this.bad("expected ',' or ']'");
    }
  }

  /**
   * An object (a Map, the first of repeated keys kept): s[i] is its opening brace.
   * @returns {JsonObject}
   */
  object() {
    this.i++;
    /** @type {JsonObject} */
    const out = new Map();
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x22) throw this.bad('expected a property name');
      const keyPos = this.i;
      const key = this.string();
      // the first repeated key in document order (spec §11.2), before anything in its value
      const repeated = out.has(key);
      if (repeated && this.found.duplicate < 0) this.found.duplicate = keyPos;
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x3a) throw this.bad("expected ':'");
      this.i++;
      const v = this.value();
      if (!repeated) out.set(key, v);
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x2c) this.i++;
      else if (c === 0x7d) {
        this.i++;
        return out;
      } else throw this.bad("expected ',' or '}'");
    }
  }
}

/**
 * Parses `s` (already known to be valid Unicode text) with the RFC 8259
 * grammar. Throws GrammarError at the first grammar problem; collects the
 * first place of each rule 6 to 9 problem in `found`.
 * @param {string} s
 * @param {Found} found
 * @param {boolean} bigints
 * @returns {JsonValue}
 */
function parseGrammar(s, found, bigints) {
  const g = new Grammar(s, found, bigints);
  const result = g.value();
  g.ws();
  if (g.i < g.n) throw g.bad('extra data after the value');
  return result;
}

/**
 * The index of the first byte of `bytes` that does not begin or continue a
 * well-formed UTF-8 sequence (Unicode 15, table 3-7): the location of a
 * JSON_UTF8 error (spec §11.2). Called only on bytes that failed to decode.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
function firstIllFormed(bytes) {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let n,
      lo = 0x80,
      hi = 0xbf;
    if (b < 0x80) n = 0;
    else if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return bytes.length;
}

/**
 * Parses a JSON text (bytes) under the rules of spec §6, in their order.
 * Options: member and offset (file offset of bytes[0]) for error locations,
 * maxBytes (rule 1; Infinity to skip it, as for safetensors headers), integers (see ParseOptions).
 * @param {Uint8Array} bytes
 * @param {ParseOptions} [options]
 * @returns {JsonValue}
 */
export function parseJson(bytes, { member, offset, maxBytes = MAX_JSON_BYTES, integers = 'bigint' } = {}) {
  /** @type {(charPos: number | undefined, text: string) => number | undefined} */
  const at = (charPos, text) => {
    if (offset === undefined) return undefined;
    if (charPos === undefined) return offset;
    return offset + new TextEncoder().encode(text.slice(0, charPos)).length;
  };
  if (bytes.length > maxBytes) {
    throw fail('JSON_TOO_LARGE', `JSON text of ${bytes.length} bytes exceeds the limit of ${maxBytes}`, {
      member,
      offset,
    });
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw fail('JSON_BOM', 'JSON text begins with a byte order mark', { member, offset });
  }
  let text;
  try {
    text = decoder.decode(bytes);
  } catch {
    const bad = firstIllFormed(bytes);
    throw fail('JSON_UTF8', 'JSON text is not well-formed UTF-8', {
      member,
      offset: offset === undefined ? undefined : offset + bad,
    });
  }
  const found = { surrogate: -1, duplicate: -1, int: -1, float: -1 };
  let value;
  try {
    value = parseGrammar(text, found, integers === 'bigint');
  } catch (e) {
    /* c8 ignore next */
    if (!(e instanceof GrammarError)) throw e;
    // rule 4 before the grammar: the depth of the whole text, measured when the parse stops (a parse that
    // ends has met every bracket, none deeper than the limit)
    if (rawDepth(text) > MAX_JSON_DEPTH) {
      throw fail('JSON_DEPTH', `JSON nesting exceeds the limit of ${MAX_JSON_DEPTH}`, { member, offset });
    }
    throw fail(e.code, e.code === 'JSON_SYNTAX' ? `invalid JSON: ${e.message}` : 'JSON text holds NaN or Infinity', {
      member,
      offset: at(e.pos, text),
    });
  }
  /** @type {[keyof Found, ErrorCode, string][]} */
  const rules = [
    ['surrogate', 'JSON_UTF8', 'JSON string escapes a lone surrogate'],
    ['duplicate', 'JSON_DUPLICATE_KEY', 'JSON object has a key twice'],
    ['int', 'JSON_INTEGER_RANGE', 'integer literal outside ±(2^53-1)'],
    ['float', 'JSON_NUMBER_RANGE', 'float literal overflows binary64'],
  ];
  for (const [k, code, msg] of rules) {
    if (found[k] >= 0) throw fail(code, msg, { member, offset: at(found[k], text) });
  }
  return value;
}
