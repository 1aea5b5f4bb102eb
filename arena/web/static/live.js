// Keeps a server-drawn page live: on each change event of the store, the page is fetched
// again and its <main> swapped in (the same markup a reload would give; nothing a bot wrote
// is ever inserted as anything but the server's escaped HTML).
"use strict";

(function () {
  const source = document.body.dataset.live;
  if (!source || !window.EventSource || !window.DOMParser) return;
  let busy = false;
  let again = false;

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const response = await fetch(location.href, { headers: { accept: "text/html" }, credentials: "same-origin", cache: "no-store" });
      if (response.ok) {
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = doc.getElementById("main");
        const here = document.getElementById("main");
        const active = document.activeElement;
        // A form being filled in is not swapped away under the person typing.
        if (fresh && here && !(active && here.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName))) {
          here.replaceWith(fresh);
          document.body.dataset.updated = String(Date.now());
        }
      }
    } catch (e) {
      // The server is restarting: the next event tries again.
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  const events = new EventSource(source);
  events.addEventListener("change", refresh);
})();
