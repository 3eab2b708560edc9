// Compares `abliterate tokenize` with the reference for one tokenizer file: identical ids with
// and without special tokens, and decoding of our ids identical to the reference's decoding of
// the same ids (which also covers "decodes back to the original text where the reference does").
// Prints one summary line and the first mismatches; exits 1 on any difference.
//
// usage: node compare.js NAME CASES REF OURS_PLAIN OURS_SPECIAL REFDEC_PLAIN REFDEC_SPECIAL
'use strict';
const fs = require('fs');

function readJsonl(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
}

const [name, casesFile, refFile, plainFile, specialFile, refDecPlainFile, refDecSpecialFile] =
  process.argv.slice(2);
const cases = readJsonl(casesFile);
const ref = readJsonl(refFile);
const ours = { plain: readJsonl(plainFile), special: readJsonl(specialFile) };
const refDec = { plain: readJsonl(refDecPlainFile), special: readJsonl(refDecSpecialFile) };
const n = cases.length;
for (const [what, rows] of [['reference', ref], ['ours (plain)', ours.plain], ['ours (special)', ours.special],
  ['reference decode (plain)', refDec.plain], ['reference decode (special)', refDec.special]]) {
  if (rows.length !== n) {
    console.log(`${name}: ${what} has ${rows.length} lines for ${n} cases`);
    process.exit(1);
  }
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const show = (s) => JSON.stringify(s.length > 160 ? s.slice(0, 160) + '...' : s);
const mismatches = [];
const identical = { plain: 0, special: 0 };
let decodeSame = 0;
let restored = 0;
for (let i = 0; i < n; ++i) {
  const c = cases[i];
  for (const mode of ['plain', 'special']) {
    const refIds = mode === 'plain' ? ref[i].ids_plain : ref[i].ids_special;
    const ourIds = ours[mode][i].ids;
    if (same(refIds, ourIds)) {
      identical[mode]++;
    } else {
      mismatches.push(`  [${c.id}] special=${mode === 'special' ? 'on' : 'off'} text=${show(c.text)}\n` +
        `      reference: ${JSON.stringify(refIds)}\n      ours:      ${JSON.stringify(ourIds)}`);
    }
    const ourText = ours[mode][i].decoded;
    const refText = refDec[mode][i].decoded;
    if (ourText === refText) {
      decodeSame++;
    } else {
      mismatches.push(`  [${c.id}] decode special=${mode === 'special' ? 'on' : 'off'} of ${JSON.stringify(ourIds)}\n` +
        `      reference: ${show(refText)}\n      ours:      ${show(ourText)}`);
    }
    if (mode === 'plain' && refText === c.text && ourText === c.text) restored++;
  }
}
console.log(`${name}: ${identical.plain}/${n} identical ids (special=off), ${identical.special}/${n} (special=on), ` +
  `decode round trips ${decodeSame}/${2 * n} (text restored exactly in ${restored}/${n})`);
if (mismatches.length) {
  console.log(`${name}: ${mismatches.length} mismatches, first ones:`);
  for (const m of mismatches.slice(0, 8)) console.log(m);
  process.exit(1);
}
