/* The work page keeps what the worker has written until it is submitted: a reload, or leaving the
 * page and coming back to the same item ("Continue your item"), shows it again.
 *
 * The draft lives in this tab's sessionStorage under the worker's slot (the form's data-draft-key),
 * never on the server and never beyond the tab: an in-house annotator on a shared computer leaves
 * nothing behind for the next person. With it go the page's own records of the work (active time,
 * typing counts, the typing log), so restored text is not taken for text that appeared from
 * nowhere. It is restored only into a page whose answers are all empty (a refused submission's
 * page already carries them), before typing.js and annotate.js read those records, and it is
 * dropped when the form is submitted, but for text written outside the answers (a chat message not
 * sent yet), which a refused page cannot carry and gets back from here. Pages that send recordings
 * are left alone: a recording cannot be kept here.
 */
(function () {
  "use strict";

  var form = document.getElementById("work-form");
  // A preview has no key: nothing there is kept.
  if (!form || form.enctype === "multipart/form-data" || !form.getAttribute("data-draft-key")) return;
  var store;
  try {
    store = window.sessionStorage;
    store.getItem("quorum-draft-probe");
  } catch (e) { return; }  // storage refused (a privacy setting): the page works as before
  var key = "quorum-draft:" + form.getAttribute("data-draft-key");
  var RECORDS = ["active_seconds", "telemetry", "typing_log"];
  var SAVE_MS = 400;

  function controls() {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && el.name !== "csrfmiddlewaretoken" && ["submit", "button", "file", "reset"].indexOf(el.type) < 0;
    });
  }
  // Text the worker writes that is not a form field of its own (a chat's message box, named by its
  // data-typing-name), kept under that name.
  var WRITTEN = "written:";
  function written() {
    return Array.prototype.filter.call(form.querySelectorAll("[data-typing-name]"), function (el) {
      return !el.name && (el.tagName === "TEXTAREA" || el.tagName === "INPUT");
    });
  }
  function answerControls() {
    return controls().filter(function (el) { return el.type !== "hidden"; }).concat(written());
  }
  function empty() {
    return answerControls().every(function (el) {
      return (el.type === "radio" || el.type === "checkbox") ? !el.checked : el.value.trim() === "";
    });
  }

  function restore() {
    var draft;
    try { draft = JSON.parse(store.getItem(key) || "null"); } catch (e) { draft = null; }
    if (!draft || typeof draft !== "object" || !draft.values) return;
    var restored = false;
    if (empty()) {
      controls().forEach(function (el) {
        var value = draft.values[el.name];
        if (el.type === "radio" || el.type === "checkbox") {
          if (Array.isArray(value) && value.indexOf(el.value) >= 0) { el.checked = true; restored = true; }
        } else if (typeof value === "string" && (el.type !== "hidden" || RECORDS.indexOf(el.name) >= 0)) {
          el.value = value;
          if (el.type !== "hidden" && value.trim() !== "") restored = true;
        }
      });
    }
    // A refused submission's page carries the posted answers but not these boxes (a chat message
    // not sent yet), so they come back whenever they are empty.
    written().forEach(function (el) {
      var value = draft.values[WRITTEN + el.getAttribute("data-typing-name")];
      if (el.value.trim() === "" && typeof value === "string" && value.trim() !== "") { el.value = value; restored = true; }
    });
    if (!restored) return;
    var notice = document.createElement("p");
    notice.className = "notice";
    notice.id = "draft-notice";
    notice.setAttribute("role", "status");
    notice.textContent = "What you had written here is back: it was kept in this browser tab, not submitted yet.";
    form.parentNode.insertBefore(notice, form);
  }

  function save() {
    // The other scripts write their records into the form's hidden inputs when asked.
    if (window.QuorumTyping) window.QuorumTyping.write();
    if (window.QuorumWork) window.QuorumWork.record();
    if (empty()) { store.removeItem(key); return; }
    var values = {};
    controls().forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") {
        if (el.checked) (values[el.name] = values[el.name] || []).push(el.value);
      } else {
        values[el.name] = el.value;
      }
    });
    written().forEach(function (el) { values[WRITTEN + el.getAttribute("data-typing-name")] = el.value; });
    try { store.setItem(key, JSON.stringify({ values: values })); } catch (e) { /* full: nothing kept */ }
  }

  restore();
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(save, SAVE_MS); }
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  var submitted = false;
  form.addEventListener("submit", function () {
    submitted = true;
    clearTimeout(timer);
    // The answers go with the form; what was written outside them (a chat message not sent yet)
    // does not, so it is kept for the refused page that may follow.
    var unsent = {};
    written().forEach(function (el) {
      if (el.value.trim() !== "") unsent[WRITTEN + el.getAttribute("data-typing-name")] = el.value;
    });
    if (Object.keys(unsent).length === 0) { store.removeItem(key); return; }
    try { store.setItem(key, JSON.stringify({ values: unsent })); } catch (e) { store.removeItem(key); }
  });
  window.addEventListener("pagehide", function () { if (!submitted) save(); });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden" && !submitted) save();
  });
})();
