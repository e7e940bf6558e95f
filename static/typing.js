/* Typing-process capture on the work page's free-text answer fields (the page tells the worker).
 *
 * Timing only, never which keys: for each field named in the form's data-typing-fields, each
 * change of its text (typed, deleted, pasted, dropped, inserted without a key, undone, cut, or
 * changed with no input event at all) with the change in length, each focus change of the field,
 * of the window and of the page, and the time since the field's previous event in 5 ms steps.
 * A composition of an input method (pinyin, kana, Hangul; a phone keyboard's words; dictation) is
 * one event, when it ends: what it committed, not each update it showed on the way. Key and input
 * events a script dispatched (an extension typing for the worker) are recorded as text inserted
 * with no key, whatever they claim.
 * The format, and its check on the server, is annotation/text/typing_log.py. The record goes in the
 * hidden input #typing_log when the form is submitted: no request of its own.
 */
(function () {
  "use strict";

  var form = document.getElementById("work-form");
  var input = document.getElementById("typing_log");
  if (!form || !input) return;
  var names = (form.getAttribute("data-typing-fields") || "").split(" ").filter(Boolean);
  if (!names.length) return;

  var QUANTUM_MS = 5, MAX_EVENTS = 1500, MAX_DT = 1679615, KEY_WINDOW_MS = 1000;
  var DEFAULT_SIZE = { k: 1, d: -1 };
  var records = {};
  var carried = {};
  try {
    carried = JSON.parse(input.value || "{}") || {}; // kept over a refused submit
  } catch (e) { carried = {}; }

  function clock() { return (window.performance && performance.now) ? performance.now() : Date.now(); }

  function Recorder(field, old) {
    this.field = field;
    this.length = field.value.length;
    this.last = clock();
    this.keyAt = -1;
    this.count = 0;
    this.composition = null;  // while one is open: {from: the length before it, keyed: a key went into it}
    this.ending = false;      // it has ended; its last input event may still come (Firefox, Safari)
    var ok = old && typeof old === "object" && old.v === 1 && typeof old.e === "string";
    this.record = ok ? old : { v: 1, l: this.length, e: "", c: {}, z: {} };
    if (ok) this.count = (old.e.match(/[A-Z]/g) || []).length;
  }
  Recorder.prototype.add = function (letter, size) {
    var now = clock();
    var dt = Math.min(Math.round((now - this.last) / QUANTUM_MS), MAX_DT);
    this.last = now;
    var r = this.record;
    r.c[letter] = (r.c[letter] || 0) + 1;
    if (size) r.z[letter] = (r.z[letter] || 0) + size;
    if (this.count >= MAX_EVENTS) { r.t = true; return; }
    this.count += 1;
    var token = letter.toUpperCase() + dt.toString(36);
    if (size !== (DEFAULT_SIZE[letter] || 0)) token += "." + size.toString(36);
    r.e += token;
  };
  /* A change nobody announced (a script set .value): say so before the next event. */
  Recorder.prototype.sync = function () {
    var length = this.field.value.length;
    if (length !== this.length) {
      this.add("s", length - this.length);
      this.length = length;
    }
  };
  Recorder.prototype.compositionStart = function () {
    this.settle();
    this.sync();
    // seen: the input method itself changed the text (a trusted update). Chrome marks the
    // compositionend of a commit untrusted, so the composition events cannot say it themselves.
    this.composition = { from: this.length, keyed: this.keyAt >= 0 && clock() - this.keyAt < KEY_WINDOW_MS, seen: false };
  };
  Recorder.prototype.compositionEnd = function () {
    if (!this.composition || this.ending) return;
    this.ending = true;
    var rec = this;
    setTimeout(function () { rec.settle(); }, 0);
  };
  /* A composition that ended (or is left by the focus), as one event: keyed (m), or with no key
   * pressed (i: voice dictation, handwriting), and the change its commit made to the text's length;
   * one a script staged (no key, no update from an input method) is text inserted with no key (x). */
  Recorder.prototype.settle = function (open) {
    if (!this.composition || !(this.ending || open)) return;
    var length = this.field.value.length;
    var c = this.composition;
    this.add(c.keyed ? "m" : c.seen ? "i" : "x", length - c.from);
    this.length = length;
    this.composition = null;
    this.ending = false;
    this.keyAt = -1;
  };
  Recorder.prototype.onKey = function (event) {
    if (this.composition && !this.ending) {
      this.composition.keyed = true;
      return;  // the composition's text is not settled yet: nothing to sync
    }
    this.settle();
    this.sync();
    this.keyAt = clock();
  };
  Recorder.prototype.onInput = function (event) {
    var kind = event.inputType || "";
    if (this.composition) {
      if (event.isTrusted) this.composition.seen = true;
      // An update, or the commit's own event (after compositionend in some browsers): settle() records it.
      if (!this.ending || event.isComposing || /^insertText$|Composition/.test(kind)) return;
      this.settle();
    }
    var length = this.field.value.length;
    var delta = length - this.length;
    this.length = length;
    var keyed = this.keyAt >= 0 && clock() - this.keyAt < KEY_WINDOW_MS;
    this.keyAt = -1;
    var letter;
    if (!event.isTrusted) letter = "x";  // dispatched by a script: whatever kind it claims, no one typed it
    else if (kind === "insertFromPaste") letter = "p";
    else if (kind === "insertFromDrop") letter = "r";
    else if (kind.indexOf("history") === 0) letter = "u";
    else if (kind === "deleteByCut" || kind === "deleteByDrag") letter = "c";
    else if (keyed && kind.indexOf("delete") === 0) letter = "d";
    else if (keyed && kind) letter = "k";
    else letter = "x";
    this.add(letter, delta);
  };

  // Text typed into the page that is not an answer field but is the worker's own words (a chat
  // message box) names its record with data-typing-name; the server accepts the names it expects.
  var extra = Array.prototype.slice.call(form.querySelectorAll("[data-typing-name]"));
  var recorders = [];
  names.concat(extra.map(function (el) { return el.getAttribute("data-typing-name"); })).forEach(function (name) {
    var field = form.querySelector('[name="' + name + '"]') || form.querySelector('[data-typing-name="' + name + '"]');
    if (!field || (field.tagName !== "TEXTAREA" && field.tagName !== "INPUT")) return;
    var rec = new Recorder(field, carried[name]);
    records[name] = rec.record;
    recorders.push(rec);
    // keydown says only that a key was pressed: which one is never read. A key a script dispatched
    // (not isTrusted: an extension "typing" for the worker) is no key.
    field.addEventListener("keydown", function (event) { if (event.isTrusted) rec.onKey(event); });
    field.addEventListener("compositionstart", function () { rec.compositionStart(); });
    field.addEventListener("compositionend", function () { rec.compositionEnd(); });
    field.addEventListener("input", function (event) { rec.onInput(event); });
    // Not synced on focus or page events: a drop into a field without focus changes the text, then
    // focuses the field, then sends its input event, which must carry the change itself.
    field.addEventListener("focus", function () { rec.settle(); rec.add("f", 0); });
    // A composition still open as the field loses focus keeps what it shows.
    field.addEventListener("blur", function () { rec.settle(true); rec.sync(); rec.add("b", 0); });
  });

  function all(letter) { recorders.forEach(function (rec) { rec.settle(); rec.add(letter, 0); }); }
  document.addEventListener("visibilitychange", function () { all(document.visibilityState === "hidden" ? "h" : "v"); });
  window.addEventListener("blur", function () { all("w"); });
  window.addEventListener("focus", function () { all("g"); });

  function write() {
    // A composition still open is left alone (drafts.js writes while the worker types): it is
    // recorded when it ends.
    recorders.forEach(function (rec) { rec.settle(); if (!rec.composition) rec.sync(); });
    input.value = JSON.stringify(records);
  }
  form.addEventListener("submit", write, true); // before any other submit handler reads the form
  window.QuorumTyping = { write: write };
})();
