"""The tool-image pipeline: probe, normalize, re-encode, and the per-turn vault of image bytes."""
