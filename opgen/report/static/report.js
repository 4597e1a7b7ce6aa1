// Filters the coverage matrix: free-text search, a status and a target. The state lives in
// the URL's hash (#q=...&status=...&target=...), so a filtered view can be linked to.
(function () {
  "use strict";
  var table = document.getElementById("matrix");
  if (!table) return;
  var search = document.getElementById("filter");
  var status = document.getElementById("status-filter");
  var target = document.getElementById("target-filter");
  var shown = document.getElementById("shown-count");
  var none = document.getElementById("no-match");
  var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr.op-row"));
  var targets = Array.prototype.map.call(target.options, function (o) { return o.value; })
    .filter(function (v) { return v; });

  function matches(row, words, wantStatus, wantTarget) {
    var text = row.getAttribute("data-search");
    for (var i = 0; i < words.length; i++) {
      if (text.indexOf(words[i]) < 0) return false;
    }
    var cols = wantTarget ? [wantTarget] : targets;
    if (wantTarget && row.getAttribute("data-" + wantTarget) === "n/a" && !wantStatus) return false;
    if (!wantStatus) return true;
    return cols.some(function (t) { return row.getAttribute("data-" + t) === wantStatus; });
  }

  function apply() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var ok = matches(row, words, status.value, target.value);
      row.hidden = !ok;
      if (ok) count++;
    });
    shown.textContent = count + " of " + rows.length + " overloads shown";
    none.hidden = count !== 0;
    var state = [];
    if (search.value) state.push("q=" + encodeURIComponent(search.value));
    if (status.value) state.push("status=" + encodeURIComponent(status.value));
    if (target.value) state.push("target=" + encodeURIComponent(target.value));
    var hash = state.length ? "#" + state.join("&") : "";
    if (window.location.hash !== hash) {
      history.replaceState(null, "", hash || window.location.pathname + window.location.search);
    }
  }

  function restore() {
    var params = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
    search.value = params.q || "";
    status.value = params.status || "";
    target.value = params.target || "";
  }

  search.addEventListener("input", apply);
  status.addEventListener("change", apply);
  target.addEventListener("change", apply);
  restore();
  apply();
})();
