/* Spoken reading: record each reading with MediaRecorder, let the worker play it back and record it
 * again, and put it in the reading's file field as 16-bit PCM WAV, mono, 16 kHz. The recording is
 * decoded here (AudioContext.decodeAudioData) and resampled with an OfflineAudioContext, so the
 * server reads plain WAV and needs no codec. The server checks every reading again on submit. */
(function () {
  "use strict";
  var root = document.getElementById("spoken");
  if (!root) return;
  var TARGET_RATE = 16000;
  var maxSeconds = parseFloat(root.dataset.maxSeconds) || 30;
  var minSeconds = parseFloat(root.dataset.minSeconds) || 1;
  var LITTLE_SPEECH_SECONDS = 0.5; // as evidence.LITTLE_SPEECH_SECONDS: a hint, the take may still be sent
  var micError = document.getElementById("mic-error");
  var stream = null;
  var active = null; // {recorder, reading, timer}

  function supported() {
    return !!(navigator.mediaDevices && navigator.mediaDevices.getUserMedia && window.MediaRecorder &&
      (window.AudioContext || window.webkitAudioContext) && window.OfflineAudioContext && window.DataTransfer);
  }

  function say(message) { micError.textContent = message; }

  function microphone() {
    if (stream) return Promise.resolve(stream);
    return navigator.mediaDevices.getUserMedia({ audio: true }).then(function (s) { stream = s; return s; });
  }

  function microphoneProblem(err) {
    var name = err && err.name;
    if (name === "NotAllowedError" || name === "SecurityError") {
      return "The browser did not let this page use the microphone. Allow the microphone for this site (the icon beside the address), then press Record again.";
    }
    if (name === "NotFoundError" || name === "OverconstrainedError") {
      return "No microphone was found. Connect one, then press Record again.";
    }
    return "The microphone could not be started (" + (name || "unknown error") + "). Close other programs that use it, then try again.";
  }

  /* 16-bit PCM WAV of mono float samples. */
  function wavOf(samples, rate) {
    var buffer = new ArrayBuffer(44 + samples.length * 2);
    var view = new DataView(buffer);
    function text(offset, s) { for (var i = 0; i < s.length; i++) view.setUint8(offset + i, s.charCodeAt(i)); }
    text(0, "RIFF"); view.setUint32(4, 36 + samples.length * 2, true); text(8, "WAVE");
    text(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
    view.setUint32(24, rate, true); view.setUint32(28, rate * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true);
    text(36, "data"); view.setUint32(40, samples.length * 2, true);
    for (var i = 0; i < samples.length; i++) {
      var s = Math.max(-1, Math.min(1, samples[i]));
      view.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
    }
    return new Blob([buffer], { type: "audio/wav" });
  }

  /* The recorder's compressed audio -> 16 kHz mono WAV (and its duration). */
  function toWav(blob) {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    var ctx = new Ctx();
    return blob.arrayBuffer().then(function (bytes) {
      return ctx.decodeAudioData(bytes);
    }).then(function (decoded) {
      ctx.close();
      var frames = Math.max(1, Math.ceil(decoded.duration * TARGET_RATE));
      var offline = new OfflineAudioContext(1, frames, TARGET_RATE); // one channel: the browser mixes down
      var source = offline.createBufferSource();
      source.buffer = decoded;
      source.connect(offline.destination);
      source.start();
      return offline.startRendering();
    }).then(function (rendered) {
      var samples = rendered.getChannelData(0);
      return { wav: wavOf(samples, TARGET_RATE), seconds: rendered.duration, speech: speechSeconds(samples, TARGET_RATE) };
    });
  }

  /* Seconds of 30 ms frames clearly louder than the take's own background (its quietest tenth), as
   * the server measures them (annotation/speech/evidence.py): a take with almost none is worth
   * hearing back before it is sent (a muted or distant microphone, a cough). */
  function speechSeconds(samples, rate) {
    var size = Math.round(rate * 0.03), levels = [];
    for (var start = 0; start + size <= samples.length; start += size) {
      var sum = 0;
      for (var i = start; i < start + size; i++) sum += samples[i] * samples[i];
      levels.push(20 * Math.log10(Math.max(Math.sqrt(sum / size), 1e-6)));
    }
    if (!levels.length) return 0;
    var sorted = levels.slice().sort(function (a, b) { return a - b; });
    var background = sorted[Math.floor(0.1 * (sorted.length - 1))];
    var loud = levels.filter(function (level) { return level >= Math.max(background + 10, -60); }).length;
    return loud * 0.03;
  }

  function parts(reading) {
    var name = reading.querySelector(".reading-file").name;
    return {
      record: document.getElementById("record_" + name),
      stop: document.getElementById("stop_" + name),
      state: document.getElementById("state_" + name),
      playback: document.getElementById("playback_" + name),
      file: document.getElementById("id_" + name),
      problems: document.getElementById("problems_" + name),
      name: name,
    };
  }

  function setFile(p, wav) {
    var list = new DataTransfer();
    list.items.add(new File([wav], p.name + ".wav", { type: "audio/wav" }));
    p.file.files = list.files;
  }

  function start(reading) {
    if (active) stop();
    var p = parts(reading);
    say("");
    microphone().then(function (s) {
      var chunks = [];
      var recorder = new MediaRecorder(s);
      recorder.ondataavailable = function (e) { if (e.data && e.data.size) chunks.push(e.data); };
      recorder.onstop = function () {
        p.state.textContent = "Preparing the recording…";
        toWav(new Blob(chunks, { type: recorder.mimeType || "audio/webm" })).then(function (out) {
          setFile(p, out.wav);
          if (p.playback.src) URL.revokeObjectURL(p.playback.src);
          p.playback.src = URL.createObjectURL(out.wav);
          p.playback.hidden = false;
          p.record.textContent = "Record again";
          p.problems.innerHTML = ""; // a refusal's reason was about the take this one replaces
          p.file.removeAttribute("aria-invalid");
          var note = out.seconds < minSeconds ? " — too short: at least " + minSeconds + " s, record again" : "";
          var quiet = !note && out.speech < LITTLE_SPEECH_SECONDS
            ? " — we hear almost no speech in it (" + out.speech.toFixed(1) + " s): play it back, and record it again if your reading is not there"
            : "";
          p.state.textContent = "Recorded: " + out.seconds.toFixed(1) + " s" + note + quiet + ".";
          reading.classList.add("recorded");
          reading.classList.toggle("has-problems", !!note);
        }).catch(function () {
          p.state.textContent = "This recording could not be read; record it again.";
        });
      };
      recorder.start();
      active = { recorder: recorder, reading: reading, timer: setTimeout(stop, maxSeconds * 1000) };
      p.record.hidden = true;
      p.stop.hidden = false;
      p.stop.focus();
      p.state.textContent = "Recording… press Stop when you are done (it stops by itself after " + maxSeconds + " s).";
    }).catch(function (err) {
      say(microphoneProblem(err));
    });
  }

  function stop() {
    if (!active) return;
    var p = parts(active.reading);
    clearTimeout(active.timer);
    if (active.recorder.state !== "inactive") active.recorder.stop();
    p.stop.hidden = true;
    p.record.hidden = false;
    active = null;
  }

  if (!supported()) {
    say("This browser cannot record audio in a web page. Please open this page in a recent Chrome, Firefox, Edge or Safari.");
    Array.prototype.forEach.call(root.querySelectorAll("button.record"), function (b) { b.disabled = true; });
    return;
  }

  Array.prototype.forEach.call(root.querySelectorAll(".reading"), function (reading) {
    var p = parts(reading);
    p.record.addEventListener("click", function () { start(reading); });
    p.stop.addEventListener("click", stop);
  });

  /* Submitting: the form is posted with fetch, so a refusal names the readings to record again while
   * the accepted ones stay in their file fields (the server keeps nothing until it accepts all). The
   * view answers such a post in JSON (annotation.web.views.work); an answer that is not JSON is a page
   * (e.g. "already saved"), which the ordinary form post then shows. */
  var form = document.getElementById("work-form");
  var submitButton = document.getElementById("submit-button");
  var status = document.getElementById("check-status");
  var sending = false;
  var leaving = false; // set when the page itself moves on (a submit, a skip, the saved answer's next page)

  /* Recordings live only in this page until they are submitted (drafts.js cannot keep files): a
   * reload, a closed tab or a link followed would lose them without a word, so the browser asks
   * first while any is recorded and not yet sent. */
  window.addEventListener("beforeunload", function (event) {
    if (leaving) return;
    var recorded = Array.prototype.some.call(root.querySelectorAll(".reading-file"), function (f) { return f.files.length > 0; });
    if (!recorded) return;
    event.preventDefault();
    event.returnValue = ""; // older browsers ask only when a value is set
  });
  document.addEventListener("submit", function () { leaving = true; }, true); // Skip, Finish: the worker chose to go

  function showRefusal(body) {
    var errors = body.errors || {};
    var refused = [];
    Array.prototype.forEach.call(root.querySelectorAll(".reading"), function (reading) {
      var p = parts(reading);
      var messages = errors[p.name] || [];
      p.problems.innerHTML = "";
      messages.forEach(function (message) {
        var item = document.createElement("li");
        item.textContent = message;
        p.problems.appendChild(item);
      });
      reading.classList.toggle("has-problems", messages.length > 0);
      if (messages.length) {
        p.file.setAttribute("aria-invalid", "true");
        refused.push(p);
      } else {
        p.file.removeAttribute("aria-invalid");
        if (p.file.files.length) {
          var item = document.createElement("li");
          item.className = "passes";
          item.textContent = "Accepted: kept for your next submission.";
          p.problems.appendChild(item);
        }
      }
    });
    var others = (body.non_field || []).concat(
      Object.keys(errors).filter(function (name) { return !document.getElementById("problems_" + name); })
        .map(function (name) { return errors[name].join(" "); }));
    var kept = Array.prototype.some.call(root.querySelectorAll(".reading"), function (reading) {
      var p = parts(reading);
      return p.file.files.length && !(errors[p.name] || []).length;
    });
    var summary = refused.length
      ? "Not saved: record " + (refused.length === 1 ? "the reading" : "the " + refused.length + " readings") +
        " marked below again, then submit." + (kept ? " Your other readings are kept." : "")
      : "Not saved.";
    say([summary].concat(others).join(" "));
    var old = document.getElementById("problem-summary"); // from an earlier refusal shown as a page
    if (old) old.hidden = true;
    if (refused.length) refused[0].record.focus();
  }

  function send() {
    sending = true;
    submitButton.disabled = true;
    if (status) status.textContent = "Sending your readings…";
    var keep = " Your recordings are kept in this page: press Submit again";
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (response) {
      if ((response.headers.get("Content-Type") || "").indexOf("application/json") !== 0) {
        if (response.status >= 500) {
          say("The server could not save your readings just now (error " + response.status + ")." + keep + " in a moment.");
          return;
        }
        leaving = true;
        form.submit();
        return true;
      }
      return response.json().then(function (body) {
        if (response.ok && body.redirect) {
          leaving = true;
          window.location.assign(body.redirect); // where a form post's redirect would have gone
          return true;
        }
        if (body.errors || body.non_field) showRefusal(body);
        else say((body.error || "Not saved (error " + response.status + ").") + keep + " when it is resolved.");
      });
    }).catch(function () {
      say("Your readings could not be sent: the connection to the server failed." + keep + " when you are back online.");
    }).then(function (moved) {
      if (status) status.textContent = "";
      if (moved) return; // the next page is loading: no second submission meanwhile
      sending = false;
      submitButton.disabled = false;
    });
  }

  form.addEventListener("submit", function (event) {
    if (event.submitter && event.submitter.id === "skip-button") return;
    event.preventDefault();
    leaving = false; // sent by fetch: the page stays until the answer says where to go
    if (sending) return;
    if (active) stop();
    var missing = Array.prototype.filter.call(root.querySelectorAll(".reading-file"), function (f) { return !f.files.length; });
    if (missing.length) {
      say("Record every reading before submitting: " + missing.length + " still missing.");
      parts(missing[0].closest(".reading")).record.focus();
      return;
    }
    // After this event, so that the page's other submit listeners (annotate.js: active time,
    // typing counts) have filled their fields before the form is read.
    setTimeout(send, 0);
  });
})();
