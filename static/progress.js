// Live progress of background work (quorum/progress.py). An element with data-progress-url shows a
// run; its URL answers JSON whose `html` is the same fragment rendered now. The element is replaced
// by it every 1.5 s until a fragment comes without data-progress-url: the run has finished and
// shows its result, or its error with what to do. No page reload; the request that started the
// work has long returned.
(function () {
  "use strict";
  const INTERVAL = 1500;

  function fragment(html) {
    const holder = document.createElement("template");  // parses a <tr> as well as a <div>
    holder.innerHTML = html.trim();
    return holder.content.firstElementChild;
  }

  function follow(element) {
    const url = element.dataset.progressUrl;
    let current = element;
    async function poll() {
      let delay = INTERVAL;
      try {
        const response = await fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"});
        if (response.status === 403 || response.status === 404) { return; }  // signed out, or the run is gone
        if (response.ok) {
          const run = await response.json();
          const next = fragment(run.html);
          if (next) { current.replaceWith(next); current = next; }
          if (run.finished) {
            current.dispatchEvent(new CustomEvent("quorum:run-finished", {bubbles: true, detail: run}));
            showFirstOutput(current);
            return;
          }
        } else {
          delay = 2 * INTERVAL;  // a server hiccup: ask again, less often
        }
      } catch (e) {
        delay = 2 * INTERVAL;  // the network: ask again
      }
      setTimeout(poll, delay);
    }
    setTimeout(poll, INTERVAL);
  }

  // A page that said it had no output yet ([data-no-output]) shows the first one at once, rather
  // than "No results yet" beside a link to them.
  function showFirstOutput(finished) {
    const link = finished.querySelector("a[data-shows-output]");
    if (link && document.querySelector("[data-no-output]")) { window.location.assign(link.href); }
  }

  function start() { document.querySelectorAll("[data-progress-url]").forEach(follow); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
