// Sushi Go! Arena report: the leaderboard, games and bot pages, drawn from data.js.
"use strict";

(function () {
  const UI = window.ArenaUI;
  const el = UI.el;
  const svg = UI.svg;
  const main = document.getElementById("main");
  const R = window.ARENA_REPORT;

  if (!R || !window.ARENA_CARDS) {
    main.appendChild(UI.problem("This report's data (data.js or cards.js) could not be loaded. Write the report again with `arena report`."));
    return;
  }

  const bots = R.bots;
  const botIndex = new Map(bots.map((b, i) => [b.key, i]));
  const rowOf = new Map(R.leaderboard.rows.map((r) => [r.key, r]));
  const colourIndex = new Map(R.leaderboard.rows.map((r, i) => [r.key, i]));
  bots.forEach((b) => {
    if (!colourIndex.has(b.key)) colourIndex.set(b.key, colourIndex.size);
  });
  const games = R.games;

  function label(key) {
    const bot = bots[botIndex.get(key)];
    return bot ? bot.label : key;
  }
  function botHref(key) {
    return "bot.html#" + encodeURIComponent(key);
  }
  function botLink(key) {
    return el("a", { href: botHref(key), class: "bot-link" }, label(key));
  }
  function replayHref(id, round, turn) {
    return "replay.html#" + encodeURIComponent(id) + (round ? `/${round}.${turn}` : "");
  }
  function faultTotal(faults) {
    return Object.values(faults || {}).reduce((a, b) => a + b, 0);
  }
  /** "0", or the total and each kind: "3 (crash 2, timeout 1)". */
  function faultText(faults) {
    const total = faultTotal(faults);
    const kinds = Object.entries(faults || {}).filter(([, n]) => n).sort().map(([k, n]) => `${k} ${n}`);
    return total ? `${total} (${kinds.join(", ")})` : "0";
  }
  /** The same, as a node that wraps only between one kind's count and the next. */
  function faultCell(faults) {
    const total = faultTotal(faults);
    const kinds = Object.entries(faults || {}).filter(([, n]) => n).sort();
    if (!total) return "0";
    return el("span", {}, `${total} `, kinds.map(([k, n], i) =>
      [i ? " " : "", el("span", { class: "nowrap" }, `${i ? "" : "("}${k} ${n}${i === kinds.length - 1 ? ")" : ","}`)]));
  }
  function headline() {
    const t = R.tournament;
    return el(
      "p",
      { class: "muted small" },
      `${t.players} players · ${t.variant} · ${R.leaderboard.games} rated games · created ${t.created} · updated ${t.updated} · report written ${R.generated} · rules ${R.rules_version}`
    );
  }

  // -- the leaderboard --------------------------------------------------------------------

  function intervalBar(row, low, high) {
    const width = 160, pad = 6;
    const x = (v) => pad + ((v - low) / (high - low || 1)) * (width - 2 * pad);
    const hasInterval = Number.isFinite(row.elo_low) && Number.isFinite(row.elo_high);
    const text = hasInterval
      ? `Elo ${UI.fixed(row.elo, 0)}, 95% interval ${UI.fixed(row.elo_low, 0)} to ${UI.fixed(row.elo_high, 0)}`
      : `Elo ${UI.fixed(row.elo, 0)}, no interval`;
    const drawing = svg("svg", { viewBox: `0 0 ${width} 18`, role: "img", "aria-label": text },
      svg("title", {}, text),
      svg("line", { x1: pad, x2: width - pad, y1: 9, y2: 9, stroke: "#d0d0c8", "stroke-width": 1 }),
      hasInterval ? svg("line", { x1: x(row.elo_low), x2: x(row.elo_high), y1: 9, y2: 9, stroke: "#0072b2", "stroke-width": 5, "stroke-linecap": "round" }) : null,
      svg("circle", { cx: x(row.elo), cy: 9, r: 4.5, fill: "#000" })
    );
    return el("span", { class: "interval" }, drawing,
      el("span", { class: "small nowrap" }, hasInterval ? `${UI.fixed(row.elo_low, 0)}–${UI.fixed(row.elo_high, 0)}` : "–"));
  }

  function leaderboardTable(rows) {
    const lows = rows.map((r) => (Number.isFinite(r.elo_low) ? r.elo_low : r.elo));
    const highs = rows.map((r) => (Number.isFinite(r.elo_high) ? r.elo_high : r.elo));
    const low = Math.min(...lows), high = Math.max(...highs);
    const margin = (high - low) * 0.05 || 50;
    const columns = [
      { key: "rank", label: "#", num: true, sort: (r) => r.rank, cell: (r) => String(r.rank) },
      { key: "bot", label: "bot", sort: (r) => r.label.toLowerCase(), cell: (r) => botLink(r.key) },
      { key: "version", label: "version", sort: (r) => r.version || r.hash, cell: (r) => r.version || r.hash.slice(0, 8) },
      { key: "elo", label: "Elo", num: true, sort: (r) => r.elo, cell: (r) => UI.fixed(r.elo, 0) },
      { key: "interval", label: "95% interval", sort: (r) => (Number.isFinite(r.elo_high) ? r.elo_high - r.elo_low : 0), cell: (r) => intervalBar(r, low - margin, high + margin) },
      { key: "games", label: "games", num: true, sort: (r) => r.games, cell: (r) => String(r.games) },
      { key: "wins", label: "wins", num: true, sort: (r) => r.wins, cell: (r) => UI.general(r.wins) },
      { key: "win_share", label: "win %", num: true, sort: (r) => r.win_share, cell: (r) => UI.fixed(100 * r.win_share, 1) },
      { key: "mean_points", label: "mean points", num: true, sort: (r) => r.mean_points, cell: (r) => UI.fixed(r.mean_points, 1) },
      { key: "mean_rank", label: "mean rank", num: true, sort: (r) => r.mean_rank, cell: (r) => UI.fixed(r.mean_rank, 2) },
      { key: "points_vs_table", label: "vs table", num: true, sort: (r) => r.points_vs_table, cell: (r) => UI.signed(Number(UI.fixed(r.points_vs_table, 1))) },
      { key: "faults", label: "faults", num: true, sort: (r) => faultTotal(r.faults), cell: (r) => faultCell(r.faults) },
    ];
    // What the bots used, where their sandbox measured it (rows of older stores have no such figures).
    const measured = (name) => rows.some((r) => r[name] !== null && r[name] !== undefined);
    const usage = [
      ["cpu_ms", "CPU ms/game"],
      ["peak_mb", "peak MB"],
    ].filter(([name]) => measured(name)).map(([name, text]) => ({
      key: name, label: text, num: true, sort: (r) => (r[name] === null || r[name] === undefined ? -1 : r[name]),
      cell: (r) => (r[name] === null || r[name] === undefined ? "–" : UI.fixed(r[name], 0)),
    }));
    columns.splice(columns.length - 1, 0, ...usage);
    return UI.sortableTable(columns, rows, {
      id: "leaderboard",
      class: "board",
      caption: "Leaderboard: Elo with 95% bootstrap intervals",
      sortKey: "rank",
      rowHeader: "bot",
      rowAttrs: (r) => ({ "data-key": r.key }),
    });
  }

  // -- the rating over the games ----------------------------------------------------------

  function niceStep(span, target) {
    const raw = span / target;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * power) return m * power;
    return 10 * power;
  }

  function ratingChart(timeline, keys) {
    const W = 760, H = 340, left = 56, right = 130, top = 14, bottom = 40;
    const xs = timeline.games;
    const values = [];
    for (const k of keys) for (const v of timeline.elo[k] || []) if (v !== null) values.push(v);
    const lowV = Math.min(...values), highV = Math.max(...values);
    const pad = Math.max(20, (highV - lowV) * 0.06);
    const y0 = lowV - pad, y1 = highV + pad;
    const xMax = xs[xs.length - 1] || 1;
    const X = (g) => left + (g / xMax) * (W - left - right);
    const Y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (H - top - bottom);
    const text = `Elo of each bot after the first n games, n from ${xs[0]} to ${xMax}`;
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": text, id: "rating-chart" }, svg("title", {}, text));
    const yStep = niceStep(y1 - y0, 6);
    for (let v = Math.ceil(y0 / yStep) * yStep; v <= y1; v += yStep) {
      chart.appendChild(svg("line", { x1: left, x2: W - right, y1: Y(v), y2: Y(v), stroke: "#e4e4dc" }));
      chart.appendChild(svg("text", { x: left - 6, y: Y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#5a5a5a" }, UI.fixed(v, 0)));
    }
    const xStep = niceStep(xMax, 8);
    for (let g = 0; g <= xMax; g += xStep) {
      chart.appendChild(svg("line", { x1: X(g), x2: X(g), y1: H - bottom, y2: H - bottom + 4, stroke: "#5a5a5a" }));
      chart.appendChild(svg("text", { x: X(g), y: H - bottom + 16, "text-anchor": "middle", "font-size": 11, fill: "#5a5a5a" }, String(g)));
    }
    chart.appendChild(svg("line", { x1: left, x2: W - right, y1: H - bottom, y2: H - bottom, stroke: "#5a5a5a" }));
    chart.appendChild(svg("text", { x: (left + W - right) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12 }, "games played"));
    chart.appendChild(svg("text", { x: 14, y: (top + H - bottom) / 2, "text-anchor": "middle", "font-size": 12, transform: `rotate(-90 14 ${(top + H - bottom) / 2})` }, "Elo"));
    const ends = [];
    for (const k of keys) {
      const series = timeline.elo[k] || [];
      const look = UI.palette(colourIndex.get(k));
      let d = "";
      let last = null;
      series.forEach((v, i) => {
        if (v === null) return;
        d += (d && last !== null ? "L" : "M") + X(xs[i]).toFixed(1) + " " + Y(v).toFixed(1);
        last = v;
      });
      if (!d) continue;
      chart.appendChild(svg("path", { d, fill: "none", stroke: look.colour, "stroke-width": 2.5, "stroke-dasharray": look.dash, "data-key": k },
        svg("title", {}, `${label(k)}: ${UI.fixed(last, 0)} after ${xMax} games`)));
      if (series.filter((v) => v !== null).length === 1) {
        const i = series.findIndex((v) => v !== null);
        chart.appendChild(svg("circle", { cx: X(xs[i]), cy: Y(series[i]), r: 4, fill: look.colour }));
      }
      ends.push({ key: k, y: Y(last), colour: look.colour });
    }
    // End labels, pushed apart so that they never overlap.
    ends.sort((a, b) => a.y - b.y);
    for (let i = 1; i < ends.length; i++) ends[i].y = Math.max(ends[i].y, ends[i - 1].y + 13);
    for (const end of ends) {
      chart.appendChild(svg("text", { x: W - right + 6, y: end.y + 4, "font-size": 12, fill: "#1b1b1b" }, label(end.key)));
      chart.appendChild(svg("rect", { x: W - right + 1, y: end.y - 1.5, width: 4, height: 3, fill: end.colour }));
    }
    const legend = el("ul", { class: "legend" }, keys.map((k) => {
      const look = UI.palette(colourIndex.get(k));
      return el("li", {}, el("span", { class: "swatch", style: { "border-top-color": look.colour, "border-top-style": look.dash ? "dashed" : "solid" } }), botLink(k));
    }));
    return el("div", { class: "chart" }, chart, legend);
  }

  // -- head to head -----------------------------------------------------------------------

  function mix(a, b, t) {
    const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
    const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
    return pa.map((v, i) => Math.round(v + (pb[i] - v) * t));
  }
  function shareColour(share) {
    // Orange for losing, white for even, blue for winning: a pair safe for colour blindness.
    const rgb = share < 0.5 ? mix("#e69f00", "#ffffff", share / 0.5) : mix("#ffffff", "#0072b2", (share - 0.5) / 0.5);
    const lum = rgb.map((c) => {
      const v = c / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    const l = 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2];
    return { bg: `rgb(${rgb.join(",")})`, ink: (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff" };
  }

  function headToHead(keys) {
    const table = el("table", { class: "heat", id: "h2h" },
      el("caption", { class: "sr-only" }, "Head to head: the row bot's share of the pairs of seats it won against the column bot"));
    table.appendChild(el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "row vs column"), keys.map((k) => el("th", { scope: "col" }, botLink(k))))));
    const body = el("tbody");
    for (const a of keys) {
      const tr = el("tr", {}, el("th", { scope: "row" }, botLink(a)));
      for (const b of keys) {
        const cell = (R.h2h[a] || {})[b];
        if (a === b || !cell) {
          tr.appendChild(el("td", { class: "cell self", "aria-label": a === b ? "same bot" : "never met" }, a === b ? "" : "–"));
          continue;
        }
        const [w, d, l] = cell;
        const share = (w + d / 2) / (w + d + l);
        const look = shareColour(share);
        const text = `${label(a)} against ${label(b)}: ${UI.general(w)} won, ${UI.general(d)} drawn, ${UI.general(l)} lost (${UI.fixed((100 * share), 0)}%)`;
        tr.appendChild(el("td", { class: "cell", style: { background: look.bg, color: look.ink }, title: text },
          el("span", { "aria-hidden": "true" }, `${UI.fixed((100 * share), 0)}%`),
          el("span", { class: "wdl", "aria-hidden": "true" }, `${UI.general(w)}–${UI.general(d)}–${UI.general(l)}`),
          el("span", { class: "sr-only" }, text)));
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    return el("div", {},
      el("div", { class: "scale", "aria-hidden": "true" }, el("span", {}, "lost all"), el("span", { class: "bar" }), el("span", {}, "won all")),
      el("div", { class: "scroll" }, table),
      el("p", { class: "small muted" }, "Each cell: the share of pairs of seats the row bot finished ahead of the column bot (a shared place is half), then wins–draws–losses."));
  }

  // -- faults -----------------------------------------------------------------------------

  function faultGames(key, kind) {
    const index = botIndex.get(key);
    const found = [];
    for (const g of games) {
      for (const [seat, k, count] of g.faults || []) {
        if (k !== kind || g.seats[seat][0] !== index) continue;
        const at = (g.fault_turns || []).find((f) => f[0] === seat && f[1] === kind && f[2] > 0);
        found.push({ game: g, count, round: at ? at[2] : 0, turn: at ? at[3] : 0 });
      }
    }
    return found;
  }

  function gameLinks(found, key) {
    const shown = found.slice(0, 12).map((f) => {
      const where = f.round ? ` (round ${f.round} turn ${f.turn})` : "";
      const text = `${f.game.id}${where}${f.count > 1 ? ` ×${f.count}` : ""}`;
      return f.game.problem ? el("span", { class: "warn", title: f.game.problem }, text) : el("a", { href: replayHref(f.game.id, f.round, f.turn) }, text);
    });
    const list = el("span", { class: "seats-list" }, shown);
    if (found.length > shown.length) list.appendChild(el("a", { href: `games.html#bot=${encodeURIComponent(key)}&faults=1` }, `all ${found.length} games`));
    return list;
  }

  function faultSection(keys) {
    const lines = [];
    for (const key of keys) {
      const row = rowOf.get(key);
      for (const [kind, count] of Object.entries((row && row.faults) || {})) {
        if (count) lines.push({ key, kind, count, found: faultGames(key, kind) });
      }
    }
    if (!lines.length) return el("p", { id: "faults-none" }, "No faults: every bot answered every request in time, well-formed and legal.");
    const table = el("table", { id: "faults" }, el("caption", { class: "sr-only" }, "Faults per bot and kind"),
      el("thead", {}, el("tr", {}, ["bot", "kind", "count", "games where it happened"].map((h) => el("th", { scope: "col", class: h === "count" ? "num" : null }, h)))));
    const body = el("tbody");
    for (const line of lines) {
      body.appendChild(el("tr", {}, el("th", { scope: "row" }, botLink(line.key)), el("td", {}, line.kind), el("td", { class: "num" }, String(line.count)), el("td", {}, gameLinks(line.found, line.key))));
    }
    table.appendChild(body);
    return el("div", { class: "scroll" }, table);
  }

  // -- the list of games ------------------------------------------------------------------

  function seatsCell(g, focusIndex) {
    return el("span", { class: "seats-list" }, g.seats.map(([b, points, rank], seat) => {
      const won = rank === 1 && g.status !== "void";
      const text = `${bots[b].label} ${points}`;
      return el("span", { class: [won ? "won" : "", b === focusIndex ? "focus" : ""].join(" ").trim() || null, title: `seat ${seat}, rank ${rank}` }, b === focusIndex ? el("b", {}, text) : text);
    }));
  }

  function gamesTable(list, focusKey) {
    const focusIndex = focusKey === undefined ? -1 : botIndex.get(focusKey);
    const table = el("table", { id: "games", class: "rows-as-cards" }, el("caption", { class: "sr-only" }, "Games"),
      el("thead", {}, el("tr", {}, ["#", "game", "seats: points (★ winner)", "faults", "finished"].map((h, i) => el("th", { scope: "col", class: i === 0 || i === 3 ? "num" : null }, h)))));
    const body = el("tbody");
    for (const { game: g, number } of list) {
      const faults = (g.faults || []).reduce((a, f) => a + f[2], 0);
      let link;
      if (g.problem) link = el("span", {}, g.id, el("br"), el("span", { class: "warn small" }, "replay unavailable: " + g.problem));
      else link = el("a", { href: replayHref(g.id) }, g.id);
      if (g.status === "void") link = el("span", {}, link, el("br"), el("span", { class: "warn small" }, "void (not rated): " + (g.void_reason || "").split("\n")[0]));
      // data-label: what a cell is, shown by it when the rows are cards (a phone).
      body.appendChild(el("tr", { "data-game": g.id }, el("td", { class: "num c-number", "data-label": "#" }, String(number)), el("td", { class: "c-game" }, link),
        el("td", { class: "c-seats" }, seatsCell(g, focusIndex)),
        el("td", { class: "num c-faults" + (faults ? " warn" : ""), "data-label": "faults" }, String(faults)),
        el("td", { class: "small muted nowrap c-finished", "data-label": "finished" }, g.finished)));
    }
    table.appendChild(body);
    return el("div", { class: "scroll" }, table);
  }

  function numbered() {
    return games.map((game, i) => ({ game, number: i + 1 }));
  }

  // -- pages ------------------------------------------------------------------------------

  function pageIndex() {
    document.title = `Leaderboard · ${R.tournament.id} · Sushi Go! Arena`;
    const rows = R.leaderboard.rows;
    const keys = rows.map((r) => r.key);
    main.appendChild(el("h1", {}, `Leaderboard · ${R.tournament.id}`));
    main.appendChild(headline());
    if (!rows.length) {
      main.appendChild(el("p", {}, "No rated games yet."));
    } else {
      main.appendChild(el("section", { "aria-labelledby": "h-board" },
        el("h2", { id: "h-board" }, "Leaderboard"),
        el("div", { class: "board-wrap" }, leaderboardTable(rows)),
        el("p", { class: "small muted" }, "Elo: one joint fit of every pair of seats (a shared place is a draw), mean 1500; the bar is the 95% interval from resampling duplicate sets. Wins: first places (a shared first is split). Vs table: mean points above the tables the bot sat at. Column headers sort.")));
    }
    if (R.leaderboard.skipped.length) {
      main.appendChild(el("section", { "aria-labelledby": "h-skipped" }, el("h2", { id: "h-skipped" }, "Skipped bots"),
        el("ul", {}, R.leaderboard.skipped.map((s) => el("li", {}, el("b", {}, s.bot), ": ", s.reason)))));
    }
    if (rows.length) {
      main.appendChild(el("section", { "aria-labelledby": "h-rating" }, el("h2", { id: "h-rating" }, "Ratings as the games accumulate"),
        ratingChart(R.timeline, keys),
        el("p", { class: "small muted" }, "Each point refits every rating on the games recorded up to then, in the order they finished; the last point is the leaderboard.")));
      main.appendChild(el("section", { "aria-labelledby": "h-h2h" }, el("h2", { id: "h-h2h" }, "Head to head"), headToHead(keys)));
      main.appendChild(el("section", { "aria-labelledby": "h-faults" }, el("h2", { id: "h-faults" }, "Faults"), faultSection(keys)));
    }
    main.appendChild(el("p", {}, el("a", { href: "games.html" }, `All ${games.length} games →`)));
  }

  function pageGames() {
    document.title = `Games · ${R.tournament.id} · Sushi Go! Arena`;
    main.appendChild(el("h1", {}, `Games · ${R.tournament.id}`));
    main.appendChild(headline());
    const select = el("select", { id: "filter-bot" }, el("option", { value: "" }, "every bot"), bots.map((b) => el("option", { value: b.key }, b.label)));
    const faultsOnly = el("input", { type: "checkbox", id: "filter-faults" });
    const count = el("p", { id: "games-count", "aria-live": "polite" });
    const holder = el("div");
    main.appendChild(el("div", { class: "filters", role: "search" },
      el("label", { for: "filter-bot" }, "Games of "), select,
      el("label", {}, faultsOnly, " only games with faults")));
    main.appendChild(count);
    main.appendChild(holder);
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.get("bot") && botIndex.has(params.get("bot"))) select.value = params.get("bot");
    faultsOnly.checked = params.get("faults") === "1";
    function draw() {
      const key = select.value;
      const index = key ? botIndex.get(key) : -1;
      const list = numbered().filter(({ game }) =>
        (index < 0 || game.seats.some((s) => s[0] === index)) &&
        (!faultsOnly.checked || (game.faults || []).some((f) => index < 0 || game.seats[f[0]][0] === index)));
      UI.clear(holder).appendChild(gamesTable(list, key || undefined));
      count.textContent = `${list.length} of ${games.length} games` + (key ? ` with ${label(key)}` : "") + (faultsOnly.checked ? ", with faults" : "");
      const hash = new URLSearchParams();
      if (key) hash.set("bot", key);
      if (faultsOnly.checked) hash.set("faults", "1");
      history.replaceState(null, "", hash.toString() ? "#" + hash.toString() : location.pathname);
    }
    select.addEventListener("change", draw);
    faultsOnly.addEventListener("change", draw);
    draw();
  }

  function pageBot() {
    const key = decodeURIComponent(location.hash.slice(1));
    if (!botIndex.has(key)) {
      main.appendChild(el("h1", {}, "Bot"));
      main.appendChild(UI.problem(key ? `No bot ${key} in this tournament.` : "Which bot? Pick one:"));
      main.appendChild(el("ul", {}, bots.map((b) => el("li", {}, botLink(b.key)))));
      return;
    }
    const bot = bots[botIndex.get(key)];
    const row = rowOf.get(key);
    const detail = R.details[key] || { opponents: {}, seats: [] };
    document.title = `${bot.label} · ${R.tournament.id} · Sushi Go! Arena`;
    main.appendChild(el("h1", {}, bot.label));
    main.appendChild(el("p", { class: "muted small" }, `${bot.name} · version ${bot.version || "–"} · content hash ${bot.hash} · tournament ${R.tournament.id}`));
    if (row) {
      const facts = [
        ["rank", `${row.rank} of ${R.leaderboard.rows.length}`],
        ["Elo", UI.fixed(row.elo, 0)],
        ["95% interval", Number.isFinite(row.elo_low) ? `${UI.fixed(row.elo_low, 0)}–${UI.fixed(row.elo_high, 0)}` : "–"],
        ["games", String(row.games)],
        ["wins", `${UI.general(row.wins)} (${UI.fixed(100 * row.win_share, 1)}%)`],
        ["mean points", UI.fixed(row.mean_points, 1)],
        ["mean rank", UI.fixed(row.mean_rank, 2)],
        ["faults", faultText(row.faults)],
      ];
      main.appendChild(el("dl", { class: "stats", id: "bot-stats" }, facts.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))));
    } else {
      main.appendChild(el("p", {}, "This bot has no rated game in this tournament."));
    }
    const opponents = Object.entries(detail.opponents).map(([other, o]) => ({ other, ...o, share: (o.wins + o.draws / 2) / (o.wins + o.draws + o.losses || 1) }));
    main.appendChild(el("section", { "aria-labelledby": "h-opp" }, el("h2", { id: "h-opp" }, "Against each opponent"),
      opponents.length ? el("div", { class: "scroll" }, UI.sortableTable([
        { key: "other", label: "opponent", sort: (o) => label(o.other).toLowerCase(), cell: (o) => botLink(o.other) },
        { key: "pairs", label: "met", num: true, sort: (o) => o.pairs, cell: (o) => String(o.pairs) },
        { key: "wdl", label: "won–drawn–lost", num: true, sort: (o) => o.wins - o.losses, cell: (o) => `${UI.general(o.wins)}–${UI.general(o.draws)}–${UI.general(o.losses)}` },
        { key: "share", label: "score %", num: true, sort: (o) => o.share, cell: (o) => UI.fixed((100 * o.share), 0) },
        { key: "mean_points", label: "its mean points", num: true, sort: (o) => o.mean_points, cell: (o) => UI.fixed(o.mean_points, 1) },
        { key: "opponent_mean_points", label: "opponent's", num: true, sort: (o) => o.opponent_mean_points, cell: (o) => UI.fixed(o.opponent_mean_points, 1) },
      ], opponents, { id: "opponents", caption: "Results against each opponent", sortKey: "share", ascending: false, rowHeader: "other" })) : el("p", {}, "No rated game against another bot.")));
    main.appendChild(el("section", { "aria-labelledby": "h-seat" }, el("h2", { id: "h-seat" }, "By seat"),
      detail.seats.length ? el("div", { class: "scroll" }, UI.sortableTable([
        { key: "seat", label: "seat", num: true, sort: (s) => s.seat, cell: (s) => String(s.seat) },
        { key: "games", label: "games", num: true, sort: (s) => s.games, cell: (s) => String(s.games) },
        { key: "wins", label: "wins", num: true, sort: (s) => s.wins, cell: (s) => UI.general(s.wins) },
        { key: "mean_points", label: "mean points", num: true, sort: (s) => s.mean_points, cell: (s) => UI.fixed(s.mean_points, 1) },
        { key: "mean_rank", label: "mean rank", num: true, sort: (s) => s.mean_rank, cell: (s) => UI.fixed(s.mean_rank, 2) },
      ], detail.seats, { id: "seats", caption: "Results by seat", sortKey: "seat" })) : el("p", {}, "No rated game.")));
    const faultLines = Object.entries((row && row.faults) || {}).filter(([, c]) => c);
    main.appendChild(el("section", { "aria-labelledby": "h-bfaults" }, el("h2", { id: "h-bfaults" }, "Faults"),
      faultLines.length ? el("ul", { id: "bot-faults" }, faultLines.map(([kind, count]) => el("li", {}, el("b", {}, `${kind} ×${count}`), ": ", gameLinks(faultGames(key, kind), key))))
        : el("p", {}, "No faults.")));
    const mine = numbered().filter(({ game }) => game.seats.some((s) => s[0] === botIndex.get(key)));
    main.appendChild(el("section", { "aria-labelledby": "h-bgames" }, el("h2", { id: "h-bgames" }, `Its games (${mine.length})`), gamesTable(mine, key)));
  }

  const pages = { index: pageIndex, games: pageGames, bot: pageBot };
  pages[document.body.dataset.page]();
  if (document.body.dataset.page === "bot") window.addEventListener("hashchange", () => location.reload());
})();
