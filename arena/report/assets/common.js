// Sushi Go! Arena report: helpers shared by the pages and the replay viewer.
// Everything a bot wrote (names, debug values, stderr) is inserted as text, never as markup.
"use strict";

(function () {
  const UI = (window.ArenaUI = window.ArenaUI || {});
  const SVG_NS = "http://www.w3.org/2000/svg";

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else if (name === "class") node.setAttribute("class", value);
      else if (name === "style" && typeof value === "object") {
        for (const [prop, v] of Object.entries(value)) node.style.setProperty(prop, v);
      } else if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    return node;
  }

  /** An HTML element: el("td", {class: "num"}, "12"). */
  UI.el = function (tag, attrs, ...children) {
    return append(setAttrs(document.createElement(tag), attrs), children);
  };

  /** An SVG element. */
  UI.svg = function (tag, attrs, ...children) {
    return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
  };

  UI.clear = function (node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  };

  /** A number with ``digits`` decimals, rounded as the arena's command line rounds it: an
   *  exact tie (1500.5, 0.25) goes to the even digit, where JavaScript would round it up. */
  UI.fixed = function (value, digits) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    const scale = Math.pow(10, digits);
    const scaled = value * scale;
    // Exact ties at 0–2 decimals are multiples of 1/8; anything else is not a tie.
    if (Number.isInteger(value * 8) && !Number.isInteger(scaled) && Number.isInteger(scaled * 2)) {
      const down = Math.floor(scaled);
      return ((down % 2 === 0 ? down : down + 1) / scale).toFixed(digits);
    }
    return Number(value).toFixed(digits);
  };

  /** Like Python's "{:g}" for the small numbers the report shows (wins may be halves). */
  UI.general = function (value) {
    return String(Number(Number(value).toPrecision(6)));
  };

  UI.signed = function (value) {
    return (value > 0 ? "+" : value < 0 ? "−" : "") + Math.abs(value);
  };

  UI.cards = function () {
    return window.ARENA_CARDS;
  };

  UI.palette = function (i) {
    const colours = UI.cards().palette;
    return { colour: colours[i % colours.length], dash: i < colours.length ? null : "6 4" };
  };

  /** The text of one kind's value: maki symbols as dots, a nigiri's points. */
  UI.cardValue = function (kind, onWasabi) {
    if (kind.maki) return "●".repeat(kind.maki);
    if (kind.nigiri) return onWasabi ? `${kind.nigiri}×${UI.cards().wasabi_factor}` : String(kind.nigiri);
    return "";
  };

  UI.describeKind = function (kind, onWasabi) {
    let text = kind.name.replace(/_/g, " ");
    if (kind.maki) text += `, ${kind.maki} maki symbol${kind.maki > 1 ? "s" : ""}`;
    if (kind.nigiri) text += `, ${kind.nigiri} point${kind.nigiri > 1 ? "s" : ""}`;
    if (onWasabi) text += ` on wasabi: ${kind.nigiri * UI.cards().wasabi_factor} points`;
    return text;
  };

  /** One card, drawn: its label always names it; colour is a second cue only. */
  UI.card = function (kindIndex, options) {
    const opts = options || {};
    const kind = UI.cards().kinds[kindIndex];
    const classes = ["card", "k-" + kind.name];
    if (opts.picked) classes.push("picked");
    if (opts.fresh) classes.push("new");
    const note = [opts.picked ? "taken this turn" : null, opts.fresh ? "new this turn" : null].filter(Boolean).join(", ");
    const node = UI.el(
      "span",
      { class: classes.join(" "), style: { "--c": kind.colour, "--ink": kind.ink }, title: UI.describeKind(kind, opts.onWasabi), "data-kind": kind.name },
      UI.el("span", { class: "name" }, kind.label),
      UI.el("span", { class: "value", "aria-hidden": "true" }, UI.cardValue(kind, opts.onWasabi)),
      UI.el("span", { class: "sr-only" }, ` (${UI.describeKind(kind, opts.onWasabi)}${note ? "; " + note : ""})`)
    );
    if (opts.id !== undefined) node.dataset.card = String(opts.id);
    return node;
  };

  UI.cardBack = function () {
    return UI.el("span", { class: "card back", "aria-hidden": "true" });
  };

  /** A sortable table: columns [{key, label, num, sort(row) -> value, cell(row) -> node|text}].
   *  options.class "board" lays it out as one card per row on a narrow screen (report.css). */
  UI.sortableTable = function (columns, rows, options) {
    const opts = options || {};
    const table = UI.el("table", { class: opts.class || null, id: opts.id || null });
    if (opts.caption) table.appendChild(UI.el("caption", { class: "sr-only" }, opts.caption));
    const headRow = UI.el("tr");
    const body = UI.el("tbody");
    let sortKey = opts.sortKey || null;
    let ascending = opts.ascending !== false;
    const heads = columns.map((col) => {
      const th = UI.el("th", { scope: "col", class: col.num ? "num" : null });
      if (col.sort) {
        th.appendChild(
          UI.el("button", {
            type: "button",
            class: "sort",
            onclick: () => {
              ascending = sortKey === col.key ? !ascending : col.num ? false : true;
              sortKey = col.key;
              draw();
            },
          }, col.label)
        );
      } else th.textContent = col.label;
      headRow.appendChild(th);
      return th;
    });
    table.appendChild(UI.el("thead", {}, headRow));
    table.appendChild(body);
    function draw() {
      const ordered = rows.slice();
      const col = columns.find((c) => c.key === sortKey);
      if (col) {
        ordered.sort((a, b) => {
          const x = col.sort(a), y = col.sort(b);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
      }
      columns.forEach((c, i) => {
        if (c.sort) heads[i].setAttribute("aria-sort", c.key === sortKey ? (ascending ? "ascending" : "descending") : "none");
      });
      UI.clear(body);
      for (const row of ordered) {
        const tr = UI.el("tr", opts.rowAttrs ? opts.rowAttrs(row) : {});
        for (const c of columns) {
          const value = c.cell(row);
          // data-label: the column's name, which a table laid out as cards (a phone) shows by each value.
          tr.appendChild(UI.el(c.key === opts.rowHeader ? "th" : "td", { class: [c.num ? "num" : "", "c-" + c.key].join(" ").trim(), scope: c.key === opts.rowHeader ? "row" : null, "data-label": c.label }, value));
        }
        body.appendChild(tr);
      }
    }
    draw();
    return table;
  };

  /** A problem shown in the page instead of a stack trace. */
  UI.problem = function (text) {
    return UI.el("p", { class: "problem", role: "alert" }, text);
  };

  // Skip links move the focus without touching the address (pages keep their state in it).
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a.skip");
    if (!link) return;
    const target = document.querySelector(link.getAttribute("href"));
    if (target) {
      event.preventDefault();
      target.focus();
    }
  });
})();
