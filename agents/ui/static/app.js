// codeduet ui: follows a run live (server-sent events), shows the steering prompt and the reply as it streams,
// and follows a background job's log. Plain JavaScript, no libraries; every text is set as text, never as HTML,
// except fragments the server rendered and escaped.
(function () {
  "use strict";
  var bar = document.getElementById("runbar");
  if (bar) { followRun(bar); }
  var log = document.getElementById("job-log");
  if (log) { followJob(log); }

  function followRun(bar) {
    var body = document.getElementById("body");
    var steer = document.getElementById("steer");
    var streaming = document.getElementById("streaming");
    var pending = null;
    function atBottom() { return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40; }
    function refresh() {
      pending = null;
      var stick = atBottom();
      fetch(bar.dataset.timeline, {credentials: "same-origin"}).then(function (r) { return r.text(); })
        .then(function (html) {
          body.innerHTML = html;  // rendered and escaped by the server (agents/replay/html.py)
          var status = body.querySelector("#status");
          if (status) {
            var live = document.getElementById("live-status");
            live.textContent = bar.dataset.ended === "yes" ? status.textContent : (bar.dataset.live === "yes" ? "running" : status.textContent);
            live.className = "status " + live.textContent;
          }
          if (stick) { window.scrollTo(0, document.body.scrollHeight); }
        });
    }
    function later() { if (!pending) { pending = setTimeout(refresh, 150); } }
    var source = new EventSource(bar.dataset.events);
    source.addEventListener("ev", later);
    source.addEventListener("end", function () { bar.dataset.ended = "yes"; source.close(); refresh(); });
    source.addEventListener("tokens", function (e) {
      var text = JSON.parse(e.data);
      streaming.hidden = !text;
      document.getElementById("streaming-text").textContent = text;
    });
    source.addEventListener("prompt", function (e) {
      var p = JSON.parse(e.data);
      steer.hidden = !p;
      if (!p) { return; }
      document.getElementById("steer-n").value = p.n;
      document.getElementById("steer-enter").textContent = "Enter would: " + p.enter;
      document.getElementById("steer-proposed").innerHTML = p.html;  // escaped by the server
      document.getElementById("steer-skip").hidden = !p.can_skip;
      document.getElementById("steer-note").textContent = "";
    });
    var form = document.getElementById("steer-form");
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var data = new FormData(form);
      var button = e.submitter;
      if (button) { data.set("choice", button.value); }
      fetch(form.action, {method: "POST", body: new URLSearchParams(data), credentials: "same-origin", redirect: "manual"})
        .then(function (r) {
          var note = document.getElementById("steer-note");
          if (r.status === 409) { note.textContent = "already answered (in another tab)"; }
          else if (r.status >= 400) { r.text().then(function (t) { note.textContent = t; }); }
          else { steer.hidden = true; document.getElementById("steer-text").value = ""; }
        });
    });
  }

  function followJob(log) {
    var status = document.getElementById("job-status");
    function poll() {
      fetch(log.dataset.log, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (j) {
        log.textContent = j.output;
        status.textContent = j.done ? "exit " + j.exit_code : "running";
        status.className = "status " + (j.done ? (j.exit_code === 0 ? "success" : "failed") : "running");
        if (!j.done) { setTimeout(poll, 500); }
      });
    }
    poll();
  }
})();
