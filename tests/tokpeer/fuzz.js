// Seeded random strings for the tokenizer peer test: each one glues fragments that stress a
// different part of the pipeline (whitespace runs, digits, contractions, scripts, combining
// marks, emoji sequences, literal special tokens, byte-fallback characters, characters at the
// edge of whitespace classification). Deterministic for a given seed, so a mismatch can be
// reproduced; the run prints the seed.
//
// usage: node fuzz.js SEED COUNT OUT_JSONL
'use strict';
const fs = require('fs');

const [seedArg, countArg, out] = process.argv.slice(2);
let state = (Number(seedArg) >>> 0) || 1;
function rand() {  // xorshift32
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];

const fragments = [
  ' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', '\r', ' \n', '\u00a0', '\u0085', '\ufeff', '\u200b',
  '\u2028', '\u3000', '\u2003', '\u000b', '\u000c',
  'the', 'The', ' world', 'Hello', 'HELLO', 'tokenizer', 'über', 'naïve', 'Straße', 'İstanbul',
  "'s", "'S", "'t", "'re", "'ve", "'M", "'ll", "'d", "'D", "'x", "'", '"', '`',
  '0', '7', '12', '123', '1234', '98765', '3.14', '1,000', '٣', '０', '²', 'Ⅻ',
  '.', ',', '!', '?', '...', '--', '->', '=>', '::', '{', '}', '(', ')', '[', ']', '<', '>', '/', '\\',
  '#', '@', '$', '%', '^', '&', '*', '_', '|', '~', '+', '-', '=', ';', ':',
  '你好', '世界', 'こんにちは', 'カタカナ', 'ｶﾀｶﾅ', '한국어', 'مرحبا', 'שלום', 'नमस्ते', 'สวัสดี', 'Привет', 'Γειά',
  'e\u0301', 'a\u0308', 'n\u0303', '\u0301', '\u0323\u0302', '\u1100\u1161\u11a8', 'ﬁ', '㎏',
  '\u{1F600}', '\u{1F44D}\u{1F3FD}', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}', '\u{1F1FA}\u{1F1F8}',
  '\u2764\ufe0f', '1\ufe0f\u20e3', '\u{1D518}', '\u{13000}', '\u{10348}', '\u{E0067}',
  '\u2581', '\u2581\u2581', '\u0120', '\u010a', '<0x41>', '\u0000', '\u0001', '\u007f',
  '<s>', '</s>', '<unk>', '[INST]', '[/INST]', '<|begin_of_text|>', '<|eot_id|>', '<|start_header_id|>',
  '<|end_header_id|>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>',
  '<tool_call>', '<bos>', '<eos>', '<start_of_turn>', '<end_of_turn>', '<b>', '</b>', '<td>', '<|im_',
  'http://', 'https://x.org/a?b=c', 'a@b.com', 'def ', 'return ', '    ', '\t\t', '```', '**', '- ',
  '<sw>', '<ls>', '<rs>', '<lrs>', 'caf\u00e9', 'cafe\u0301', 'and', ' and ', 'Hello', '_',  // variants.js
  'deadBEEF', '\u203f', '\u0903', '\u20dd', 'x\u0332',
  '\u1c89', '\u{105c0}\u{105c1}', '\u{2ebf0}', '\u{11f04}', '\u{10d40}\u{10d41}', '\u{1d2c0}',  // Unicode 15-16
];

// Characters on the edge of whitespace classification (Unicode White_Space for the reference's
// \s, Strip and lstrip/rstrip; PCRE2's own \s adds U+180E), and the word characters of
// single_word; drawn often so that every run mixes them with spaces, newlines and digits.
const separators = [
  '\u180e', '\u0085', '\ufeff', '\u2028', '\u2029', '\u200b', '\u00a0', '\u3000', '\u1680',
  '\u180d', '\u180f', '\u0084', '\u0086', '\u001c', '\u001f', '\u200a', '\u202f', '\u205f',
  '\u2060', '\u00ad', '\ufffd', '\ufffe', '\uffff', ' \u0301', '\n\u0300', '\u180e ', ' \u180e',
  '\u0085\n', ' \ufeff', '\u24b6', '\u{1F130}', '\u2160', '\u00b2',
];

const n = Number(countArg);
const lines = [];
for (let i = 0; i < n; ++i) {
  const len = 1 + Math.floor(rand() * 24);
  let text = '';
  for (let k = 0; k < len; ++k) {
    let f = rand() < 0.15 ? pick(separators) : pick(fragments);
    if (rand() < 0.1) f = f.repeat(2 + Math.floor(rand() * 6));
    text += f;
  }
  lines.push(JSON.stringify({ id: `fuzz_${seedArg}_${i}`, text }));
}
fs.writeFileSync(out, lines.join('\n') + '\n');
