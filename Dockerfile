# The fuseforks worker: the package and its command, run as an unprivileged user.
# Built by compose.yaml; `docker run IMAGE --help` lists the commands.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY fuseforks ./fuseforks
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 10001 fuseforks
# The MCP servers a worker starts: the demo camera. Mount your own file over it.
COPY docker/mcp.json /config/mcp.json
USER fuseforks
WORKDIR /home/fuseforks
ENTRYPOINT ["fuseforks"]
CMD ["worker", "--mcp-config", "/config/mcp.json"]
