// The audit console's one script (docs/console.md): on a session's timeline, follow the
// API's event stream (GET /api/sessions/{id}/events) from the last position the page shows
// and add each new event as a line. Text is set with textContent only, never as markup.
"use strict";
(function () {
  var list = document.getElementById("timeline");
  if (!list || !window.EventSource) { return; }
  var session = list.dataset.session;
  var after = list.dataset.after || "0";
  var status = document.getElementById("live-status");
  var source = new EventSource("/api/sessions/" + encodeURIComponent(session) + "/events?after=" + encodeURIComponent(after));
  source.onopen = function () { if (status) { status.textContent = "Live: following the session's events."; } };
  source.onerror = function () { if (status) { status.textContent = "Live: reconnecting…"; } };
  source.onmessage = function (msg) {
    var ev;
    try { ev = JSON.parse(msg.data); } catch (e) { return; }
    if (list.querySelector('[data-position="' + Number(ev.position) + '"]')) { return; }
    var li = document.createElement("li");
    li.className = "entry live";
    li.dataset.position = String(ev.position);
    li.dataset.type = ev.type;
    var pos = document.createElement("span");
    pos.className = "pos";
    pos.textContent = "#" + ev.position;
    var what = document.createElement("strong");
    what.textContent = ev.type;
    var text = document.createElement("span");
    text.className = "summary";
    text.textContent = summary(ev);
    li.append(pos, " ", what, " ", text);
    list.appendChild(li);
    list.dataset.after = String(ev.position);
  };
  // summary is one line of an event's data, as plain text.
  function summary(ev) {
    var d = ev.data || {};
    switch (ev.type) {
      case "session.user_message.appended.1": return d.text || "";
      case "session.turn.started.1": return (d.turnId || "") + " " + (d.agent || "") + " " + (d.model || "");
      case "session.turn.finished.1": return (d.turnId || "") + ": " + (d.reason || "");
      case "session.provider.request.1": return "step " + d.step + " " + (d.status || "");
      case "session.tool.started.1": return (d.tool || "") + " " + (d.callId || "");
      case "session.tool.settled.1": return (d.tool || "") + " " + (d.callId || "") + ": " + (d.outcome || "");
      case "session.tool.blocked.1": return (d.tool || "") + " blocked: " + (d.message || "");
      case "session.verification.receipt.1": return (d.receiptId || "") + " " + (d.verdict || "");
    }
    return ev.stream || "";
  }
})();
