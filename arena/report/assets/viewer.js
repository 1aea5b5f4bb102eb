// Sushi Go! Arena replay viewer: the table seen from above, one step at a time.
// Keys: ← → step, Home / End first / last, Page Up / Page Down previous / next round.
"use strict";

(function () {
  const UI = window.ArenaUI;
  const el = UI.el;
  const root = document.getElementById("viewer");
  const inSite = document.body.dataset.site === "report";
  const state = { game: null, frames: [], at: 0, view: "all", id: null };

  function problem(text, withLink) {
    UI.clear(root);
    root.appendChild(el("h1", {}, "Replay"));
    root.appendChild(UI.problem(text));
    if (withLink && inSite) root.appendChild(el("p", {}, el("a", { href: "games.html" }, "← the list of games")));
  }

  // -- which game, which step ---------------------------------------------------------------

  function target() {
    const hash = decodeURIComponent(location.hash.slice(1));
    const fixed = document.body.dataset.game;
    if (fixed) return { id: fixed, at: hash };
    const cut = hash.indexOf("/");
    return cut < 0 ? { id: hash, at: "" } : { id: hash.slice(0, cut), at: hash.slice(cut + 1) };
  }

  function load() {
    const { id, at } = target();
    if (id && id === state.id) return goTo(positionIndex(at), false);
    if (!id) return problem("Which game? Open one from the list of games.", true);
    const known = window.ARENA_GAMES || {};
    if (known[id]) return start(id, known[id], at);
    if (!inSite || !/^[A-Za-z0-9_.-]+$/.test(id)) return problem(`Game ${id} is not in this page.`, true);
    const script = document.createElement("script");
    script.src = "games/" + encodeURIComponent(id) + ".js";
    script.onload = () => {
      const got = (window.ARENA_GAMES || {})[id];
      if (got) start(id, got, at);
      else problem(`games/${id}.js did not hold game ${id}. Write the report again with \`arena report\`.`, true);
    };
    script.onerror = () => problem(`Game ${id} has no data in this report (games/${id}.js is missing): its replay could not be read when the report was written, or the report is incomplete. The list of games says why; \`arena report\` writes it again.`, true);
    document.body.appendChild(script);
  }

  function position(frame) {
    const s = frame.step;
    if (s.kind === "turn") return `${s.round}.${s.turn}`;
    if (s.kind === "end") return `${s.round}.end`;
    return "final";
  }

  function positionIndex(at) {
    if (!at) return 0;
    const i = state.frames.findIndex((f) => position(f) === at);
    return i < 0 ? 0 : i;
  }

  // -- the state of the table after each step --------------------------------------------------

  function kindOf(card) {
    return UI.cards().kinds[state.game.cards[card]];
  }

  function buildFrames(game) {
    const n = game.seats.length;
    let tableaus = Array.from({ length: n }, () => []);
    let onWasabi = new Map();
    const kept = Array.from({ length: n }, () => []);
    let scores = new Array(n).fill(0);
    let round = 0;
    const isPudding = (c) => UI.cards().kinds[game.cards[c]].name === "pudding";
    function keepPuddings() {
      tableaus = tableaus.map((t, seat) => {
        for (const c of t) if (isPudding(c)) kept[seat].push(c);
        return t.filter((c) => !isPudding(c));
      });
    }
    const frames = [];
    for (const step of game.steps) {
      if (step.kind !== "over" && step.round !== round) {
        if (round) {
          keepPuddings();
          tableaus = Array.from({ length: n }, () => []);
          onWasabi = new Map();
        }
        round = step.round;
      }
      if (step.kind === "over") keepPuddings();
      const fresh = new Set();
      (step.plays || []).forEach((cards, seat) => {
        for (const c of cards) {
          tableaus[seat].push(c);
          fresh.add(c);
        }
      });
      for (const [, nigiri, wasabi] of step.wasabi || []) onWasabi.set(nigiri, wasabi);
      for (const [seat, chopsticks] of step.returned || []) tableaus[seat] = tableaus[seat].filter((c) => c !== chopsticks);
      if (step.scores) scores = step.scores.slice();
      frames.push({
        step,
        tableaus: tableaus.map((t) => t.slice()),
        onWasabi: new Map(onWasabi),
        kept: kept.map((k) => k.slice()),
        scores: scores.slice(),
        fresh,
      });
    }
    return frames;
  }

  // -- drawing ------------------------------------------------------------------------------

  function seatName(seat) {
    const s = state.game.seats[seat];
    return s.bot;
  }

  function botKey(seat) {
    const s = state.game.seats[seat];
    return s.hash ? `${s.bot}@${s.hash.slice(0, 8)}` : s.bot;
  }

  function drawTableau(frame, seat) {
    const box = el("div", { class: "cards tableau", "data-seat": seat });
    const cards = frame.tableaus[seat];
    const nigiriOn = new Map();
    for (const [nigiri, wasabi] of frame.onWasabi) nigiriOn.set(wasabi, nigiri);
    const placed = new Set(frame.onWasabi.keys());
    for (const c of cards) {
      if (placed.has(c)) continue; // drawn on top of its wasabi
      const fresh = frame.fresh.has(c);
      const card = UI.card(state.game.cards[c], { id: c, fresh });
      if (nigiriOn.has(c) && cards.includes(nigiriOn.get(c))) {
        const nigiri = nigiriOn.get(c);
        box.appendChild(el("span", { class: "stack", title: "a nigiri on wasabi" }, card,
          UI.card(state.game.cards[nigiri], { id: nigiri, fresh: frame.fresh.has(nigiri), onWasabi: true })));
      } else box.appendChild(card);
    }
    if (!box.childNodes.length) box.appendChild(el("span", { class: "muted small" }, "no cards yet"));
    return box;
  }

  function drawHand(frame, seat) {
    const step = frame.step;
    if (step.kind !== "turn") {
      if (step.kind === "end" && step.plays[seat].length) {
        return el("div", {}, el("h4", {}, "Last card, played for it"),
          el("div", { class: "cards" }, step.plays[seat].map((c) => UI.card(state.game.cards[c], { id: c, picked: true }))));
      }
      return null;
    }
    const hand = step.hands[seat] || [];
    const isDummy = seat >= state.game.players;
    const title = isDummy ? `The dummy's pile (${hand.length})` : `Hand before the choice (${hand.length})`;
    if (state.view !== "all" && Number(state.view) !== seat) {
      return el("div", {}, el("h4", {}, title),
        el("div", { class: "cards hidden-hand" }, hand.slice(0, 3).map(() => UI.cardBack()), el("span", {}, ` not seen by seat ${state.view}`)));
    }
    return el("div", {}, el("h4", {}, title),
      el("div", { class: "cards hand", "data-seat": seat }, hand.map((c) => UI.card(state.game.cards[c], { id: c, picked: frame.fresh.has(c) }))));
  }

  function describeAct(step, seat) {
    if (step.kind !== "turn") return null;
    if (seat >= state.game.players) return el("p", { class: "act" }, `The dummy: seat ${step.controller} chose its card.`);
    const act = (step.acts && step.acts[seat]) || {};
    const status = act.status || "ok";
    const played = step.plays[seat].map((c) => kindOf(c).name.replace(/_/g, " ")).join(" + ");
    const chopsticks = (step.returned || []).find((r) => r[0] === seat);
    const time = step.ms[seat] !== null ? ` in ${step.ms[seat]} ms` : "";
    const parts = [];
    if (status === "ok") parts.push(`Chose ${played}${time}`);
    else if (status === "auto") parts.push(`Its last card, ${played}, was played for it`);
    else if (status === "autopilot") parts.push(`On autopilot: ${played} (a random legal play)`);
    else parts.push(`Fault (${status})${time}: ${played} was played instead (a random legal play)`);
    if (chopsticks) parts.push(`; used chopsticks (they go back into the hand passed on)`);
    if (step.controller === seat) {
      const dummyCards = step.plays[step.plays.length - 1] || [];
      if (dummyCards.length) parts.push(`; gave the dummy ${kindOf(dummyCards[0]).name.replace(/_/g, " ")}`);
    }
    const fault = UI.cards().fault_statuses.includes(status);
    const box = el("div", { class: "act" + (fault ? " fault" : ""), "data-status": status }, el("p", {}, (fault ? "⚠ " : "") + parts.join("")));
    if (act.message) box.appendChild(el("p", { class: "small" }, act.message));
    const seen = state.view === "all" || Number(state.view) === seat;
    if (act.debug !== undefined && seen) {
      const short = JSON.stringify(act.debug);
      const text = typeof act.debug === "string" ? act.debug : short.length <= 80 ? short : JSON.stringify(act.debug, null, 1);
      box.appendChild(el("div", { class: "debug" }, el("h4", {}, "Its debug value"), el("pre", {}, text)));
    }
    return box;
  }

  function drawSeat(frame, seat) {
    const g = state.game;
    const step = frame.step;
    const isDummy = seat >= g.players;
    const badges = [];
    if (isDummy) badges.push("dummy");
    if (step.controller === seat) badges.push("controls the dummy");
    if (g.result && g.result.autopilot[seat] && step.kind === "over") badges.push("ended on autopilot");
    const nameNode = inSite && !isDummy ? el("a", { href: "bot.html#" + encodeURIComponent(botKey(seat)) }, seatName(seat)) : seatName(seat);
    const timing = g.timing && g.timing.mean_ms && g.timing.mean_ms[seat] !== null && g.timing.mean_ms[seat] !== undefined
      ? `answers: mean ${g.timing.mean_ms[seat]} ms, longest ${g.timing.max_ms[seat]} ms` : "";
    const kept = frame.kept[seat];
    const section = el("section", { class: "seat" + (state.view !== "all" && Number(state.view) === seat ? " focus" : ""), "data-seat": seat, "aria-label": `seat ${seat}, ${seatName(seat)}` },
      el("header", {},
        el("h3", {}, `Seat ${seat} · `, nameNode, badges.map((b) => el("span", { class: "badge" }, b))),
        el("span", { class: "score", "data-score": frame.scores[seat] }, `${frame.scores[seat]} points`)),
      timing ? el("p", { class: "small muted" }, timing) : null,
      drawHand(frame, seat),
      el("h4", {}, "Tableau"),
      drawTableau(frame, seat),
      kept.length ? el("div", { class: "kept" }, el("h4", {}, `Puddings kept aside: ${kept.length}`), kept.map((c) => UI.card(g.cards[c], { id: c }))) : null,
      describeAct(step, seat));
    return section;
  }

  function breakdownTable(frame) {
    const g = state.game;
    const step = frame.step;
    const parts = UI.cards().score_parts;
    const table = el("table", { class: "breakdown", id: "round-breakdown" },
      el("caption", { class: "sr-only" }, `Round ${step.round} points by kind`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "seat"), parts.map((p) => el("th", { scope: "col", class: "num" }, p)),
        el("th", { scope: "col", class: "num" }, "round"), el("th", { scope: "col", class: "num" }, "total"))));
    const body = el("tbody");
    step.breakdown.forEach((b, seat) => {
      body.appendChild(el("tr", { "data-seat": seat }, el("th", { scope: "row" }, `${seat} ${seatName(seat)}`),
        parts.map((p) => el("td", { class: "num", title: p === "maki" ? `${step.maki_symbols[seat]} maki symbols` : null },
          p === "maki" ? `${b.maki} (${step.maki_symbols[seat]}●)` : String(b[p]))),
        el("td", { class: "num" }, el("b", {}, String(step.points[seat]))),
        el("td", { class: "num" }, String(step.scores[seat]))));
    });
    table.appendChild(body);
    return el("div", { class: "scroll" }, table);
  }

  function rankingTable(frame) {
    const g = state.game;
    const step = frame.step;
    const faults = g.seats.map(() => ({}));
    for (const f of g.faults) faults[f.seat][f.kind] = (faults[f.seat][f.kind] || 0) + 1;
    const rounds = g.steps.filter((s) => s.kind === "end" && s.points);
    const order = g.seats.map((_, i) => i).sort((a, b) => step.ranks[a] - step.ranks[b] || a - b);
    const table = el("table", { class: "ranking", id: "ranking" },
      el("caption", { class: "sr-only" }, "Final ranking"),
      el("thead", {}, el("tr", {}, ["rank", "seat", "bot", "points", "by round", "puddings", "pudding points", "faults"].map((h) => el("th", { scope: "col" }, h)))));
    const body = el("tbody");
    for (const seat of order) {
      const isDummy = seat >= g.players;
      const faultText = Object.entries(faults[seat]).map(([k, v]) => `${k} ${v}`).join(", ") + (g.result && g.result.autopilot[seat] ? " (ended on autopilot)" : "");
      body.appendChild(el("tr", { "data-seat": seat, class: step.ranks[seat] === 1 ? "first" : null },
        el("td", { class: "num rank" }, isDummy ? "–" : String(step.ranks[seat])),
        el("td", { class: "num" }, String(seat)),
        el("th", { scope: "row" }, seatName(seat)),
        el("td", { class: "num final-score" }, String(step.scores[seat])),
        el("td", { class: "small" }, rounds.map((r) => r.points[seat]).join(" / ")),
        el("td", { class: "num" }, String(step.puddings[seat])),
        el("td", { class: "num" }, step.pudding_points[seat] ? UI.signed(step.pudding_points[seat]) : "0"),
        el("td", { class: "small warn" }, faultText)));
    }
    table.appendChild(body);
    return el("div", { class: "scroll" }, table);
  }

  function drawCentre(frame) {
    const g = state.game;
    const step = frame.step;
    const box = el("div", { class: "centre", "aria-live": "off" });
    if (step.kind === "turn") {
      const inRound = g.steps.filter((s) => s.kind === "turn" && s.round === step.round).length;
      const dealt = g.rounds.find((r) => r.round === step.round);
      const direction = dealt ? dealt.direction : "left";
      box.appendChild(el("h2", {}, `Round ${step.round} · turn ${step.turn} of ${inRound}`));
      box.appendChild(el("p", { class: "direction" }, g.variant === "dummy" ? "the two players swap hands after each turn" : `hands pass ${direction === "left" ? "left (seat 0 → 1 → …)" : "right (seat 1 → 0 → …)"}`));
      box.appendChild(el("p", { class: "small" }, "Hands as they were before the choice; the cards taken are marked “taken” there and “new” in the tableaus."));
      if (step.controller !== undefined) box.appendChild(el("p", {}, `Seat ${step.controller} controls the dummy this turn.`));
    } else if (step.kind === "end") {
      box.appendChild(el("h2", {}, `End of round ${step.round}`));
      if (step.plays.some((p) => p.length)) box.appendChild(el("p", { class: "small" }, "Each player's last card was played for it (marked “new”)."));
      if (step.breakdown) box.appendChild(breakdownTable(frame));
    } else {
      box.appendChild(el("h2", {}, "Final ranking"));
      box.appendChild(el("p", { class: "small" }, "Puddings are scored now: most +6, fewest −6 (no penalty with two players); ties share."));
      box.appendChild(rankingTable(frame));
    }
    if (state.at === state.frames.length - 1 && g.status === "void") {
      box.appendChild(UI.problem(`This game was void (not rated): ${(g.void_reason || "").split("\n")[0]}`));
    }
    return box;
  }

  function where(frame) {
    const s = frame.step;
    const prefix = `Step ${state.at + 1} of ${state.frames.length}: `;
    if (s.kind === "turn") return prefix + `round ${s.round}, turn ${s.turn}`;
    if (s.kind === "end") return prefix + `end of round ${s.round}`;
    return prefix + "final ranking";
  }

  function drawTable() {
    const frame = state.frames[state.at];
    // The seats in seat order, read as a page is read (left to right, then down): seat 0
    // first, the seat it passes to next, on a phone one under the other (report.css).
    const n = state.game.seats.length;
    const table = document.getElementById("table");
    UI.clear(table);
    table.appendChild(drawCentre(frame));
    table.appendChild(el("div", { class: `seat-row seats-${n}` }, state.game.seats.map((_, s) => drawSeat(frame, s))));
    document.getElementById("where").textContent = where(frame);
    document.getElementById("btn-first").disabled = document.getElementById("btn-prev").disabled = state.at === 0;
    document.getElementById("btn-last").disabled = document.getElementById("btn-next").disabled = state.at === state.frames.length - 1;
    for (const button of document.querySelectorAll("#timeline button")) {
      const mine = Number(button.dataset.step) === state.at;
      if (mine) button.setAttribute("aria-current", "step");
      else button.removeAttribute("aria-current");
      button.tabIndex = mine ? 0 : -1;
      if (mine) {
        const list = button.closest("ol");
        const left = button.offsetLeft - list.offsetLeft;
        if (left < list.scrollLeft || left + button.offsetWidth > list.scrollLeft + list.clientWidth) {
          list.scrollLeft = left - list.clientWidth / 2;
        }
      }
    }
  }

  function goTo(index, updateAddress) {
    state.at = Math.max(0, Math.min(state.frames.length - 1, index));
    drawTable();
    if (updateAddress !== false) {
      const pos = position(state.frames[state.at]);
      const hash = document.body.dataset.game ? pos : `${state.id}/${pos}`;
      history.replaceState(null, "", "#" + hash);
    }
  }

  function roundStart(direction) {
    const frames = state.frames;
    const round = (i) => frames[i].step.round || 4;
    let i = state.at;
    if (direction > 0) {
      const r = round(i);
      while (i < frames.length - 1 && round(i) === r) i++;
    } else {
      const r = round(i);
      while (i > 0 && round(i - 1) === r) i--;
      if (i === state.at && i > 0) {
        const previous = round(i - 1);
        i--;
        while (i > 0 && round(i - 1) === previous) i--;
      }
    }
    return i;
  }

  function timeline() {
    const list = el("ol", { class: "timeline", id: "timeline" });
    let round = 0;
    state.frames.forEach((frame, i) => {
      const s = frame.step;
      if (s.kind !== "over" && s.round !== round) {
        round = s.round;
        list.appendChild(el("li", { class: "round-label", "aria-hidden": "true" }, `R${round}`));
      }
      const faulty = [];
      for (const [seat, act] of (s.acts || []).entries()) {
        if (act && UI.cards().fault_statuses.includes(act.status)) faulty.push(`seat ${seat} ${act.status}`);
      }
      const chop = (s.returned || []).map(([seat]) => `seat ${seat} used chopsticks`);
      const text = (s.kind === "turn" ? `round ${s.round} turn ${s.turn}` : s.kind === "end" ? `end of round ${s.round}` : "final ranking") +
        (chop.length ? "; " + chop.join(", ") : "") + (faulty.length ? "; fault: " + faulty.join(", ") : "");
      const button = el("button", { type: "button", "data-step": i, "aria-label": text, title: text, tabindex: -1, onclick: () => goTo(i) },
        s.kind === "turn" ? String(s.turn) : s.kind === "end" ? "Σ" : "★",
        chop.length ? el("span", { class: "mark chop", "aria-hidden": "true" }, "C") : null,
        faulty.length ? el("span", { class: "mark fault", "aria-hidden": "true" }, "!") : null);
      list.appendChild(el("li", {}, button));
    });
    list.addEventListener("keydown", (event) => {
      // Inside the timeline the arrow keys also move the focus along with the step.
      if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) {
        setTimeout(() => {
          const current = list.querySelector('[aria-current="step"]');
          if (current) current.focus();
        }, 0);
      }
    });
    return list;
  }

  function faultList() {
    const g = state.game;
    if (!g.faults.length) return null;
    const items = g.faults.map((f) => {
      const at = f.round ? state.frames.findIndex((fr) => fr.step.kind === "turn" && fr.step.round === f.round && fr.step.turn === f.turn) : -1;
      const label = f.round ? `round ${f.round} turn ${f.turn}` : "outside a turn";
      return el("li", {}, at >= 0 ? el("button", { type: "button", onclick: () => goTo(at) }, label) : label,
        ` · seat ${f.seat} (${seatName(f.seat)}) · ${f.kind}: `, el("span", { class: "small" }, f.message));
    });
    return el("section", { "aria-labelledby": "h-gfaults" }, el("h2", { id: "h-gfaults" }, `Faults (${g.faults.length})`), el("ul", { id: "game-faults" }, items));
  }

  function stderrSection() {
    const g = state.game;
    return el("section", { "aria-labelledby": "h-stderr" }, el("h2", { id: "h-stderr" }, "What each bot wrote to stderr (the last part)"),
      g.seats.map((s, seat) => seat >= g.players ? null : el("details", { "data-seat": seat },
        el("summary", {}, `seat ${seat} · ${s.bot}` + (g.stderr[seat] ? ` (${g.stderr[seat].length} characters)` : " (nothing)")),
        el("pre", {}, g.stderr[seat] || ""))));
  }

  function start(id, game, at) {
    if (game.format !== 1) return problem(`Game ${id} was written by another version of the report (format ${game.format}); write the report again with \`arena report\`.`, true);
    state.id = id;
    state.game = game;
    state.frames = buildFrames(game);
    if (!state.frames.length) return problem(`Game ${id} has no turns to show (${game.status}${game.void_reason ? ": " + game.void_reason : ""}).`, true);
    document.title = `Game ${id} · Sushi Go! Arena`;
    UI.clear(root);
    const meta = [
      `${game.players} players${game.seats.length > game.players ? " and the dummy" : ""}`,
      game.variant,
      `seed ${game.seed}`,
      game.rules_version,
      game.timing.started ? `played ${game.timing.started}` : null,
      game.timing.duration_s !== null && game.timing.duration_s !== undefined ? `${game.timing.duration_s} s` : null,
      game.status === "void" ? "VOID (not rated)" : null,
    ].filter(Boolean);
    root.appendChild(el("h1", {}, `Game ${id}`));
    root.appendChild(el("p", { class: "game-meta" }, meta.map((m) => el("span", {}, m))));
    if (inSite) root.appendChild(el("p", { class: "small" }, el("a", { href: "games.html" }, "← all games")));
    const viewSelect = el("select", { id: "view" }, el("option", { value: "all" }, "every hand (all seats)"),
      game.seats.map((s, seat) => seat < game.players ? el("option", { value: String(seat) }, `seat ${seat} · ${s.bot}: only what it saw`) : null));
    viewSelect.addEventListener("change", () => {
      state.view = viewSelect.value;
      drawTable();
    });
    root.appendChild(el("div", { class: "controls", role: "group", "aria-label": "Steps" },
      el("button", { type: "button", id: "btn-first", "aria-label": "first step", title: "first step (Home)", onclick: () => goTo(0) }, "⇤"),
      el("button", { type: "button", id: "btn-prev", "aria-label": "previous step", title: "previous step (←)", onclick: () => goTo(state.at - 1) }, "◀"),
      el("button", { type: "button", id: "btn-next", "aria-label": "next step", title: "next step (→)", onclick: () => goTo(state.at + 1) }, "▶"),
      el("button", { type: "button", id: "btn-last", "aria-label": "last step", title: "last step (End)", onclick: () => goTo(state.frames.length - 1) }, "⇥"),
      el("span", { class: "where", id: "where", "aria-live": "polite" }),
      el("label", { for: "view" }, "Hands shown: "), viewSelect));
    root.appendChild(el("p", { class: "keys" }, "Keys: ", el("kbd", {}, "←"), " ", el("kbd", {}, "→"), " step · ", el("kbd", {}, "Home"), " ", el("kbd", {}, "End"),
      " first / last · ", el("kbd", {}, "Page Up"), " ", el("kbd", {}, "Page Down"), " rounds"));
    root.appendChild(el("nav", { "aria-label": "Timeline" }, timeline(),
      el("p", { class: "marks-legend" }, el("span", {}, el("span", { class: "mark chop" }, "C"), " chopsticks used"), el("span", {}, el("span", { class: "mark fault" }, "!"), " a fault"),
        el("span", {}, "Σ end of round"), el("span", {}, "★ final ranking"))));
    root.appendChild(el("div", { class: "table-top", id: "table" }));
    const faults = faultList();
    if (faults) root.appendChild(faults);
    root.appendChild(stderrSection());
    goTo(positionIndex(at), false);
  }

  document.addEventListener("keydown", (event) => {
    if (!state.game || event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target && event.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
    const moves = {
      ArrowRight: () => state.at + 1,
      ArrowLeft: () => state.at - 1,
      Home: () => 0,
      End: () => state.frames.length - 1,
      PageDown: () => roundStart(1),
      PageUp: () => roundStart(-1),
    };
    if (!(event.key in moves)) return;
    event.preventDefault();
    goTo(moves[event.key]());
  });
  window.addEventListener("hashchange", load);
  load();
})();
