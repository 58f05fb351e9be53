(function () {
  "use strict";
  var d = document, body = d.body;
  body.classList.add("js");
  var arts = {}, kids = {}, links = {};
  d.querySelectorAll("article[id^='msg-']").forEach(function (a) {
    var id = a.id.slice(4);
    arts[id] = a;
    var p = a.getAttribute("data-parent");
    if (p) { (kids[p] = kids[p] || []).push(id); }
  });
  d.querySelectorAll("nav a.n").forEach(function (l) { links[l.getAttribute("href").slice(5)] = l; });
  var count = d.getElementById("count");
  // the path through a message: root to it, then on down (the active path's child first, else the newest)
  function pathThrough(id) {
    var up = [], cur = id, guard = 0;
    while (cur && arts[cur] && guard++ < 1000000) { up.unshift(cur); cur = arts[cur].getAttribute("data-parent"); }
    cur = id;
    while (kids[cur] && kids[cur].length && guard++ < 2000000) {
      var ks = kids[cur], next = ks[ks.length - 1];
      for (var i = 0; i < ks.length; i++) { if (arts[ks[i]].hasAttribute("data-on")) { next = ks[i]; } }
      up.push(next); cur = next;
    }
    return up;
  }
  function show(id, scroll) {
    if (!arts[id]) { return; }
    var keep = {};
    pathThrough(id).forEach(function (k) { keep[k] = true; });
    Object.keys(arts).forEach(function (k) {
      if (keep[k]) { arts[k].removeAttribute("hidden"); } else { arts[k].setAttribute("hidden", ""); }
      if (links[k]) { links[k].classList.toggle("on", !!keep[k]); links[k].classList.toggle("cur", k === id); }
    });
    if (count) { count.textContent = Object.keys(keep).length + " messages on the path shown"; }
    if (scroll) {
      arts[id].scrollIntoView({block: "start"});
      if (links[id]) { links[id].scrollIntoView({block: "nearest"}); }
    }
  }
  function route() {
    var h = location.hash;
    if (h.indexOf("#msg-") === 0) { show(decodeURIComponent(h.slice(5)), true); }
  }
  window.addEventListener("hashchange", route);
  route();
  // filters: all, no tool results, user messages only, checkpoints
  d.querySelectorAll("input[name=filter]").forEach(function (r) {
    r.addEventListener("change", function () {
      body.classList.toggle("hidden-tools", r.value === "no-results" && r.checked);
      body.classList.toggle("only-user", r.value === "user" && r.checked);
      body.classList.toggle("only-cp", r.value === "checkpoints" && r.checked);
    });
  });
  // search: the tree keeps the messages whose text holds every word typed
  var q = d.getElementById("search"), texts = null;
  if (q) {
    q.addEventListener("input", function () {
      if (!texts) {
        texts = {};
        Object.keys(arts).forEach(function (k) { texts[k] = arts[k].textContent.toLowerCase(); });
      }
      var words = q.value.toLowerCase().split(/\s+/).filter(Boolean), hits = 0;
      Object.keys(links).forEach(function (k) {
        var ok = words.every(function (w) { return texts[k] && texts[k].indexOf(w) >= 0; });
        links[k].classList.toggle("miss", !ok);
        if (ok) { hits++; }
      });
      if (count) { count.textContent = words.length ? hits + " messages match" : ""; }
    });
  }
})();
