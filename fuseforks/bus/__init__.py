"""The in-process bus and the subscribers that ship with the engine (store writer, log writer)."""
