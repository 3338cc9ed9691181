"""The shared vocabulary every layer speaks: names, canonical messages, texts, limits, errors,
the retry schedule.

Nothing here does I/O or imports another fuseforks package, so every other layer can depend on it.
"""
