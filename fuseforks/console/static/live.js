// The live parts of a console page, as a small progressive enhancement: every element marked
// data-live is fetched again from the same address while the page is open, and replaced when
// it changed. Without JavaScript the page is whole, and reloading it shows the same.
// A page whose body says data-settled="yes" (an ended turn, a search) is left alone.
"use strict";
(function () {
  const PERIOD_MS = 1000;
  if (document.body.dataset.settled === "yes" || !document.querySelector("[data-live]")) {
    return;
  }

  function openDetails(root) {
    return new Set(Array.from(root.querySelectorAll("details[open]"), (d) => d.closest("[id]")?.id));
  }

  async function refresh() {
    const response = await fetch(location.href, {
      headers: { "Accept": "text/html" }, credentials: "same-origin", cache: "no-store",
    });
    if (!response.ok) {
      return true;
    }
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const old of document.querySelectorAll("[data-live]")) {
      const replacement = fresh.getElementById(old.id);
      if (replacement && replacement.innerHTML !== old.innerHTML) {
        const opened = openDetails(old);
        for (const details of replacement.querySelectorAll("details")) {
          if (opened.has(details.closest("[id]")?.id)) {
            details.open = true;
          }
        }
        old.replaceWith(document.adoptNode(replacement));
      }
    }
    document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    return fresh.body.dataset.settled !== "yes";
  }

  async function loop() {
    let again = true;
    if (!document.hidden) {
      try {
        again = await refresh();
      } catch (error) {
        again = true;  // the console was restarted or the network hiccuped: try again later
      }
    }
    if (again) {
      setTimeout(loop, PERIOD_MS);
    } else {
      document.body.dataset.settled = "yes";
    }
  }

  setTimeout(loop, PERIOD_MS);
})();
