"""`fuseforks console`: a local, read-only web page over any record — a store or a stream.

The turns as `fuseforks turns` lists them, filterable and live; a turn as a timeline of its
rounds, with each tool image as a card (where it came from, where it went, received or refused,
dropped, capped, stripped) beside its log lines; the audit search; each gateway client with
what the gateway did for it, charted over time (server-side SVG); the capabilities table.
Everything it shows comes from the projections the commands use, so a page and a command never
disagree; everything it serves is in this package (templates and one stylesheet and script), so
it works without the internet and without a build step.

`source.py` is the one place that reads a store or a stream, `listing.py` the turns page,
`turn_page.py` the page of one turn, `chart.py` the charts' geometry, `app.py` the pages, `guard.py` who may see them, and
`server.py` the socket and the stop.
"""
