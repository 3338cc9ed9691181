"""The engine's edges as interfaces: the model port, the tool port, and what crosses them.

A live turn plugs in a provider client and an MCP tool hub (`fuseforks.live`); replay plugs in the
recorded responses and tool outputs (`fuseforks.engine.replay`). Whatever sits behind a port, its
results are recorded in events, which is what makes a turn re-drivable.
"""
