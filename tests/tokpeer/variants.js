// Variants of two real tokenizer.json files that exercise components the four genuine files do
// not use: added-token flags (lstrip, rstrip, single_word, normalized), Metaspace pre-tokenizer
// and decoder, GPT-2 ByteLevel with its own regex and a prefix space, Roberta/Bert processing,
// Split behaviours and inversion, more normalizers, subword prefix/suffix and unk fusing, no
// decoder. Both tokenizers read the same variant file.
//
// usage: node variants.js TINY_TOKENIZER_JSON MISTRAL_TOKENIZER_JSON OUT_DIR
// writes OUT_DIR/<variant>/tokenizer.json and prints one "<variant> <dir>" line per variant.
'use strict';
const fs = require('fs');
const path = require('path');

const [tinyFile, mistralFile, outDir] = process.argv.slice(2);
const tiny = JSON.parse(fs.readFileSync(tinyFile, 'utf8'));
const mistral = JSON.parse(fs.readFileSync(mistralFile, 'utf8'));
const clone = (x) => JSON.parse(JSON.stringify(x));

function added(base, list) {
  let id = Math.max(...Object.values(base.model.vocab), ...base.added_tokens.map((t) => t.id)) + 1;
  for (const t of list) {
    base.added_tokens.push({ id: id++, content: t.content, single_word: !!t.single_word, lstrip: !!t.lstrip,
      rstrip: !!t.rstrip, normalized: !!t.normalized, special: !!t.special });
  }
  return base;
}

const variants = {};

// Added-token flags; "café" and "Hello" are normalized tokens, matched after NFC.
variants['tiny-added-flags'] = added(clone(tiny), [
  { content: '<sw>', single_word: true, special: true },
  { content: '<ls>', lstrip: true, special: true },
  { content: '<rs>', rstrip: true },
  { content: '<lrs>', lstrip: true, rstrip: true, special: true },
  { content: 'caf\u00e9', normalized: true },
  { content: 'Hello', normalized: true },
  { content: 'and', single_word: true, normalized: true },
]);

// GPT-2 / RoBERTa style: ByteLevel does the split (its own regex) and adds a prefix space.
{
  const v = clone(tiny);
  v.normalizer = null;
  v.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  v.post_processor = { type: 'RobertaProcessing', sep: ['<|im_end|>', 511], cls: ['<|im_start|>', 510],
    trim_offsets: true, add_prefix_space: true };
  variants['tiny-gpt2'] = v;
}

// Split behaviours, inversion, string patterns, and a normalizer sequence.
{
  const v = clone(tiny);
  v.normalizer = { type: 'Sequence', normalizers: [
    { type: 'NFKD' }, { type: 'Strip', strip_left: true, strip_right: true },
    { type: 'Replace', pattern: { Regex: '[\\t ]{2,}' }, content: ' ' }, { type: 'NFKC' }] };
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\p{N}+' }, behavior: 'MergedWithPrevious', invert: false },
    { type: 'Split', pattern: { String: ',' }, behavior: 'MergedWithNext', invert: false },
    { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Contiguous', invert: false },
    { type: 'Split', pattern: { Regex: '\\p{P}' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: '[^\\n]+' }, behavior: 'Removed', invert: true },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] };
  v.post_processor = { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<|im_start|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '<|im_end|>', type_id: 0 } }],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<|im_start|>': { id: '<|im_start|>', ids: [510], tokens: ['<|im_start|>'] },
      '<|im_end|>': { id: '<|im_end|>', ids: [511], tokens: ['<|im_end|>'] } } };
  variants['tiny-splits'] = v;
}

// Regex classes whose meaning differs between Oniguruma and PCRE2: \w (marks, connector
// punctuation), \W, \s inside a negated class, \h (a hex digit in Oniguruma).
{
  const v = clone(tiny);
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\h{2,}|\\w+|[^\\s\\w]+' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: '\\W' }, behavior: 'MergedWithNext', invert: false },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] };
  variants['tiny-regex-classes'] = v;
}

// The newer Llama 2 / Mistral layout: no normalizer, Metaspace pre-tokenizer that prepends "▁"
// only at the start of the text and does not split.
{
  const v = clone(mistral);
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
  variants['mistral-metaspace-first'] = v;
}

// Metaspace that always prepends and splits, with the Metaspace decoder; a normalized added token.
{
  const v = clone(mistral);
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  v.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  variants['mistral-metaspace-always'] = added(v, [{ content: '[INST]', normalized: true },
    { content: ' world', normalized: true }]);
}

// A WordPiece-like BPE: "##" continuing-subword prefix, "</w>" end-of-word suffix, an unknown
// token (unfused and fused), whitespace removed by Split, no decoder (tokens joined by spaces).
for (const fuse of [false, true]) {
  const vocab = { '[UNK]': 0 };
  for (const c of 'abcdefghijklmnopqrstuvwxyz') {
    for (const t of [c, `##${c}`, `${c}</w>`, `##${c}</w>`]) vocab[t] = Object.keys(vocab).length;
  }
  const merges = [['t', '##h'], ['th', '##e</w>'], ['##i', '##n'], ['##in', '##g</w>'], ['a', '##n'],
    ['an', '##d</w>'], ['##e', '##r</w>'], ['th', '##e']];
  for (const [a, b] of merges) {
    const joined = a + b.slice(2);
    if (!(joined in vocab)) vocab[joined] = Object.keys(vocab).length;
  }
  variants[fuse ? 'affixes-fused-unk' : 'affixes-unk'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false,
      normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Removed', invert: false },
    post_processor: { type: 'BertProcessing', sep: ['[UNK]', 0], cls: ['[UNK]', 0] },
    decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: '##',
      end_of_word_suffix: '</w>', fuse_unk: fuse, byte_fallback: false, vocab,
      merges: merges.map(([a, b]) => `${a} ${b}`) },
  };
}

for (const [name, v] of Object.entries(variants)) {
  const dir = path.join(outDir, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(v));
  console.log(`${name} ${dir}`);
}
