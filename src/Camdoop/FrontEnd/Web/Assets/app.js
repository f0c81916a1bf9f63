// The live view: polls /api/state and the chosen query every second and redraws. No library, no other origin.
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const PORTS = [["+X", 0], ["+Y", 1], ["+Z", 2]];
  const OPPOSITE = { "+X": "-X", "+Y": "-Y", "+Z": "-Z" };
  const svg = document.getElementById("cube");
  let drawn = null;   // the torus the picture was drawn for
  let servers = {};   // "x,y,z" -> circle
  let edges = [];     // {a, port, b, line, wrap}
  let query = null;   // the query text being polled

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function text(id, value) {
    document.getElementById(id).textContent = value;
  }

  // Numbers with thousands separators: 1,234,567 and 1,234.5.
  function count(n, digits) {
    return n.toLocaleString("en-US", { minimumFractionDigits: digits || 0, maximumFractionDigits: digits || 0 });
  }

  function bytes(n) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return count(n, i === 0 ? 0 : 1) + " " + units[i];
  }

  function duration(ms) {
    return ms < 1000 ? count(ms) + " ms" : ms < 120000 ? count(ms / 1000, 1) + " s" : count(ms / 60000, 1) + " min";
  }

  function clock(unixMs) {
    if (!unixMs) return "–";
    const d = new Date(unixMs);
    const two = v => String(v).padStart(2, "0");
    return d.getFullYear() + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + " " +
      two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
  }

  // 0 idle .. 1 the busiest now: grey, orange, red.
  function colour(t) {
    const stops = [[221, 227, 234], [244, 162, 97], [230, 57, 70]];
    t = Math.max(0, Math.min(1, t || 0)) * 2;
    const i = Math.min(1, Math.floor(t));
    const f = t - i;
    const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
    return "rgb(" + c.join(",") + ")";
  }

  // Each z plane of the torus is drawn as an isometric diamond, the planes stacked with z = 0 at the bottom.
  function layout(size) {
    const s = Math.max(18, Math.min(60, 220 / Math.max(size[0], size[1])));
    const a = s * 0.87, b = s * 0.5;
    const plane = (size[0] + size[1]) * b + s * 0.6;
    const width = (size[0] + size[1]) * a + 2 * s;
    const height = plane * size[2] + s;
    const at = (x, y, z) => [s + (x - y + size[1] - 1) * a + a * 0.3, s * 0.6 + (x + y) * b + (size[2] - 1 - z) * plane];
    return { s, at, width, height };
  }

  function draw(state) {
    svg.textContent = "";
    servers = {};
    edges = [];
    const size = state.size;
    const geo = layout(size);
    svg.setAttribute("viewBox", "0 0 " + geo.width.toFixed(0) + " " + geo.height.toFixed(0));
    const linkLayer = el("g", {}, svg);
    const serverLayer = el("g", {}, svg);
    for (const server of state.servers) {
      const [x, y, z] = server.at;
      const [px, py] = geo.at(x, y, z);
      for (const [port, axis] of PORTS) {
        const n = [x, y, z];
        n[axis] = (n[axis] + 1) % size[axis];
        const wrap = n[axis] === 0;
        const [qx, qy] = geo.at(n[0], n[1], n[2]);
        let line;
        if (wrap) {
          // A wrap-around link: a short stub pointing where the next server would be.
          const m = [x, y, z];
          m[axis] += 1;
          const [rx, ry] = geo.at(m[0], m[1], m[2]);
          line = el("line", { x1: px, y1: py, x2: px + (rx - px) * 0.35, y2: py + (ry - py) * 0.35, class: "link wrap" }, linkLayer);
        } else {
          line = el("line", { x1: px, y1: py, x2: qx, y2: qy, class: "link" + (axis === 2 ? " zlink" : "") }, linkLayer);
        }
        const title = el("title", {}, line);
        edges.push({ a: server.server, port, b: n.join(","), line, title });
      }
      const r = Math.max(4, geo.s * 0.16);
      const circle = el("circle", { cx: px, cy: py, r, class: "server", "data-server": server.server }, serverLayer);
      el("title", {}, circle);
      servers[server.server] = circle;
      if (geo.s >= 40) {
        const label = el("text", { x: px + r + 1, y: py - r }, serverLayer);
        label.textContent = server.server;
      }
    }
    drawn = state.torus;
  }

  function update(state) {
    if (drawn !== state.torus) draw(state);
    text("torus", state.torus + " (" + state.serversInCube + " servers)");
    const summary = document.getElementById("summary");
    summary.textContent = "";
    const parts = state.round === 0
      ? ["waiting for the first round of the cube-wide queries, asked from server " + state.askedFrom]
      : ["round ", ["round", String(state.round)], " · ", ["answered", state.answered + "/" + state.serversInCube], " servers answered · merged in " +
         state.latencyMs.toFixed(1) + " ms · asked from server " + state.askedFrom];
    for (const p of parts) {
      if (typeof p === "string") {
        summary.append(p);
      } else {
        const span = document.createElement("span");
        span.id = p[0];
        span.textContent = p[1];
        summary.append(span);
      }
    }
    const links = {};
    for (const l of state.links) links[l.server + " " + l.port] = l;
    const max = state.maxBytesPerSecond;
    text("legend-max", bytes(max) + "/s");
    for (const e of edges) {
      const there = links[e.a + " " + e.port];
      const back = links[e.b + " " + OPPOSITE[e.port]];
      const rate = Math.max(there ? there.bytesPerSecond : 0, back ? back.bytesPerSecond : 0);
      const down = (there && !there.up) || (back && !back.up);
      e.line.setAttribute("stroke", colour(max > 0 ? rate / max : 0));
      e.line.classList.toggle("down", !!down);
      e.title.textContent = e.a + " " + e.port + " ⇄ " + e.b + ": " + (down ? "down" : bytes(rate) + "/s" +
        (there ? ", busy " + (100 * there.busy).toFixed(0) + " %" : ""));
    }
    const maxServer = Math.max(0, ...state.servers.map(s => s.bytesPerSecond));
    for (const s of state.servers) {
      const c = servers[s.server];
      if (!c) continue;
      c.setAttribute("fill", colour(maxServer > 0 ? s.bytesPerSecond / maxServer : 0));
      c.classList.toggle("silent", !s.answered && state.round > 0);
      c.firstChild.textContent = s.server + ": " + (s.answered ? bytes(s.bytesPerSecond) + "/s sent, " + s.linksUp + "/6 links up, " +
        count(s.jobsRunning) + " jobs running, CPU " + count(s.cpuMs / 1000, 1) + " s" : "no answer this round");
    }
    updateJobs(state.jobs);
    updateStorage(state.storage);
  }

  function updateStorage(s) {
    text("storage-replicas", count(s.replicas));
    text("storage-bytes", bytes(s.bytesStored));
    text("storage-pending", count(s.copiesPending));
    text("storage-copied", bytes(s.bytesCopied));
    text("storage-lost", String(s.serversLost));
    text("storage-corrupt", s.corruptFound + " / " + s.repaired);
    text("storage-answered", s.servers === 0 ? "waiting for the first round..." : "servers answered: " + s.servers);
  }

  function updateJobs(jobs) {
    const body = document.querySelector("#jobs tbody");
    body.textContent = "";
    document.getElementById("no-jobs").hidden = jobs.length > 0;
    for (const j of jobs) {
      const tr = document.createElement("tr");
      tr.className = "job " + j.state;
      tr.dataset.job = j.job;
      const pct = (100 * j.progress).toFixed(0) + " %";
      const ended = j.endedUnixMs ? clock(j.endedUnixMs) + (j.startedUnixMs ? " (" + duration(j.endedUnixMs - j.startedUnixMs) + ")" : "") : "–";
      const output = j.output ? j.output + (j.outputBytes ? ", " + bytes(j.outputBytes) : "") : "–";
      const cells = [j.job, j.name, j.state, null, count(j.reduceTasksDone) + "/" + count(j.reduceTasks), bytes(j.bytesIn), bytes(j.bytesOut),
        output, clock(j.startedUnixMs), ended];
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        if (v === null) {
          td.className = "progress";
          const bar = document.createElement("span");
          bar.className = "bar";
          const fill = document.createElement("span");
          fill.style.width = pct;
          bar.append(fill);
          td.append(bar, pct + " (" + count(j.verticesDone) + "/" + count(j.vertices) + " vertices)");
        } else {
          td.textContent = v;
          if (i >= 4 && i <= 6) td.className = "num";
        }
        tr.append(td);
      });
      body.append(tr);
    }
  }

  function showQuery(result) {
    const head = document.querySelector("#query-result thead");
    const body = document.querySelector("#query-result tbody");
    const status = document.getElementById("query-status");
    status.classList.toggle("error", !!result.error);
    if (result.error) {
      status.textContent = result.error;
      head.textContent = "";
      body.textContent = "";
      return;
    }
    if (result.waiting) {
      status.textContent = "waiting for the first round...";
      return;
    }
    status.textContent = "round " + result.round + " · " + result.servers + "/" + result.serversInCube + " servers · merged in " +
      result.latencyMs.toFixed(1) + " ms · " + result.rows.length + " rows";
    head.textContent = "";
    const hr = document.createElement("tr");
    for (const c of result.columns) {
      const th = document.createElement("th");
      th.textContent = c;
      hr.append(th);
    }
    head.append(hr);
    body.textContent = "";
    for (const row of result.rows.slice(0, 500)) {
      const tr = document.createElement("tr");
      for (const v of row) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      body.append(tr);
    }
  }

  async function fetchJson(url) {
    const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (response.status === 401) {
      window.location.reload();
      throw new Error("logged out");
    }
    return response.json();
  }

  async function tick() {
    try {
      update(await fetchJson("/api/state"));
      if (query) showQuery(await fetchJson("/api/query?q=" + encodeURIComponent(query)));
    } catch (e) {
      text("summary", "cannot reach the front-end: " + e.message);
    }
    setTimeout(tick, 1000);
  }

  document.getElementById("query-form").addEventListener("submit", ev => {
    ev.preventDefault();
    query = document.getElementById("query-text").value.trim() || null;
    text("query-status", query ? "asking the cube..." : "");
  });
  query = document.getElementById("query-text").value.trim();
  tick();
})();
