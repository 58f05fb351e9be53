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
  d.querySelectorAll("nav a.n:not(.agent)").forEach(function (l) { links[l.getAttribute("href").slice(5)] = l; });
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
  // open the folded parts (subagents, results) an element sits in
  function unfold(e) {
    for (; e && e !== body; e = e.parentNode) { if (e.tagName === "DETAILS") { e.open = true; } }
  }
  function route() {
    var h = decodeURIComponent(location.hash);
    if (h.indexOf("#msg-") === 0) { show(h.slice(5), true); }
    if (h.indexOf("#find=") === 0 && q) {
      var at = h.indexOf("&at="), words = at < 0 ? h.slice(6) : h.slice(6, at);
      q.value = words;
      filter();
      find(at < 0 ? 0 : parseInt(h.slice(at + 4), 10) - 1);
    }
    // a subagent (or one of its messages), folded under the call that spawned it
    if (h.indexOf("#agent-") === 0 || h.indexOf("#sub-") === 0) {
      var e = d.getElementById(h.slice(1));
      if (e) { unfold(e); e.scrollIntoView({block: "start"}); }
    }
  }
  // filters: all, no tool results, user messages only, checkpoints
  d.querySelectorAll("input[name=filter]").forEach(function (r) {
    r.addEventListener("change", function () {
      body.classList.toggle("hidden-tools", r.value === "no-results" && r.checked);
      body.classList.toggle("only-user", r.value === "user" && r.checked);
      body.classList.toggle("only-cp", r.value === "checkpoints" && r.checked);
    });
  });
  // search: the tree keeps the messages whose text holds every word typed, and the page marks each word where it
  // is (in the messages shown), with a count, next and previous (Enter, Shift+Enter; F3, Shift+F3)
  var q = d.getElementById("search"), texts = null, pos = d.getElementById("find-pos");
  var marks = [], cur = -1, LIMIT = 5000, timer = null;
  function words() { return q ? q.value.toLowerCase().split(/\s+/).filter(Boolean) : []; }
  function filter() {
    if (!texts) {
      texts = {};
      Object.keys(arts).forEach(function (k) { texts[k] = arts[k].textContent.toLowerCase(); });
    }
    var ws = words(), hits = 0;
    Object.keys(links).forEach(function (k) {
      var ok = ws.every(function (w) { return texts[k] && texts[k].indexOf(w) >= 0; });
      links[k].classList.toggle("miss", !ok);
      if (ok) { hits++; }
    });
    if (count) { count.textContent = ws.length ? hits + " messages match" : ""; }
  }
  function unmark() {
    marks.forEach(function (m) {
      var p = m.parentNode;
      if (p) { p.replaceChild(d.createTextNode(m.textContent), m); p.normalize(); }
    });
    marks = []; cur = -1;
  }
  function find(at) {
    unmark();
    var ws = words();
    if (!ws.length) { if (pos) { pos.textContent = ""; } return; }
    var re = new RegExp(ws.map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("|"), "gi");
    var main = d.querySelector("main"), walk = d.createTreeWalker(main || body, NodeFilter.SHOW_TEXT, null);
    var nodes = [], n;
    while ((n = walk.nextNode())) { nodes.push(n); }
    for (var i = 0; i < nodes.length && marks.length < LIMIT; i++) {
      var t = nodes[i], s = t.nodeValue, art = t.parentNode.closest("article");
      re.lastIndex = 0;
      if ((art && art.hasAttribute("hidden")) || !re.test(s)) { continue; }
      re.lastIndex = 0;
      var frag = d.createDocumentFragment(), last = 0, m;
      while ((m = re.exec(s)) && marks.length < LIMIT) {
        frag.appendChild(d.createTextNode(s.slice(last, m.index)));
        var mk = d.createElement("mark");
        mk.className = "hit"; mk.textContent = m[0];
        frag.appendChild(mk); marks.push(mk);
        last = m.index + m[0].length;
      }
      frag.appendChild(d.createTextNode(s.slice(last)));
      t.parentNode.replaceChild(frag, t);
    }
    go(at || 0);
  }
  function go(k) {
    if (!pos) { return; }
    if (!marks.length) { pos.textContent = words().length ? "no match" : ""; return; }
    if (cur >= 0 && marks[cur]) { marks[cur].classList.remove("cur"); }
    cur = ((k % marks.length) + marks.length) % marks.length;
    var m = marks[cur];
    m.classList.add("cur");
    unfold(m);
    m.scrollIntoView({block: "center"});
    pos.textContent = (cur + 1) + " of " + marks.length + (marks.length >= LIMIT ? "+" : "");
  }
  if (q) {
    q.addEventListener("input", function () {
      filter();
      clearTimeout(timer);
      timer = setTimeout(function () { find(0); }, 200);
    });
    q.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); go(cur + (e.shiftKey ? -1 : 1)); }
      if (e.key === "Escape") { q.value = ""; filter(); find(0); }
    });
    d.addEventListener("keydown", function (e) {
      if (e.key === "F3") { e.preventDefault(); go(cur + (e.shiftKey ? -1 : 1)); }
    });
    var prev = d.getElementById("find-prev"), next = d.getElementById("find-next");
    if (prev) { prev.addEventListener("click", function () { go(cur - 1); }); }
    if (next) { next.addEventListener("click", function () { go(cur + 1); }); }
    // the marks follow the path shown
    window.addEventListener("hashchange", function () { if (words().length && location.hash.indexOf("#find=") !== 0) { find(0); } });
  }
  window.addEventListener("hashchange", route);
  route();
})();
