// The graph explorer (graph/ only): the whole network drawn in WebGL by the vendored sigma and
// graphology. Positions come precomputed in graph.json (site_builder/render/graph.py), so the
// page draws at once and the same network always looks the same.
(function () {
  "use strict";

  var root = document.querySelector("[data-graph]");
  if (!root) return;
  // DOM helpers shared with site.js, which every page loads first.
  var element = window.beliefSite.element, statusBadge = window.beliefSite.statusBadge;
  var message = root.querySelector("[data-graph-message]");
  var container = root.querySelector("[data-graph-canvas]");
  var info = root.querySelector("[data-graph-info]");

  function say(text) {
    message.textContent = text;
    message.hidden = !text;
  }

  function colours() {
    var style = getComputedStyle(document.documentElement);
    function read(name, fallback) { return style.getPropertyValue(name).trim() || fallback; }
    return {
      "IN": read("--in", "#1b6b2f"), "OUT": read("--out", "#b3261e"), fg: read("--fg", "#1a1a1a"),
      bg: read("--bg", "#ffffff"), muted: read("--muted", "#545454"), line: read("--line", "#d0d0d0"),
      current: read("--current", "#6a3ab2"), focus: read("--focus", "#b15c00")
    };
  }

  // Edges are many: drawn translucent so that the nodes stay readable.
  function translucent(colour, alpha) {
    var hex = /^#([0-9a-f]{6})$/i.exec(colour);
    if (!hex) return colour;
    var n = parseInt(hex[1], 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  // Dots grow with the number of dependents; small networks get larger dots and every label.
  function nodeSize(dependents, order) {
    var base = order < 100 ? 7 : order < 1000 ? 4 : 2.5;
    return Math.min(base + 10, base + 1.6 * Math.log2(1 + dependents));
  }


  function start(data) {
    var GraphClass = window.graphology && (window.graphology.Graph || window.graphology);
    var SigmaClass = window.Sigma && (window.Sigma.Sigma || window.Sigma);
    if (!GraphClass || !SigmaClass) {
      say("The graph library did not load.");
      return;
    }
    if (!data.nodes.length) {
      say("No belief is published on this site.");
      return;
    }
    var graph = new GraphClass({ type: "directed", multi: false, allowSelfLoops: false });
    data.nodes.forEach(function (n) {
      // graph.json's y grows downward (premises on top); sigma's y axis points up.
      graph.addNode(n.id, { x: n.x, y: -n.y, size: nodeSize(n.dependents, data.nodes.length), label: n.id, status: n.status,
                            kind: n.kind, depth: n.depth, dependents: n.dependents, url: n.url, claim: n.claim });
    });
    data.edges.forEach(function (e) {
      graph.mergeEdge(e.source, e.target, { outlist: !!e.outlist, s: e.source, t: e.target });
    });

    var colour = colours();
    var edgeSize = graph.order < 100 ? 2 : 1;
    var state = { status: "", kind: "", selected: null, hovered: null, mode: "", focus: null };

    function shown(attrs) {
      return (!state.status || attrs.status === state.status) && (!state.kind || attrs.kind === state.kind);
    }

    function nodeReducer(node, attrs) {
      var out = { x: attrs.x, y: attrs.y, size: attrs.size, label: attrs.label, color: colour[attrs.status] || colour.muted,
                  zIndex: 1 };
      if (!shown(attrs)) {
        out.hidden = true;
        return out;
      }
      if (state.focus && !state.focus.has(node)) {
        out.color = colour.line;
        out.label = "";
        out.zIndex = 0;
      }
      if (node === state.selected) {
        out.highlighted = true;
        out.forceLabel = true;
        out.size = attrs.size * 1.5 + 2;
        out.zIndex = 2;
      }
      return out;
    }

    function edgeReducer(edge, attrs) {
      var source = graph.getNodeAttributes(attrs.s), target = graph.getNodeAttributes(attrs.t);
      if (!shown(source) || !shown(target)) return { hidden: true };
      var base = attrs.outlist ? colour.current : colour.muted;
      if (state.focus) {
        var inside = state.focus.has(attrs.s) && state.focus.has(attrs.t);
        return { color: inside ? base : translucent(colour.line, 0.35), size: inside ? 2 : 1, zIndex: inside ? 1 : 0 };
      }
      return { color: translucent(base, attrs.outlist ? 0.8 : 0.6), size: edgeSize, zIndex: 0 };
    }

    // Sigma's default hover box is white whatever the theme: draw it in the theme's colours.
    function drawHover(context, d, settings) {
      var size = settings.labelSize, label = d.label || "";
      context.font = settings.labelWeight + " " + size + "px " + settings.labelFont;
      var width = context.measureText(label).width, pad = 4;
      context.fillStyle = colour.bg;
      context.strokeStyle = colour.fg;
      context.lineWidth = 1;
      context.beginPath();
      context.arc(d.x, d.y, d.size + 3, 0, Math.PI * 2);
      context.fill();
      context.stroke();
      if (!label) return;
      var x = d.x + d.size + 5, y = d.y - size / 2 - pad;
      context.fillRect(x, y, width + 2 * pad, size + 2 * pad);
      context.strokeRect(x, y, width + 2 * pad, size + 2 * pad);
      context.fillStyle = colour.fg;
      context.fillText(label, x + pad, d.y + size / 3);
    }

    var renderer;
    try {
      renderer = new SigmaClass(graph, container, {
        defaultEdgeType: "arrow",
        enableCameraRotation: false,
        zIndex: true,
        labelFont: getComputedStyle(document.body).fontFamily || "sans-serif",
        labelSize: 12,
        labelColor: { color: colour.fg },
        labelRenderedSizeThreshold: graph.order < 200 ? 0 : 7,
        hideEdgesOnMove: graph.size > 10000,
        minCameraRatio: 0.005,
        maxCameraRatio: 3,
        nodeReducer: nodeReducer,
        edgeReducer: edgeReducer,
        defaultDrawNodeHover: drawHover
      });
    } catch (e) {
      say("This browser cannot draw the graph (WebGL is unavailable). Every belief is listed on the index page.");
      return;
    }
    var camera = renderer.getCamera();
    // Slightly zoomed out from sigma's fit: labels are drawn to the right of their dots.
    var home = { x: 0.5, y: 0.5, ratio: 1.15, angle: 0 };
    camera.setState(home);

    function showInfo() {
      var node = state.selected || state.hovered;
      info.textContent = "";
      info.hidden = !node;
      if (!node) return;
      var a = graph.getNodeAttributes(node);
      var head = element("p", "graph-info-head");
      head.appendChild(statusBadge(a.status));
      head.appendChild(document.createTextNode(" "));
      head.appendChild(element("code", "", node));
      head.appendChild(element("span", "kind", " · " + a.kind + (a.kind === "derived" ? " · depth " + a.depth : "") +
                               " · " + a.dependents + " dependent" + (a.dependents === 1 ? "" : "s")));
      info.appendChild(head);
      info.appendChild(element("p", "claim-echo", a.claim));
      if (node === state.selected) {
        var actions = element("p", "graph-info-actions");
        var open = element("a", "", "Open the belief page");
        open.href = a.url;
        actions.appendChild(open);
        if (state.focus) {
          actions.appendChild(document.createTextNode(" · " + (state.focus.size - 1) + " highlighted " +
            (state.mode === "ancestors" ? "beliefs it rests on" : "dependents (all levels)") + " · "));
        } else {
          actions.appendChild(document.createTextNode(" · "));
        }
        var clear = element("button", "graph-clear", "Clear selection");
        clear.type = "button";
        clear.addEventListener("click", function () { select(null, false); });
        actions.appendChild(clear);
        info.appendChild(actions);
      }
    }

    function closure(start, forward) {
      var seen = new Set([start]), stack = [start];
      while (stack.length) {
        var each = forward ? graph.forEachOutNeighbor : graph.forEachInNeighbor;
        each.call(graph, stack.pop(), function (next) {
          if (!seen.has(next)) {
            seen.add(next);
            stack.push(next);
          }
        });
      }
      return seen;
    }

    function refocus() {
      state.focus = state.selected && state.mode ? closure(state.selected, state.mode === "dependents") : null;
      showInfo();
      renderer.refresh();
    }

    function select(node, move) {
      state.selected = node && graph.hasNode(node) ? node : null;
      refocus();
      if (state.selected && move) {
        var at = renderer.getNodeDisplayData(state.selected);
        if (at) camera.animate({ x: at.x, y: at.y, ratio: Math.min(camera.ratio, 0.15) }, { duration: 400 });
      }
      try {
        history.replaceState(null, "", state.selected ? "#" + encodeURIComponent(state.selected) : location.pathname + location.search);
      } catch (e) { /* history may be unavailable (sandboxed frames) */ }
    }

    function countShown() {
      var count = 0;
      graph.forEachNode(function (n, a) { if (shown(a)) count += 1; });
      return count;
    }

    function summarise() {
      var count = countShown();
      say(count === graph.order ? "" : "Showing " + count + " of " + graph.order + " beliefs.");
    }

    renderer.on("clickNode", function (e) {
      var original = e.event.original || {};
      var url = graph.getNodeAttribute(e.node, "url");
      if (original.shiftKey) {
        select(e.node, false);
      } else if (original.ctrlKey || original.metaKey) {
        window.open(url, "_blank", "noopener");
      } else {
        window.location.href = url;
      }
    });
    renderer.on("enterNode", function (e) {
      state.hovered = e.node;
      container.classList.add("over-node");
      if (!state.selected) showInfo();
    });
    renderer.on("leaveNode", function () {
      state.hovered = null;
      container.classList.remove("over-node");
      if (!state.selected) showInfo();
    });

    // Controls
    var controls = root.querySelector("[data-graph-controls]");
    controls.hidden = false;
    root.querySelector("[data-graph-legend]").hidden = false;
    var statusSelect = root.querySelector("[data-graph-status]");
    var kindSelect = root.querySelector("[data-graph-kind]");
    function filter() {
      state.status = statusSelect.value;
      state.kind = kindSelect.value;
      renderer.refresh();
      summarise();
    }
    statusSelect.addEventListener("change", filter);
    kindSelect.addEventListener("change", filter);
    Array.prototype.forEach.call(root.querySelectorAll("[data-graph-highlight]"), function (radio) {
      radio.addEventListener("change", function () {
        if (radio.checked) {
          state.mode = radio.value;
          refocus();
        }
      });
    });
    Array.prototype.forEach.call(root.querySelectorAll("[data-graph-zoom]"), function (button) {
      button.addEventListener("click", function () {
        var how = button.dataset.graphZoom;
        if (how === "in") camera.animatedZoom({ duration: 200 });
        else if (how === "out") camera.animatedUnzoom({ duration: 200 });
        else camera.animate(home, { duration: 300 });
      });
    });
    container.addEventListener("keydown", function (e) {
      var step = 0.15 * camera.ratio, pan = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[e.key];
      if (pan) camera.animate({ x: camera.x + pan[0], y: camera.y + pan[1] }, { duration: 100 });
      else if (e.key === "+" || e.key === "=") camera.animatedZoom({ duration: 200 });
      else if (e.key === "-") camera.animatedUnzoom({ duration: 200 });
      else if (e.key === "0") camera.animate(home, { duration: 300 });
      else return;
      e.preventDefault();
    });

    // Find: ids first (prefix, then anywhere), then claims; pick one to select it and fly there.
    var find = root.querySelector("[data-graph-find]");
    var matches = root.querySelector("[data-graph-matches]");
    var ids = graph.nodes();
    function closeMatches() {
      matches.hidden = true;
      find.setAttribute("aria-expanded", "false");
    }
    function choose(node) {
      find.value = node;
      closeMatches();
      select(node, true);
    }
    function lookup() {
      var needle = find.value.trim().toLowerCase();
      matches.textContent = "";
      if (!needle) {
        closeMatches();
        return [];
      }
      var ranked = [[], [], []];
      for (var i = 0; i < ids.length && ranked[0].length < 12; i++) {
        var id = ids[i], lower = id.toLowerCase(), at = lower.indexOf(needle);
        if (at === 0) ranked[0].push(id);
        else if (at > 0) ranked[1].push(id);
        else if (graph.getNodeAttribute(id, "claim").toLowerCase().indexOf(needle) !== -1) ranked[2].push(id);
      }
      var found = ranked[0].concat(ranked[1], ranked[2]).slice(0, 12);
      found.forEach(function (id) {
        var a = graph.getNodeAttributes(id);
        var item = element("li");
        var button = element("button", "graph-match");
        button.type = "button";
        button.dataset.node = id;
        button.appendChild(statusBadge(a.status));
        button.appendChild(document.createTextNode(" "));
        button.appendChild(element("code", "", id));
        button.appendChild(element("span", "claim-echo", a.claim));
        button.addEventListener("click", function () { choose(id); });
        item.appendChild(button);
        matches.appendChild(item);
      });
      if (!found.length) matches.appendChild(element("li", "more", "No belief matches."));
      matches.hidden = false;
      find.setAttribute("aria-expanded", "true");
      return found;
    }
    find.addEventListener("input", lookup);
    find.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        var found = lookup();
        if (found.length) choose(found[0]);
      } else if (e.key === "ArrowDown") {
        var first = matches.querySelector("button");
        if (first) {
          e.preventDefault();
          first.focus();
        }
      } else if (e.key === "Escape") {
        closeMatches();
      }
    });
    matches.addEventListener("keydown", function (e) {
      var buttons = Array.prototype.slice.call(matches.querySelectorAll("button"));
      var at = buttons.indexOf(document.activeElement);
      if (e.key === "ArrowDown" && at < buttons.length - 1) buttons[at + 1].focus();
      else if (e.key === "ArrowUp") (at > 0 ? buttons[at - 1] : find).focus();
      else if (e.key === "Escape") { closeMatches(); find.focus(); }
      else return;
      e.preventDefault();
    });
    root.querySelector(".graph-find").addEventListener("focusout", function (e) {
      if (!e.relatedTarget || !e.currentTarget.contains(e.relatedTarget)) closeMatches();
    });

    // Follow the theme (system setting or the toggle).
    function retheme() {
      colour = colours();
      renderer.setSetting("labelColor", { color: colour.fg });
      renderer.refresh();
    }
    new MutationObserver(retheme).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    if (window.matchMedia) {
      var query = window.matchMedia("(prefers-color-scheme: dark)");
      if (query.addEventListener) query.addEventListener("change", retheme);
    }

    summarise();
    // `#id` selects a belief, on load and when only the fragment changes; a malformed one
    // (a stray "%") selects nothing rather than stopping the explorer.
    function fromHash() {
      if (location.hash.length < 2) return;
      var wanted;
      try { wanted = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
      if (graph.hasNode(wanted)) select(wanted, true);
    }
    fromHash();
    window.addEventListener("hashchange", fromHash);
    renderer.once("afterRender", function () { root.dataset.ready = "true"; });
    renderer.refresh();
    // For tests and the curious: the graph, the renderer and selection.
    window.beliefGraph = { graph: graph, renderer: renderer, select: select };
  }

  if (location.protocol === "file:") {
    say("The graph explorer needs the site to be served (browsers do not let pages read files from disk). " +
        "Run `belief-site serve`, or see the index page.");
    return;
  }
  say("Loading the network…");
  fetch(root.dataset.graph).then(function (response) {
    if (!response.ok) throw new Error("HTTP " + response.status);
    return response.json();
  }).then(start).catch(function () {
    say("The network could not be loaded. Every belief is listed on the index page.");
  });
})();
