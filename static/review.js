// The review queue's keys: j/k move between responses, x selects, a/r/e/c decide the selected
// responses (or the current one when none is selected) with the reason typed in the bar. A keyed
// decision is asked first in the bar ("Exclude 3 responses? Press e again or Enter; Esc cancels"),
// so a stray key never decides; the buttons decide at once.
// Plain script, no build step; keys are ignored while typing in a field.
(function () {
  "use strict";
  var form = document.getElementById("bulk-form");
  if (!form) return;
  var rows = Array.prototype.slice.call(document.querySelectorAll(".review-row"));
  var current = -1;
  var ACTIONS = { a: "accept", r: "reject", e: "exclude", c: "recollect" };
  var armed = null;  // the key whose decision waits for its confirmation
  var ask = document.getElementById("bulk-confirm");

  function disarm() {
    armed = null;
    if (ask) { ask.hidden = true; ask.textContent = ""; }
  }

  function focusRow(index) {
    if (!rows.length) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (current >= 0) rows[current].classList.remove("current");
    current = index;
    rows[current].classList.add("current");
    rows[current].focus({ preventScroll: true });
    rows[current].scrollIntoView({ block: "nearest" });
  }

  function decide(action) {
    var picked = form.querySelectorAll("input.pick:checked");
    if (!picked.length && current >= 0) {
      rows[current].querySelector("input.pick").checked = true;
      picked = form.querySelectorAll("input.pick:checked");
    }
    if (!picked.length) return;
    var reason = document.getElementById("bulk-reason");
    if (!reason.value.trim()) {
      // A decision needs its reason: ask for it where it is typed, then the key again.
      reason.focus();
      reason.setAttribute("placeholder", "Type the reason, then press the button (or Esc and the key)");
      return;
    }
    var button = document.getElementById("bulk-" + action);
    if (!button) return;
    if (!ask) { button.click(); return; }
    var n = picked.length;
    armed = action;
    ask.hidden = false;
    ask.textContent = button.textContent + " " + n + " response" + (n === 1 ? "" : "s") + "? Press the key again or Enter to confirm; Esc cancels.";
  }

  function confirmArmed() {
    var button = document.getElementById("bulk-" + armed);
    disarm();
    if (button) button.click();
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "Escape" && armed) { disarm(); event.preventDefault(); return; }
    if (event.key === "Escape" && target && target.blur) { target.blur(); return; }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) && target.type !== "checkbox") return;
    if (armed && (event.key === "Enter" || ACTIONS[event.key] === armed)) { event.preventDefault(); confirmArmed(); return; }
    if (armed) disarm();  // any other key cancels
    if (event.key === "j") { focusRow(current + 1); event.preventDefault(); }
    else if (event.key === "k") { focusRow(current - 1); event.preventDefault(); }
    else if (event.key === "x" && current >= 0) {
      var box = rows[current].querySelector("input.pick");
      box.checked = !box.checked;
      event.preventDefault();
    } else if (ACTIONS[event.key]) { decide(ACTIONS[event.key]); event.preventDefault(); }
  });
})();
