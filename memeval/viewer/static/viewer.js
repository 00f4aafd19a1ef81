// memeval view: live progress for a running run, and selecting runs to compare.
// Everything else is plain HTML rendered by the server.
"use strict";

function text(id, value) {
  const node = document.getElementById(id);
  if (node) node.textContent = value;
}

function list(id, items) {
  const node = document.getElementById(id);
  if (!node) return;
  node.replaceChildren(...items.map((item) => {
    const li = document.createElement("li");
    li.textContent = item;
    return li;
  }));
}

async function poll(url) {
  let data;
  try {
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) throw new Error(String(response.status));
    data = await response.json();
  } catch (err) {
    text("status", "running (the viewer lost the store for a moment: " + err.message + ")");
    setTimeout(() => poll(url), 2000);
    return;
  }
  text("status", data.status);
  text("landed", data.landed_text);
  text("composite", data.composite);
  text("spent", data.spent);
  list("errors", data.errors);
  text("waiting", data.waiting.join(", "));
  const bar = document.getElementById("progress");
  if (bar) bar.value = data.landed;
  if (data.status === "running") {
    setTimeout(() => poll(url), 1000);
  } else {
    window.location.reload();  // the finished page shows the full case table and report link
  }
}

function compareSelection() {
  const form = document.getElementById("compare");
  const button = document.getElementById("compare-button");
  if (!form || !button) return;
  const update = () => {
    const chosen = form.querySelectorAll("input[name=run]:checked").length;
    button.disabled = chosen < 2;
    button.textContent = chosen < 2 ? "select two runs to compare" : "compare " + chosen + " runs";
  };
  form.addEventListener("change", update);
  update();
}

const live = document.body.dataset.live;
if (live) poll(live);
compareSelection();
