// Roll each expression N times with rpg-dice-roller and print the totals as JSON.
// stdin: {"exprs": ["4d6kh3", ...], "n": 2000}; stdout: {"4d6kh3": [totals] | "error: ..."}.
// The module is loaded from the directory given as the first argument (a node_modules parent).
const path = require('path');
const root = process.argv[2];
const rdr = require(path.join(root, 'node_modules', '@dice-roller', 'rpg-dice-roller'));
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { exprs, n } = JSON.parse(input);
  const out = {};
  for (const expr of exprs) {
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
