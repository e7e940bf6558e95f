// The conversation of a chat item (annotation/tasks/chat.html). The server relays every turn to
// the system and answers with the whole transcript, so the page only draws what it is sent: a
// reload shows the same conversation, and a failed turn shows the polite fallback the server chose.
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat) { return; }
  var url = chat.getAttribute("data-chat-url");
  var log = document.getElementById("chat-log");
  var input = document.getElementById("chat-input");
  var send = document.getElementById("chat-send");
  var error = document.getElementById("chat-error");
  var ended = false;

  function draw(state) {
    log.textContent = "";
    (state.turns || []).forEach(function (turn) {
      var li = document.createElement("li");
      li.className = turn.role + (turn.failed ? " failed" : "");
      var who = document.createElement("span");
      who.className = "speaker";
      who.textContent = turn.role === "user" ? "You" : "System";
      var text = document.createElement("span");
      text.className = "text";
      text.textContent = turn.text;  // text, never HTML: the system's words are not trusted
      li.appendChild(who); li.appendChild(document.createTextNode(" ")); li.appendChild(text);
      log.appendChild(li);
    });
    if (state.unavailable) {
      // The system stopped answering: the worker ends as Fail and submits; the ratings are optional.
      document.getElementById("chat-unavailable").hidden = false;
      document.querySelectorAll('input[name="understanding"], input[name="appropriateness"]').forEach(function (r) { r.required = false; });
    }
    ended = !!state.ended;
    input.disabled = send.disabled = ended;
    if (ended) { input.placeholder = "The conversation has ended."; }
  }

  function call(body) {
    error.textContent = "";
    send.disabled = true;
    return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (data) { return { ok: r.ok, data: data }; }); })
      .then(function (res) {
        if (!res.ok) { error.textContent = res.data.error || "Something went wrong."; send.disabled = ended; return; }
        draw(res.data);
      })
      .catch(function () { error.textContent = "No connection to Quorum; try again."; send.disabled = ended; });
  }

  send.addEventListener("click", function () {
    var text = input.value.trim();
    if (!text || ended) { return; }
    call({ action: "say", text: text }).then(function () { if (!error.textContent) { input.value = ""; } input.focus(); });
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey) { e.preventDefault(); send.click(); }
  });
  document.querySelectorAll('input[name="outcome"]').forEach(function (radio) {
    radio.addEventListener("change", function () { if (!ended) { call({ action: "end", reason: radio.value }); } });
  });
  call({ action: "open" });
})();
