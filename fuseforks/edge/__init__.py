"""The HTTP edge of what fuseforks serves — the console and the gateway over streamable HTTP:
binding a socket, who may use it without a token (`fuseforks.core.hosts`), the token itself,
and a uvicorn server that stops when its owner says so."""
