// The review history's bulk decisions: a group's box ticks (or clears) every decision of that bulk
// decision that can still be undone.
(function () {
  "use strict";
  document.querySelectorAll(".decision-group .pick-group").forEach(function (box) {
    box.addEventListener("change", function () {
      box.closest(".decision-group").querySelectorAll("input.pick").forEach(function (one) { one.checked = box.checked; });
    });
  });
})();
