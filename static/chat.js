// The conversation of a chat item (annotation/tasks/chat.html). The server relays every turn to
// the system and answers with the whole transcript, so the page only draws what it is sent: a
// reload shows the same conversation, and a failed turn shows the polite fallback the server chose.
// Choosing Success or Fail never ends the conversation: a verdict can be changed while chatting, and
// the conversation ends only when the judgement is saved (and the minimum was met), so a stray
// click cannot trap the worker. Before the minimum, the page says how many messages remain, or how to
// leave the item (Skip).
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat) { return; }
  var url = chat.getAttribute("data-chat-url");
  var minTurns = parseInt(chat.getAttribute("data-min-turns") || "1", 10);
  // The chat's language (and direction) as the template found it; none when it could not be told.
  var textLang = chat.getAttribute("data-text-lang");
  var textDir = chat.getAttribute("data-text-dir");
  var log = document.getElementById("chat-log");
  var input = document.getElementById("chat-input");
  var send = document.getElementById("chat-send");
  var error = document.getElementById("chat-error");
  var progress = document.getElementById("chat-progress");
  var count = document.getElementById("chat-count");
  var waitingLine = document.getElementById("chat-waiting");
  var maxChars = parseInt(input.getAttribute("data-max-chars") || "0", 10);
  var form = chat.closest("form") || document.querySelector("form");
  var ended = false;
  var unavailable = false;
  var said = 0;

  // A message on its way when the page goes (a reload, leaving and coming back) may or may not have
  // reached the server: the next page's conversation, the server's, says which. It is kept in this
  // tab (the work page's draft key names the worker's slot) and, once the conversation is drawn
  // again, dropped if it is there, or put back in the box if not, never both: a message the system
  // already answered is not offered again, and one lost on the way is not lost.
  var leaving = false;
  var store = null;
  var pendingKey = form && form.getAttribute("data-draft-key") ? "quorum-chat-pending:" + form.getAttribute("data-draft-key") : null;
  try { if (pendingKey) { store = window.sessionStorage; store.getItem(pendingKey); } } catch (e) { store = null; }
  function keepPending(text) { try { if (store) { store.setItem(pendingKey, text); } } catch (e) { /* full: not kept */ } }
  function dropPending() { try { if (store) { store.removeItem(pendingKey); } } catch (e) { /* nothing kept */ } }
  function settlePending(state) {
    var text = null;
    try { text = store ? store.getItem(pendingKey) : null; } catch (e) { text = null; }
    if (text === null) { return; }
    dropPending();
    var users = (state.turns || []).filter(function (turn) { return turn.role === "user"; });
    var last = users.length ? users[users.length - 1].text : null;
    if (last === text || ended) { return; }
    if (!input.value.trim()) { input.value = text; showCount(); }
    error.textContent = "Your last message did not reach the system before the page was left: it is back in the box. Send it again.";
  }
  window.addEventListener("pagehide", function () { leaving = true; });
  window.addEventListener("pageshow", function () { leaving = false; });

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function showProgress() {
    if (!progress) { return; }
    var left = Math.max(0, minTurns - said);
    if (unavailable) {
      progress.textContent = "";
    } else if (left > 0 && ended) {
      progress.textContent = "The conversation ended before you could send enough messages. Press Skip this item to leave it; it goes to someone else.";
    } else if (left > 0) {
      progress.textContent = "Send " + plural(left, "more message", "more messages") + " before you judge the system. To leave this item instead, press Skip this item.";
    } else {
      progress.textContent = "You can judge the system now, or keep chatting: the conversation ends when you submit.";
    }
  }

  function turnItem(turn) {
    var li = document.createElement("li");
    li.className = turn.role + (turn.failed ? " failed" : "");
    var who = document.createElement("span");
    who.className = "speaker";
    who.textContent = turn.role === "user" ? "You" : "System";
    var text = document.createElement("span");
    text.className = "text";
    text.textContent = turn.text;  // text, never HTML: the system's words are not trusted
    // The worker's and the system's words are in the chat's language; a failed turn's are Quorum's
    // own fallback (chat_relay), English like the rest of the page.
    if (textLang && !(turn.failed && turn.role !== "user")) {
      text.lang = textLang;
      if (textDir) { text.dir = textDir; }
    }
    li.appendChild(who); li.appendChild(document.createTextNode(" ")); li.appendChild(text);
    return li;
  }

  function draw(state) {
    log.textContent = "";
    said = 0;
    (state.turns || []).forEach(function (turn) {
      if (turn.role === "user") { said += 1; }
      log.appendChild(turnItem(turn));
    });
    if (state.unavailable) {
      // The system was paused (it kept failing; one failed turn is only a retry): the worker ends as
      // Fail and submits; the ratings are optional.
      unavailable = true;
      document.getElementById("chat-unavailable").hidden = false;
      document.querySelectorAll('input[name="understanding"], input[name="appropriateness"]').forEach(function (r) { r.required = false; });
    }
    ended = !!state.ended;
    input.disabled = send.disabled = ended;
    if (ended) { input.placeholder = "The conversation has ended."; }
    chat.setAttribute("data-said", String(said));
    showProgress();
  }

  // While a call is under way (a slow system may take up to the turn deadline) the page says so,
  // and a sent message shows in the conversation at once, marked as on its way, with the box free
  // for the next one: the reply redraws the conversation and leaves what was typed meanwhile.
  function waiting(text) {
    if (!waitingLine) { return; }
    waitingLine.textContent = text || "";
    waitingLine.hidden = !text;
  }

  function call(body, pending) {
    error.textContent = "";
    send.disabled = true;
    waiting(body.action === "open" ? "Connecting to the system…" : "Sent: waiting for the system's reply…");
    function refused(message) {
      // A call cut off by the page going is not refused: the next page settles its message.
      if (leaving) { return; }
      if (pending) { dropPending(); }
      error.textContent = message;
      send.disabled = ended;
      if (pending) {
        // Nothing was said: the message leaves the conversation and goes back to the box.
        if (pending.li.parentNode) { pending.li.parentNode.removeChild(pending.li); }
        input.value = input.value.trim() ? pending.text + "\n" + input.value : pending.text;
        showCount();
      }
    }
    return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (data) { return { ok: r.ok, data: data }; }); })
      .then(function (res) {
        waiting("");
        if (!res.ok) { refused(res.data.error || "Something went wrong."); return; }
        if (pending) { dropPending(); }
        draw(res.data);
        if (body.action === "open") { settlePending(res.data); }
      })
      .catch(function () { waiting(""); refused("No connection to Quorum; try again."); });
  }

  // The limit is said and counted, never enforced by cutting: a longer message stays in the box,
  // marked, and is not sent until it is shortened (the server refuses it too).
  function overBy() { return maxChars > 0 ? input.value.trim().length - maxChars : 0; }
  function showCount() {
    if (!count || !maxChars) { return; }
    var over = overBy();
    count.className = over > 0 ? "problems" : "muted";
    count.textContent = over > 0
      ? input.value.trim().length + " characters: " + over + " over the limit of " + maxChars + ". Shorten your message to send it."
      : input.value.trim().length + " of at most " + maxChars + " characters.";
  }
  input.addEventListener("input", showCount);

  send.addEventListener("click", function () {
    var text = input.value.trim();
    if (!text || ended) { return; }
    if (overBy() > 0) {
      error.textContent = "Your message has " + text.length + " characters; the limit is " + maxChars + ". Shorten it and send it again (nothing was sent).";
      showCount();
      input.focus();
      return;
    }
    var li = turnItem({ role: "user", text: text });
    li.className += " pending";
    log.appendChild(li);
    keepPending(text);
    input.value = "";
    showCount();
    call({ action: "say", text: text }, { li: li, text: text }).then(function () { input.focus(); });
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey) { e.preventDefault(); send.click(); }
  });
  if (form) {
    // The conversation ends when a judgement that met the minimum is saved (the system's own
    // bookkeeping; the server reads the transcript back either way), as annotate.js tells: a refused
    // one leaves it open, so the worker may still chat. Skip never ends it.
    form.addEventListener("quorum:saved", function () {
      var chosen = form.querySelector('input[name="outcome"]:checked');
      if (ended || !chosen || (said < minTurns && !unavailable)) { return; }
      try {
        fetch(url, { method: "POST", keepalive: true, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ action: "end", reason: chosen.value }) });
      } catch (e) { /* the verdict stands without it */ }
    });
  }
  call({ action: "open" });
})();
