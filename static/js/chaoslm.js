// Small page behaviours that htmx does not cover: copying the share link.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const field = document.querySelector(button.dataset.copy);
  if (!field) return;
  navigator.clipboard.writeText(field.value).then(
    () => { button.textContent = "Copied"; },
    () => { field.select(); },
  );
});

// A form with data-confirm asks first (Delete, New link, Cancel): no inline handlers under the CSP.
document.addEventListener("submit", (event) => {
  const form = event.target.closest && event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

// A speak form (a debate's, a room's) that was accepted clears itself; one that was refused shows why (422 carries
// the message) and keeps what was typed.
// The refusal stays an error to htmx (isError): a form's reset after a successful request must never run
// on it, or what the person typed is lost.
document.addEventListener("htmx:beforeSwap", (event) => {
  if (event.detail.xhr.status === 422) event.detail.shouldSwap = true;
});
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.target.closest && event.target.closest("form.speak, form.say");
  if (form && event.detail.successful && event.detail.xhr.status === 200) form.reset();
  // A refused action whose reply has nowhere to go (hx-swap="none": Retry, auto mode, pause ...) says why
  // in the notice line. The reply is escaped HTML: read its text from an inert document, never run it.
  const notice = document.getElementById("notice");
  const quiet = event.detail.elt.closest && event.detail.elt.closest("[hx-swap='none']");
  if (!notice || !quiet) return;
  const status = event.detail.xhr.status;
  notice.hidden = status < 400;
  if (status >= 400) {
    const reply = new DOMParser().parseFromString(event.detail.xhr.responseText || "", "text/html");
    notice.textContent = reply.body.textContent.trim() || `The server refused that (${status}).`;
  }
});

// Live pushes (see debates/broadcast.py). `upsert`: replace the element with the same id, or append it.
// `replace` (tournaments/broadcast.py): replace the element with the same id if this page shows it.
// `tokens`: append text to the card being written, if this page has it; a page that joined mid-step
// simply waits for the saved card.
htmx.defineExtension("upsert", {
  handleSwap(style, target, fragment) {
    if (style === "upsert") {
      const added = [];
      for (const element of Array.from(fragment.children)) {
        if (element.dataset.remove) {  // <template data-remove="id">: take that element away, if present
          document.getElementById(element.dataset.remove)?.remove();
          continue;
        }
        const existing = element.id && document.getElementById(element.id);
        // A card being written never replaces a saved one (but for a failed step's, which a retry replaces):
        // a catch-up's or a late push's writing card may reach a page that already shows the step saved.
        if (existing && element.classList.contains("writing") && !existing.classList.contains("writing")
            && !existing.classList.contains("kind-error")) continue;
        if (existing) existing.replaceWith(element); else target.appendChild(element);
        added.push(element);
      }
      return added;
    }
    if (style === "replace") {  // replace the elements with these ids that this page shows; drop the others
      const replaced = [];
      for (const holder of Array.from(fragment.children)) {
        // Table rows travel inside a <template>: standing alone anywhere else, the parser drops them.
        for (const element of Array.from(holder.content ? holder.content.children : [holder])) {
          const existing = element.id && document.getElementById(element.id);
          if (existing) {
            existing.replaceWith(element);
            replaced.push(element);
          }
        }
      }
      return replaced;
    }
    if (style === "tokens") {
      for (const piece of Array.from(fragment.children)) {
        const into = document.getElementById(piece.dataset.into);
        if (!into) continue;
        if (piece.dataset.at === undefined) {  // a stream without offsets (a room's): append as it comes
          if (piece.hasAttribute("data-reset")) into.textContent = "";
          into.append(...piece.childNodes);
        } else if (!appendAt(into, piece)) {
          setTimeout(resync);
          return [];
        }
      }
      return [];
    }
    return false;
  },
});

// A piece of a card's stream carries its generation (a restarted reply starts a new one) and its offset in
// code points: the page keeps only what it does not have yet, so a piece that comes twice (a catch-up and a
// push) shows once. False when text is missing before the piece: the page must resync.
function appendAt(into, piece) {
  const gen = Number(piece.dataset.gen);
  const at = Number(piece.dataset.at);
  let have = Number(into.dataset.gen || 0);
  if (piece.hasAttribute("data-reset")) {
    // A pushed reset has no text and starts a generation; one this page has (from a catch-up) is done.
    if (gen < have || (gen === have && !piece.textContent)) return true;
    into.textContent = "";
    into.dataset.gen = String(gen);
    into.dataset.end = "0";
    have = gen;
  }
  if (gen < have) return true;  // a piece of a reply since restarted
  const end = Number(into.dataset.end || 0);
  const text = Array.from(piece.textContent);
  if (gen > have || at > end) return false;
  if (at + text.length <= end) return true;
  into.append(text.slice(end - at).join(""));
  into.dataset.end = String(at + text.length);
  return true;
}

// The page's live socket (htmx's ws extension). Resync: open it again, and the catch-up brings what is missing.
let liveSocket = null;
document.addEventListener("htmx:wsOpen", (event) => { liveSocket = event.detail.socketWrapper; });
function resync() {
  if (liveSocket) liveSocket.reconnect();
}

// A debate page's newest event; a room page's newest message, or one less than its oldest pending answer (kept
// or dropped while the socket was down, it comes again: rooms/broadcast.catch_up_html).
function newestShown() {
  const events = Array.from(document.querySelectorAll("#transcript [data-event-id]"), (e) => Number(e.dataset.eventId));
  if (events.length) return Math.max(...events);
  const ids = (selector) => Array.from(document.querySelectorAll(selector), (e) => Number(e.id.slice(4)));
  const said = ids("#messages > article[id^='msg-']");
  const pending = ids("#pending > article[id^='msg-']");
  const since = said.length ? Math.max(...said) : 0;
  return pending.length ? Math.min(since, Math.min(...pending) - 1) : since;
}

// Reconnect with `since` set to the newest event this page shows, so the catch-up sends only what it missed.
// The server closes a socket whose page fell too far behind with 1013 (try again later): the extension then
// reconnects by itself, as after a dropped connection (1006) or a web process restarting (1012).
document.addEventListener("DOMContentLoaded", () => {
  const create = htmx.createWebSocket;
  htmx.createWebSocket = (url) => {
    return create(url.replace(/([?&]since=)\d*/, `$1${newestShown()}`));
  };
});

// Cmd/Ctrl+M toggles a room's auto mode.
document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "m") {
    const toggle = document.querySelector("#auto-toggle");
    if (toggle) {
      event.preventDefault();
      toggle.click();
    }
  }
});

// Countdowns ("Retry in 30s"): elements with data-countdown tick down once a second.
setInterval(() => {
  for (const element of document.querySelectorAll("[data-countdown]")) {
    const left = Math.max(0, Number(element.dataset.countdown) - 1);
    element.dataset.countdown = String(left);
    element.textContent = String(left);
  }
}, 1000);

// A room's input is off while auto mode runs: really disabled (not just dimmed), with the reason beside it
// (#say-off, which the textarea names in aria-describedby). The status line is pushed live, so follow it.
function syncRoomInput() {
  const form = document.querySelector("#room form.say");
  const status = document.getElementById("room-status");
  if (!form || !status) return;
  const auto = status.classList.contains("mode-auto");
  for (const control of form.querySelectorAll("textarea, button")) control.disabled = auto;
  const why = document.getElementById("say-off");
  if (why) why.hidden = !auto;
}
document.addEventListener("DOMContentLoaded", () => {
  const room = document.getElementById("room");
  if (!room) return;
  syncRoomInput();
  // The class too, not only the swap: htmx first gives a swapped-in status the old one's classes and puts
  // its own back once it settles (20 ms later), so a swap alone would read the mode that just ended.
  new MutationObserver(syncRoomInput).observe(room, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["class"],
  });
});

// A wide table scrolls in its own box (.table-scroll). A box that does scroll is a named region the
// keyboard can reach (to scroll it with the arrow keys), and says it scrolls (.scrolls: its cue, in the CSS), so
// no column is hidden past its edge without a sign; one that fits is no extra tab stop.
function markScrollBoxes() {
  for (const box of document.querySelectorAll(".table-scroll")) {
    const scrolls = box.scrollWidth > box.clientWidth;
    box.classList.toggle("scrolls", scrolls);
    if (scrolls) {
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.dataset.label || "Table");
      box.tabIndex = 0;
    } else {
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
      box.removeAttribute("tabindex");
    }
  }
}
document.addEventListener("DOMContentLoaded", markScrollBoxes);
document.addEventListener("htmx:afterSettle", markScrollBoxes);
document.addEventListener("htmx:oobAfterSwap", markScrollBoxes);
// A pushed report (a websocket message) may swap in several tables at once: looked at again once laid out.
document.addEventListener("htmx:wsAfterMessage", () => requestAnimationFrame(markScrollBoxes));
window.addEventListener("resize", markScrollBoxes);

// The server closes a page's socket with 4403 (chaoslm/consumers.py) when its viewer loses the right to watch:
// the owner made the page private or replaced the share link it was opened with. Say so, rather than leave a
// page that silently stops updating.
document.addEventListener("htmx:wsClose", (event) => {
  const notice = document.getElementById("notice");
  if (!notice || event.detail.event.code !== 4403) return;
  notice.textContent =
    "This link was withdrawn: the owner made this page private or replaced its share link. " +
    "What you see here no longer updates.";
  notice.hidden = false;
});

// A held debate's countdown (templates/debates/_hold.html): from the seconds the server gave as the page was
// drawn, on this page's own clock (a visitor's wall clock may be off). The start time stands beside it as text.
function startCountdowns() {
  document.querySelectorAll("[data-hold-seconds]:not([data-counting])").forEach((el) => {
    el.dataset.counting = "1";
    const end = performance.now() + Number(el.dataset.holdSeconds) * 1000;
    const tick = () => {
      if (!el.isConnected) return;
      const left = Math.max(0, Math.ceil((end - performance.now()) / 1000));
      el.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
      if (left > 0) setTimeout(tick, ((end - performance.now()) % 1000) + 20);
    };
    tick();
  });
}
document.addEventListener("DOMContentLoaded", startCountdowns);
document.addEventListener("htmx:afterSettle", startCountdowns);

// A batch's ETA (templates/batches/progress_line.html) says so once its time has passed, on this page's clock,
// so a page that gets no push meanwhile never shows a time already overtaken.
function watchEtas() {
  document.querySelectorAll("[data-eta-seconds]:not([data-watching])").forEach((el) => {
    el.dataset.watching = "1";
    setTimeout(() => {
      if (el.isConnected) el.textContent = el.dataset.overdue;
    }, Number(el.dataset.etaSeconds) * 1000);
  });
}
document.addEventListener("DOMContentLoaded", watchEtas);
document.addEventListener("htmx:afterSettle", watchEtas);

// A push that opens or closes a vote (audience/votes.py: poll_ping) reaches every open page at once: a page whose
// box shows another state fetches its own box a random moment into the spread, so a crowd's fetches do not hit
// the server in one instant.
document.addEventListener("htmx:load", (event) => {
  const root = event.detail.elt;
  if (!(root instanceof Element)) return;
  const spans = root.matches("[data-spread-ms]") ? [root] : root.querySelectorAll("[data-spread-ms]");
  spans.forEach((span) => {
    const box = document.querySelector("#poll-box");
    if (box && box.dataset.pollState === span.dataset.pollState) return;
    setTimeout(() => htmx.trigger(span, "poll-fetch"), Math.random() * Number(span.dataset.spreadMs));
  });
  if (root.matches("#poll-box[data-tally-ticket]")) sendTallyTicket();
});

// A box drawn for someone who voted in the open vote carries a ticket (audience/votes.py: tally_ticket): sent
// on the live socket, as it opens and when a box brings one, it lets the socket receive that vote's tally.
function sendTallyTicket() {
  const box = document.querySelector("#poll-box[data-tally-ticket]");
  if (box && liveSocket) liveSocket.send(JSON.stringify({ tally_ticket: box.dataset.tallyTicket }));
}
document.addEventListener("htmx:wsOpen", sendTallyTicket);
