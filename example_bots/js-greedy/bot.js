// A greedy Sushi Go! bot in plain Node.js: no npm packages, protocol v1 by hand.
//
// The referee sends one JSON object per line on stdin; we answer each (except
// shutdown) with one line on stdout whose `re` is the request's `id`. For an act
// we score every entry of `legal` and echo the best one back: an entry has exactly
// the fields of an action (`cards`, and `dummy_card` when we control the dummy),
// so the answer is legal in every variant.
'use strict';
const readline = require('readline');

const NIGIRI = { egg_nigiri: 1, salmon_nigiri: 2, squid_nigiri: 3 };
const MAKI = { maki1: 1, maki2: 2, maki3: 3 };
const DUMPLING = [0, 1, 3, 6, 10, 15]; // points for 0..5 dumplings

// Writes to a pipe are synchronous on Linux, so each line leaves at once (no flush needed).
function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

// What one more card of `kind` is worth to a tableau `tab`, with `turns` picks left this round.
function value(kind, tab, turns, round) {
  const n = tab.counts[kind] || 0;
  if (kind in NIGIRI) return NIGIRI[kind] * (tab.freeWasabi > 0 ? 3 : 1); // tripled on wasabi
  if (kind in MAKI) return 1.1 * MAKI[kind];
  switch (kind) {
    case 'tempura': return n % 2 === 1 ? 5 : (turns >= 1 ? 2.5 : 0); // pairs score 5
    case 'sashimi': // sets of three score 10
      if (n % 3 === 2) return 10;
      if (n % 3 === 1) return turns >= 1 ? 4 : 0;
      return turns >= 2 ? 3 : 0;
    case 'dumpling': return DUMPLING[Math.min(n + 1, 5)] - DUMPLING[Math.min(n, 5)];
    case 'wasabi': return (turns >= 3 ? 3.5 : turns >= 2 ? 1.5 : 0) / (tab.freeWasabi > 0 ? 2 : 1);
    case 'pudding': return [1, 1.5, 2.5][round - 1] || 1; // scored at the end of the game
    case 'chopsticks': return (tab.counts.chopsticks || 0) > 0 ? 0.5 : (turns >= 4 ? 2 : 0.5);
    default: return 0;
  }
}

// The counts of kinds in a tableau and its wasabi still waiting for a nigiri.
function summarize(tableau) {
  const counts = {};
  const used = new Set();
  for (const card of tableau) {
    counts[card.card] = (counts[card.card] || 0) + 1;
    if (card.wasabi !== undefined) used.add(card.wasabi);
  }
  const freeWasabi = tableau.filter((c) => c.card === 'wasabi' && !used.has(c.id)).length;
  return { counts, freeWasabi };
}

function choose(act) {
  const kindOf = new Map(act.hand.map((c) => [c.id, c.card]));
  const turns = act.hand.length - 1;
  const mine = summarize(act.tableaus[act.seat]);
  let best = act.legal[0];
  let bestScore = -Infinity;
  for (const play of act.legal) {
    // Take the cards in order, as the tableau would: [wasabi, squid] makes a 9.
    const tab = { counts: { ...mine.counts }, freeWasabi: mine.freeWasabi };
    let score = 0;
    for (const id of play.cards) {
      const kind = kindOf.get(id);
      score += value(kind, tab, turns, act.round);
      tab.counts[kind] = (tab.counts[kind] || 0) + 1;
      if (kind === 'wasabi') tab.freeWasabi += 1;
      else if (kind in NIGIRI && tab.freeWasabi > 0) tab.freeWasabi -= 1;
    }
    if (play.cards.length > 1) score -= 1; // chopsticks: only for a clearly better pair
    // Controlling the dummy: hand it a card we like, so the opponent cannot take it.
    if (play.dummy_card !== undefined) score += 0.3 * value(kindOf.get(play.dummy_card), mine, turns, act.round);
    if (score > bestScore) { // strictly better: ties keep the earlier entry (deterministic)
      best = play;
      bestScore = score;
    }
  }
  return best;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case 'hello': send({ type: 'hello', re: msg.id, version: 1, name: 'js-greedy', bot_version: '1' }); break;
    case 'game_start': send({ type: 'ready', re: msg.id }); break;
    case 'act': send({ type: 'action', re: msg.id, ...choose(msg) }); break;
    case 'game_over': send({ type: 'ack', re: msg.id }); break;
    case 'shutdown': process.exit(0);
    default: console.error(`unknown message type ${msg.type}`); // stderr is only logged
  }
});
