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
