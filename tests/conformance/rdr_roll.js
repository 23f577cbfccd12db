// Roll each expression N times with rpg-dice-roller and print the totals as JSON.
// stdin: {"exprs": ["4d6kh3", ...], "n": 2000}; stdout: {"4d6kh3": [totals] | "error: ..."}.
// The module is loaded from the directory given as the first argument (a node_modules parent).
// Each expression's rolls come from a Mersenne Twister seeded from the expression's text, so a
// run is reproducible (the same totals every time, whatever the corpus' order).
const path = require('path');
const root = process.argv[2];
const rdr = require(path.join(root, 'node_modules', '@dice-roller', 'rpg-dice-roller'));

function seedOf(text) {  // FNV-1a over the UTF-16 code units, as a 32-bit unsigned integer
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { exprs, n } = JSON.parse(input);
  const out = {};
  for (const expr of exprs) {
    const { engines } = rdr.NumberGenerator;
    rdr.NumberGenerator.generator.engine = engines.MersenneTwister19937.seed(seedOf(expr));
    try {
      const totals = [];
      for (let i = 0; i < n; i += 1) totals.push(new rdr.DiceRoll(expr).total);
      out[expr] = totals;
    } catch (err) {
      out[expr] = `error: ${err.message}`;
    }
  }
  process.stdout.write(JSON.stringify(out));
});
