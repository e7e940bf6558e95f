/* The annotator work page: live checks, Ctrl+Enter, focus, active-time measurement, typing counts.
 *
 * No check is implemented here. While the annotator types, the answers are posted (debounced) to
 * the server's check endpoint, which runs the very code that judges the submission, and its
 * messages are shown under the fields. Messages are inserted with textContent, never as HTML.
 * Without JavaScript the page still works: the server checks on submit.
 */
(function () {
  "use strict";

  var form = document.getElementById("work-form");
  if (!form) return;

  // "Saved. Here is your next item." is said once: the address bar drops its ?saved=1, so a reload
  // shows the item alone (the page was answered with the notice already).
  function withoutSavedMark(href) {
    var address = new URL(href, location.href);
    address.searchParams.delete("saved");
    return address.pathname + address.search + address.hash;
  }
  if (/[?&]saved=1(&|$)/.test(location.search)) history.replaceState(history.state, "", withoutSavedMark(location.href));

  var DEBOUNCE_MS = 300;
  var checkUrl = form.getAttribute("data-check-url");
  var fields = Array.prototype.slice.call(form.querySelectorAll("textarea[data-answer]"));
  var activeInput = document.getElementById("active_seconds");
  var status = document.getElementById("check-status");

  /* --- Active time: seconds during which the page is visible and has focus. --- */
  var active = parseFloat(activeInput && activeInput.value) || 0; // carried over a refused submit
  var lastTick = Date.now();
  function pageInUse() {
    return document.visibilityState === "visible" && document.hasFocus();
  }
  function tick() {
    var now = Date.now();
    // Cap each step: a sleeping laptop or a throttled background timer must not add minutes.
    if (pageInUse()) active += Math.min(now - lastTick, 2000) / 1000;
    lastTick = now;
  }
  // One timer per window: a page shown in place of the previous one (below) stops that page's timer.
  if (window.quorumActiveTimer) clearInterval(window.quorumActiveTimer);
  window.quorumActiveTimer = setInterval(tick, 1000);
  document.addEventListener("visibilitychange", function () { lastTick = Date.now(); });
  window.addEventListener("focus", function () { lastTick = Date.now(); });
  function recordActiveTime() {
    tick();
    if (activeInput) activeInput.value = active.toFixed(1);
  }
  form.addEventListener("submit", recordActiveTime);

  /* --- Typing telemetry (the page tells the worker): per text field, characters typed, characters
   * pasted, keystrokes and paste events. Only counts are kept, never the keys. The server's
   * `clean_telemetry` keeps the same four names; reviewers see "mostly pasted" as a flag.
   * An input method (pinyin, kana, Hangul; dictation or autocomplete that composes) sends an input
   * event for every update of its composition ("n", "ni", ... "nihao", then "你好"): only what it
   * commits ends in the text, so that is what is typed, counted once when the composition ends.
   * The keys it takes while composing are not counted (how many a character needs depends on the
   * method, none for dictation): a composition is one keystroke, the key that opened it. --- */
  var telemetryInput = document.getElementById("telemetry");
  var counts = {};
  try {
    var carried = JSON.parse((telemetryInput && telemetryInput.value) || "{}"); // kept over a refused submit
    if (carried && typeof carried === "object") counts = carried;
  } catch (e) { counts = {}; }
  function countsFor(name) {
    var c = counts[name];
    if (!c || typeof c !== "object") {
      c = counts[name] = {};
    }
    ["typed_chars", "pasted_chars", "keystrokes", "paste_events"].forEach(function (k) {
      if (typeof c[k] !== "number") c[k] = 0;
    });
    return c;
  }
  function recordTelemetry() {
    if (telemetryInput) telemetryInput.value = JSON.stringify(counts);
  }
  Array.prototype.slice.call(form.querySelectorAll("textarea, input[type=text]")).forEach(function (field) {
    if (!field.name) return;
    field.addEventListener("keydown", function (event) {
      if (event.isComposing || ["Shift", "Control", "Alt", "Meta", "CapsLock"].indexOf(event.key) >= 0) return;
      countsFor(field.name).keystrokes += 1;
    });
    field.addEventListener("paste", function (event) {
      var text = (event.clipboardData || window.clipboardData);
      text = text ? text.getData("text") : "";
      var c = countsFor(field.name);
      c.pasted_chars += text.length;
      c.paste_events += 1;
    });
    var committed = null;  // what a composition just committed, until its last input event is by
    field.addEventListener("compositionend", function (event) {
      committed = event.data || "";
      countsFor(field.name).typed_chars += committed.length;
      setTimeout(function () { committed = null; }, 0);
    });
    field.addEventListener("input", function (event) {
      var kind = event.inputType || "";
      // The updates of a composition, and the input event some browsers send for its commit after
      // compositionend, are the text compositionend counted.
      if (event.isComposing || kind === "insertCompositionText" || kind === "insertFromComposition" || kind === "deleteCompositionText") return;
      if (committed !== null && kind === "insertText" && event.data === committed) return;
      if (kind === "insertText" || kind === "insertReplacementText") {
        countsFor(field.name).typed_chars += (event.data || "").length;
      } else if (kind === "insertLineBreak" || kind === "insertParagraph") {
        countsFor(field.name).typed_chars += 1;
      }
      // insertFromPaste and insertFromDrop are counted by the paste handler (drops count as neither).
    });
  });
  form.addEventListener("submit", recordTelemetry);
  // drafts.js keeps the records with the text it keeps.
  window.QuorumWork = { record: function () { recordActiveTime(); recordTelemetry(); } };

  /* --- Keyboard: focus the first field (or the first one with a problem); Ctrl+Enter submits. --- */
  // The element the page names (the first choice of a choice-and-text page, or the field with a
  // problem) comes first: focusing the first text box instead made a digit type into it.
  var first = form.querySelector("[autofocus]") || fields[0];
  if (first && document.activeElement !== first) first.focus();
  if (first && first.tagName === "TEXTAREA") first.setSelectionRange(first.value.length, first.value.length);

  // Ctrl+Enter submits from anywhere on the page, not only with the focus in the form.
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (typeof form.requestSubmit === "function") {
        form.requestSubmit(document.getElementById("submit-button"));
      } else {
        recordActiveTime();
        recordTelemetry();
        form.submit();
      }
    }
  });

  /* --- Live checks. A field shows messages once it has been typed in (or was refused). --- */
  var touched = {};
  // A touch screen without a keyboard has no Ctrl+Enter to offer (as the key hints, hidden by quorum.css).
  var keysHinted = !(window.matchMedia && window.matchMedia("(hover: none) and (pointer: coarse)").matches);
  fields.forEach(function (field) {
    if (field.value.trim() !== "" || field.getAttribute("aria-invalid") === "true") touched[field.name] = true;
  });

  function showProblems(field, messages) {
    var list = document.getElementById("problems_" + field.name);
    if (!list) return;
    while (list.firstChild) list.removeChild(list.firstChild);
    var box = field.closest(".field");
    if (messages.length === 0) {
      field.removeAttribute("aria-invalid");
      if (box) box.classList.remove("has-problems");
      if (field.value.trim() !== "") {
        var ok = document.createElement("li");
        ok.className = "passes";
        ok.textContent = "Looks good.";
        list.appendChild(ok);
      }
      return;
    }
    field.setAttribute("aria-invalid", "true");
    if (box) box.classList.add("has-problems");
    messages.forEach(function (message) {
      var item = document.createElement("li");
      item.textContent = message;
      list.appendChild(item);
    });
  }

  var timer = null;
  var sequence = 0;
  var sending = false;  // the form's answers are on their way (below)
  function answers() {
    var values = {};
    fields.forEach(function (field) { values[field.name] = field.value; });
    // The choices made so far, so the check judges the whole answer (a chat's verdict, a vote).
    Array.prototype.forEach.call(form.querySelectorAll("input[type=radio]:checked"), function (radio) {
      values[radio.name] = radio.value;
    });
    return values;
  }

  function runCheck() {
    if (sending) return;  // the answers are on their way: this page is about to be replaced
    var mine = ++sequence;
    fetch(checkUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ answers: answers() })
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (result) {
        if (mine !== sequence) return; // a newer check is on its way; this answer is stale
        var byField = {};
        (result.problems || []).forEach(function (problem) {
          (byField[problem.field] = byField[problem.field] || []).push(problem.message);
        });
        var allTouched = true;
        fields.forEach(function (field) {
          if (touched[field.name]) showProblems(field, byField[field.name] || []);
          else allTouched = false;
        });
        if (status) status.textContent = result.ok && allTouched ? (keysHinted ? "All checks pass. Press Submit or Ctrl+Enter." : "All checks pass. Press Submit.") : "";
        // The "Not saved: fix N problems" box is about the refused submission: once the answers
        // pass every check it would only contradict the fields' "Looks good", so it goes.
        var summary = document.getElementById("problem-summary");
        if (summary && result.ok) summary.hidden = true;
      })
      .catch(function () {
        if (mine !== sequence) return;
        if (status) status.textContent = "Could not check your text just now; it will be checked when you submit.";
      });
  }

  fields.forEach(function (field) {
    field.addEventListener("input", function () {
      touched[field.name] = true;
      clearTimeout(timer);
      timer = setTimeout(runCheck, DEBOUNCE_MS);
    });
  });

  /* --- Choice keys, the same on every task page: a digit picks that point of the current choice (the
   * group holding the focus, else the first one not answered yet): the option whose value is the digit
   * (a rating scale), else the option at that position (1 = the first); `a` picks N/A where a question
   * offers it and moves to its reason; y / n answer a vote. Then the focus moves to the next unanswered
   * group, or Submit. Never while typing in a text field, where the keys are text. --- */
  function isTyping(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text") || target.isContentEditable);
  }
  function choiceGroups() {
    return Array.prototype.slice.call(form.querySelectorAll("fieldset")).filter(function (f) {
      return f.querySelector("input[type=radio]") && !f.querySelector(":scope fieldset input[type=radio]");
    });
  }
  function unanswered(group) { return !group.querySelector("input[type=radio]:checked"); }
  function currentGroup(groups) {
    var holder = document.activeElement && document.activeElement.closest && document.activeElement.closest("fieldset");
    if (holder && groups.indexOf(holder) >= 0) return holder;
    return groups.filter(unanswered)[0] || (groups.indexOf(lastGroup) >= 0 ? lastGroup : null);  // all answered: change the last one
  }
  var lastGroup = null;
  function optionFor(group, key) {
    var radios = Array.prototype.slice.call(group.querySelectorAll("input[type=radio]")).filter(function (r) { return r.value !== "na"; });
    if (key === "a") return group.querySelector('input[type=radio][value="na"]');
    if (key === "y" || key === "n") return group.querySelector('input[type=radio][value="' + (key === "y" ? "for" : "against") + '"]');
    var byValue = radios.filter(function (r) { return r.value === key; })[0];
    if (byValue) return byValue;
    var numeric = radios.some(function (r) { return /^-?[0-9]+$/.test(r.value); });
    return numeric ? null : radios[parseInt(key, 10) - 1] || null;  // a scale's digits are its values only
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    if (!/^([0-9]|a|y|n)$/.test(event.key)) return;
    var groups = choiceGroups();
    var group = currentGroup(groups);
    var radio = group && optionFor(group, event.key);
    if (!radio) return;
    event.preventDefault();
    radio.click();
    lastGroup = group;
    if (event.key === "a") {
      var reason = document.getElementById(radio.name ? "id_" + radio.name + "_na_reason" : "");
      if (reason) { reason.focus(); return; }  // N/A needs its reason: type it, then Tab on
    }
    var later = groups.slice(groups.indexOf(group) + 1).filter(unanswered)[0];
    var next = later ? later.querySelector("input[type=radio]") : document.getElementById("submit-button");
    if (next) next.focus();
  });

  /* --- One request per item: the submission is sent by fetch and answered with the next item's page
   * (header X-Quorum-Location names its URL), which replaces this one; the address bar then names the
   * new item (history.replaceState), so a reload asks for that item and never posts again, and Back
   * leads where it led before. The server answers anything else (a refusal, "already saved") with the
   * page a form post gets, shown the same way. Forms that send files are left to their own script
   * (static/spoken.js); without fetch, or when the request fails, the form is posted as usual. --- */
  function showPage(html, url) {
    document.open();
    document.write(html);
    document.close();
    if (url) history.replaceState(null, "", withoutSavedMark(url));
  }
  form.addEventListener("submit", function (event) {
    if (event.defaultPrevented || !window.fetch || !window.FormData || form.enctype === "multipart/form-data") return;
    if (event.submitter && event.submitter.hasAttribute("formaction")) return;  // Skip posts elsewhere, as a form
    event.preventDefault();
    if (sending) return;  // a double click or a second Ctrl+Enter: the first submission stands
    sending = true;
    clearTimeout(timer);
    sequence += 1;  // a check still under way is stale: it must not write into the next item's page
    fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-Quorum-Cycle": "page", "Accept": "text/html" },
      body: new URLSearchParams(new FormData(form))
    })
      .then(function (response) {
        var away = response.headers.get("X-Quorum-Go-To");  // saved; the next page is not a work page
        var url = response.headers.get("X-Quorum-Location") || (response.redirected ? response.url : "");
        // Told before the page is replaced, while the answers are still on it (a chat ends its
        // conversation only now: a refused judgement leaves it open).
        if (away || url) form.dispatchEvent(new CustomEvent("quorum:saved"));
        if (away) { window.location.assign(away); return; }
        return response.text().then(function (html) { showPage(html, url); });
      })
      .catch(function () {
        sending = false;
        form.submit();  // the plain post: the server keeps the first of two submissions
      });
  });

  // Every listener is attached: typing from here on is counted and checked.
  form.setAttribute("data-ready", "true");
})();
