// The reference's Unicode general categories: for each category name given, the code points
// that Hugging Face's `tokenizers` (its Oniguruma regex engine, Unicode 16) matches with \p{X},
// as JSON {X: [code points]}. A tokenizer.json whose Split pre-tokenizer isolates \p{X}
// pre-tokenizes every code point, each followed by U+0001 (in none of the letter, mark, number,
// punctuation or symbol categories). src/text/tokenizer_unicode.cpp's kUnicode16Additions is what
// these sets hold beyond PCRE2 10.42's (Unicode 14) \p{X}; regenerate it when either changes.
//
// usage: node categories.js NODE_MODULES L Lu Ll Lt Lm Lo M Mn Mc N Nd No P S ...
'use strict';
const path = require('path');
const { createRequire } = require('module');

const [modules, ...categories] = process.argv.slice(2);
if (!modules || categories.length === 0) {
  console.error('usage: node categories.js NODE_MODULES CATEGORY...');
  process.exit(2);
}
const { Tokenizer } = createRequire(path.join(path.resolve(modules), 'noop.js'))('tokenizers');
const out = {};
for (const category of categories) {
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: `\\p{${category}}` }, behavior: 'Isolated', invert: false },
    post_processor: null, decoder: null,
    model: { type: 'WordLevel', vocab: { '[UNK]': 0 }, unk_token: '[UNK]' },
  };
  const pre = Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
  const members = [];
  for (let start = 0; start < 0x110000; start += 2048) {
    let s = '';
    for (let cp = start; cp < start + 2048 && cp < 0x110000; ++cp) {
      if (cp < 0xd800 || cp > 0xdfff) s += String.fromCodePoint(cp) + '\u0001';
    }
    for (const [piece] of pre.preTokenizeString(s)) {
      if (!piece.includes('\u0001')) members.push(piece.codePointAt(0));
    }
  }
  out[category] = members;
}
console.log(JSON.stringify(out));
