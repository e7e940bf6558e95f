// A box shown only while a control of its form holds one of the values it names:
//   <fieldset data-shown-when="provider=prolific">, <div data-shown-when="task_type=a,b">.
// The control is a select or a group of radio buttons, found by name in the box's own form. Without
// JavaScript every box is shown; a hidden box's fields keep their values and are still posted.
(function () {
  "use strict";

  function rule(box) {
    const text = box.dataset.shownWhen;
    const at = text.indexOf("=");
    return {name: text.slice(0, at), values: text.slice(at + 1).split(",").filter(Boolean)};
  }

  function update(form) {
    form.querySelectorAll("[data-shown-when]").forEach(function (box) {
      const {name, values} = rule(box);
      const control = form.elements.namedItem(name);  // a select, or a RadioNodeList whose value is the checked one
      if (!control) { return; }
      box.hidden = !values.includes(control.value);
    });
  }

  function start() {
    const forms = new Set();
    document.querySelectorAll("[data-shown-when]").forEach(function (box) {
      const form = box.closest("form");
      if (form) { forms.add(form); }
    });
    forms.forEach(function (form) {
      form.addEventListener("change", function () { update(form); });
      update(form);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
