// The new-room form: agents answer in the order their boxes were ticked. The hidden `order` field carries
// that order to the server, and each ticked label shows its place (data-place, drawn by chaoslm.css).
function drawPlaces(form) {
  const order = form.querySelector("input[name=order]").value.split(",").filter(Boolean);
  for (const input of form.querySelectorAll("input[name=personas]")) {
    const label = input.closest("label");
    const place = order.indexOf(input.value);
    if (place < 0) delete label.dataset.place; else label.dataset.place = String(place + 1);
  }
}

document.addEventListener("change", (event) => {
  const box = event.target;
  const form = box.closest && box.closest("form.new-room");
  if (!form || box.name !== "personas") return;
  const field = form.querySelector("input[name=order]");
  const order = field.value.split(",").filter((id) => id && id !== box.value);
  if (box.checked) order.push(box.value);
  field.value = order.join(",");
  drawPlaces(form);
});

// A form shown again after a refusal keeps its order: draw it (boxes ticked but not in it go last).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form.new-room");
  if (!form) return;
  const field = form.querySelector("input[name=order]");
  const order = field.value.split(",").filter(Boolean);
  for (const input of form.querySelectorAll("input[name=personas]:checked")) {
    if (!order.includes(input.value)) order.push(input.value);
  }
  field.value = order.join(",");
  drawPlaces(form);
});

// The room page. The mode lives in the live status line's class (mode-auto / mode-manual): the auto-mode button
// says which is on (aria-pressed, and "on"/"off" beside its name) whenever a push changes it.
function syncAutoToggle() {
  const toggle = document.getElementById("auto-toggle");
  const status = document.getElementById("room-status");
  if (!toggle || !status) return;
  const auto = status.classList.contains("mode-auto");
  // Written only when it changes: each write is a mutation this function observes.
  if (toggle.getAttribute("aria-pressed") !== String(auto)) toggle.setAttribute("aria-pressed", String(auto));
  const state = toggle.querySelector(".toggle-state");
  if (state && state.textContent !== (auto ? "on" : "off")) state.textContent = auto ? "on" : "off";
  // After "Take the floor", the input it opens takes the focus once the status line says manual mode.
  const input = document.querySelector("#room form.say textarea");
  if (!auto && floorTaken && input && !input.disabled) {
    floorTaken = false;
    input.focus();
  }
}
let floorTaken = false;

document.addEventListener("DOMContentLoaded", () => {
  const room = document.getElementById("room");
  if (!room) return;
  syncAutoToggle();
  new MutationObserver(syncAutoToggle).observe(room, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["class", "disabled"],
  });
});

document.addEventListener("htmx:afterRequest", (event) => {
  if (event.detail.elt.id === "interrupt" && event.detail.successful) {
    floorTaken = true;
    syncAutoToggle();
  }
});

// Ctrl/Cmd+Enter in the room's input sends it.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
  const form = event.target.closest && event.target.closest("#room form.say");
  if (!form) return;
  event.preventDefault();
  form.requestSubmit();
});
